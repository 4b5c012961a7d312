package worker_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"sync"
	"testing"

	"rewind/engine"
	"rewind/engine/ticket"
	"rewind/engine/worker"
	"rewind/store/backend"
	"rewind/store/backend/backendtest"
)

// The engine's resume analysis after a real crash: a worker resuming three
// executors is SIGKILLed once one of them stored its writes (mid-fanout).
// The plan read afterwards names that one reused and the other two to
// redispatch, from the checkpoint the kill left; a new worker's resume does
// exactly that, and the outcome read from its result says so. On memory,
// which no second process can share, the kill is the run's context
// cancelled at the same moment (its later writes are refused as a dead
// process's would be lost).
func TestResumePlanAfterAKill(t *testing.T) {
	t.Parallel()
	exe := buildRewind(t)
	backendtest.Each(t, func(t *testing.T, be backendtest.Backend) {
		ctx := context.Background()
		// A database of its own: sources are per store, and other
		// packages' tests write the same records at the same time.
		spec := be.Spec(t, "resumeplan")
		st, err := backend.Open(ctx, spec)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		e, err := engine.New(st, ticket.NewGraph(), ticket.NewMock())
		if err != nil {
			t.Fatal(err)
		}
		var b [4]byte
		_, _ = rand.Read(b[:])
		thread := "plan-" + hex.EncodeToString(b[:])
		paused, err := e.Run(ctx, thread, ticket.Input(sentence), engine.RunConfig{InterruptBefore: []string{ticket.NodeExecutor}})
		if err != nil {
			t.Fatal(err)
		}
		before, err := e.PlanResume(ctx, thread, 0)
		if err != nil {
			t.Fatal(err)
		}
		if before.Checkpoint != paused.Checkpoint || len(before.Tasks) != 3 || len(before.Reused()) != 0 {
			t.Fatalf("plan before the run: %+v, want 3 tasks at @%d, none stored", before, paused.Checkpoint)
		}

		if !be.Shared {
			killInProcess(t, e, thread)
		} else {
			p, err := worker.Start(ctx, exe, []string{"worker", "resume", thread, "--store", spec, "--kill-at", string(worker.MidFanout)}, os.Environ())
			if err != nil {
				t.Fatal(err)
			}
			if o := collect(p); !o.killed {
				t.Fatalf("the worker was not killed at %s: %+v", worker.MidFanout, o)
			}
		}

		plan, err := e.PlanResume(ctx, thread, 0)
		if err != nil {
			t.Fatal(err)
		}
		if plan.Checkpoint != paused.Checkpoint || len(plan.Tasks) != 3 {
			t.Fatalf("plan after the kill: %+v, want the 3 executors of @%d", plan, paused.Checkpoint)
		}
		reused, redo := plan.Reused(), plan.Redispatched()
		if len(reused) != 1 || len(redo) != 2 {
			t.Fatalf("after a kill at mid-fanout: %d reused, %d to redispatch (%s), want 1 and 2", len(reused), len(redo), plan)
		}
		for _, pt := range plan.Tasks {
			if pt.Stored != (pt.ID == reused[0].ID) || (pt.Stored && (len(pt.Channels) == 0 || pt.ModelCalls != ticket.MockCallsPerSubtask)) {
				t.Errorf("planned task %+v", pt)
			}
		}
		// A checkpoint named explicitly plans the same.
		if at, err := e.PlanResume(ctx, thread, plan.Checkpoint); err != nil || len(at.Reused()) != 1 {
			t.Fatalf("plan at @%d: %+v, %v", plan.Checkpoint, at, err)
		}

		var res engine.Result
		if !be.Shared {
			res, err = e.Resume(ctx, thread, engine.RunConfig{})
		} else {
			p, serr := worker.Start(ctx, exe, []string{"worker", "resume", thread, "--store", spec}, os.Environ())
			if serr != nil {
				t.Fatal(serr)
			}
			o := collect(p)
			if o.result == nil {
				t.Fatalf("resume after the kill: %+v", o)
			}
			res = *o.result
		}
		if err != nil {
			t.Fatal(err)
		}
		out := plan.Outcome(res)
		if !out.Complete || out.From != plan.Checkpoint {
			t.Fatalf("outcome %+v: want the resume's first superstep from @%d", out, plan.Checkpoint)
		}
		if len(out.Reused) != 1 || out.Reused[0].ID != reused[0].ID || len(out.Redispatched) != 2 || len(out.RanAgain) != 0 || out.ModelCalls != 2*ticket.MockCallsPerSubtask {
			t.Fatalf("outcome %s (%+v), want 1 reused (%s), 2 redispatched with %d model calls, none ran again", out, out, reused[0].ID, 2*ticket.MockCallsPerSubtask)
		}
		// A plan from a checkpoint the resume did not start from is not
		// its outcome.
		if o := before.Outcome(engine.Result{Steps: []engine.StepReport{{From: plan.Checkpoint + 1}}}); o.Complete {
			t.Fatalf("an outcome from another checkpoint: %+v", o)
		}
		if done, err := e.PlanResume(ctx, thread, 0); err != nil || len(done.Tasks) != 0 {
			t.Fatalf("plan at the end: %+v, %v; want nothing pending", done, err)
		}
	})
}

// killInProcess resumes thread and "kills" the run once one executor
// stored its writes: the others are held before their model call until the
// run's context is cancelled, after which the store refuses their writes.
func killInProcess(t *testing.T, e *engine.Engine, thread string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	first := ""
	hook := func(point engine.HookPoint, info engine.HookInfo) {
		if info.Task == nil || info.Task.Node != ticket.NodeExecutor {
			return
		}
		switch point {
		case engine.HookBeforeModelCall:
			// The first executor makes all its calls (a tool round and
			// the finding); the others wait for the kill.
			mu.Lock()
			if first == "" {
				first = info.Task.ID
			}
			mine := first == info.Task.ID
			mu.Unlock()
			if !mine {
				<-ctx.Done()
			}
		case engine.HookTaskFinished:
			cancel()
		}
	}
	if _, err := e.Resume(ctx, thread, engine.RunConfig{Hook: hook}); err == nil {
		t.Fatal("the killed run finished")
	}
}
