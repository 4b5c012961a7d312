package tui

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"rewind/engine"
	"rewind/engine/model/stream"
	"rewind/engine/worker"
)

// Input is what the user sends: a message and optional attachment refs.
type Input struct {
	Text   string
	Attach []string
	// Draft asks for the reply to be created as an outgoing draft: a side
	// effect that waits at the approval gate.
	Draft bool
	// AuthTTL, for a draft, attaches an authorization grant that expires
	// this long after the turn starts (0: no grant).
	AuthTTL time.Duration
	// Extra is the graph's input options beyond the text
	// (engine.Input.Extra), which the TUI has its extension make of
	// Attach, Draft and AuthTTL (InputOptioner) as a run starts; nil:
	// none. The local runner gives it to the graph's input; the worker
	// runner sends the fields above, which the worker reads alike.
	Extra any
}

// writes is in as the writes that start a turn of g: what its declared
// input makes of it (engine.Graph.Input; the ticket's gives a draft its
// grant).
func (in Input) writes(g *engine.Graph) ([]engine.Write, error) {
	fn := g.TurnInput()
	if fn == nil {
		return nil, errors.New(noInputWhy(g))
	}
	ws, err := fn(engine.Input{Text: in.Text, Extra: in.extra()}, time.Now())
	if err != nil {
		return nil, fmt.Errorf("graph %s's input: %w", g.Name, err)
	}
	if len(ws) == 0 {
		return nil, errors.New("the message is empty")
	}
	return ws, nil
}

// extra is the input's options beyond its text: Extra, made by the
// graph's extension (InputOptioner) from what the forms and the composer
// gathered.
func (in Input) extra() any { return in.Extra }

// inputOptions are in's options as x makes them for its graph's input
// (nil: x takes none, or none were given).
func inputOptions(x Extension, in Input) any {
	if o, ok := x.(InputOptioner); ok {
		return o.InputOptions(in)
	}
	return nil
}

// noInputWhy is why a run cannot start with typed input on g, which
// declares no input.
func noInputWhy(g *engine.Graph) string {
	return fmt.Sprintf("graph %s takes no typed input (it declares no engine.Graph.Input): resume, replay and edit state work on it", g.Name)
}

// graph is the graph the TUI shows and runs: its engine's (Backend); nil
// on a read-only source.
func (s *session) graph() *engine.Graph { return graphOf(s.deps) }

// graphOf is the graph d runs (nil: d runs none, a read-only source).
func graphOf(d Deps) *engine.Graph {
	if b, ok := d.Backend.(engineBackend); ok && b.Engine != nil {
		return b.Graph()
	}
	return nil
}

// noInput is why the keys that start a run with typed input (write, fork,
// a new thread) are off: the graph declares no input ("": they are on).
func (s *session) noInput() string {
	if g := s.graph(); g != nil && g.TurnInput() == nil {
		return noInputWhy(g)
	}
	return ""
}

// RunSettings is how one run executes (never stored in state).
type RunSettings struct {
	InterruptBefore []string
	InterruptAfter  []string
	// KillAt arms a crash-drill kill point (see worker.Points) for this
	// run. Only a Runner that can kill (Killable) honours it.
	KillAt string
	// At, for a resume, is the paused branch head to carry on from; 0 means
	// the thread's newest checkpoint.
	At int64
}

// Runner executes runs of the engine's graph somewhere. The in-process
// implementation (NewLocalRunner) runs the engine in a goroutine; a
// worker-process implementation can replace it without the screens
// changing, because they only see Runner and RunHandle.
//
// Start, Resume and Fork return as soon as the run is under way; they are
// called from a tea.Cmd, so they may do I/O (spawn a process, connect).
type Runner interface {
	Start(ctx context.Context, thread string, in Input, rs RunSettings) (RunHandle, error)
	Resume(ctx context.Context, thread string, rs RunSettings) (RunHandle, error)
	Fork(ctx context.Context, thread string, checkpoint int64, in Input, rs RunSettings) (RunHandle, error)
}

// RunHandle is one run under way.
//
// Updates delivers the engine's events as they happen, then exactly one
// update with Done set (carrying the result or the error), then closes.
// Cancel asks the run to stop; what finished stays stored, so a resume runs
// only the rest. A worker-process RunHandle may also offer a hard kill; the TUI
// will look for it with a type assertion.
type RunHandle interface {
	Updates() <-chan RunUpdate
	Cancel()
}

// RunUpdate is one event of a run, a piece of a model's answer as it
// streams, a kill notice, or the run's end.
type RunUpdate struct {
	Event *engine.Event
	// Delta is a piece of a model call's answer while it is generated: for
	// watching only, checkpoints hold finished messages.
	Delta *stream.Delta
	// Kill names the kill point the worker reached: it kills itself now.
	Kill   string
	Done   bool
	Result engine.Result
	Err    error
}

// Approver answers an approval gate: it records the decision (approve, as
// written or edited, or reject with a reason) and resumes the run. A
// Runner that supports approval gates implements it.
type Approver interface {
	Answer(ctx context.Context, thread string, a Answer, rs RunSettings) (RunHandle, error)
}

// Answer is a person's answer at the approval gate, with what the dialog
// showed them.
type Answer struct {
	Approve bool
	Reason  string // a rejection's
	// Edited: approve the draft as Payload (the dialog's e), not as
	// written.
	Edited  bool
	Payload string
	// Seen is the head, the draft and the hash of its text the dialog
	// showed: an answer to a draft that changed since (another answer, a
	// redraft, an edit) is refused with one line, nothing written.
	Seen Seen
	// AuthTTL, for an approval of a draft written under no grant, gives
	// it one lasting this long, recorded in the decision (0: none).
	AuthTTL time.Duration
}

// request is the answer as a worker request on thread.
func (a Answer) request(thread string) worker.Request {
	req := worker.Request{Op: worker.OpReject, Thread: thread, Reason: a.Reason}
	if a.Approve {
		req = worker.Request{Op: worker.OpApprove, Thread: thread, AuthTTL: a.AuthTTL}
		if a.Edited {
			req.Payload = a.Payload
		}
	}
	// Field by field: the worker's Seen is its graph's type, which the
	// TUI does not name.
	req.Seen.Head, req.Seen.Operation, req.Seen.PayloadHash = a.Seen.Head, a.Seen.Operation, a.Seen.PayloadHash
	return req
}

// Killable is a Runner whose runs live in worker processes: they can be
// killed for real (their RunHandles implement Killer) and kill points
// (RunSettings.KillAt) are honoured.
type Killable interface {
	CanKill() bool
}

// Killer is a RunHandle whose run is a process that can be killed.
type Killer interface {
	// Kill sends SIGKILL, the same as `kill -9` from another terminal.
	Kill() error
	Pid() int
}

// KilledError ends a run whose worker died by SIGKILL: killed by the user
// (k), from another terminal, or by itself at an armed kill point.
type KilledError struct {
	Pid int
	// Point is the kill point the worker reached, or "" when it was killed
	// from outside.
	Point string
}

func (e *KilledError) Error() string {
	if e.Point != "" {
		return fmt.Sprintf("worker pid %d killed itself (SIGKILL) at kill point %s", e.Pid, e.Point)
	}
	return fmt.Sprintf("worker pid %d was killed (SIGKILL)", e.Pid)
}

// NewLocalRunner runs the engine in this process. It cannot be killed for
// real (a kill would take the TUI with it), so it ignores kill points.
func NewLocalRunner(e *engine.Engine) Runner { return &localRunner{e: e} }

type localRunner struct{ e *engine.Engine }

func (r *localRunner) Start(ctx context.Context, thread string, in Input, rs RunSettings) (RunHandle, error) {
	writes, err := in.writes(r.e.Graph())
	if err != nil {
		return nil, err
	}
	return launch(ctx, rs, func(ctx context.Context, cfg engine.RunConfig) (engine.Result, error) {
		return r.e.Run(ctx, thread, writes, cfg)
	}), nil
}

func (r *localRunner) Resume(ctx context.Context, thread string, rs RunSettings) (RunHandle, error) {
	return launch(ctx, rs, func(ctx context.Context, cfg engine.RunConfig) (engine.Result, error) {
		if rs.At != 0 {
			return r.e.ResumeAt(ctx, thread, rs.At, cfg)
		}
		return r.e.Resume(ctx, thread, cfg)
	}), nil
}

func (r *localRunner) Fork(ctx context.Context, thread string, checkpoint int64, in Input, rs RunSettings) (RunHandle, error) {
	writes, err := in.writes(r.e.Graph())
	if err != nil {
		return nil, err
	}
	return launch(ctx, rs, func(ctx context.Context, cfg engine.RunConfig) (engine.Result, error) {
		return r.e.Fork(ctx, thread, checkpoint, writes, cfg)
	}), nil
}

// Answer records the decision and resumes, as `rewind worker approve|reject`
// does, but in this process.
func (r *localRunner) Answer(ctx context.Context, thread string, a Answer, rs RunSettings) (RunHandle, error) {
	req := a.request(thread)
	return launch(ctx, rs, func(ctx context.Context, cfg engine.RunConfig) (engine.Result, error) {
		req.Config = cfg
		return worker.Execute(ctx, r.e, req, func(worker.Message) {})
	}), nil
}

// localRun queues events without ever blocking the engine (Observe is called
// from the task goroutines and must not block) and pumps them to an
// unbuffered channel that the TUI drains.
type localRun struct {
	cancel context.CancelFunc
	out    chan RunUpdate

	mu     sync.Mutex
	queue  []RunUpdate
	closed bool
	wake   chan struct{}
}

func launch(ctx context.Context, rs RunSettings, fn func(context.Context, engine.RunConfig) (engine.Result, error)) *localRun {
	ctx, cancel := context.WithCancel(ctx)
	r := &localRun{cancel: cancel, out: make(chan RunUpdate), wake: make(chan struct{}, 1)}
	cfg := engine.RunConfig{
		InterruptBefore: rs.InterruptBefore,
		InterruptAfter:  rs.InterruptAfter,
		Observe: func(ev engine.Event) {
			ev.Data = append([]byte(nil), ev.Data...)
			r.push(RunUpdate{Event: &ev}, false)
		},
	}
	ctx = stream.WithListener(ctx, func(d stream.Delta) { r.push(RunUpdate{Delta: &d}, false) })
	go func() {
		res, err := fn(ctx, cfg)
		r.push(RunUpdate{Done: true, Result: res, Err: err}, true)
	}()
	go r.pump()
	return r
}

func (r *localRun) push(u RunUpdate, last bool) {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	if n := len(r.queue); n > 0 && mergeable(r.queue[n-1], u) {
		merged := *r.queue[n-1].Delta
		merged.Text += u.Delta.Text
		r.queue[n-1].Delta = &merged
		r.mu.Unlock()
		return
	}
	r.queue = append(r.queue, u)
	r.closed = last
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

func (r *localRun) pump() {
	defer close(r.out)
	for {
		r.mu.Lock()
		batch := r.queue
		r.queue = nil
		closed := r.closed
		r.mu.Unlock()
		for _, u := range batch {
			r.out <- u
			if u.Done {
				r.cancel()
				return
			}
		}
		if closed && len(batch) == 0 {
			r.cancel()
			return
		}
		<-r.wake
	}
}

// mergeable: two text pieces of the same call wait in a queue as one.
func mergeable(a, b RunUpdate) bool {
	textOnly := func(u RunUpdate) bool {
		return u.Delta != nil && u.Event == nil && !u.Done && !u.Delta.Reset && !u.Delta.Done && u.Delta.Err == ""
	}
	return textOnly(a) && textOnly(b) && a.Delta.Call == b.Delta.Call
}

func (r *localRun) Updates() <-chan RunUpdate { return r.out }
func (r *localRun) Cancel()                   { r.cancel() }
