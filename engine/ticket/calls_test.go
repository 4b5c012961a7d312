package ticket_test

import (
	"context"
	"strings"
	"testing"

	"rewind/engine"
	"rewind/engine/model"
	"rewind/engine/ticket"
	"rewind/store/backend/backendtest"
)

// Every call of every checkpoint is built again exactly as it was sent
// (its stored hash matches), on a store reopened in between, through a
// compaction: what `rewind show --calls` and the TUI's prompt view show is
// what the model saw.
func TestCallsAreRebuiltExactly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		st := b.Open(t, "calls")
		e, _ := newEngine(t, st)
		calls := 0
		for _, in := range []string{
			"My order SO20260901 hasn't arrived yet: what is the order status, where is the parcel, and can I get a refund?",
			"Thanks. What is the order status now, where is the parcel, and is the refund still possible?",
		} {
			res, err := e.Run(ctx, "x", ticket.Input(in), engine.RunConfig{})
			if err != nil {
				t.Fatal(err)
			}
			calls += model.Counts(res.ModelCalls).Sum()
		}
		fresh, _ := newEngine(t, st) // nothing cached: every read from the store
		hist, err := fresh.History(ctx, "x", 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		seen, rounds, summarized := 0, 0, false
		for _, cp := range hist {
			cs, err := ticket.Calls(ctx, fresh, "x", cp.ID)
			if err != nil {
				t.Fatalf("calls of @%d: %v", cp.ID, err)
			}
			for _, c := range cs {
				seen++
				if !c.Exact || c.Error != "" {
					t.Errorf("@%d %s round %d: stored %q, rebuilt %q (%s)", cp.ID, c.Role, c.Round, c.Hash, c.Rebuilt, c.Error)
				}
				if err := model.CheckSequence(c.Request.Messages); err != nil {
					t.Errorf("@%d %s: %v", cp.ID, c.Role, err)
				}
				if c.Answer == "" && len(c.ToolCalls) == 0 {
					t.Errorf("@%d %s round %d has no answer", cp.ID, c.Role, c.Round)
				}
				if c.Role == model.RoleExecutor && c.Round == 2 {
					rounds++
					if c.Parts[model.PartRounds] == 0 || !strings.Contains(model.Render(c.Request.Messages), "[tool call-") {
						t.Errorf("@%d executor round 2 does not carry round 1's call and result:\n%s", cp.ID, model.Render(c.Request.Messages))
					}
				}
				summarized = summarized || c.Role == model.RoleSummarizer
			}
		}
		if seen != calls || rounds == 0 || !summarized {
			t.Fatalf("%d calls shown of %d made (%d executor second rounds, summarized %t)", seen, calls, rounds, summarized)
		}
	})
}
