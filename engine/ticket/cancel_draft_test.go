package ticket_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"rewind/engine"
	"rewind/engine/ticket"
	"rewind/store"
	"rewind/store/memory"
)

const followUp = "Thanks. When will it arrive?"

// atGate runs a draft turn on thread th and returns the gate checkpoint
// and the draft it waits on.
func atGate(t *testing.T, e *engine.Engine, th string) (int64, ticket.Operation) {
	t.Helper()
	res, err := e.Run(t.Context(), th, draftTurn(sentence, grant(t, time.Hour, time.Now())), engine.RunConfig{})
	if err != nil || res.Status != engine.RunAwaitingApproval {
		t.Fatalf("draft turn: %v %s", err, res.Status)
	}
	return res.Checkpoint, pending(t, e, th, res.Checkpoint)
}

// approveAndResume records an approval of op on the gate checkpoint and
// resumes from it, as an answer does.
func approveAndResume(ctx context.Context, e *engine.Engine, th string, gate int64, op string) (engine.Result, error) {
	cp, err := e.UpdateState(ctx, th, gate, ticket.Approve(op, ticket.Decision{Approved: true, By: "test"}), "")
	if err != nil {
		return engine.Result{}, err
	}
	return e.ResumeAt(ctx, th, cp.ID, engine.RunConfig{})
}

// opAt is operation id as checkpoint cp of th records it.
func opAt(t *testing.T, e *engine.Engine, th string, cp int64, id string) ticket.Operation {
	t.Helper()
	return state(t, mustGet(t, e, th, cp)).Operations[id]
}

// Issue 32, item 2: cancel (or discard) ends the draft its run waited on
// in the checkpoint that cancels, with the reason; a later turn without a
// draft ends done instead of at the gate for it, a fork from the gate
// does too, a replay of the gate does not ask about it, and nothing makes
// its draft. On d1679bd the turn after the cancel ended at the gate for
// the cancelled draft, and approving it created the draft.
func TestCancelledDraftNeverComesBack(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, st store.Store, _ func() store.Store) {
		ctx := t.Context()
		e := draftEngine(t, st)
		end := map[string]func(th string) (engine.Checkpoint, error){
			"cancel":  func(th string) (engine.Checkpoint, error) { return e.Cancel(ctx, th, "the customer withdrew it") },
			"discard": func(th string) (engine.Checkpoint, error) { return e.DiscardPending(ctx, th) },
		}
		for name, endRun := range end {
			th := "c-" + name
			gate, op := atGate(t, e, th)
			ended, err := endRun(th)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if got := opAt(t, e, th, ended.ID, op.ID); got.Status != ticket.OpCancelled || !strings.Contains(got.Result, ended.Metadata.Reason) || ended.ParentID != gate {
				t.Fatalf("%s at @%d (parent @%d): operation %+v, want it cancelled with %q", name, ended.ID, ended.ParentID, got, ended.Metadata.Reason)
			}
			// A later turn on the branch, without a draft.
			res, err := e.Run(ctx, th, ticket.Turn{Text: followUp}.Writes(), engine.RunConfig{})
			if err != nil || res.Status != engine.RunDone || res.Interrupt != nil {
				t.Fatalf("%s, then a turn: %v %s %+v; want done, no gate", name, err, res.Status, res.Interrupt)
			}
			if got := opAt(t, e, th, res.Checkpoint, op.ID); got.Status != ticket.OpCancelled {
				t.Fatalf("%s, then a turn: operation %+v", name, got)
			}
			// An approval of it now finds no gate to answer.
			if _, err := approveAndResume(ctx, e, th, res.Checkpoint, op.ID); !errors.Is(err, engine.ErrNothingToResume) {
				t.Fatalf("%s, then approve: %v, want nothing to resume", name, err)
			}
			// A fork from the gate itself, without a draft.
			res, err = e.Fork(ctx, th, gate, ticket.Turn{Text: followUp}.Writes(), engine.RunConfig{})
			if err != nil || res.Status != engine.RunDone {
				t.Fatalf("%s, then a fork from the gate: %v %s %+v; want done, no gate", name, err, res.Status, res.Interrupt)
			}
			if got := opAt(t, e, th, res.Checkpoint, op.ID); got.Status != ticket.OpSuperseded {
				t.Fatalf("%s, then a fork from the gate: operation %+v, want superseded", name, got)
			}
			// A replay of the gate: a new run, which did not draft it.
			res, err = e.Replay(ctx, th, gate, engine.RunConfig{})
			if err != nil || res.Status != engine.RunDone {
				t.Fatalf("%s, then a replay of the gate: %v %s %+v; want done, no gate", name, err, res.Status, res.Interrupt)
			}
			if got := opAt(t, e, th, res.Checkpoint, op.ID); got.Status != ticket.OpSuperseded || !strings.Contains(got.Result, "earlier run") {
				t.Fatalf("%s, then a replay of the gate: operation %+v, want superseded", name, got)
			}
			if ds := draftsOf(t, st, th); len(ds) != 0 {
				t.Fatalf("%s: %d draft(s) made after the run was cancelled", name, len(ds))
			}
		}
	})
}

// An approval recorded before the cancel does not make the draft either:
// the approved operation is cancelled with the run, and a replay of the
// answered gate (a new run) does not perform it.
func TestCancelAfterTheAnswerEndsTheApprovedDraft(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	st := memory.New()
	e := draftEngine(t, st)
	gate, op := atGate(t, e, "a")
	answered, err := e.UpdateState(ctx, "a", gate, ticket.Approve(op.ID, ticket.Decision{Approved: true, By: "test"}), "")
	if err != nil {
		t.Fatal(err)
	}
	ended, err := e.Cancel(ctx, "a", "changed my mind")
	if err != nil {
		t.Fatal(err)
	}
	if got := opAt(t, e, "a", ended.ID, op.ID); got.Status != ticket.OpCancelled {
		t.Fatalf("operation %+v, want cancelled", got)
	}
	res, err := e.Replay(ctx, "a", answered.ID, engine.RunConfig{})
	if err != nil || res.Status != engine.RunDone {
		t.Fatalf("replay of the answered gate: %v %s", err, res.Status)
	}
	if got := opAt(t, e, "a", res.Checkpoint, op.ID); got.Status != ticket.OpSuperseded {
		t.Fatalf("replay of the answered gate: operation %+v, want superseded", got)
	}
	if ds := draftsOf(t, st, "a"); len(ds) != 0 {
		t.Fatalf("%d draft(s) made", len(ds))
	}
	// The answer resumed in its own run still makes it (a resume is the
	// same run): on a fresh thread, approve and resume.
	gate, op = atGate(t, e, "b")
	if res, err := approveAndResume(ctx, e, "b", gate, op.ID); err != nil || res.Status != engine.RunDone || len(draftsOf(t, st, "b")) != 1 {
		t.Fatalf("approve in its own run: %v %s, %d draft(s)", err, res.Status, len(draftsOf(t, st, "b")))
	}
}

// A cancel that comes after create_draft made the draft but before its
// checkpoint was stored (the worker killed in between) records the draft
// as made: done, not cancelled, and nothing makes it again.
func TestCancelAfterTheDraftWasMadeSaysSo(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, st store.Store, _ func() store.Store) {
		ctx := t.Context()
		e := draftEngine(t, st)
		gate, op := atGate(t, e, "m")
		answered, err := e.UpdateState(ctx, "m", gate, ticket.Approve(op.ID, ticket.Decision{Approved: true, By: "test"}), "")
		if err != nil {
			t.Fatal(err)
		}
		run, kill := context.WithCancel(ctx)
		hook := func(point engine.HookPoint, _ engine.HookInfo) {
			if point == ticket.PointAfterSideEffect {
				kill() // as if SIGKILLed: the draft is made, its checkpoint never stored
			}
		}
		if _, err := e.ResumeAt(run, "m", answered.ID, engine.RunConfig{Hook: hook}); err == nil {
			t.Fatal("the killed run finished")
		}
		if n := len(draftsOf(t, st, "m")); n != 1 {
			t.Fatalf("%d draft(s) before the cancel, want the one made", n)
		}
		ended, err := e.Cancel(ctx, "m", "too late")
		if err != nil {
			t.Fatal(err)
		}
		if got := opAt(t, e, "m", ended.ID, op.ID); got.Status != ticket.OpDone || !got.Reused || !strings.Contains(got.Result, "made before the run was cancelled") {
			t.Fatalf("operation %+v after the cancel, want done: its draft was made", got)
		}
		if n := len(draftsOf(t, st, "m")); n != 1 {
			t.Fatalf("%d draft(s) after the cancel", n)
		}
	})
}
