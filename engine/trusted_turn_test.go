package engine_test

import (
	"errors"
	"testing"

	"rewind/engine"
	"rewind/engine/ticket"
	"rewind/store"
)

// A turn that follows this engine's own last write takes the thread's
// newest checkpoint and its epoch on trust: it reads neither before it
// stores its input (its put, checked against the epoch, is the check).
func TestTrustedTurnReadsNothingBeforeItsInput(t *testing.T) {
	t.Parallel()
	for _, sc := range storeCases {
		t.Run(sc.name, func(t *testing.T) {
			ctx := t.Context()
			inner, _ := sc.open(t)
			st := &counting{Store: inner}
			e := ticketEngine(t, st)
			first, err := e.Run(ctx, "t", ticket.Input("where is my order SO20260901?"), engine.RunConfig{})
			if err != nil {
				t.Fatal(err)
			}
			st.took()
			second, err := e.Run(ctx, "t", ticket.Input("thanks, and can I get a refund?"), engine.RunConfig{})
			if err != nil {
				t.Fatal(err)
			}
			calls := st.took()
			for _, read := range []string{"Epoch", "Fence", "History", "Latest", "Get", "Chain"} {
				if calls[read] != 0 {
					t.Errorf("the second turn called %s %d times (%v); want no read before its input", read, calls[read], calls)
				}
			}
			if second.Start != first.Checkpoint || second.MessagesBefore != first.MessagesAfter {
				t.Errorf("the second turn started at @%d with %d messages, want @%d with %d", second.Start, second.MessagesBefore, first.Checkpoint, first.MessagesAfter)
			}
		})
	}
}

// What another writer did between two turns of an engine is what the
// engine's next turn starts from: its trust in its own last write ends
// with the other writer's fence. Without the long way after a refused
// put, each of these turns fails as "taken over" (or, after a delete,
// on an epoch never handed out).
func TestTrustedTurnSeesAnotherWriter(t *testing.T) {
	t.Parallel()
	for _, sc := range storeCases {
		t.Run(sc.name, func(t *testing.T) {
			ctx := t.Context()
			st, _ := sc.open(t)
			newEngine := func() *engine.Engine { return ticketEngine(t, st) }
			e, other := newEngine(), newEngine()
			run := func(e *engine.Engine, text string, cfg engine.RunConfig) engine.Result {
				t.Helper()
				res, err := e.Run(ctx, "t", ticket.Input(text), cfg)
				if err != nil {
					t.Fatalf("turn %q: %v", text, err)
				}
				return res
			}
			// checkTurn runs a turn of e and compares where it started with
			// the thread's newest as a new engine read it just before.
			checkTurn := func(what string) {
				t.Helper()
				want, err := newEngine().Latest(ctx, "t")
				if err != nil && !errors.Is(err, store.ErrNotFound) {
					t.Fatal(err)
				}
				res := run(e, "and what about SO20260902?", engine.RunConfig{})
				if res.Start != want.ID || res.MessagesBefore != want.Values.Len("messages") || res.Status != "done" {
					t.Errorf("after %s: the turn started at @%d with %d messages (status %s), want @%d with %d", what, res.Start, res.MessagesBefore, res.Status, want.ID, want.Values.Len("messages"))
				}
			}
			first := run(e, "where is my order SO20260901?", engine.RunConfig{})

			run(other, "another writer's turn", engine.RunConfig{})
			checkTurn("another writer's turn")

			if _, err := other.Fork(ctx, "t", first.Checkpoint, ticket.Input("a fork from the first turn"), engine.RunConfig{}); err != nil {
				t.Fatal(err)
			}
			checkTurn("another writer's fork")

			// This engine's turn stops with pending tasks; another writer
			// finishes them.
			if res := run(e, "wait before the executors", engine.RunConfig{InterruptBefore: []string{ticket.NodeExecutor}}); res.Interrupt == nil {
				t.Fatalf("the turn was not interrupted: %+v", res)
			}
			if _, err := e.Run(ctx, "t", ticket.Input("too early"), engine.RunConfig{}); !errors.Is(err, engine.ErrPending) {
				t.Fatalf("a turn on pending tasks: %v, want ErrPending", err)
			}
			if _, err := other.Resume(ctx, "t", engine.RunConfig{}); err != nil {
				t.Fatal(err)
			}
			checkTurn("another writer's resume of this engine's pending tasks")

			if err := other.DeleteThread(ctx, "t", false); err != nil {
				t.Fatal(err)
			}
			run(other, "the thread written again", engine.RunConfig{})
			checkTurn("another writer's delete and new turn")
		})
	}
}
