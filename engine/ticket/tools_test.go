package ticket

import (
	"context"
	"strings"
	"sync"
	"testing"

	"rewind/engine"
	"rewind/engine/model"
)

// badTools answers an executor's calls from a script, call by call, and
// every other role as the mock does.
type badTools struct {
	mu     sync.Mutex
	script []model.Response // an executor's answers in order; the last repeats
	n      int
}

func (b *badTools) respond(req model.Request) (model.Response, error) {
	if req.Role != model.RoleExecutor {
		return Respond(req)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	r := b.script[min(b.n, len(b.script)-1)]
	b.n++
	return r, nil
}

func call(id, name, args string) model.Response {
	return model.Response{ToolCalls: []model.ToolCall{{ID: id, Name: name, Arguments: args}}}
}

// A model that calls a tool that does not exist, then writes arguments the
// tool cannot take, is answered with an error tool message each time and
// gets to try again: the turn ends done, the errors are events, and each
// error message answers its call (no request is refused for it).
func TestBadToolCallsAreAnsweredWithErrors(t *testing.T) {
	t.Parallel()
	m := &badTools{script: []model.Response{
		call("c1", "order_lookup", `{"order":"SO20260901"}`),
		call("c2", "lookup_order", `{order: SO20260901`),
		call("c3", "lookup_order", `{"order":"SO20260901"}`),
		{Text: "t-1-order: stage packed."},
	}}
	e := newMemoryEngineWith(t, model.NewMock(m.respond))
	res, err := e.Run(context.Background(), "b", Input("What is the status of order SO20260901?"), engine.RunConfig{InterruptAfter: []string{NodeExecutor}})
	if err != nil {
		t.Fatal(err)
	}
	st := latestState(t, e, "b")
	errs := eventsOf(t, e, "b", EventToolError)
	if len(errs) != 2 || !strings.Contains(errs[0]["error"].(string), `unknown tool "order_lookup": the tools are lookup_order,`) ||
		!strings.Contains(errs[1]["error"].(string), "are not a JSON object") {
		t.Fatalf("tool.error events %v", errs)
	}
	var results []string
	for _, msg := range st.Messages {
		if msg.Role == RoleTool {
			results = append(results, msg.Content)
		}
	}
	if len(results) != 3 || !strings.Contains(results[0], `"error"`) || !strings.Contains(results[1], `"error"`) || strings.Contains(results[2], `"error"`) {
		t.Fatalf("tool messages %q: want two errors, then the record", results)
	}
	if _, _, err := toolArgs(ScenarioTicket, model.ToolCall{Name: "lookup_order", Arguments: `{"id":"SO20260901"}`}); err == nil || !strings.Contains(err.Error(), `lookup_order needs "order"`) {
		t.Errorf("a call without the tool's argument: %v", err)
	}
	if sub := st.Subtasks[0]; sub.Status != StatusDone || sub.ToolCalls != 1 || sub.Result != "t-1-order: stage packed." || *st.BudgetRemaining != TurnToolBudget-1 {
		t.Fatalf("subtask %+v, budget %d, status %s: want one tool call run and counted", sub, *st.BudgetRemaining, res.Status)
	}
}

// A model that keeps calling tools is refused past the task's rounds and
// then stopped: the task ends degraded, saying why, and the turn goes on;
// the calls that ran stay within the turn's budget.
func TestAToolLoopIsStopped(t *testing.T) {
	t.Parallel()
	m := &badTools{script: []model.Response{call("c", "lookup_order", `{"order":"SO20260901"}`)}}
	e := newMemoryEngineWith(t, model.NewMock(m.respond))
	res, err := e.Run(context.Background(), "l", Input("What is the status of order SO20260901?"), engine.RunConfig{})
	if err != nil || res.Status != "done" {
		t.Fatalf("run: %s %v, want done", res.Status, err)
	}
	st := latestState(t, e, "l")
	if len(eventsOf(t, e, "l", EventToolLoop)) == 0 || len(eventsOf(t, e, "l", EventToolRefused)) == 0 {
		t.Fatal("no tool.loop or tool.refused event")
	}
	if !st.Degraded || *st.BudgetRemaining < 0 || !strings.Contains(st.Subtasks[0].Result, "kept calling tools") {
		t.Fatalf("degraded %t, budget %d, result %q", st.Degraded, *st.BudgetRemaining, st.Subtasks[0].Result)
	}
	if m.n > 2*(MaxToolRounds+2) {
		t.Fatalf("%d executor calls: the loop was not bounded", m.n)
	}
}

// An empty answer is no finding: the task says so and the turn goes on.
func TestAnEmptyAnswerIsNoFinding(t *testing.T) {
	t.Parallel()
	m := &badTools{script: []model.Response{{Text: "  "}}}
	e := newMemoryEngineWith(t, model.NewMock(m.respond))
	res, err := e.Run(context.Background(), "x", Input("What is the status of order SO20260901?"), engine.RunConfig{})
	if err != nil || res.Status != "done" {
		t.Fatalf("run: %s %v", res.Status, err)
	}
	st := latestState(t, e, "x")
	if !st.Degraded || !strings.HasPrefix(st.Subtasks[0].Result, "not checked: the model gave no finding") || len(eventsOf(t, e, "x", EventToolError)) == 0 {
		t.Fatalf("degraded %t, result %q", st.Degraded, st.Subtasks[0].Result)
	}
}
