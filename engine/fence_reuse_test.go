package engine_test

import (
	"testing"

	"rewind/engine"
	"rewind/engine/ticket"
)

// A new turn keeps the epoch its engine fenced the thread with while
// nobody fenced it since, and fences anew once another writer did; a
// fork fences anew always. Were the kept epoch not checked, the turn
// after another writer's would be refused as taken over.
func TestNewTurnKeepsItsEpochUntilAnotherWriterFences(t *testing.T) {
	t.Parallel()
	for _, sc := range storeCases {
		t.Run(sc.name, func(t *testing.T) {
			ctx := t.Context()
			st, _ := sc.open(t)
			counted := &counting{Store: st}
			a, err := ticket.NewEngine(counted, ticket.NewMock())
			if err != nil {
				t.Fatal(err)
			}
			b, err := ticket.NewEngine(st, ticket.NewMock())
			if err != nil {
				t.Fatal(err)
			}
			turn := func(e *engine.Engine, text string) engine.Result {
				t.Helper()
				res, err := e.Run(ctx, "t", ticket.Input(text), engine.RunConfig{})
				if err != nil || res.Status != "done" {
					t.Fatalf("turn %q: %v (status %s)", text, err, res.Status)
				}
				return res
			}
			epoch := func() int64 {
				t.Helper()
				e, err := st.Epoch(ctx, "t")
				if err != nil {
					t.Fatal(err)
				}
				return e
			}
			turn(a, "where is SO1, refund?")
			first := epoch()
			turn(a, "and SO2?")
			if n := counted.n("Fence"); n != 1 || epoch() != first {
				t.Fatalf("after two turns of one engine: %d fences, epoch %d; want 1 fence and epoch %d kept", n, epoch(), first)
			}
			turn(b, "another writer's turn")
			other := epoch()
			if other <= first {
				t.Fatalf("the other writer's epoch %d, want above %d", other, first)
			}
			last := turn(a, "back to the first")
			if n := counted.n("Fence"); n != 2 || epoch() <= other {
				t.Fatalf("after another writer: %d fences, epoch %d; want a second fence above %d", n, epoch(), other)
			}
			if _, err := a.Fork(ctx, "t", last.Start, ticket.Input("a fork"), engine.RunConfig{}); err != nil {
				t.Fatal(err)
			}
			if n := counted.n("Fence"); n != 3 {
				t.Fatalf("%d fences after a fork, want 3: a fork fences anew", n)
			}
		})
	}
}
