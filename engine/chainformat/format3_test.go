package chainformat

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"rewind/store"
)

// A transcript op packs its hashes into one string and reads back the same
// list, an empty set included; hashes it cannot pack keep the list form;
// the list form of format 2 still reads.
func TestTranscriptOpsPackTheirHashes(t *testing.T) {
	a, b := store.ContentHash([]byte(`{"index":1}`)), store.ContentHash([]byte(`{"index":2}`))
	for _, op := range []transcriptOp{{Append: []string{a, b}}, {Set: []string{b}}, {Set: []string{}}, {Append: []string{"not-hex"}}} {
		enc, err := encodeOp(op)
		if err != nil {
			t.Fatal(err)
		}
		back, err := parseOp(enc)
		if err != nil || (back.Set == nil) != (op.Set == nil) || !slices.Equal(back.Set, op.Set) || !slices.Equal(back.Append, op.Append) {
			t.Errorf("%+v stored as %s reads back as %+v (%v)", op, enc, back, err)
		}
		if !strings.Contains(string(enc), "not-hex") && strings.Contains(string(enc), "[") {
			t.Errorf("%+v stored as %s: a list", op, enc)
		}
	}
	back, err := parseOp(json.RawMessage(`{"$m+":["` + a + `"]}`))
	if err != nil || !slices.Equal(back.Append, []string{a}) {
		t.Errorf("a format 2 op reads as %+v (%v)", back, err)
	}
	if _, err := parseOp(json.RawMessage(`{"$m+":"abc"}`)); err == nil {
		t.Errorf("a packed list of a length no hash list has reads")
	}
}

// A replace whose items the pending Sends carry stores them as [task,
// field] and reads back byte for byte; an item no Send carries stays.
func TestReplaceRefersToSends(t *testing.T) {
	item := `{"id":"t-1","goal":"look up the order status (order SO1)","topic":"order"}`
	other := `{"id":"t-2","goal":"something no task carries"}`
	tasks := []Task{{Node: "critic"}, {Node: "executor", Args: json.RawMessage(`{"feedback":"x","task":` + item + `}`)}}
	write := json.RawMessage(`{"replace":[` + item + `,` + other + `]}`)
	ref := refReplace(write, tasks)
	if ref == nil || !strings.Contains(string(ref), `[1,"task"]`) || !strings.Contains(string(ref), other) {
		t.Fatalf("stored as %s", ref)
	}
	back, err := expandReplace(ref, tasks)
	if err != nil || string(back) != string(write) {
		t.Errorf("reads back as %s (%v)", back, err)
	}
	if refReplace(json.RawMessage(`{"replace":[`+other+`]}`), tasks) != nil {
		t.Errorf("a replace no Send carries is stored with references")
	}
	if _, err := expandReplace(ref, tasks[:1]); err == nil {
		t.Errorf("a reference to a task the checkpoint does not send reads")
	}
}

// An event's payload keeps its time in nanoseconds and packs runs of
// whole numbers, and reads back as it was emitted; data that spells "$r"
// itself, or a time not in UTC, is stored as it is.
func TestEventPayloadsReadBack(t *testing.T) {
	at := time.Date(2026, 12, 1, 7, 59, 34, 453750330, time.UTC)
	cases := []struct {
		data   string
		packed bool
	}{
		{`{"retired":31,"sourceIndices":[541,542,543,544,545,550,551,552,553,7],"x":[[1,2,3,4]]}`, true},
		{`{"sourceIndices":[1,2,3]}`, false},
		{`{"literal":{"$r":[1,4]},"ids":[1,2,3,4,5]}`, false},
		{`{"big":[9007199254740993,9007199254740994,9007199254740995,9007199254740996]}`, true},
		{`{"floats":[1.0,2.0,3.0,4.0]}`, false},
		{``, false},
	}
	for _, c := range cases {
		ev := Event{Node: "summarizer", Task: "eb95229cde9d7d3a", Data: json.RawMessage(c.data), At: at}
		b, err := ev.stored()
		if err != nil {
			t.Fatal(err)
		}
		var p storedEvent
		if err := json.Unmarshal(b, &p); err != nil {
			t.Fatal(err)
		}
		data, err := p.data()
		if err != nil || string(data) != c.data || !p.At.Equal(at) || p.At.Location() != time.UTC || p.Node != ev.Node || p.Task != ev.Task {
			t.Errorf("%s stored as %s reads back as %s at %v (%v)", c.data, b, data, p.At, err)
		}
		if (p.Runs != nil) != c.packed {
			t.Errorf("%s stored as %s", c.data, b)
		}
	}
	local := at.In(time.FixedZone("CET", 3600))
	b, _ := Event{At: local}.stored()
	var p storedEvent
	if err := json.Unmarshal(b, &p); err != nil || !p.At.Equal(local) || p.At.Location().String() == "UTC" {
		t.Errorf("a time in CET stored as %s reads back as %v (%v)", b, p.At, err)
	}
	var old storedEvent
	if err := json.Unmarshal([]byte(`{"data":{"parent":4},"at":"2026-12-01T07:59:34.45375033Z"}`), &old); err != nil || !old.At.Equal(at) {
		t.Errorf("a payload of format 2 reads as %+v (%v)", old, err)
	}
}

// A write group is stored as an array and reads back whole, task id,
// packet, calls and duration included; the object form reads too.
func TestWriteGroupsReadBack(t *testing.T) {
	k := 2
	for _, g := range []writeGroup{
		{Node: "input", Writes: []storedWrite{{"messages", json.RawMessage(`{"$m+":""}`)}}},
		{Node: "executor", Packet: &k, Writes: []storedWrite{}, Calls: []storedCall{{Role: "executor", Prompt: 3, At: 7}}},
		{Node: "critic", Task: "eb95229cde9d7d3a", Writes: []storedWrite{{"reviewRounds", json.RawMessage(`1`)}}, Ms: 12},
	} {
		b, err := json.Marshal(g)
		if err != nil {
			t.Fatal(err)
		}
		var back writeGroup
		if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, g) {
			t.Errorf("%+v stored as %s reads back as %+v (%v)", g, b, back, err)
		}
	}
	var old writeGroup
	if err := json.Unmarshal([]byte(`{"task":"eb95229cde9d7d3a","node":"critic","w":[["reviewRounds",1]],"calls":[["critic",1,2,3,4]]}`), &old); err != nil || old.Task != "eb95229cde9d7d3a" || len(old.Writes) != 1 || len(old.Calls) != 1 {
		t.Errorf("a group of format 2 reads as %+v (%v)", old, err)
	}
}

// A long string value equal to a transcript text is stored as a reference
// to it and reads back byte for byte; a key, a shorter string, a string
// inside another and a write that spells "$c" itself are left alone.
func TestWritesReferToMessageTexts(t *testing.T) {
	g := &Schema{transcript: "messages"}
	finding := `t-1-order: stage at local depot, since 2026-09-03 09:55.`
	msg := `{"content":"` + finding + `","index":4,"role":"assistant","speaker":"executor[t-1-order]"}`
	texts := g.transcriptTexts(&transcriptItems{raw: json.RawMessage(`[` + msg + `]`)})
	bodies := map[string][]byte{store.ContentHash([]byte(msg)): []byte(msg)}
	write := `{"$u":[{"$p":{"id":"t-1","result":"` + finding + `","note":"x ` + finding + `"}}],"` + finding + `":1}`
	ref := refContent(json.RawMessage(write), texts)
	if ref == nil || strings.Count(string(ref), `"$c"`) != 1 || !strings.Contains(string(ref), `"`+finding+`":1`) {
		t.Fatalf("stored as %s", ref)
	}
	back, err := expandContent(ref, bodies)
	if err != nil || string(back) != write {
		t.Errorf("reads back as %s (%v)", back, err)
	}
	if refContent(json.RawMessage(`{"$c":"`+finding+`","r":"`+finding+`"}`), texts) != nil {
		t.Errorf("a write that spells $c is stored with references")
	}
	if _, err := expandContent(ref, nil); err == nil {
		t.Errorf("a reference to a message the store lacks reads")
	}
	hs, err := contentHashes([]writeGroup{{Writes: []storedWrite{{"subtasks", ref}}, Refs: []int{0}}})
	if err != nil || len(hs) != 1 || hs[0] != store.ContentHash([]byte(msg)) {
		t.Errorf("the write refers to %v (%v)", hs, err)
	}
}
