package engine_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"rewind/engine"
	"rewind/engine/model"
)

// countingRunIDs names runs r1, r2, … in the order they start.
func countingRunIDs() engine.Option {
	var mu sync.Mutex
	n := 0
	return engine.WithRunIDs(func() string {
		mu.Lock()
		defer mu.Unlock()
		n++
		return fmt.Sprintf("r%d", n)
	})
}

// Issue 36, item 1: every invocation that writes is a run; a resume names
// the run it continues, and Runs tells the chain from the listings alone,
// in a new engine, on every store.
func TestRunsChainAResumeToTheRunItContinues(t *testing.T) {
	for _, sc := range storeCases {
		t.Run(sc.name, func(t *testing.T) {
			ctx := t.Context()
			st, reopen := sc.open(t)
			g := failsOnceGraph()
			e, err := engine.New(st, g, model.NewMock(model.Text(func(model.Request) (string, error) { return "ok", nil })), countingRunIDs())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.Run(ctx, "s", input("user"), engine.RunConfig{}); err == nil {
				t.Fatal("the flaky node's error should stop the run")
			}
			if _, err := e.Resume(ctx, "s", engine.RunConfig{}); err != nil {
				t.Fatal(err)
			}
			ok := func(engine.Checkpoint) ([]engine.Write, error) { return input("ok"), nil }
			if _, err := e.Answer(ctx, "s", ok, engine.RunConfig{RunKind: "approve"}); err != nil {
				t.Fatal(err)
			}
			runs, err := reopened(t, st, reopen, g).Runs(ctx, "s")
			if err != nil {
				t.Fatal(err)
			}
			checkRunsChain(t, runs)
			checkEventsNameTheirRun(t, e, runs)
			if _, err := e.Runs(ctx, "nope"); err == nil || !strings.Contains(err.Error(), "nope") {
				t.Errorf("the runs of an unknown thread: %v", err)
			}
		})
	}
}

// checkRunsChain: the turn r1 stopped and was continued by the resume
// r2, which the approval r3 continued.
func checkRunsChain(t *testing.T, runs engine.Runs) {
	t.Helper()
	if len(runs.List) != 3 {
		t.Fatalf("%d runs, want the turn, the resume and the approval: %+v", len(runs.List), runs.List)
	}
	turn, resume, approve := runs.List[0], runs.List[1], runs.List[2]
	if turn.ID != "r1" || turn.Kind != engine.KindTurn || turn.Status != engine.RunStopped || turn.First != 1 || len(turn.ContinuedBy) != 1 || turn.ContinuedBy[0] != "r2" {
		t.Errorf("the turn reads %+v, want r1 stopped, continued by r2", turn)
	}
	if resume.ID != "r2" || resume.Kind != engine.KindResume || resume.Continues != "r1" || resume.From != turn.Last || resume.Redispatched != 1 || resume.Status != engine.RunAwaitingApproval {
		t.Errorf("the resume reads %+v, want r2 from @%d continuing r1, 1 task redispatched, awaiting approval", resume, turn.Last)
	}
	if approve.ID != "r3" || approve.Kind != "approve" || approve.Continues != "r2" || approve.Status != engine.RunDone {
		t.Errorf("the approval reads %+v, want r3 continuing r2, done", approve)
	}
	for id, run := range runs.ByCheckpoint {
		s, _ := runs.Of(id)
		if s.ID != run || id < s.First || id > s.Last {
			t.Errorf("@%d is run %q's, whose checkpoints are @%d–@%d", id, run, s.First, s.Last)
		}
	}
	line := resume.Text()
	for _, want := range []string{"run r2 (resume) from @", "continues r1, wrote @", "redispatched 1", "awaiting-approval at @"} {
		if !strings.Contains(line, want) {
			t.Errorf("the resume's line %q does not say %q", line, want)
		}
	}
}

// checkEventsNameTheirRun: every stored event names the run of its
// checkpoint (none here reused another run's task).
func checkEventsNameTheirRun(t *testing.T, e *engine.Engine, runs engine.Runs) {
	t.Helper()
	evs, err := e.Events(t.Context(), "s", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		if ev.Type == engine.EventModelCalled {
			continue // stored with its task's writes, under its checkpoint's run
		}
		if want := runs.ByCheckpoint[ev.Checkpoint]; ev.Run != want {
			t.Errorf("a %s event of @%d names run %q, its checkpoint's is %q", ev.Type, ev.Checkpoint, ev.Run, want)
		}
	}
}
