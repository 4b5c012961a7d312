package worker_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"rewind/engine"
	"rewind/engine/ticket"
	"rewind/store"
	"rewind/store/backend/backendtest"
)

// planStores opens a fresh memory store, SQLite file and PostgreSQL
// database (skipped without REWIND_TEST_POSTGRES, failed in CI).
func planStores(t *testing.T, f func(t *testing.T, st store.Store)) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) { f(t, b.Open(t, "plan")) })
}

// nodes names tasks by node, sorted, for comparing what ran with a plan
// whose replacement tasks were named before their checkpoint was stored.
func nodes(ts []engine.Task) string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Node
	}
	return strings.Join(out, ",")
}

// Issue 32, item 5: the resume analysis includes the source recheck, so
// the plan says what the resume then does. After a kill in the middle of
// a fan-out and a change to the record the finished executor read, the
// plan reruns that executor (its stored writes are not reused) and the
// resume does; after an interrupt before the critic and a change to a
// record a finding was read from, the plan drops the critic and re-runs
// that executor first, and the resume does. On d1679bd the first plan
// said the executor's writes were reused, and the second that the critic
// was redispatched, while the resumes re-ran executors.
func TestResumePlanIncludesTheSourceRecheck(t *testing.T) {
	t.Parallel()
	planStores(t, func(t *testing.T, st store.Store) {
		ctx := t.Context()
		src := ticket.NewMemorySources()
		e, err := ticket.NewEngine(st, ticket.NewMock(), ticket.WithSources(src))
		if err != nil {
			t.Fatal(err)
		}
		check := func(what string, plan engine.ResumePlan) {
			t.Helper()
			res, err := e.Resume(ctx, plan.Thread, engine.RunConfig{})
			if err != nil || res.Status != "done" {
				t.Fatalf("%s: resume: %v %s", what, err, res.Status)
			}
			o := plan.Outcome(res)
			if !o.Complete || o.Differs != "" || len(o.RanAgain) != 0 ||
				nodes(o.Redispatched) != nodes(plan.Redispatched()) || nodes(o.Reused) != nodes(plan.Reused()) {
				t.Fatalf("%s: plan %s; the resume did %s (ran %s, reused %s)", what, plan, o, engine.DescribeTasks(o.Redispatched), engine.DescribeTasks(o.Reused))
			}
		}

		// Killed mid-fan-out: one executor's writes stored; then the
		// record it read changes.
		if _, err := e.Run(ctx, "fanout", ticket.Input(sentence), engine.RunConfig{InterruptBefore: []string{ticket.NodeExecutor}}); err != nil {
			t.Fatal(err)
		}
		killInProcess(t, e, "fanout")
		before, err := e.PlanResume(ctx, "fanout", 0)
		if err != nil || len(before.Reused()) != 1 || before.Recheck != nil {
			t.Fatalf("plan after the kill: %s, %v; want 1 reused", before, err)
		}
		read := readBy(t, e, "fanout", before)
		if _, err := src.Bump(ctx, read); err != nil {
			t.Fatal(err)
		}
		plan, err := e.PlanResume(ctx, "fanout", 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(plan.Reused()) != 0 || len(plan.Redispatched()) != 3 || plan.Recheck == nil || !strings.Contains(plan.Recheck.Reason, read) {
			t.Fatalf("plan after %s changed: %s; want its executor run again with the other two", read, plan)
		}
		check("a source changed after a kill mid-fan-out", plan)

		// Stopped before the critic; then a record a finding was read
		// from changes.
		if _, err := e.Run(ctx, "critic", ticket.Input(sentence), engine.RunConfig{InterruptBefore: []string{ticket.NodeCritic}}); err != nil {
			t.Fatal(err)
		}
		if _, err := src.Bump(ctx, "shipments/SO20260901"); err != nil {
			t.Fatal(err)
		}
		plan, err = e.PlanResume(ctx, "critic", 0)
		if err != nil {
			t.Fatal(err)
		}
		if nodes(plan.Redispatched()) != ticket.NodeExecutor || len(plan.Tasks) != 1 || !plan.Tasks[0].Dropped || plan.Tasks[0].Node != ticket.NodeCritic {
			t.Fatalf("plan before the critic after the change: %s; want the critic dropped and the shipping executor run", plan)
		}
		check("a source changed before the critic", plan)

		// Unchanged sources: no recheck, and the plan still holds.
		if _, err := e.Run(ctx, "calm", ticket.Input(sentence), engine.RunConfig{InterruptBefore: []string{ticket.NodeCritic}}); err != nil {
			t.Fatal(err)
		}
		if plan, err = e.PlanResume(ctx, "calm", 0); err != nil || plan.Recheck != nil || nodes(plan.Redispatched()) != ticket.NodeCritic {
			t.Fatalf("plan with nothing changed: %s, %v", plan, err)
		}
		check("nothing changed", plan)
	})
}

// readBy is the record the plan's one reused executor read, from its
// stored writes.
func readBy(t *testing.T, e *engine.Engine, thread string, plan engine.ResumePlan) string {
	t.Helper()
	ws, err := e.PendingWrites(context.Background(), thread, plan.Checkpoint)
	if err != nil {
		t.Fatal(err)
	}
	for _, tw := range ws {
		for _, w := range tw.Writes {
			var sts []ticket.Subtask
			if w.Channel == "subtasks" && json.Unmarshal(w.Value, &sts) == nil && len(sts) == 1 && sts[0].Source != "" {
				return sts[0].Source
			}
		}
	}
	t.Fatalf("no stored executor read a record at @%d", plan.Checkpoint)
	return ""
}
