package engine

import (
	"bytes"
	"encoding/json"
	"testing"
)

// splitList must find exactly the items encoding/json finds, in any valid
// list, whatever its strings hold (brackets, commas, escaped quotes).
func FuzzSplitList(f *testing.F) {
	for _, seed := range []string{`[]`, ` [ ] `, `null`, `[1,2,3]`, `[{"a":"x,]}"},[1,[2,3]],"\"],["]`,
		`[ {"content":"calling f({\"order\":\"SO1\"})"} , "a\\\\" ]`, "[\n1\n,\n2\n]"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var want []json.RawMessage
		if json.Unmarshal(raw, &want) != nil {
			return // only valid lists are promised
		}
		got, err := splitList(raw)
		if err != nil {
			t.Fatalf("splitList(%q): %v", raw, err)
		}
		if len(got) != len(want) || countList(raw) != len(want) {
			t.Fatalf("splitList(%q) = %d items, countList %d, want %d", raw, len(got), countList(raw), len(want))
		}
		for i := range want {
			if !bytes.Equal(bytes.TrimSpace(got[i]), bytes.TrimSpace(want[i])) {
				t.Fatalf("item %d = %q, want %q", i, got[i], want[i])
			}
		}
	})
}

// topField finds what encoding/json finds at an object's top level.
func FuzzTopField(f *testing.F) {
	for _, seed := range []string{`{"index":3}`, `{"a":{"index":1},"index":2}`, `{"content":"\"index\":9","index":4}`,
		`{"\u0069ndex":5}`, `{"index":1,"index":2}`, `{}`, ` { "index" : [1, {"x": "}"}] , "b": 2 } `} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil || m == nil {
			return
		}
		want, wantOK := m["index"]
		got, ok := topField(raw, "index")
		if ok != wantOK || ok && !bytes.Equal(bytes.TrimSpace(got), bytes.TrimSpace(want)) {
			t.Fatalf("topField(%q) = %q, %v; want %q, %v", raw, got, ok, want, wantOK)
		}
	})
}
