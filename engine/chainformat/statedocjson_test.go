package chainformat

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestMarshalStateIsJSONMarshal(t *testing.T) {
	k := 2
	docs := []stateDoc{
		{},
		{Format: 3, Duration: 5, Usage: &usage{}},
		{Usage: &usage{Prompt: 1}}, {Usage: &usage{Completion: 2}}, {Usage: &usage{Prompt: 1, Completion: 2}},
		{Tasks: storedTasks{{Node: "a"}, {ID: "x<y>", Node: "b", Args: json.RawMessage(` { "k" : [1, 2] , "s":"<&>\u2028" } `)}},
			Discarded: []Task{{Node: "n"}, {ID: "i", Node: "m", Args: json.RawMessage(`null`)}}},
		{Groups: []writeGroup{
			{Node: "input"},
			{Node: "n", Task: "t\u2029\xff", Writes: []storedWrite{{"ch", json.RawMessage(`[1, {"a" : "b"}]`)}}},
			{Node: "n", Packet: &k, Writes: []storedWrite{{"c", json.RawMessage(`"x"`)}}, Ms: 3},
			{Node: "n", Calls: []storedCall{}, Refs: []int{0, 1}},
			{Node: "n", Calls: []storedCall{{Role: "n", sameRole: true, Prompt: 1, Completion: 2, Ms: 3, At: 4}, {Role: "r", Err: "e"}, {Role: "r", Mode: "schema"}}},
			{Node: "n", Calls: []storedCall{}, Ms: 1},
		}},
		{Values: map[string]json.RawMessage{"b": json.RawMessage(`{"z": 1,  "a":2}`), "a": json.RawMessage(`"<p>"`), "é": json.RawMessage(`[]`)}},
	}
	for i, doc := range docs {
		want, err := json.Marshal(&doc)
		if err != nil {
			t.Fatal(err)
		}
		var w stateWriter
		if !w.doc(&doc) {
			t.Fatalf("doc %d: took the slow path", i)
		}
		if !bytes.Equal(w.out.Bytes(), want) {
			t.Fatalf("doc %d:\n got %s\nwant %s", i, w.out.Bytes(), want)
		}
	}
	// Not JSON: json.Marshal says so.
	for _, doc := range []stateDoc{
		{Values: map[string]json.RawMessage{"a": nil}},
		{Groups: []writeGroup{{Node: "n", Writes: []storedWrite{{"c", json.RawMessage(`{`)}}}}},
		{Groups: []writeGroup{{Node: "n", Writes: []storedWrite{{"c", nil}}}}},
	} {
		want, wantErr := json.Marshal(&doc)
		got, err := marshalState(&doc)
		if (err == nil) != (wantErr == nil) || !bytes.Equal(got, want) {
			t.Fatalf("marshalState = %s, %v; json.Marshal = %s, %v", got, err, want, wantErr)
		}
	}
}

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "plain", "<a&b>", "\u2028\u2029", "\xff\xfe", "tab\t\x00\x1f\x7f", "é😀", `"\`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := appendJSONString(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("appendJSONString(%q) = %s, want %s", s, got, want)
		}
	})
}

// htmlEscaped is bytes.ContainsAny(b, "<>&\u2028\u2029"), faster.
func FuzzHTMLEscaped(f *testing.F) {
	for _, seed := range []string{"", "plain", "a<b", "x&", "\u2028", "\u2029", "\u2027\u202a", "\xe2\x80", "\xe2\xe2\x80\xa8", "é ✓ \u2026"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := htmlEscaped(b), bytes.ContainsAny(b, "<>&\u2028\u2029"); got != want {
			t.Fatalf("htmlEscaped(%q) = %v, want %v", b, got, want)
		}
	})
}
