package ticket_test

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"
	"testing"

	"rewind/engine"
	"rewind/engine/event"
	"rewind/engine/ticket"
	"rewind/store/memory"
)

// Every event the runtime and the ticket graph emit, live and stored,
// decodes as its type's payload and writes back to the same bytes: an emit
// site and the payload its readers decode cannot drift apart.
func TestEveryEmittedEventDecodes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, _ := newEngine(t, memory.New())
	var live []engine.Event
	var mu sync.Mutex // parallel tasks observe from their own goroutines
	cfg := engine.RunConfig{Observe: func(ev engine.Event) {
		mu.Lock()
		defer mu.Unlock()
		live = append(live, ev)
	}}
	if _, err := e.Run(ctx, "ev", ticket.Input(sentence), cfg); err != nil {
		t.Fatal(err)
	}
	// The second turn compacts the history.
	if _, err := e.Run(ctx, "ev", ticket.Input("Thanks. What is the order status now, where is the parcel, and is the refund still possible?"), cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Fork(ctx, "ev", 2, ticket.Input("Another question about SO20260901."), cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Replay(ctx, "ev", 2, cfg); err != nil {
		t.Fatal(err)
	}
	head, err := e.Latest(ctx, "ev")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.UpdateState(ctx, "ev", head.ID, []engine.Write{engine.Put("degraded", true)}, ""); err != nil {
		t.Fatal(err)
	}
	stored, err := e.Events(ctx, "ev", 0)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, ev := range append(live, stored...) {
		p, err := event.DecodeAny(ev.Type, ev.Data)
		if err != nil {
			t.Fatalf("@%d: %v", ev.Checkpoint, err)
		}
		again, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again, ev.Data) {
			t.Errorf("@%d %s: %s reads back as %s", ev.Checkpoint, ev.Type, ev.Data, again)
		}
		seen[ev.Type]++
	}
	for _, typ := range []string{engine.EventInput, engine.EventFork, engine.EventUpdate, engine.EventStepStarted, engine.EventNodeStarted,
		engine.EventNodeFinished, engine.EventModelCalled, engine.EventCheckpointSaved, ticket.EventContextMeasured,
		ticket.EventContextCompacted} {
		if seen[typ] == 0 {
			t.Errorf("no %s event was emitted (seen: %v)", typ, seen)
		}
	}
}
