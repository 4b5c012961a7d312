package engine

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

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
