package unregistered_test

import (
	"strings"
	"testing"

	"rewind/engine/worker"
)

// A program that links the worker but not the ticket (a graph author's
// own, as this test's binary) has no graph registered: Parse has no graph
// to read a point for. It must say so and name the fix, not take the
// ticket's named points (mid-fanout, after-verify: they would never fire,
// and the run would end "never reached") nor call a before:NODE it lists
// as a form unknown.
func TestParseWithNoGraphRegisteredNamesTheFix(t *testing.T) {
	for _, spec := range []string{"before:executor", "after-verify", "mid-fanout@2", "before-commit"} {
		_, _, err := worker.Parse(spec)
		if err == nil {
			t.Errorf("Parse(%q) with no graph registered took it: a point no run of this program can reach", spec)
			continue
		}
		for _, want := range []string{"no graph", "ParseFor"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("Parse(%q) says %q: want %q", spec, err, want)
			}
		}
		if strings.Contains(err.Error(), "unknown kill point") {
			t.Errorf("Parse(%q) says %q: the point's form is valid, what is missing is the graph", spec, err)
		}
	}
}
