package chainformat

import (
	"bytes"
	"encoding/json"
	"testing"
)

// marshalListingSlow is MarshalJSON as it was written before
// appendListingField: every field through json.Marshal (the tests compare).
func marshalListingSlow(l listing) ([]byte, error) {
	if l.format == 3 {
		l.format = 0
	}
	fields := l.listingFields()
	out := make([][]byte, len(fields))
	last := -1
	for i, f := range fields {
		b, err := json.Marshal(f)
		if err != nil {
			return nil, err
		}
		switch string(b) {
		case "0", `""`, "null", "false", "[]", "{}":
			b = []byte("0")
		default:
			last = i
		}
		out[i] = b
	}
	return append(append([]byte{'['}, bytes.Join(out[:last+1], []byte{','})...), ']'), nil
}

// A listing is written byte for byte as json.Marshal of each field writes
// it, whatever its fields hold.
func TestListingIsWrittenAsBefore(t *testing.T) {
	cases := []listing{{}, {format: 3}, {Step: 3, Source: "loop", SchemaVersion: 2, Messages: 7},
		{Step: 1, Nodes: []string{"executor", "<critic> & \u2028 \xff"}, ModelCalls: map[string]int{"b": 2, "a": 1, "é": 3},
			Tokens: map[string][3]int{"executor": {1, 2, 3}, "a": {0, 0, 0}}, OldTokens: map[string][3]int{}, Next: []string{}, Reused: []string{"x"},
			Interrupt: &Interrupt{When: "before", Node: "n"}, ForkedFrom: 9, Replay: true, AsNode: "n", Status: "done", Reason: "why \"quoted\"\n",
			Events: 2, Bytes: 100, Row: 90, Depth: 5},
		{Nodes: []string{}, ModelCalls: map[string]int{}, Tokens: map[string][3]int{}},
		{Status: "failed", Reason: "r", Run: []string{"r1", "turn"}, Fixes: []string{"show", "new-turn"}},
		{Nodes: []string{"plan"}, Graph: "research \u2028 <x>"},
	}
	for _, l := range cases {
		got, err := l.MarshalJSON()
		want, werr := marshalListingSlow(l)
		if err != nil || werr != nil || !bytes.Equal(got, want) {
			t.Fatalf("listing %+v:\n got %s (%v)\nwant %s (%v)", l, got, err, want, werr)
		}
		var back listing
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("%s does not read back: %v", got, err)
		}
	}
}
