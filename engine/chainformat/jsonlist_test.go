package chainformat

import (
	"bytes"
	"encoding/json"
	"strings"
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

func TestSplitListRemembersWithoutSharingTheCallersBytes(t *testing.T) {
	raw := []byte(`[` + strings.Repeat(`{"index":1,"content":"a long enough message \"quoted\""},`, 40) + `{"index":2}]`)
	first, err := splitList(raw)
	if err != nil || len(first) != 41 {
		t.Fatalf("split: %d items, %v", len(first), err)
	}
	// The caller's bytes change after the split (a buffer reused): what
	// was remembered must not follow them.
	want := string(first[40])
	copy(raw[len(raw)-12:], `{"index":9}]`)
	again, err := splitList(raw)
	if err != nil || string(again[40]) != `{"index":9}` {
		t.Fatalf("the split of changed bytes reads %q (%v)", again[40], err)
	}
	copy(raw[len(raw)-12:], `{"index":2}]`)
	third, _ := splitList(raw)
	if string(third[40]) != want {
		t.Fatalf("the remembered split reads %q, want %q", third[40], want)
	}
	// A caller may change its slice of items; the next caller must not see it.
	third[0] = json.RawMessage(`{}`)
	if fourth, _ := splitList(raw); string(fourth[0]) == `{}` || countList(raw) != 41 {
		t.Fatalf("a caller's change to its items reached the next split: %q", fourth[0])
	}
	// Appending to an item must not write into the remembered bytes.
	fifth, _ := splitList(raw)
	_ = append(fifth[1], 'x')
	if sixth, _ := splitList(raw); string(sixth[0])+string(sixth[1]) != string(first[0])+string(first[1]) || !remembered(raw) {
		t.Fatalf("an append to one item changed the remembered list")
	}
}

// remembered says whether the memo holds exactly raw.
func remembered(raw []byte) bool {
	lists.mu.Lock()
	defer lists.mu.Unlock()
	for _, e := range lists.memo {
		if bytes.Equal(e.raw, raw) {
			return true
		}
	}
	return false
}
