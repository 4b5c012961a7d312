package ticket_test

import (
	"strings"
	"testing"

	"rewind/engine"
	"rewind/engine/ticket"
	"rewind/store"
)

// Issue 32, item 4: a budget an older rewind stored as null reads as 0 and
// is named, so the resumed executors call no tool (before: "tool budget
// left none", and 4 tool calls).
func TestMissingBudgetReadsAsZero(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, st store.Store, _ func() store.Store) {
		ctx := t.Context()
		e := draftEngine(t, st)
		res, err := e.Run(ctx, "b", ticket.Input(sentence), engine.RunConfig{InterruptBefore: []string{ticket.NodeExecutor}})
		if err != nil || len(res.Pending) == 0 || res.Pending[0].Node != ticket.NodeExecutor {
			t.Fatalf("run to the executors: %v %+v", err, res)
		}
		// What an older rewind could store: a counter set to null.
		old, err := e.UpdateState(ctx, "b", res.Checkpoint, []engine.Write{engine.Put("budgetRemaining", map[string]any{"set": nil})}, "")
		if err != nil {
			t.Fatal(err)
		}
		s := state(t, old)
		if s.BudgetRemaining == nil || *s.BudgetRemaining != 0 || !ticket.BudgetMissing(old.Values) {
			t.Fatalf("a null budget reads as %v (missing %t), want 0 and named", s.BudgetRemaining, ticket.BudgetMissing(old.Values))
		}
		res, err = e.ResumeAt(ctx, "b", old.ID, engine.RunConfig{})
		if err != nil {
			t.Fatal(err)
		}
		end := state(t, mustGet(t, e, "b", res.Checkpoint))
		calls := 0
		for _, m := range end.Messages {
			if m.ToolCall != nil {
				calls++
			}
		}
		blocked := 0
		for _, st := range end.Subtasks {
			if st.Status == ticket.StatusBlocked && strings.Contains(st.Result, "holds no tool budget") {
				blocked++
			}
		}
		if calls != 0 || blocked != len(end.Subtasks) || res.ModelCalls["executor"] != 0 {
			t.Fatalf("resumed with a null budget: %d tool calls, %d of %d subtasks blocked naming it (%+v), executor model calls %d",
				calls, blocked, len(end.Subtasks), end.Subtasks, res.ModelCalls["executor"])
		}
	})
}
