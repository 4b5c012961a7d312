package engine

import (
	"context"
	"errors"
	"fmt"
	"rewind/engine/event"
)

// ErrNothingToReplay: the checkpoint has no tasks due (it ends a turn), so
// there is nothing to run again; a fork with new input starts a new turn.
var ErrNothingToReplay = errors.New("nothing to replay")

// Replay runs the tasks due at checkpoint id again, on a new branch: a
// child of id (source fork, Metadata.Replay) with id's values and its due
// tasks under new ids, driven on from there. Nothing of id's own
// continuation is reused or changed, and no input is added: what differs
// on the new branch is only what the nodes do differently this time (a
// real model's answers, a source that changed, a fixed bug).
func (e *Engine) Replay(ctx context.Context, thread string, id int64, cfg RunConfig) (_ Result, err error) {
	if id <= 0 {
		return Result{}, Fixable(thread, 0, fmt.Errorf("replay thread %q: %w: name the checkpoint to run again from", threadName(thread), ErrNoCheckpoint), LogFix(thread))
	}
	base, release, epoch, err := e.lockAt(ctx, thread, id, cfg)
	if err != nil {
		return Result{}, err
	}
	defer func() { err = released(err, release) }()
	if len(base.Tasks) == 0 {
		return Result{}, fmt.Errorf("replay thread %q at checkpoint %d: %w: it ends a turn with no tasks due; replay an earlier checkpoint of the turn (its input checkpoint runs the whole turn again) or fork it with new input", threadName(thread), id, ErrNothingToReplay)
	}
	latest, err := e.store.Latest(ctx, thread)
	if err != nil {
		return Result{}, fmt.Errorf("replay thread %q: %w", threadName(thread), err)
	}
	if err := e.checkFork(ctx, thread, base); err != nil {
		return Result{}, err
	}
	if err := e.checkSession(ctx, fmt.Sprintf("replay thread %q from @%d", threadName(thread), base.ID), thread, base, base.Tasks, &cfg); err != nil {
		return Result{}, err
	}
	r := &runner{e: e, thread: thread, epoch: epoch, cfg: cfg, lastID: latest.ID, run: e.newRun(KindReplay, cfg, "")}
	r.res = Result{Thread: thread, Start: base.ID, MessagesBefore: base.Values.Len("messages"), ModelCalls: map[string]int{}}
	cp := Checkpoint{Thread: thread, ID: r.lastID + 1, ParentID: base.ID, Step: base.Step + 1, Source: SourceFork, Values: base.Values,
		Metadata: Metadata{ForkedFrom: base.ID, Replay: true}}
	cp.Tasks = reid(thread, cp.ID, cp.Step, base.Tasks)
	events := []Event{r.event("", "", event.Fork{Parent: base.ID, Replay: true, Tasks: describeTasks(cp.Tasks)})}
	if interrupt := r.interruptBefore(cp.Tasks); interrupt != nil {
		cp.Metadata.Interrupt = interrupt
		events = append(events, r.event(interrupt.Node, "", event.Interrupt(*interrupt)))
		r.res.Interrupt = interrupt
	}
	if err := r.commit(ctx, &cp, &base, nil, 0, events); err != nil {
		return Result{}, err
	}
	r.runStart = cp.ID // a new run, of what was due at base
	return r.drive(ctx, cp)
}
