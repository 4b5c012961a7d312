package engine_test

import (
	"context"
	"testing"
	"time"

	"rewind/engine"
	"rewind/engine/ticket"
	"rewind/store/memory"
)

// With a fixed clock (the engine's and the store's), everything a turn
// stores is stamped with it and every duration is zero: what is stored
// does not depend on when it ran.
func TestWithClockStampsWhatATurnStores(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 9, 1, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { return at }
	e, err := engine.New(memory.New(memory.WithClock(clock)), ticket.NewGraph(), ticket.NewMock(), engine.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := e.Run(ctx, "t", ticket.Input("where is my order SO20260901?"), engine.RunConfig{}); err != nil {
		t.Fatal(err)
	}
	if !e.Now().Equal(at) {
		t.Fatalf("Now reads %v, not the clock's %v", e.Now(), at)
	}
	cps, err := e.History(ctx, "t", 0, 0)
	if err != nil || len(cps) == 0 {
		t.Fatalf("history: %d checkpoints, %v", len(cps), err)
	}
	for _, cp := range cps {
		got, err := e.Get(ctx, "t", cp.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !got.CreatedAt.Equal(at) {
			t.Errorf("@%d created %v, not the clock's %v", cp.ID, got.CreatedAt, at)
		}
		// A checkpoint this engine wrote (read from its cache) says its
		// schema like one read from the store.
		if got.SchemaVersion != e.Graph().SchemaVersion {
			t.Errorf("@%d has schema v%d, the graph writes v%d", cp.ID, got.SchemaVersion, e.Graph().SchemaVersion)
		}
		evs, err := e.Events(ctx, "t", cp.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			if !ev.At.Equal(at) {
				t.Errorf("@%d event %s at %v, not the clock's %v", cp.ID, ev.Type, ev.At, at)
			}
		}
	}
	ts, err := e.Store().Threads(ctx)
	if err != nil || len(ts) != 1 || !ts[0].UpdatedAt.Equal(at) {
		t.Fatalf("threads %+v (%v): updated should be the clock's %v", ts, err, at)
	}
}
