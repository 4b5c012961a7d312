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
