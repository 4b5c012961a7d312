package tui

import (
	"context"
	"testing"

	"rewind/engine"
)

// countingRuns counts the reads of a thread's runs, which read every
// listing of the thread.
type countingRuns struct {
	Backend
	rl    runLister
	reads int
}

func (c *countingRuns) Runs(ctx context.Context, thread string) (engine.Runs, error) {
	c.reads++
	return c.rl.Runs(ctx, thread)
}

// A scrub step's detail names the checkpoint's run without reading every
// listing of the thread each step: a thread's runs are read once a
// detail version, again after a run changed the thread.
func TestDetailsReadTheRunsOnceAVersion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEngine(t)
	seed(t, e, "t")
	b := EngineBackend(e)
	rl, ok := b.(runLister)
	if !ok {
		t.Fatal("the engine's backend cannot tell runs")
	}
	cb := &countingRuns{Backend: b, rl: rl}
	c := newCache(TicketExtension())
	for id := int64(1); id <= 16; id++ {
		d, err := buildDetail(ctx, cb, c, "t", idOf(id), c.version("t"))
		if err != nil {
			t.Fatal(err)
		}
		if d.run == nil || d.run.ID == "" {
			t.Fatalf("@%d: no run named", id)
		}
	}
	if cb.reads != 1 {
		t.Errorf("16 details read the runs %d times, want once", cb.reads)
	}
	c.dropPending("t")
	if _, err := buildDetail(ctx, cb, c, "t", "3", c.version("t")); err != nil {
		t.Fatal(err)
	}
	if cb.reads != 2 {
		t.Errorf("after a run changed the thread the runs were read %d times in all, want 2", cb.reads)
	}
}
