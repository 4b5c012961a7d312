package cli

import (
	"strings"
	"testing"

	"rewind/engine"
)

// prune --keep-last 1 on a killed thread keeps two: the line says the
// second was kept because it records the thread's graph.
func TestPruneSaysWhyMoreThanKeepLastWereKept(t *testing.T) {
	r := engine.PruneResult{Thread: "t", Pruned: []int64{1, 3}, Kept: 2, Rerooted: []engine.Reroot{}}
	got := pruneSummary(r, engine.PrunePolicy{KeepLast: 1})
	if !strings.Contains(got, "2 kept") || !strings.Contains(got, "records the thread's graph") {
		t.Errorf("prune --keep-last 1 keeping 2 says %q: want why the extra one was kept", got)
	}
	// Kept as asked: no reason to give.
	got = pruneSummary(engine.PruneResult{Thread: "t", Pruned: []int64{1, 2}, Kept: 1}, engine.PrunePolicy{KeepLast: 1})
	if strings.Contains(got, "graph") {
		t.Errorf("prune keeping what was asked says %q: no extra to explain", got)
	}
	// A paused tip accounts for the extra one: it is named as such already.
	got = pruneSummary(engine.PruneResult{Thread: "t", Pruned: []int64{1}, Kept: 2, KeptTips: []int64{2}}, engine.PrunePolicy{KeepLast: 1})
	if strings.Contains(got, "records the thread's graph") {
		t.Errorf("prune keeping a paused tip says %q: the tip is the extra one", got)
	}
}
