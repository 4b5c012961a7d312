// Package engine is the graph runtime: channels with reducers, nodes and
// edges, Send fan-out, bulk-synchronous supersteps with parallel tasks,
// pending writes, checkpoints after every superstep, static interrupts,
// and the time-travel operations (resume, fork, update state) on top.
//
// The API is shaped so the classic silent mistakes cannot be written: Resume
// takes no input, Fork cannot be called without a checkpoint id, and a new
// turn on a thread with pending tasks is refused.
package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"rewind/engine/event"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"rewind/engine/chainformat"
	"rewind/engine/internal/cache"
	"rewind/engine/internal/costs"
	"rewind/engine/internal/userpanic"
	"rewind/engine/model"
	"rewind/engine/seal"
	"rewind/store"
)

// RunConfig is how one invocation runs. It is never stored in state.
type RunConfig struct {
	// InterruptBefore stops the run when a produced checkpoint has a pending
	// task for one of these nodes.
	InterruptBefore []string
	// InterruptAfter stops the run after one of these nodes ran.
	InterruptAfter []string
	// MaxSteps bounds the supersteps of one invocation (default 100).
	MaxSteps int
	// MaxTokensPerTurn stops the run with a *BudgetError before the next
	// superstep once the turn's model calls (this invocation's and, on a
	// resume, those before it) have used this many tokens; 0 takes the
	// engine's (SetMaxTokensPerTurn), which is none by default.
	MaxTokensPerTurn int
	// Observe, when set, sees every event once, as it happens (for
	// progress). Parallel tasks call it from their own goroutines, so it
	// must be safe for concurrent use, and it must not block.
	Observe func(Event)
	// Hook, when set, is called at named points of the run (crash drills).
	Hook func(point HookPoint, info HookInfo)
	// TakeOver runs the thread even while another live process holds it
	// (a stuck or stopped worker). That process is fenced: its late writes
	// are refused, so the chain cannot fork.
	TakeOver bool
	// Session, when set, is the session the run acts in (session.go):
	// checked valid before any task runs, and recorded on the run's mark.
	// A run without one carries on in the session of the run that wrote
	// the checkpoint it builds on, if that one had one.
	Session *Session
	// RunKind, when set, is the kind the run is recorded as (RunMark.Kind)
	// instead of the engine's own: say, approve or reject for an Answer.
	RunKind string
}

// HookInfo describes where a Hook was called.
type HookInfo struct {
	Thread     string
	Checkpoint int64
	Task       *Task
	Role       string
	// Committed is the checkpoint just stored (HookAfterCommit only).
	Committed *Checkpoint
}

// HookPoint names a point of a run where RunConfig.Hook is called. The
// engine's are below; a graph names its own (NodeContext.Point) with
// constants of this type too (e.g. ticket.PointBeforeSideEffect). Kill
// points (engine/worker) are built on them.
type HookPoint string

// The engine's hook points.
const (
	HookBeforeModelCall HookPoint = "before-model-call"
	HookAfterModelCall  HookPoint = "after-model-call"
	HookTaskFinished    HookPoint = "task-finished"
	HookTaskFailed      HookPoint = "task-failed" // or stopped at the approval gate: no writes
	HookBeforeCommit    HookPoint = "before-checkpoint-commit"
	HookAfterCommit     HookPoint = "after-checkpoint-commit"
)

// Event is something that happened during a run.
type Event = chainformat.Event

// Event types written by the runtime.
const (
	EventInput           = event.TypeInput
	EventFork            = event.TypeFork
	EventUpdate          = event.TypeUpdate
	EventStepStarted     = event.TypeStepStarted
	EventNodeStarted     = event.TypeNodeStarted
	EventNodeFinished    = event.TypeNodeFinished
	EventModelCalled     = event.TypeModelCalled
	EventTaskReused      = event.TypeTaskReused
	EventInterrupt       = event.TypeInterrupt
	EventCheckpointSaved = event.TypeCheckpointSaved
	// EventBlocked is a side effect a node refused to perform (NodeContext.Block).
	EventBlocked = event.TypeBlocked
	// EventTokenBudget: the turn used its token budget
	// (RunConfig.MaxTokensPerTurn) with tasks still pending; stored with
	// the checkpoint the run pauses at.
	EventTokenBudget = event.TypeTokenBudget
)

// persisted says whether an event type is stored. Progress events (a node
// or step started or finished, a checkpoint saved, a tool called) are for
// live observers only: the checkpoint rows say the same (a task's duration
// is stored with its writes, a tool's answer with its messages).
func persisted(typ string) bool {
	switch typ {
	case EventNodeStarted, EventNodeFinished, EventStepStarted, EventCheckpointSaved, event.TypeToolCalled:
		return false
	}
	return true
}

// An event's stored payload is chainformat's (eventcodec.go): thread,
// checkpoint, seq and type are columns of the row.

// StepReport is one superstep of an invocation.
type StepReport struct {
	From       int64          `json:"from"`
	Checkpoint int64          `json:"checkpoint"`
	Step       int            `json:"step"`
	Ran        []Task         `json:"ran"`
	Reused     []Task         `json:"reused,omitempty"`
	ModelCalls map[string]int `json:"modelCalls"`
}

// Result is what one Run, Resume or Fork did.
type Result struct {
	Thread string `json:"thread"`
	// Start is the checkpoint the invocation started from (0 for a new thread).
	Start      int64 `json:"start"`
	Checkpoint int64 `json:"checkpoint"`
	// Status is "done", "interrupted", "awaiting-approval" or "failed".
	Status    string       `json:"status"`
	Interrupt *Interrupt   `json:"interrupt,omitempty"`
	Pending   []Task       `json:"pending"`
	Steps     []StepReport `json:"steps"`
	// ModelCalls made by this invocation, by role.
	ModelCalls map[string]int `json:"modelCalls"`
	// Usage is the tokens of those calls.
	Usage          model.Usage `json:"usage"`
	MessagesBefore int         `json:"messagesBefore"`
	MessagesAfter  int         `json:"messagesAfter"`
	// Blocked are the side effects this invocation's supersteps recorded
	// as not performed (NodeContext.Block). The run itself may be "done":
	// see BlockedErr.
	Blocked []Blocked `json:"blocked,omitempty"`
	// Rechecked is what a resume redid because the graph's resume check
	// found that something it would build on had changed.
	Rechecked *Rechecked `json:"rechecked,omitempty"`
}

// Blocked is one side effect a node refused to perform.
type Blocked struct {
	Operation string `json:"operation"`
	Node      string `json:"node"`
	Task      string `json:"task"`
	// Checkpoint is the checkpoint that recorded the outcome.
	Checkpoint int64  `json:"checkpoint"`
	Reason     string `json:"reason"`
	// Fix is what the node said would get past it (NodeContext.Block).
	Fix []Fix `json:"-"`
}

// ErrBlocked is matched by errors.Is for a *BlockedError.
var ErrBlocked = errors.New("a side effect was blocked")

// BlockedError says that a run went through but a side effect it was
// asked for did not happen: the caller should fail (exit non-zero).
type BlockedError struct {
	Thread  string
	Blocked []Blocked
}

func (e *BlockedError) Error() string {
	parts := make([]string, len(e.Blocked))
	for i, b := range e.Blocked {
		parts[i] = fmt.Sprintf("%s did not perform operation %s (recorded at @%d): %s", b.Node, b.Operation, b.Checkpoint, b.Reason)
	}
	return fmt.Sprintf("thread %q: %s", e.Thread, strings.Join(parts, "; "))
}

// Is makes errors.Is(err, ErrBlocked) work.
func (e *BlockedError) Is(target error) bool { return target == ErrBlocked }

// Fixes are the blocked side effects' fixes, each once, in order.
func (e *BlockedError) Fixes() []Fix {
	var out []Fix
	for _, b := range e.Blocked {
		for _, fx := range b.Fix {
			if !slices.Contains(out, fx) {
				out = append(out, fx)
			}
		}
	}
	return out
}

// BlockedErr is a *BlockedError when the invocation blocked a side effect,
// nil otherwise.
func (r Result) BlockedErr() error {
	if len(r.Blocked) == 0 {
		return nil
	}
	return &BlockedError{Thread: r.Thread, Blocked: slices.Clone(r.Blocked)}
}

// PendingError refuses a new turn on a thread that still has pending tasks.
type PendingError struct {
	Thread     string
	Checkpoint int64
	Tasks      []Task
}

// ErrPending is matched by errors.Is for a *PendingError.
var ErrPending = errors.New("thread has pending tasks")

func (e *PendingError) Error() string {
	return fmt.Sprintf("thread %q has %d pending task(s) at checkpoint %d (%s)", threadName(e.Thread), len(e.Tasks), e.Checkpoint, describeTasks(e.Tasks))
}

// Fixes: finish the pending tasks, branch before them, or drop them.
func (e *PendingError) Fixes() []Fix {
	return []Fix{ResumeFix(e.Thread), ForkFix(e.Thread, 0), {Action: FixDiscard, Thread: e.Thread}}
}

// Is makes errors.Is(err, ErrPending) work.
func (e *PendingError) Is(target error) bool { return target == ErrPending }

// ApprovalError is returned by a gate node that needs a person's answer
// before the run may go on. The run stops without committing the superstep;
// the gate task stays pending, so a resume after the answer runs it again.
type ApprovalError struct {
	Operation string
	Question  string
}

func (e *ApprovalError) Error() string {
	return fmt.Sprintf("operation %s awaits approval: %s", e.Operation, e.Question)
}

// AwaitApproval pauses the run at a gate.
func AwaitApproval(operation, question string) error {
	return &ApprovalError{Operation: operation, Question: question}
}

// Errors of the time-travel operations.
var (
	ErrEmptyInput      = errors.New("input is empty")
	ErrNothingToResume = errors.New("nothing to resume")
	ErrNoCheckpoint    = errors.New("a checkpoint id is required")
	ErrUnknownNode     = errors.New("unknown node")
)

// Engine runs one graph against one store.
type Engine struct {
	store store.Store
	graph *Graph
	model model.Model
	now   func() time.Time
	cache *cache.Cache
	memo  chainformat.Memo
	// sums are the running totals after this engine's last commit to
	// each thread (costs.go: a trusted turn's first checkpoint takes its
	// Sums from them without a read).
	sums costs.Memo
	// fenced is the epoch this engine's last Fence of each thread handed
	// out (see lockFor).
	fenced epochs
	// maxTurnTokens is the default RunConfig.MaxTokensPerTurn.
	maxTurnTokens int
	// runIDs names each new run (WithRunIDs).
	runIDs func() string
	// keys seal and open the sensitive channels' stored bytes (WithKeys).
	keys *seal.Keys
	// stored is told the rows runs store (WithStored); nil: nobody.
	stored Stored
}

// Option configures an engine (New).
type Option func(*Engine)

// WithClock gives the engine the clock it stamps events, checkpoints and
// durations with (default time.Now): a test gives a fixed or stepping one
// so what is stored does not depend on when it ran. A checkpoint row, its
// events' rows and its messages are stored with the engine's time (to the
// microsecond); the store stamps its other rows (task writes, drafts) with
// its own clock (memory.WithClock for the memory store).
func WithClock(now func() time.Time) Option {
	return func(e *Engine) {
		if now != nil {
			e.now = now
		}
	}
}

// New validates the graph and builds an engine.
func New(st store.Store, g *Graph, m model.Model, opts ...Option) (*Engine, error) {
	if err := g.Validate(); err != nil {
		return nil, err
	}
	if st == nil || m == nil {
		return nil, errors.New("engine needs a store and a model")
	}
	e := &Engine{store: st, graph: g, model: m, now: time.Now, cache: cache.New(), runIDs: randomRunID}
	for _, o := range opts {
		o(e)
	}
	e.store = SealStore(st, g, e.keys)
	return e, nil
}

// stamp is the time a checkpoint row is stored with: the engine's clock,
// to the microsecond (what SQLite and PostgreSQL keep), so the row read
// back holds the very time the cache has for it.
func (e *Engine) stamp() time.Time { return e.now().UTC().Truncate(time.Microsecond) }

// Now reads the engine's clock (WithClock): what a caller stamps into the
// engine's documents (an approval's time) takes it too.
func (e *Engine) Now() time.Time { return e.now() }

// Graph returns the engine's graph.
func (e *Engine) Graph() *Graph { return e.graph }

// Store returns the engine's store.
func (e *Engine) Store() store.Store { return e.store }

// Run starts a new turn on a thread (creating it when new) with input.
func (e *Engine) Run(ctx context.Context, thread string, input []Write, cfg RunConfig) (_ Result, err error) {
	if len(input) == 0 {
		return Result{}, fmt.Errorf("run on thread %q: %w: give the message to send", threadName(thread), ErrEmptyInput)
	}
	if err := checkThread(thread); err != nil {
		return Result{}, err
	}
	if err := cfg.validate(e.graph); err != nil {
		return Result{}, err
	}
	release, mark, err := e.lockTurn(ctx, thread, cfg.TakeOver)
	if err != nil {
		return Result{}, err
	}
	epoch, trusted := mark.epoch, mark.newest
	defer func() { err = released(err, release) }()
	run := e.newRun(KindTurn, cfg, "")
	if trusted != 0 {
		// The epoch and the newest checkpoint taken on trust (lockTurn):
		// the input's put is refused unless the epoch is still the
		// thread's, and then nobody else wrote it since. Refused, or
		// failed for any other reason, the turn starts over the long
		// way, reading both: nothing of this try was stored. (Pending
		// tasks on trust are no answer either: another writer may have
		// finished them since.)
		if parent, ok := e.cache.Own(thread, trusted); ok {
			// The session of this engine's own last run, read from memory.
			tcfg := cfg
			if tcfg.Session == nil {
				tcfg.Session = mark.session
			}
			if err := e.validSession(ctx, turnOn(thread), thread, parent, nil, tcfg.Session); err != nil {
				return Result{}, err
			}
			cfg = tcfg
			markSession(run, cfg.Session)
			r, cp, err := e.startTurn(ctx, thread, epoch, parent, input, cfg, run)
			if err == nil {
				return r.drive(ctx, cp)
			}
			if ctx.Err() != nil {
				return Result{}, err
			}
		}
		if epoch, err = e.fence(ctx, thread, true); err != nil {
			return Result{}, err
		}
	}
	parent, err := e.Latest(ctx, thread)
	switch {
	case errors.Is(err, store.ErrNotFound):
		parent = Checkpoint{Thread: thread, Values: e.graph.initialValues(), Step: -1}
	case err != nil:
		return Result{}, err
	case len(parent.Tasks) == 0:
		// What the turn builds on is checked as a resume would check it
		// (buildcheck.go); a trusted turn made it itself.
		if err := e.checkTurn(ctx, thread, parent); err != nil {
			return Result{}, err
		}
	}
	if err := e.checkSession(ctx, turnOn(thread), thread, parent, nil, &cfg); err != nil {
		return Result{}, err
	}
	markSession(run, cfg.Session)
	r, cp, err := e.startTurn(ctx, thread, epoch, parent, input, cfg, run)
	if err != nil {
		return Result{}, err
	}
	return r.drive(ctx, cp)
}

func turnOn(thread string) string { return fmt.Sprintf("new turn on thread %q", threadName(thread)) }

// startTurn stores a new turn's input checkpoint on parent, the thread's
// newest (or an empty thread's start).
func (e *Engine) startTurn(ctx context.Context, thread string, epoch int64, parent Checkpoint, input []Write, cfg RunConfig, run *RunMark) (*runner, Checkpoint, error) {
	r := &runner{e: e, thread: thread, epoch: epoch, cfg: cfg, lastID: parent.ID, run: run}
	if len(parent.Tasks) > 0 {
		return r, Checkpoint{}, &PendingError{Thread: thread, Checkpoint: parent.ID, Tasks: parent.Tasks}
	}
	r.res = Result{Thread: thread, Start: parent.ID, MessagesBefore: parent.Values.Len("messages"), ModelCalls: map[string]int{}}
	cp, err := r.entry(ctx, parent, input, SourceInput, EventInput, Metadata{})
	return r, cp, err
}

// Fork starts a new branch whose parent is checkpoint id, with new input.
// Nothing is deleted: the old branch stays readable. Pending tasks of the
// checkpoint are superseded by the new turn (recorded as discarded).
func (e *Engine) Fork(ctx context.Context, thread string, checkpoint int64, input []Write, cfg RunConfig) (_ Result, err error) {
	if checkpoint <= 0 {
		return Result{}, Fixable(thread, 0, fmt.Errorf("fork thread %q: %w: name the checkpoint to branch from", threadName(thread), ErrNoCheckpoint), LogFix(thread))
	}
	if len(input) == 0 {
		return Result{}, fmt.Errorf("fork thread %q at checkpoint %d: %w: a fork needs the new message (to carry on without input, resume)", threadName(thread), checkpoint, ErrEmptyInput)
	}
	base, release, epoch, err := e.lockAt(ctx, thread, checkpoint, cfg)
	if err != nil {
		return Result{}, err
	}
	defer func() { err = released(err, release) }()
	latest, err := e.store.Latest(ctx, thread)
	if err != nil {
		return Result{}, fmt.Errorf("fork thread %q: %w", threadName(thread), err)
	}
	if err := e.checkFork(ctx, thread, base); err != nil {
		return Result{}, err
	}
	if err := e.checkSession(ctx, fmt.Sprintf("fork thread %q from @%d", threadName(thread), base.ID), thread, base, nil, &cfg); err != nil {
		return Result{}, err
	}
	r := &runner{e: e, thread: thread, epoch: epoch, cfg: cfg, lastID: latest.ID, run: e.newRun(KindFork, cfg, "")}
	r.res = Result{Thread: thread, Start: base.ID, MessagesBefore: base.Values.Len("messages"), ModelCalls: map[string]int{}}
	cp, err := r.entry(ctx, base, input, SourceFork, EventFork, Metadata{ForkedFrom: base.ID, Discarded: base.Tasks})
	if err != nil {
		return Result{}, err
	}
	return r.drive(ctx, cp)
}

// Resume carries on from the thread's latest checkpoint. It takes no input:
// the state is in the checkpoint. Tasks whose writes are already stored are
// not run again.
func (e *Engine) Resume(ctx context.Context, thread string, cfg RunConfig) (_ Result, err error) {
	if err := cfg.validate(e.graph); err != nil {
		return Result{}, err
	}
	if err := e.mustExist(ctx, thread); err != nil {
		return Result{}, err
	}
	release, epoch, err := e.lock(ctx, thread, cfg.TakeOver)
	if err != nil {
		return Result{}, err
	}
	defer func() { err = released(err, release) }()
	cp, err := e.Latest(ctx, thread)
	if err != nil {
		return Result{}, err
	}
	if err := e.ended(thread, cp); err != nil {
		return Result{}, err
	}
	if len(cp.Tasks) == 0 {
		return Result{}, Fixable(thread, cp.ID, fmt.Errorf("resume thread %q: %w: checkpoint %d has no pending tasks", threadName(thread), ErrNothingToResume, cp.ID), NewTurnFix(thread), ForkFix(thread, 0))
	}
	if err := e.checkSession(ctx, resumeAt(thread, cp.ID), thread, cp, cp.Tasks, &cfg); err != nil {
		return Result{}, err
	}
	continues, err := e.resumedRun(ctx, thread, cp)
	if err != nil {
		return Result{}, err
	}
	r := &runner{e: e, thread: thread, epoch: epoch, cfg: cfg, lastID: cp.ID, run: e.newRun(KindResume, cfg, continues)}
	r.res = Result{Thread: thread, Start: cp.ID, MessagesBefore: cp.Values.Len("messages"), ModelCalls: map[string]int{}}
	if cp, err = e.recover(ctx, r, cp); err != nil {
		return Result{}, err
	}
	return r.drive(ctx, cp)
}

func resumeAt(thread string, at int64) string {
	return fmt.Sprintf("resume thread %q at @%d", threadName(thread), at)
}

// ResumeAt carries on from checkpoint id: the head of a branch that is not
// the thread's newest (a paused branch left behind by a fork). Like Resume
// it takes no input; the checkpoint must have pending tasks and no
// continuation yet.
func (e *Engine) ResumeAt(ctx context.Context, thread string, checkpoint int64, cfg RunConfig) (_ Result, err error) {
	if checkpoint <= 0 {
		return Result{}, fmt.Errorf("resume thread %q: %w", threadName(thread), ErrNoCheckpoint)
	}
	cp, release, epoch, err := e.lockAt(ctx, thread, checkpoint, cfg)
	if err != nil {
		return Result{}, err
	}
	defer func() { err = released(err, release) }()
	if err := e.ended(thread, cp); err != nil {
		return Result{}, err
	}
	if len(cp.Tasks) == 0 {
		return Result{}, fmt.Errorf("resume thread %q at checkpoint %d: %w: it has no pending tasks; fork from it to continue with new input", threadName(thread), checkpoint, ErrNothingToResume)
	}
	rows, err := e.store.History(ctx, thread, 0, 0)
	if err != nil {
		return Result{}, fmt.Errorf("read history of thread %q: %w", threadName(thread), err)
	}
	for _, row := range rows {
		if row.ParentID != checkpoint {
			continue
		}
		// A fork is a new branch beside this one, not its continuation.
		child, err := e.graph.listed(row)
		if err != nil {
			return Result{}, err
		}
		if child.Source != SourceFork {
			return Result{}, Fixable(thread, checkpoint, fmt.Errorf("resume thread %q at checkpoint %d: %w: it was already continued by checkpoint %d, so resume that branch's head", threadName(thread), checkpoint, ErrNothingToResume, row.ID),
				LogFix(thread), ForkFix(thread, checkpoint))
		}
	}
	if err := e.checkSession(ctx, resumeAt(thread, cp.ID), thread, cp, cp.Tasks, &cfg); err != nil {
		return Result{}, err
	}
	continues, err := e.resumedRun(ctx, thread, cp)
	if err != nil {
		return Result{}, err
	}
	r := &runner{e: e, thread: thread, epoch: epoch, cfg: cfg, lastID: rows[0].ID, run: e.newRun(KindResume, cfg, continues)}
	r.res = Result{Thread: thread, Start: cp.ID, MessagesBefore: cp.Values.Len("messages"), ModelCalls: map[string]int{}}
	if cp, err = e.recover(ctx, r, cp); err != nil {
		return Result{}, err
	}
	return r.drive(ctx, cp)
}

// UpdateState writes values as if node asNode had written them, as a new
// `update` checkpoint whose parent is checkpoint id. With asNode set, the
// next tasks follow asNode's edges; without, the parent's pending tasks are
// carried over. Checkpoint 0 is allowed only for a thread with no
// checkpoints yet: it creates the thread.
func (e *Engine) UpdateState(ctx context.Context, thread string, checkpoint int64, writes []Write, asNode string) (Checkpoint, error) {
	return e.UpdateStateWith(ctx, thread, checkpoint, writes, asNode, UpdateOptions{})
}

// UpdateOptions change how UpdateStateWith takes the thread.
type UpdateOptions struct {
	// TakeOver writes even while another live process holds the thread, as
	// RunConfig.TakeOver does: that process is fenced out.
	TakeOver bool
}

// UpdateStateWith is UpdateState with options.
func (e *Engine) UpdateStateWith(ctx context.Context, thread string, checkpoint int64, writes []Write, asNode string, o UpdateOptions) (_ Checkpoint, err error) {
	if err := checkThread(thread); err != nil {
		return Checkpoint{}, err
	}
	if asNode != "" && !e.graph.HasNode(asNode) {
		return Checkpoint{}, fmt.Errorf("update thread %q: %w %q (nodes: %s)", threadName(thread), ErrUnknownNode, asNode, strings.Join(e.graph.Nodes(), ", "))
	}
	if checkpoint != 0 {
		if _, err := e.Get(ctx, thread, checkpoint); err != nil {
			return Checkpoint{}, err
		}
	}
	release, epoch, err := e.lock(ctx, thread, o.TakeOver)
	if err != nil {
		return Checkpoint{}, err
	}
	defer func() { err = released(err, release) }()
	latest, err := e.store.Latest(ctx, thread)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return Checkpoint{}, fmt.Errorf("update thread %q: %w", threadName(thread), err)
	}
	var base Checkpoint
	if checkpoint == 0 {
		if latest.ID != 0 {
			return Checkpoint{}, fmt.Errorf("update thread %q: %w: the thread exists, name the checkpoint to update (latest is %d)", threadName(thread), ErrNoCheckpoint, latest.ID)
		}
		base = Checkpoint{Thread: thread, Values: e.graph.initialValues(), Step: -1}
	} else if base, err = e.Get(ctx, thread, checkpoint); err != nil {
		return Checkpoint{}, err
	}
	return e.update(ctx, &runner{e: e, thread: thread, epoch: epoch, lastID: latest.ID, run: e.newRun(KindEdit, RunConfig{}, "")}, base, writes, asNode)
}

// update commits writes as r's next checkpoint, an update whose parent is
// base (see UpdateState).
func (e *Engine) update(ctx context.Context, r *runner, base Checkpoint, writes []Write, asNode string) (Checkpoint, error) {
	thread := r.thread
	values, err := e.graph.apply(base.Values, writes)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("update thread %q: %w", threadName(thread), err)
	}
	id := r.lastID + 1
	var tasks []Task
	if asNode != "" {
		targets, err := e.graph.next([]string{asNode}, values)
		if err != nil {
			return Checkpoint{}, fmt.Errorf("update thread %q: %w", threadName(thread), err)
		}
		tasks = tasksFor(thread, id, base.Step+1, targets)
	} else {
		tasks = reid(thread, id, base.Step+1, base.Tasks)
	}
	cp := Checkpoint{Thread: thread, ID: id, ParentID: base.ID, Step: base.Step + 1, Source: SourceUpdate, Values: values, Tasks: tasks,
		Metadata: Metadata{AsNode: asNode, Writes: map[string][]string{nodeOr(asNode, "update"): channelsOf(writes)}}}
	groups := []WriteGroup{{Node: nodeOr(asNode, "update"), Writes: writes}}
	if err := r.commit(ctx, &cp, &base, groups, 0, []Event{r.event(asNode, "", event.Update{AsNode: asNode, Channels: channelsOf(writes)})}); err != nil {
		return Checkpoint{}, err
	}
	return cp, nil
}

// Answer records a person's answer to what thread's run waits on (say, an
// approval gate) and carries the run on from it, all under one hold of
// the thread's writer lock, so two answers never build on the same head
// and nothing comes between an answer and the run it lets go on. The
// head is read under the lock: a run that ended (failed, cancelled) is
// refused; otherwise answer gets the head and returns the writes that
// record the answer, or an error that refuses it (one line: what changed
// since the person looked, and what to do) with nothing written. The
// writes go in an update checkpoint on the head, whose pending tasks it
// carries over, and the run resumes from there.
func (e *Engine) Answer(ctx context.Context, thread string, answer func(head Checkpoint) ([]Write, error), cfg RunConfig) (_ Result, err error) {
	if err := checkThread(thread); err != nil {
		return Result{}, err
	}
	if err := cfg.validate(e.graph); err != nil {
		return Result{}, err
	}
	if err := e.mustExist(ctx, thread); err != nil {
		return Result{}, err
	}
	release, epoch, err := e.lock(ctx, thread, cfg.TakeOver)
	if err != nil {
		return Result{}, err
	}
	defer func() { err = released(err, release) }()
	head, err := e.Latest(ctx, thread)
	if err != nil {
		return Result{}, err
	}
	if err := e.ended(thread, head); err != nil {
		return Result{}, err
	}
	writes, err := userpanic.Run("answer function", func() ([]Write, error) { return answer(head) })
	if err != nil {
		return Result{}, err
	}
	if len(head.Tasks) == 0 {
		return Result{}, fmt.Errorf("answer on thread %q: %w: checkpoint %d has no pending tasks", threadName(thread), ErrNothingToResume, head.ID)
	}
	if err := e.checkSession(ctx, fmt.Sprintf("answer on thread %q at @%d", threadName(thread), head.ID), thread, head, head.Tasks, &cfg); err != nil {
		return Result{}, err
	}
	continues, err := e.runAt(ctx, thread, head)
	if err != nil {
		return Result{}, err
	}
	r := &runner{e: e, thread: thread, epoch: epoch, cfg: cfg, lastID: head.ID, run: e.newRun(KindAnswer, cfg, continues)}
	cp, err := e.update(ctx, r, head, writes, "")
	if err != nil {
		return Result{}, err
	}
	r.res = Result{Thread: thread, Start: cp.ID, MessagesBefore: cp.Values.Len("messages"), ModelCalls: map[string]int{}}
	if cp, err = e.recover(ctx, r, cp); err != nil {
		return Result{}, err
	}
	return r.drive(ctx, cp)
}

// DiscardPending drops the latest checkpoint's pending tasks explicitly, as
// an `update` checkpoint, so a new turn can start. It ends the run:
// cancelled (see Graph.OnCancel).
func (e *Engine) DiscardPending(ctx context.Context, thread string) (Checkpoint, error) {
	return e.DiscardIf(ctx, thread, nil)
}

// DiscardIf is DiscardPending when check (nil: none) accepts the head,
// read under the lock.
func (e *Engine) DiscardIf(ctx context.Context, thread string, check HeadCheck) (_ Checkpoint, err error) {
	if err := e.mustExist(ctx, thread); err != nil {
		return Checkpoint{}, err
	}
	release, epoch, err := e.lock(ctx, thread, false)
	if err != nil {
		return Checkpoint{}, err
	}
	defer func() { err = released(err, release) }()
	base, err := e.Latest(ctx, thread)
	if err != nil {
		return Checkpoint{}, err
	}
	if len(base.Tasks) == 0 {
		return Checkpoint{}, fmt.Errorf("discard on thread %q: %w: checkpoint %d has no pending tasks", threadName(thread), ErrNothingToResume, base.ID)
	}
	if check != nil {
		if err := userpanic.Do("HeadCheck", func() error { return check(base) }); err != nil {
			return Checkpoint{}, fmt.Errorf("discard: %w", err)
		}
	}
	continues, err := e.runAt(ctx, thread, base)
	if err != nil {
		return Checkpoint{}, err
	}
	r := &runner{e: e, thread: thread, epoch: epoch, lastID: base.ID, run: e.newRun(KindDiscard, RunConfig{}, continues)}
	// Dropping the pending work on purpose ends the run: cancelled.
	cp, groups, err := e.cancelled(ctx, base, base.ID+1, SourceUpdate, "its pending tasks were discarded")
	if err != nil {
		return Checkpoint{}, fmt.Errorf("discard on thread %q: %w", threadName(thread), err)
	}
	if err := r.commit(ctx, &cp, &base, groups, 0, []Event{r.event("", "", event.Update{Discarded: new(len(base.Tasks))})}); err != nil {
		return Checkpoint{}, err
	}
	return cp, nil
}

// Get reads one checkpoint, rebuilt from its stored chain, through the
// migration registry. Where this engine holds the thread, the row is read
// first (fromRow): one cached costs that row, its child two rows.
func (e *Engine) Get(ctx context.Context, thread string, id int64) (Checkpoint, error) {
	if e.cache.Holds(thread) {
		row, err := e.store.Get(ctx, thread, id)
		if err == nil {
			if cp, ok, err := e.fromRow(ctx, row); ok {
				return cp, err
			}
		} else if !errors.Is(err, store.ErrNotFound) {
			return Checkpoint{}, fmt.Errorf("read checkpoint %d of thread %q: %w", id, threadName(thread), err)
		}
		// Gone or another row now (the thread was deleted and written
		// again), or no parent cached: the chain read says which.
	}
	return e.getChain(ctx, thread, id)
}

// fromRow reads row without its chain where it can (ok): as cached, on its
// own (readsAlone), or from its parent as cached, whose row is read to
// check it (two rows, not the chain back to the base: a reader stepping
// through a history reads the next checkpoint so). A parent evicted
// meanwhile fails that rebuild (a delta without its base): not ok.
func (e *Engine) fromRow(ctx context.Context, row store.Checkpoint) (cp Checkpoint, ok bool, err error) {
	if cp, ok := e.cache.Get(row); ok || readsAlone(row) {
		if !ok {
			cp, err = e.read(ctx, []store.Checkpoint{row})
		}
		return cp, true, err
	}
	if !e.cache.Has(row.ThreadID, row.ParentID) {
		return Checkpoint{}, false, nil
	}
	parent, err := e.store.Get(ctx, row.ThreadID, row.ParentID)
	if _, cached := e.cache.Get(parent); err != nil || !cached {
		return Checkpoint{}, false, nil
	}
	cp, err = e.read(ctx, []store.Checkpoint{row, parent})
	return cp, err == nil, nil
}

// getChain reads checkpoint id's chain and rebuilds it.
func (e *Engine) getChain(ctx context.Context, thread string, id int64) (Checkpoint, error) {
	rows, err := e.store.Chain(ctx, thread, id)
	if errors.Is(err, store.ErrNotFound) {
		if _, lerr := e.store.Latest(ctx, thread); errors.Is(lerr, store.ErrNotFound) {
			return Checkpoint{}, threadNotFound(thread)
		}
		return Checkpoint{}, checkpointNotFound(thread, id)
	}
	if err != nil {
		return Checkpoint{}, fmt.Errorf("read checkpoint %d of thread %q: %w", id, threadName(thread), err)
	}
	return e.read(ctx, rows)
}

// read rebuilds the checkpoint at the head of a chain, starting from the
// newest one this process has cached.
func (e *Engine) read(ctx context.Context, chain []store.Checkpoint) (Checkpoint, error) {
	if cp, ok := e.cache.Get(chain[0]); ok {
		return cp, nil
	}
	cp, err := e.graph.schema.Rebuild(ctx, e.store, chain, e.cache.Get)
	if err == nil && len(chain[0].Meta) > 0 {
		e.cache.Put(cp, chain[0])
	}
	return cp, corruptFixes(chain[0].ThreadID, chain[0].ID, err)
}

// Latest reads the thread's newest checkpoint.
func (e *Engine) Latest(ctx context.Context, thread string) (Checkpoint, error) {
	if e.cache.Holds(thread) {
		// Most often the one this engine wrote last: its listing says so,
		// without reading the state and the head snapshot.
		rows, err := e.store.History(ctx, thread, 0, 1)
		if err != nil {
			return Checkpoint{}, fmt.Errorf("read thread %q: %w", threadName(thread), err)
		}
		if len(rows) == 1 {
			if cp, ok := e.cache.GetListed(rows[0]); ok {
				return cp, nil
			}
		}
	}
	row, err := e.store.Latest(ctx, thread)
	if errors.Is(err, store.ErrNotFound) {
		return Checkpoint{}, threadNotFound(thread)
	}
	if err != nil {
		return Checkpoint{}, fmt.Errorf("read thread %q: %w", threadName(thread), err)
	}
	if cp, ok, err := e.fromRow(ctx, row); ok {
		return cp, err
	}
	return e.getChain(ctx, thread, row.ID)
}

// readsAlone says row is its own chain: a base, a row from before
// listings (a whole document), a rebase or the head snapshot.
func readsAlone(row store.Checkpoint) bool {
	return row.Base || len(row.Meta) == 0 || len(row.Rebased) > 0 || len(row.Head) > 0
}

// History lists checkpoints newest first (id < before when before > 0, at
// most limit when limit > 0). It reads listings, not states: Values is nil
// and Tasks carry no arguments (Get has them), except for checkpoints
// stored before listings existed, which are read whole.
func (e *Engine) History(ctx context.Context, thread string, before int64, limit int) ([]Checkpoint, error) {
	rows, err := e.store.History(ctx, thread, before, limit)
	if err != nil {
		return nil, fmt.Errorf("read history of thread %q: %w", threadName(thread), err)
	}
	out := make([]Checkpoint, 0, len(rows))
	for _, row := range rows {
		out = append(out, e.graph.listing(thread, row))
	}
	return out, nil
}

// listing is a History row as History gives it. One unreadable row must
// not hide the thread: it is listed as such (reading it says why and what
// to do).
func (g *Graph) listing(thread string, row store.Checkpoint) Checkpoint {
	cp, err := g.listed(row)
	if err != nil {
		cp = Checkpoint{Thread: thread, ID: row.ID, ParentID: row.ParentID, RerootedFrom: row.RerootedFrom,
			CreatedAt: row.CreatedAt, Source: SourceUnreadable, Unreadable: err.Error(), Tasks: []Task{}}
	}
	return cp
}

// listed reads a History row: its listing, or the whole document of a row
// stored before listings existed.
func (g *Graph) listed(row store.Checkpoint) (Checkpoint, error) {
	cp, err := g.schema.Listed(row)
	return cp, corruptFixes(row.ThreadID, row.ID, err)
}

// Ancestors walks parent pointers from id back to the root, root first, as
// listings (see History).
func (e *Engine) Ancestors(ctx context.Context, thread string, id int64) ([]Checkpoint, error) {
	if _, err := e.store.Get(ctx, thread, id); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, checkpointNotFound(thread, id)
		}
		return nil, fmt.Errorf("read checkpoint %d of thread %q: %w", id, threadName(thread), err)
	}
	all, err := e.History(ctx, thread, id+1, 0)
	if err != nil {
		return nil, err
	}
	byID := make(map[int64]Checkpoint, len(all))
	for _, cp := range all {
		byID[cp.ID] = cp
	}
	var chain []Checkpoint
	for next := id; next != 0; {
		cp, ok := byID[next]
		if !ok {
			return nil, fmt.Errorf("thread %q: checkpoint %d has parent %d, which is missing: %w", threadName(thread), chain[len(chain)-1].ID, next, ErrCorrupt)
		}
		chain = append(chain, cp)
		if cp.ParentID >= cp.ID {
			return nil, fmt.Errorf("thread %q: checkpoint %d has parent %d, which is not older: %w", threadName(thread), cp.ID, cp.ParentID, ErrCorrupt)
		}
		next = cp.ParentID
	}
	slices.Reverse(chain)
	return chain, nil
}

// TaskWrites is what one finished task stored.
type TaskWrites struct {
	Task       string         `json:"task"`
	Node       string         `json:"node"`
	Writes     []Write        `json:"writes"`
	Events     []Event        `json:"events,omitempty"`
	ModelCalls map[string]int `json:"modelCalls,omitempty"`
	Usage      model.Usage    `json:"usage"`
	DurationMs int64          `json:"durationMs"`
	// applied is the checkpoint's values with Writes applied, when this
	// process ran the task.
	applied Values
}

// PendingWrites lists the stored writes of the superstep that runs from
// checkpoint id (for a half-finished superstep: the tasks already done).
func (e *Engine) PendingWrites(ctx context.Context, thread string, id int64) ([]TaskWrites, error) {
	rows, err := e.store.Writes(ctx, thread, id)
	if err != nil {
		return nil, fmt.Errorf("read pending writes of checkpoint %d on thread %q: %w", id, threadName(thread), err)
	}
	return decodeWrites(thread, id, rows)
}

// decodeWrites decodes checkpoint id's stored task writes.
func decodeWrites(thread string, id int64, rows []store.TaskWrites) ([]TaskWrites, error) {
	out := make([]TaskWrites, 0, len(rows))
	for _, row := range rows {
		var tw TaskWrites
		if err := json.Unmarshal(row.Writes, &tw); err != nil {
			return nil, fmt.Errorf("pending writes of task %s at checkpoint %d on thread %q are corrupt (%v): delete the thread or fork from an earlier checkpoint: %w", row.TaskID, id, threadName(thread), err, ErrCorrupt)
		}
		tw.Task = row.TaskID
		out = append(out, tw)
	}
	return out, nil
}

// Events lists the events committed with checkpoint id (0: the whole thread).
// Model calls are stored with the writes of the task that made them and
// come back here as model.called events, in time order with the others;
// Seq numbers each checkpoint's events in that order.
func (e *Engine) Events(ctx context.Context, thread string, id int64) ([]Event, error) {
	rows, err := e.store.Events(ctx, thread, id)
	if err != nil {
		return nil, fmt.Errorf("read events of thread %q: %w", threadName(thread), err)
	}
	byCP := map[int64][]Event{}
	for _, row := range rows {
		ev, err := chainformat.ReadEvent(thread, row)
		if err != nil {
			return nil, fmt.Errorf("event %d of checkpoint %d on thread %q is corrupt (%v): %w", row.Seq, row.CheckpointID, threadName(thread), err, ErrCorrupt)
		}
		byCP[row.CheckpointID] = append(byCP[row.CheckpointID], ev)
	}
	ids := []int64{id}
	if id == 0 {
		listed, err := e.store.History(ctx, thread, 0, 0)
		if err != nil {
			return nil, fmt.Errorf("read events of thread %q: %w", threadName(thread), err)
		}
		ids = ids[:0]
		for _, l := range slices.Backward(listed) {
			ids = append(ids, l.ID)
		}
	}
	var out []Event
	for _, cid := range ids {
		evs := byCP[cid]
		calls, err := e.calls(ctx, thread, cid)
		if err != nil {
			return nil, err
		}
		if len(calls) > 0 {
			evs = append(calls, evs...)
			slices.SortStableFunc(evs, func(a, b Event) int { return a.At.Compare(b.At) })
			for i := range evs {
				evs[i].Seq = i + 1
			}
		}
		out = append(out, evs...)
	}
	return out, nil
}

// calls are the model.called events stored with checkpoint id's writes.
func (e *Engine) calls(ctx context.Context, thread string, id int64) ([]Event, error) {
	row, err := e.store.Get(ctx, thread, id)
	if errors.Is(err, store.ErrNotFound) || err == nil && len(row.Meta) == 0 {
		return nil, nil // no such checkpoint, or stored before calls moved
	}
	if errors.Is(err, seal.ErrSealed) {
		return nil, nil // sealed with a key not given: the events alone (SealedBy says why)
	}
	if err != nil {
		return nil, fmt.Errorf("read events of checkpoint %d of thread %q: %w", id, threadName(thread), err)
	}
	out, err := chainformat.ModelCalls(row)
	if err != nil {
		return nil, fmt.Errorf("checkpoint %d of thread %q: %w (%v)", id, threadName(thread), ErrCorrupt, err)
	}
	return out, nil
}

// Threads lists every thread in the store.
func (e *Engine) Threads(ctx context.Context) ([]store.Thread, error) {
	ts, err := e.store.Threads(ctx)
	if err != nil {
		return nil, fmt.Errorf("list threads: %w", err)
	}
	return ts, nil
}

// RecentThreads is a page of threads, newest first, after before (store.Store.RecentThreads).
func (e *Engine) RecentThreads(ctx context.Context, before store.ThreadCursor, limit int) (ts []store.Thread, rest int, err error) {
	if ts, rest, err = e.store.RecentThreads(ctx, before, limit); err != nil {
		err = fmt.Errorf("list threads: %w", err)
	}
	return ts, rest, err
}

// lockAt takes the thread's writer lock for work starting at checkpoint
// id, which must exist (checked before the lock, so an unknown thread is
// not fenced) and is read again under the lock.
func (e *Engine) lockAt(ctx context.Context, thread string, id int64, cfg RunConfig) (Checkpoint, func() error, int64, error) {
	if err := cfg.validate(e.graph); err != nil {
		return Checkpoint{}, nil, 0, err
	}
	if _, err := e.Get(ctx, thread, id); err != nil {
		return Checkpoint{}, nil, 0, err
	}
	release, epoch, err := e.lock(ctx, thread, cfg.TakeOver)
	if err != nil {
		return Checkpoint{}, nil, 0, err
	}
	cp, err := e.Get(ctx, thread, id)
	if err != nil {
		_ = release()
		return Checkpoint{}, nil, 0, err
	}
	return cp, release, epoch, nil
}

// mustExist checks a thread before its lock is taken: fencing an unknown
// thread would leave a row behind for a thread that does not exist.
func (e *Engine) mustExist(ctx context.Context, thread string) error {
	_, err := e.Latest(ctx, thread)
	return err
}

// lock makes this invocation the thread's one live writer and fences out
// every earlier writer: their late writes are refused from now on. With
// takeOver, a thread held by a live but stuck process (say, SIGSTOPped) is
// taken anyway; fencing keeps that process from forking the chain.
func (e *Engine) lock(ctx context.Context, thread string, takeOver bool) (func() error, int64, error) {
	return e.lockFor(ctx, thread, takeOver, false)
}

// lockTurn is lock for a new turn (Run), which may keep the epoch this
// engine fenced the thread with before (see fence). Every other writer
// (a resume, a fork, an edit) fences anew: a resume is a new writer of
// the run it takes up.
//
// When this engine's last write to the thread was its newest checkpoint,
// under the epoch it still holds (see epochs.trusted), the turn takes both
// on trust: it reads neither the epoch nor the newest listing, and its
// first put, which the store refuses unless the epoch is still the
// thread's, checks them (see Run). trusted is then that checkpoint's id.
func (e *Engine) lockTurn(ctx context.Context, thread string, takeOver bool) (release func() error, m writeMark, err error) {
	release, tookOver, err := e.lockStore(ctx, thread, takeOver)
	if err != nil {
		return nil, writeMark{}, err
	}
	if m, ok := e.fenced.trusted(thread); ok && !tookOver {
		return release, m, nil
	}
	epoch, err := e.fence(ctx, thread, !tookOver)
	if err != nil {
		_ = release()
		return nil, writeMark{}, err
	}
	return release, writeMark{epoch: epoch}, nil
}

// lockFor is lock with the advice a refusal gives, for a command whose
// way out differs.
func (e *Engine) lockFor(ctx context.Context, thread string, takeOver bool, reuse bool) (func() error, int64, error) {
	release, tookOver, err := e.lockStore(ctx, thread, takeOver)
	if err != nil {
		return nil, 0, err
	}
	epoch, err := e.fence(ctx, thread, reuse && !tookOver)
	if err != nil {
		_ = release()
		return nil, 0, err
	}
	return release, epoch, nil
}

// lockStore takes the store's writer lock of the thread, or with
// takeOver goes on without it (tookOver) when another process holds it.
func (e *Engine) lockStore(ctx context.Context, thread string, takeOver bool) (release func() error, tookOver bool, err error) {
	unlock, err := e.store.Lock(ctx, thread)
	switch {
	case errors.Is(err, store.ErrLocked) && takeOver:
		return func() error { return nil }, true, nil
	case errors.Is(err, store.ErrLocked):
		return nil, false, &lockedError{thread: thread, err: err}
	case err != nil:
		return nil, false, fmt.Errorf("lock thread %q: %w", threadName(thread), err)
	}
	return func() error {
		// Only a durability failure is the caller's: its commits may not
		// be on disk, so it has not succeeded. Anything else a release
		// meets (a lock another writer took over) changes nothing done.
		if err := unlock(); errors.Is(err, store.ErrNotDurable) {
			return fmt.Errorf("thread %q: %w", threadName(thread), err)
		}
		return nil
	}, false, nil
}

// released is err joined with what releasing the thread's lock reported:
// a run whose commits did not reach the disk has not succeeded.
func released(err error, release func() error) error {
	return errors.Join(err, release())
}

// fence makes this engine the thread's newest writer. With reuse (a new
// turn, holding the lock), an engine that fenced the thread before and
// finds its epoch still the thread's is that already: nobody fenced since
// (every writer fences before it writes), so it keeps the epoch and
// spares the store a write transaction every turn. A take-over always
// fences anew: that is what stops the other writer.
func (e *Engine) fence(ctx context.Context, thread string, reuse bool) (int64, error) {
	if mine := e.fenced.get(thread); mine != 0 && reuse {
		cur, err := e.store.Epoch(ctx, thread)
		if err != nil {
			return 0, fmt.Errorf("fence thread %q: %w", threadName(thread), err)
		}
		if cur == mine {
			return mine, nil
		}
	}
	epoch, err := e.store.Fence(ctx, thread)
	if err != nil {
		return 0, fmt.Errorf("fence thread %q: %w", threadName(thread), err)
	}
	e.fenced.set(thread, epoch)
	return epoch, nil
}

// epochs maps a thread to the epoch this engine's last Fence of it
// handed out and to what it last committed to it, safe for concurrent
// use.
type epochs struct {
	mu    sync.Mutex
	m     map[string]int64
	marks map[string]writeMark
}

// writeMark is the checkpoint an engine committed last to a thread, and
// the epoch it wrote it with. Every writer fences before it writes, so
// while that epoch is the thread's, nobody else wrote the thread since:
// that checkpoint is still its newest.
type writeMark struct {
	epoch, newest int64
	// session is the one the run that wrote newest acted in: a trusted
	// turn carries on in it without reading the run's mark.
	session *Session
}

func (es *epochs) get(thread string) int64 {
	es.mu.Lock()
	defer es.mu.Unlock()
	return es.m[thread]
}

func (es *epochs) set(thread string, epoch int64) {
	es.mu.Lock()
	defer es.mu.Unlock()
	if es.m == nil {
		es.m = map[string]int64{}
	}
	es.m[thread] = epoch
}

// wrote marks id as the newest checkpoint this engine committed to the
// thread with epoch; an epoch of 0 (an unfenced write) marks nothing.
func (es *epochs) wrote(thread string, epoch, id int64, session *Session) {
	es.mu.Lock()
	defer es.mu.Unlock()
	if es.marks == nil {
		es.marks = map[string]writeMark{}
	}
	if epoch == 0 {
		delete(es.marks, thread)
		return
	}
	es.marks[thread] = writeMark{epoch: epoch, newest: id, session: session}
}

// unsure forgets the thread's mark while a put's outcome is not known
// (one that failed may have committed all the same). Other writes of the
// thread (a prune, a delete) need no call: they fence anew, so the mark's
// epoch is no longer the one this engine holds.
func (es *epochs) unsure(thread string) {
	es.mu.Lock()
	defer es.mu.Unlock()
	delete(es.marks, thread)
}

// trusted is the thread's mark when its epoch is the one this engine
// holds for the thread (no Fence of this engine since the write).
func (es *epochs) trusted(thread string) (writeMark, bool) {
	es.mu.Lock()
	defer es.mu.Unlock()
	m, ok := es.marks[thread]
	return m, ok && m.epoch == es.m[thread]
}

// lockedError is a thread another live process holds the writer lock of
// (err, a store.ErrLocked), its fixes what a person can do about it. The
// store's words are left out: they would only repeat the cause.
type lockedError struct {
	thread string
	err    error
}

func (e *lockedError) Error() string {
	return fmt.Sprintf("thread %q is being run by another process", threadName(e.thread))
}
func (e *lockedError) Unwrap() error { return e.err }
func (e *lockedError) Fixes() []Fix {
	return []Fix{{Action: FixWait, Thread: e.thread}, {Action: FixTakeOver, Thread: e.thread}}
}

// DeleteThread removes a thread and everything stored for it (checkpoints,
// pending writes, events, messages, blobs, drafts) as its writer: like
// every command that changes a thread it takes the writer lock, so a
// thread another live process is running is refused, unless takeOver,
// which fences that process first. Every earlier writer stays fenced out
// for good, also once the thread is started again. An unknown thread is
// store.ErrNotFound, and nothing is locked or written for it.
func (e *Engine) DeleteThread(ctx context.Context, thread string, takeOver bool) (err error) {
	if err := checkThread(thread); err != nil {
		return err
	}
	// Before locking: fencing an unknown thread would leave an epoch
	// behind. A thread without checkpoints may still hold drafts or an
	// epoch (a run that died before its first checkpoint): Size sees
	// them, and is cheap for such a thread.
	_, err = e.store.Latest(ctx, thread)
	if errors.Is(err, store.ErrNotFound) {
		var n int64
		if n, err = e.store.Size(ctx, thread); err == nil && n == 0 {
			return threadNotFound(thread)
		}
	}
	if err != nil {
		return fmt.Errorf("delete thread %q: %w", threadName(thread), err)
	}
	release, _, err := e.lockFor(ctx, thread, takeOver, false)
	if err != nil {
		return err
	}
	defer func() { err = released(err, release) }()
	err = e.store.DeleteThread(ctx, thread)
	e.cache.Drop(thread)
	if err != nil {
		return fmt.Errorf("delete thread %q: %w", threadName(thread), err)
	}
	return nil
}

// threadName is a thread id in a message: %q quotes it, %s does not, and
// both cut a long one short (ids may be 64 KB; a message stays one line).
func threadName(thread string) store.Name { return store.Name(thread) }

// ErrEmptyThread refuses a thread id of only spaces: a thread needs a name.
var ErrEmptyThread = errors.New("thread id is empty")

func checkThread(thread string) error {
	if strings.TrimSpace(thread) == "" {
		return ErrEmptyThread
	}
	return nil
}

func (c RunConfig) validate(g *Graph) error {
	for _, n := range append(append([]string{}, c.InterruptBefore...), c.InterruptAfter...) {
		if !g.HasNode(n) {
			return fmt.Errorf("interrupt at %w %q: the nodes are %s", ErrUnknownNode, n, strings.Join(g.Nodes(), ", "))
		}
	}
	return nil
}

func (c RunConfig) maxSteps() int {
	if c.MaxSteps > 0 {
		return c.MaxSteps
	}
	return 100
}

func nodeOr(n, alt string) string {
	if n == "" {
		return alt
	}
	return n
}

func channelsOf(ws []Write) []string {
	seen := map[string]bool{}
	var out []string
	for _, w := range ws {
		if !seen[w.Channel] {
			seen[w.Channel] = true
			out = append(out, w.Channel)
		}
	}
	sort.Strings(out)
	return out
}

func describeTasks(ts []Task) string {
	counts := map[string]int{}
	var order []string
	for _, t := range ts {
		if counts[t.Node] == 0 {
			order = append(order, t.Node)
		}
		counts[t.Node]++
	}
	parts := make([]string, len(order))
	for i, n := range order {
		parts[i] = n
		if counts[n] > 1 {
			parts[i] = fmt.Sprintf("%s ×%d", n, counts[n])
		}
	}
	return strings.Join(parts, ", ")
}

// DescribeTasks prints tasks as "planner, executor ×3".
func DescribeTasks(ts []Task) string { return describeTasks(ts) }
