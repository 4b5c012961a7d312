package chainformat

import (
	"encoding/json"
	"slices"
	"testing"
)

// The messages a rebuild asks the store for start and end with the first
// and the last of its transcript that it does not hold already, the
// others between (a SQLite store reads the stretch between those two
// indexes at once, and each message outside it by its key: a transcript
// end in the middle made it read every message so).
func TestWantedMessagesStartAndEndWithTheTranscript(t *testing.T) {
	transcript := []string{"t1", "t2", "t3", "t4", "t5"}
	msgs := map[string]bool{"t1": true, "t2": true, "t3": true, "t4": true, "t5": true, "old2": true, "old1": true}
	for _, tc := range []struct {
		name        string
		known       map[string]json.RawMessage
		first, last string
		n           int
	}{
		{"none held", nil, "t1", "t5", 7},
		{"the ends held", map[string]json.RawMessage{"t1": nil, "t5": nil}, "t2", "t4", 5},
		{"all but one of the transcript held", map[string]json.RawMessage{"t1": nil, "t2": nil, "t3": nil, "t5": nil}, "t4", "old2", 3},
	} {
		for range 20 { // map order
			got := wantInOrder(transcript, msgs, tc.known)
			if len(got) != tc.n || got[0] != tc.first || got[len(got)-1] != tc.last {
				t.Fatalf("%s: asked for %v; want %d starting with %s and ending with %s", tc.name, got, tc.n, tc.first, tc.last)
			}
			seen := map[string]bool{}
			for _, h := range got {
				if seen[h] || !msgs[h] {
					t.Fatalf("%s: asked for %v: %s twice or not wanted", tc.name, got, h)
				}
				if _, held := tc.known[h]; held {
					t.Fatalf("%s: asked for %v, %s held already", tc.name, got, h)
				}
				seen[h] = true
			}
		}
	}
	if got := wantInOrder(nil, msgs, nil); !slices.IsSorted(got) || len(got) != 7 {
		t.Errorf("with no transcript asked for %v; want all seven by hash", got)
	}
}
