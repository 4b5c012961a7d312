package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"rewind/engine"
	"rewind/engine/model"
	"rewind/engine/ticket"
	"rewind/store"
	"rewind/store/memory"
)

// modeModel is the ticket mock answering JSON requests "in" a JSON mode,
// as a provider that reports one does.
type modeModel struct{ inner model.Model }

func (m modeModel) Complete(ctx context.Context, req model.Request) (model.Response, error) {
	resp, err := m.inner.Complete(ctx, req)
	if err == nil && req.JSON != nil {
		resp.JSONMode = model.JSONObject
	}
	return resp, err
}

func calledModes(t *testing.T, e *engine.Engine, thread string) map[string]string {
	t.Helper()
	evs, err := e.Events(t.Context(), thread, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, ev := range evs {
		if ev.Type != engine.EventModelCalled {
			continue
		}
		var d struct {
			Role string `json:"role"`
			Mode string `json:"jsonMode"`
		}
		if err := json.Unmarshal(ev.Data, &d); err != nil {
			t.Fatal(err)
		}
		out[d.Role] += d.Mode + ";"
	}
	return out
}

// The JSON mode of each call is stored with the call and read back as
// its model.called event, on every store and after reopening it.
func TestModelCallsKeepTheirJSONMode(t *testing.T) {
	t.Parallel()
	for _, sc := range storeCases {
		t.Run(sc.name, func(t *testing.T) {
			st, reopen := sc.open(t)
			e, err := ticket.NewEngine(st, modeModel{ticket.NewMock()})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.Run(t.Context(), "m", ticket.Input(sentences[0]), engine.RunConfig{}); err != nil {
				t.Fatal(err)
			}
			check := func(e *engine.Engine, when string) {
				got := calledModes(t, e, "m")
				if got[model.RolePlanner] != "object;" || got[model.RoleCritic] != "object;object;" || strings.Trim(got[model.RoleExecutor], ";") != "" || got[model.RoleReply] != ";" {
					t.Errorf("%s: modes by role %q: want object for the planner and both critic calls, none for text calls", when, got)
				}
			}
			check(e, "this process")
			if reopen != nil {
				e2, err := ticket.NewEngine(reopen(), ticket.NewMock())
				if err != nil {
					t.Fatal(err)
				}
				check(e2, "after reopening")
			}
		})
	}
}

// Costs sums every stored call by role and by turn, forks included, on
// every store and after reopening it.
func TestCostsByRoleAndTurn(t *testing.T) {
	t.Parallel()
	for _, sc := range storeCases {
		t.Run(sc.name, func(t *testing.T) {
			ctx := t.Context()
			st, reopen := sc.open(t)
			e, err := ticket.NewEngine(st, ticket.NewMock())
			if err != nil {
				t.Fatal(err)
			}
			var want model.Usage
			wantRoles := map[string]engine.RoleUsage{}
			var starts []int64
			count := func(res engine.Result, err error) {
				t.Helper()
				if err != nil {
					t.Fatal(err)
				}
				want.Add(res.Usage)
				starts = append(starts, res.Steps[0].From) // the input or fork checkpoint
				for _, s := range res.Steps {
					for role, n := range s.ModelCalls {
						r := wantRoles[role]
						r.Calls += n
						wantRoles[role] = r
					}
				}
			}
			count(e.Run(ctx, "c", ticket.Input(sentences[0]), engine.RunConfig{}))
			count(e.Run(ctx, "c", ticket.Input(sentences[1]), engine.RunConfig{}))
			count(e.Fork(ctx, "c", 3, ticket.Input(sentences[2]), engine.RunConfig{}))
			check := func(e *engine.Engine, when string) {
				c, err := e.Costs(ctx, "c")
				if err != nil {
					t.Fatal(err)
				}
				if c.Total != want || want.PromptTokens == 0 {
					t.Errorf("%s: total %+v, the runs reported %+v", when, c.Total, want)
				}
				var sum model.Usage
				for role, r := range c.Roles {
					if r.Calls != wantRoles[role].Calls {
						t.Errorf("%s: %s made %d calls, the runs reported %d", when, role, r.Calls, wantRoles[role].Calls)
					}
					sum.Add(r.Usage)
				}
				if sum != c.Total || len(c.Roles) != len(wantRoles) {
					t.Errorf("%s: roles %+v do not add up to %+v", when, c.Roles, c.Total)
				}
				if len(c.Turns) != 3 {
					t.Fatalf("%s: %d turns, want 3 (two runs and a fork)", when, len(c.Turns))
				}
				var turns model.Usage
				for i, tu := range c.Turns {
					if tu.Start != starts[i] || tu.Roles[model.RolePlanner].Calls != 1 {
						t.Errorf("%s: turn %d starts at %d with %d planner call(s), want start %d and one", when, i, tu.Start, tu.Roles[model.RolePlanner].Calls, starts[i])
					}
					turns.Add(tu.Total)
				}
				if turns != c.Total {
					t.Errorf("%s: turns add up to %+v, total %+v", when, turns, c.Total)
				}
			}
			check(e, "this process")
			if reopen != nil {
				e2, err := ticket.NewEngine(reopen(), ticket.NewMock())
				if err != nil {
					t.Fatal(err)
				}
				check(e2, "after reopening")
			}
			if _, err := e.Costs(ctx, "nobody"); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("an unknown thread: %v", err)
			}
		})
	}
}

// --max-tokens-per-turn: a run stops between supersteps once the turn has
// used its budget, with everything stored; a resume with the same budget
// stops at once (the turn's earlier tokens count), one without it finishes.
func TestTokenBudgetStopsBetweenSupersteps(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	mock := ticket.NewMock()
	e, err := ticket.NewEngine(memory.New(), mock)
	if err != nil {
		t.Fatal(err)
	}
	// One token over what the planner's superstep uses: the executors
	// still run (the budget is not used up before them), the critic not.
	probe, err := ticket.NewEngine(memory.New(), ticket.NewMock())
	if err != nil {
		t.Fatal(err)
	}
	full, err := probe.Run(ctx, "p", ticket.Input(sentences[0]), engine.RunConfig{InterruptAfter: []string{ticket.NodePlanner}})
	if err != nil {
		t.Fatal(err)
	}
	budget := full.Usage.PromptTokens + full.Usage.CompletionTokens + 1

	res, err := e.Run(ctx, "b", ticket.Input(sentences[0]), engine.RunConfig{MaxTokensPerTurn: budget})
	var be *engine.BudgetError
	if !errors.As(err, &be) || !errors.Is(err, engine.ErrTokenBudget) {
		t.Fatalf("run: %v, want a *BudgetError", err)
	}
	if res.Status != "interrupted" || len(res.Pending) != 1 || res.Pending[0].Node != ticket.NodeCritic || res.ModelCalls[model.RoleExecutor] != 3*ticket.MockCallsPerSubtask || res.ModelCalls[model.RoleCritic] != 0 {
		t.Fatalf("stopped %s with pending %v after calls %v: want the three executors run and the critic pending", res.Status, res.Pending, res.ModelCalls)
	}
	if be.Used < budget || be.Budget != budget || be.Checkpoint != res.Checkpoint {
		t.Errorf("error %+v", be)
	}
	if !fixedBy(err, engine.FixResume, "b") || !fixedBy(err, engine.FixBudget, "b") {
		t.Errorf("%v does not offer a resume and a larger budget", err)
	}
	for _, want := range []string{`thread "b"`, "token budget of 465", "all of it stored", "critic"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
	latest, err := e.Latest(ctx, "b")
	if err != nil || latest.ID != res.Checkpoint || len(latest.Tasks) != 1 {
		t.Fatalf("latest %d with %d tasks, %v", latest.ID, len(latest.Tasks), err)
	}

	// The engine's own budget (what the app sets from the flag) applies
	// to a run that names none; the turn's earlier tokens count on resume.
	before := mock.Total()
	e.SetMaxTokensPerTurn(budget)
	res, err = e.Resume(ctx, "b", engine.RunConfig{})
	if !errors.Is(err, engine.ErrTokenBudget) || mock.Total() != before || res.Checkpoint != latest.ID {
		t.Fatalf("resume under the same budget: %v after %d more call(s), at %d", err, mock.Total()-before, res.Checkpoint)
	}
	res, err = e.Resume(ctx, "b", engine.RunConfig{MaxTokensPerTurn: 1 << 30})
	if err != nil || res.Status != "done" {
		t.Fatalf("resume with a larger budget: %s %v", res.Status, err)
	}
	// A new turn starts from nothing.
	e.SetMaxTokensPerTurn(budget)
	if _, err := e.Run(ctx, "b", ticket.Input(sentences[1]), engine.RunConfig{}); !errors.Is(err, engine.ErrTokenBudget) {
		t.Fatalf("second turn: %v", err)
	}
	if c, err := e.Costs(ctx, "b"); err != nil || len(c.Turns) != 2 || c.Turns[1].Roles[model.RolePlanner].Calls != 1 {
		t.Fatalf("costs after the second turn's stop: %+v %v", c.Turns, err)
	}
}

// Tasks that finished in a superstep another task failed have spent their
// tokens: Costs counts their stored writes' calls, once, before and after
// the resume folds them into a checkpoint.
func TestCostsCountAHalfFinishedSuperstep(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	mock := ticket.NewMock()
	e, err := ticket.NewEngine(memory.New(), mock)
	if err != nil {
		t.Fatal(err)
	}
	mock.FailRole(model.RoleExecutor, 1)
	if _, err := e.Run(ctx, "h", ticket.Input(sentences[0]), engine.RunConfig{}); err == nil {
		t.Fatal("the failing executor did not fail the run")
	}
	c, err := e.Costs(ctx, "h")
	if err != nil || c.Roles[model.RoleExecutor].Calls != 2*ticket.MockCallsPerSubtask || c.Roles[model.RoleExecutor].CompletionTokens == 0 {
		t.Fatalf("after the failure: executor %+v, %v; want the two stored executors' calls", c.Roles[model.RoleExecutor], err)
	}
	if _, err := e.Resume(ctx, "h", engine.RunConfig{}); err != nil {
		t.Fatal(err)
	}
	// Three executors, then the one the critic sent back.
	if c, err = e.Costs(ctx, "h"); err != nil || c.Roles[model.RoleExecutor].Calls != 4*ticket.MockCallsPerSubtask || strings.Count(calledModes(t, e, "h")[model.RoleExecutor], ";") != 4*ticket.MockCallsPerSubtask {
		t.Fatalf("after the resume: executor %+v, %v; want four calls, none counted twice", c.Roles[model.RoleExecutor], err)
	}
}
