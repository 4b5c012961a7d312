package ticket

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"rewind/engine"
)

// Decode remembers channels by content and hands out copies: what it
// returns is what encoding/json makes of the bytes, however often they are
// decoded and whatever a node did to an earlier result.
func TestDecodeHandsOutCopiesOfWhatItRemembers(t *testing.T) {
	t.Parallel()
	v := engine.Values{
		"messages":   json.RawMessage(`[{"index":1,"role":"user","speaker":"user","content":"refund SO1"},{"index":2,"role":"assistant","speaker":"executor","content":"x","toolCall":{"id":"c1","name":"lookup","args":{"order":"SO1"}},"source":{"id":"orders","version":3}}]`),
		"summary":    json.RawMessage(`{"text":"#1 user: hi","from":1,"to":1,"count":1,"speakers":["user"],"historyVersion":1,"trigger":"messages"}`),
		"subtasks":   json.RawMessage(`[{"id":"t-1","goal":"find the order","toolCalls":0,"status":"pending"}]`),
		"operations": json.RawMessage(`{"op-1":{"id":"op-1","kind":"create_draft","status":"done","sources":{"orders":3}}}`),
		"request":    json.RawMessage(`{"index":1,"text":"refund SO1"}`),
	}
	names := []string{"messages", "summary", "subtasks", "operations", "request"}
	var want State
	if err := v.Decode(&want, names...); err != nil {
		t.Fatal(err)
	}
	for round := range 3 {
		got, err := Decode(v, names...)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d: Decode = %+v, want %+v", round, got, want)
		}
		// A node changes everything it was given.
		got.Messages[0].Content = "changed"
		got.Messages[1].ToolCall.Name = "changed"
		got.Messages[1].Source.Version = 99
		got.Summary.Text, got.Summary.Speakers[0] = "changed", "changed"
		got.Subtasks[0].Status = "changed"
		op := got.Operations["op-1"]
		op.Sources["orders"] = 99
		got.Operations["op-2"] = Operation{}
	}
	// The same messages in another list: decoded item by item from what
	// was remembered of each, untouched by the changes above.
	items, _ := v.Items("messages")
	other := engine.Values{"messages": json.RawMessage("[" + string(items[1]) + "," + string(items[0]) + "]")}
	got, err := Decode(other, "messages")
	if err != nil || !reflect.DeepEqual(got.Messages, []Message{want.Messages[1], want.Messages[0]}) {
		t.Fatalf("the same items in another list decode as %+v (%v)", got.Messages, err)
	}
	if m, ok := lastUser(other, nil); !ok || !reflect.DeepEqual(m, want.Messages[0]) {
		t.Fatalf("lastUser = %+v", m)
	}
	// Other bytes are other values.
	v["summary"] = json.RawMessage(`null`)
	if got, err := Decode(v, "summary"); err != nil || got.Summary != nil {
		t.Fatalf("a null summary decodes as %+v (%v)", got.Summary, err)
	}
	v["messages"] = json.RawMessage(`"not a list"`)
	if _, err := Decode(v, "messages"); err == nil {
		t.Fatal("a corrupt transcript decoded")
	}
}

// Every channel of the state is remembered, each by a copy of its own
// field: a copy that wrote another field, or a channel added without one,
// fails here.
func TestDecodeRemembersEveryChannel(t *testing.T) {
	t.Parallel()
	full := engine.Values{
		"messages": json.RawMessage(`[{"index":1,"role":"user","speaker":"user","content":"hi"}]`), "summary": json.RawMessage(`{"text":"x","speakers":["user"]}`),
		"attachments": json.RawMessage(`[{"id":"a","kind":"image","ref":"r"}]`), "subtasks": json.RawMessage(`[{"id":"t-1","goal":"g","toolCalls":1,"status":"done"}]`),
		"reviewRounds": json.RawMessage(`2`), "degraded": json.RawMessage(`true`), "budgetRemaining": json.RawMessage(`3`), "historyVersion": json.RawMessage(`4`),
		"operations": json.RawMessage(`{"o":{"id":"o","kind":"k","status":"done","sources":{"s":1}}}`), "authorization": json.RawMessage(`{"ref":"r","expiresAt":"e"}`),
		"request": json.RawMessage(`{"index":1,"text":"hi"}`), "draftRequested": json.RawMessage(`true`), "approvals": json.RawMessage(`{"o":{"approved":true}}`),
		"sourceVersions": json.RawMessage(`{"s":2}`), "verificationResults": json.RawMessage(`{"o":{"operation":"o","ok":true,"checks":["c"],"problems":["p"]}}`),
		"scenario": json.RawMessage(`"site"`), "summaryRefusals": json.RawMessage(`1`), "facts": json.RawMessage(`["#1 user: SO20260901"]`),
	}
	st := reflect.TypeFor[State]()
	for i := range st.NumField() {
		ch, _, _ := strings.Cut(st.Field(i).Tag.Get("json"), ",")
		if decodedMemo.copies[ch] == nil {
			t.Errorf("channel %q has no copy in decodedMemo: every node's Decode of it goes through encoding/json", ch)
		}
		if full[ch] == nil {
			t.Fatalf("the test has no value for channel %q", ch)
		}
	}
	for ch := range full {
		var want State
		if err := full.Decode(&want, ch); err != nil {
			t.Fatal(err)
		}
		for range 2 { // the second is the memo's
			got, err := Decode(full, ch)
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("channel %q: Decode = %+v (%v), want %+v", ch, got, err, want)
			}
		}
	}
}
