package engine

import (
	"context"
	"errors"
	"fmt"
	"rewind/engine/event"
	"strings"

	"rewind/engine/chainformat"
	"rewind/engine/internal/userpanic"
	"rewind/store"
)

// Run statuses: where a thread's run stands. Each checkpoint records the
// status its commit left the run in (Metadata.Status, stored in the
// listing), so `rewind threads` and `show` read it without a state.
//
// A process cannot record its own death: a run whose worker was killed,
// or stopped on an error a resume can retry, stays "running" in its
// listing until a resume carries it on, and LiveStatus shows it as
// stopped once no process holds the thread's lock. Only what a resume
// must not revive is recorded as an end: failed and cancelled.
const (
	// RunRunning: tasks are pending and nothing stopped the run on purpose.
	RunRunning = chainformat.StatusRunning
	// RunPaused: stopped before or after a node (an interrupt), at the
	// turn's token budget (with a reason), or its state was edited (an
	// update) with tasks pending: a resume carries on.
	RunPaused = "paused"
	// RunAwaitingApproval: only a gate (Graph.Gate) is pending.
	RunAwaitingApproval = "awaiting-approval"
	// RunDone: no task is pending.
	RunDone = "done"
	// RunFailed: a node ended the run (NodeContext.Fail, Fail); its pending
	// tasks were dropped and no resume revives it.
	RunFailed = "failed"
	// RunCancelled: a person cancelled it (Engine.Cancel) or discarded its
	// pending tasks; no resume revives it, and a late write of the worker
	// that ran it is refused (it was fenced).
	RunCancelled = "cancelled"
	// RunStopped is never stored: it is what LiveStatus shows for a run
	// its listing says is running when no process holds the thread's
	// writer lock (stopped with x or Ctrl-C, its process killed, or ended
	// on an error a resume can retry). A resume carries it on.
	RunStopped = "stopped"
)

// Event types of a run's end.
const (
	EventRunFailed    = event.TypeRunFailed
	EventRunCancelled = event.TypeRunCancelled
)

// RunStatus is where a run stands as of one checkpoint.
type RunStatus struct {
	Status     string `json:"status"`
	Checkpoint int64  `json:"checkpoint"`
	// Reason says why a run failed or was cancelled, or paused at its
	// token budget.
	Reason string `json:"reason,omitempty"`
	// Fix is what the node that failed the run said would fix it
	// (NodeContext.Fail): none for a run stored before fixes were.
	Fix []Fix `json:"-"`
}

// Gate declares a node that may pause the run for a person's answer
// (AwaitApproval): a checkpoint whose only pending tasks are gates leaves
// the run awaiting approval.
func (g *Graph) Gate(node string) *Graph {
	if g.gates == nil {
		g.gates = map[string]bool{}
	}
	g.gates[node] = true
	return g
}

// StatusOf is the run status checkpoint cp records, or, for one stored
// before statuses were, the one its tasks and interrupt imply. It reads
// listings too (History), whose tasks carry only their nodes.
func (g *Graph) StatusOf(cp Checkpoint) RunStatus {
	st := RunStatus{Status: cp.Metadata.Status, Checkpoint: cp.ID, Reason: cp.Metadata.Reason, Fix: fixesOf(cp.Thread, cp.Metadata.Fixes)}
	if st.Status == "" {
		st.Status = g.derivedStatus(cp)
	}
	return st
}

// derivedStatus is the status a checkpoint's shape implies.
func (g *Graph) derivedStatus(cp Checkpoint) string {
	if len(cp.Tasks) == 0 {
		return RunDone
	}
	if in := cp.Metadata.Interrupt; in != nil && in.When != "approval" {
		return RunPaused
	}
	gates := true
	for _, t := range cp.Tasks {
		gates = gates && g.gates[t.Node]
	}
	switch {
	case gates && cp.Source != SourceUpdate:
		return RunAwaitingApproval
	case cp.Source == SourceUpdate:
		// Someone changed the state (an answer at the gate, an edit):
		// nothing runs until a resume.
		return RunPaused
	}
	return RunRunning
}

// Status reads where thread's run stands from its newest checkpoint's
// listing (no state is read).
func (e *Engine) Status(ctx context.Context, thread string) (RunStatus, error) {
	rows, err := e.History(ctx, thread, 0, 1)
	if err != nil {
		return RunStatus{}, err
	}
	if len(rows) == 0 {
		return RunStatus{}, threadNotFound(thread)
	}
	return e.graph.StatusOf(rows[0]), nil
}

// stoppedReason is LiveStatus's reason for a stopped run.
const stoppedReason = "no process runs it: a resume carries it on"

// LiveStatus is where thread's run stands now, as it is shown: Status,
// but a run whose listing says running while no process holds the
// thread's writer lock (store.LockHolders) is RunStopped, not running: a
// process cannot record its own death. A store that cannot name a lock's
// holder keeps the listing's word. The listing is read again after the
// lock: a run that ended or began meanwhile shows as its newest listing
// says.
func (e *Engine) LiveStatus(ctx context.Context, thread string) (RunStatus, error) {
	st, err := e.Status(ctx, thread)
	if err != nil {
		return st, err
	}
	return e.live(ctx, thread, st)
}

// LiveStatusOf is LiveStatus from the newest listing the store read with
// t (store.Thread.Latest), so a list of threads with their statuses is
// one read: it reads the thread only for a run its listing says is
// running, or when the store gave no listing.
func (e *Engine) LiveStatusOf(ctx context.Context, t store.Thread) (RunStatus, error) {
	if t.Latest.ID == 0 || t.Latest.ID != t.LatestID {
		return e.LiveStatus(ctx, t.ID)
	}
	return e.live(ctx, t.ID, e.graph.StatusOf(e.graph.listing(t.ID, t.Latest)))
}

// live is st, the status of thread's newest listing, as it stands now.
func (e *Engine) live(ctx context.Context, thread string, st RunStatus) (RunStatus, error) {
	if st.Status != RunRunning {
		return st, nil
	}
	h, ok := e.raw().(store.LockHolders)
	if !ok {
		return st, nil
	}
	who, err := h.LockHolder(ctx, thread)
	if err != nil {
		return RunStatus{}, fmt.Errorf("who runs thread %v: %w", store.Name(thread), err)
	}
	if who != "" {
		return st, nil
	}
	again, err := e.Status(ctx, thread)
	if err != nil || again.Checkpoint != st.Checkpoint || again.Status != RunRunning {
		return again, err
	}
	return RunStatus{Status: RunStopped, Checkpoint: st.Checkpoint, Reason: stoppedReason}, nil
}

// Errors of a run that ended and must not be revived.
var (
	ErrRunFailed    = errors.New("the run failed")
	ErrRunCancelled = errors.New("the run was cancelled")
)

// RunEndedError refuses to carry on a run that failed or was cancelled.
type RunEndedError struct {
	Thread string
	RunStatus
}

func (e *RunEndedError) Error() string {
	what := "failed"
	if e.Status == RunCancelled {
		what = "was cancelled"
	}
	reason := ""
	if e.Reason != "" {
		reason = " (" + e.Reason + ")"
	}
	return fmt.Sprintf("thread %q: the run %s at @%d%s, so nothing of it runs again",
		threadName(e.Thread), what, e.Checkpoint, reason)
}

// Fixes: what the failing node said (RunStatus.Fix), then a new turn, or
// a branch from before the run ended.
func (e *RunEndedError) Fixes() []Fix {
	out := make([]Fix, 0, len(e.Fix)+2)
	for _, fx := range e.Fix {
		if fx.Action != FixNewTurn {
			out = append(out, fx)
		}
	}
	return append(out, NewTurnFix(e.Thread), ForkFix(e.Thread, 0))
}

// Is makes errors.Is match ErrRunFailed or ErrRunCancelled, and
// ErrNothingToResume: an ended run has nothing pending.
func (e *RunEndedError) Is(target error) bool {
	return target == ErrNothingToResume || target == ErrRunFailed && e.Status == RunFailed || target == ErrRunCancelled && e.Status == RunCancelled
}

// ended refuses a checkpoint whose run failed or was cancelled.
func (e *Engine) ended(thread string, cp Checkpoint) error {
	st := e.graph.StatusOf(cp)
	if st.Status == RunFailed || st.Status == RunCancelled {
		return &RunEndedError{Thread: thread, RunStatus: st}
	}
	return nil
}

// Fail marks err, returned by a node, as the end of the run: the runner
// records the run as failed (a checkpoint with status failed, the pending
// tasks dropped), so a resume does not retry what cannot succeed. Other
// errors leave the run to a resume.
func Fail(err error) error {
	if err == nil {
		return nil
	}
	return &failError{err}
}

type failError struct{ err error }

func (f *failError) Error() string { return f.err.Error() }
func (f *failError) Unwrap() error { return f.err }

// Fail records that the run fails at this task, why, and what would fix
// it (fixes, on this thread: reason names no command, the front ends word
// them): the task's writes are still applied and committed, the
// checkpoint records the run as failed with no pending tasks, its reason
// and fixes (RunStatus), and the invocation returns a *RunFailedError.
func (nc *NodeContext) Fail(reason string, fixes ...Action) {
	nc.emit(event.RunFailed{Reason: reason, Fixes: storedFixes(fixes)})
}

// RunFailedError is an invocation whose run failed (see Fail); errors.Is
// matches ErrRunFailed, and errors.As the node's own error when it gave one.
type RunFailedError struct {
	Thread     string
	Checkpoint int64
	Node       string
	Reason     string
	Err        error
	Fix        []Fix // the node's (Fail's fixes)
}

// Fixes are the node's, or else those of the error it failed with.
func (e *RunFailedError) Fixes() []Fix {
	var f Fixer
	if len(e.Fix) == 0 && errors.As(e.Err, &f) {
		return f.Fixes()
	}
	return e.Fix
}

func (e *RunFailedError) Error() string {
	return fmt.Sprintf("thread %q: %s failed the run, recorded at @%d: %s", threadName(e.Thread), e.Node, e.Checkpoint, e.Reason)
}

func (e *RunFailedError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrRunFailed) work.
func (e *RunFailedError) Is(target error) bool { return target == ErrRunFailed }

// CancelWrites is what a graph writes into the checkpoint that cancels a
// run (Engine.Cancel, Engine.DiscardPending), given the thread, the state
// it ends and the reason: say, marking the side effects the run waited on
// as never to be performed. They are applied in that one checkpoint, so
// no later turn, fork or answer finds them waiting. It is called after
// the thread is fenced: a side effect of the cancelled run's writer that
// it finds done was done before, and none is done after.
type CancelWrites func(ctx context.Context, thread string, v Values, reason string) ([]Write, error)

// OnCancel registers what the graph writes when a run is cancelled (see
// CancelWrites).
func (g *Graph) OnCancel(fn CancelWrites) *Graph { g.onCancel = fn; return g }

// HeadCheck is an answer's check of the head it acts on, read again
// under the thread's lock (a person decided on what they saw earlier): an
// error, one line saying what changed and what to do, refuses the answer
// and nothing is written.
type HeadCheck func(head Checkpoint) error

// Cancel ends thread's run on purpose: its pending tasks are dropped and
// recorded as discarded in a checkpoint whose status is cancelled, with
// reason. It fences the thread first, taking it over from a live worker if
// one runs it, so that worker's late writes and drafts are refused: a late
// result changes nothing. A thread with nothing pending is refused.
func (e *Engine) Cancel(ctx context.Context, thread, reason string) (Checkpoint, error) {
	return e.CancelIf(ctx, thread, reason, nil)
}

// CancelIf is Cancel when check (nil: none) accepts the head it would
// cancel, read under the lock. When another process holds the thread,
// check sees the head before that process is fenced out too: a refusal
// leaves it running.
func (e *Engine) CancelIf(ctx context.Context, thread, reason string, check HeadCheck) (_ Checkpoint, err error) {
	if err := e.mustExist(ctx, thread); err != nil {
		return Checkpoint{}, err
	}
	release, tookOver, err := e.lockStore(ctx, thread, true)
	if err != nil {
		return Checkpoint{}, err
	}
	defer func() { err = released(err, release) }()
	if tookOver && check != nil {
		head, err := e.Latest(ctx, thread)
		if err != nil {
			return Checkpoint{}, err
		}
		if err := userpanic.Do("HeadCheck", func() error { return check(head) }); err != nil {
			return Checkpoint{}, fmt.Errorf("cancel: %w", err)
		}
	}
	epoch, err := e.fence(ctx, thread, false)
	if err != nil {
		return Checkpoint{}, err
	}
	base, err := e.Latest(ctx, thread)
	if err != nil {
		return Checkpoint{}, err
	}
	if err := e.ended(thread, base); err != nil {
		return Checkpoint{}, fmt.Errorf("cancel: %w", err)
	}
	if len(base.Tasks) == 0 {
		return Checkpoint{}, Fixable(thread, base.ID, fmt.Errorf("cancel thread %q: %w: its run is done at @%d", threadName(thread), ErrNothingToResume, base.ID), NewTurnFix(thread))
	}
	if check != nil {
		if err := userpanic.Do("HeadCheck", func() error { return check(base) }); err != nil {
			return Checkpoint{}, fmt.Errorf("cancel: %w", err)
		}
	}
	if strings.TrimSpace(reason) == "" {
		reason = "cancelled by the operator"
	}
	continues, err := e.runAt(ctx, thread, base)
	if err != nil {
		return Checkpoint{}, err
	}
	return e.end(ctx, &runner{e: e, thread: thread, epoch: epoch, lastID: base.ID, run: e.newRun(KindCancel, RunConfig{}, continues)}, base, RunCancelled, reason, EventRunCancelled, "", "")
}

// cancelled is the checkpoint that cancels base's run with reason, as a
// child numbered id: base's values with the graph's CancelWrites applied,
// no pending tasks (base's recorded as discarded), and the write groups
// to commit it with.
func (e *Engine) cancelled(ctx context.Context, base Checkpoint, id int64, source, reason string) (Checkpoint, []WriteGroup, error) {
	cp := Checkpoint{Thread: base.Thread, ID: id, ParentID: base.ID, Step: base.Step + 1, Source: source, Values: base.Values, Tasks: []Task{},
		Metadata: Metadata{Discarded: base.Tasks, Status: RunCancelled, Reason: reason}}
	if e.graph.onCancel == nil {
		return cp, nil, nil
	}
	writes, err := userpanic.Run("OnCancel writes", func() ([]Write, error) { return e.graph.onCancel(ctx, base.Thread, base.Values, reason) })
	if err != nil || len(writes) == 0 {
		return cp, nil, err
	}
	if cp.Values, err = e.graph.apply(base.Values, writes); err != nil {
		return Checkpoint{}, nil, err
	}
	cp.Metadata.Writes = map[string][]string{"cancel": channelsOf(writes)}
	return cp, []WriteGroup{{Node: "cancel", Writes: writes}}, nil
}

// end commits, as a child of base, the checkpoint that ends its run: the
// same values (a cancel's with the graph's CancelWrites), no pending tasks
// (base's recorded as discarded), the status and reason, and an event
// saying so.
func (e *Engine) end(ctx context.Context, r *runner, base Checkpoint, status, reason, typ, node, task string) (Checkpoint, error) {
	source := SourceUpdate
	if status == RunFailed {
		source = SourceLoop
	}
	cp := Checkpoint{Thread: r.thread, ID: r.lastID + 1, ParentID: base.ID, Step: base.Step + 1, Source: source, Values: base.Values, Tasks: []Task{},
		Metadata: Metadata{Discarded: base.Tasks, Status: status, Reason: reason}}
	var groups []WriteGroup
	if status == RunCancelled {
		var err error
		if cp, groups, err = e.cancelled(ctx, base, cp.ID, source, reason); err != nil {
			return Checkpoint{}, fmt.Errorf("cancel thread %q: %w", threadName(r.thread), err)
		}
	}
	if node != "" {
		cp.Metadata.Nodes = []string{node}
	}
	// Task is not the event's own task: it is new to observers.
	var data event.Payload = event.RunCancelled{Reason: reason, Discarded: describeTasks(base.Tasks), Task: task}
	if typ == EventRunFailed {
		data = event.RunFailed{Reason: reason, Discarded: new(describeTasks(base.Tasks)), Task: task}
	}
	ev := r.event(node, "", data)
	if err := r.commit(ctx, &cp, &base, groups, 0, []Event{ev}); err != nil {
		return Checkpoint{}, err
	}
	return cp, nil
}
