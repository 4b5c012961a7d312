// Package worker runs one engine invocation in a process of its own, so that
// "kill" is a real SIGKILL of a real process: the child side (Serve) runs
// the run and streams its events as JSON lines; the parent side (Start)
// launches `rewind worker …` and reads them.
package worker

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"rewind/engine"
	"rewind/engine/model/stream"
)

// Ops a worker performs.
const (
	OpRun     = "run"
	OpResume  = "resume"
	OpFork    = "fork"
	OpReplay  = "replay"
	OpApprove = "approve"
	OpReject  = "reject"
)

// Request is what one worker does.
type Request struct {
	Op         string
	Thread     string
	Checkpoint int64
	// Turn is a run's or fork's input as its graph's own type (the
	// ticket's ticket.Turn), unless Input is set.
	Turn Turn
	// Input, when set, is a run's or fork's input on any graph (its
	// Graph.Input's writes), in place of Turn's.
	Input   []engine.Write
	Reason  string // reject
	Redraft bool   // reject: write the reply again with the reason
	Payload string // approve: the draft as edited
	By      string // who answered an approval
	// Seen (approve, reject) is what the person answering looked at: the
	// answer is refused if the thread moved on or its draft changed since.
	// Zero: what the invocation finds when it begins; an Operation alone
	// (--op) pins the draft, whose head and text are then those it finds.
	Seen Seen
	// AuthTTL (approve) gives the draft a grant that lasts this long from
	// the answer, when it was written under none (Decision.Grant).
	AuthTTL time.Duration
	Config  engine.RunConfig
	// KillAt is "POINT" or "POINT@N" (see Points).
	KillAt string
	// Unreached makes a run that ends without reaching KillAt an
	// *UnreachedError (the CLI's run); a drill's worker tells that itself.
	Unreached bool
}

// Turn is a graph's own turn type: its writes start the run.
type Turn interface{ Writes() []engine.Write }

// Seen is what a person answering a gate looked at: the thread's head,
// the operation it waits on and the hash of its payload (the ticket's
// ticket.Seen, converted where it answers).
type Seen struct {
	Head        int64
	Operation   string
	PayloadHash string
}

// Message is one line of a worker's output.
type Message struct {
	Event *engine.Event `json:"event,omitempty"`
	// Delta is a piece of a model call's answer while it is generated (see
	// engine/model/stream): for watching only, never state. Pieces of the
	// same call may arrive merged.
	Delta  *stream.Delta  `json:"delta,omitempty"`
	Kill   KillPoint      `json:"kill,omitempty"`
	Result *engine.Result `json:"result,omitempty"`
	Error  string         `json:"error,omitempty"`
	// Fixes are the error's (engine.Fixer), for the reader to word.
	Fixes []engine.Fix `json:"fixes,omitempty"`
}

// Killer kills the current process; tests replace it.
var Killer = func() { _ = syscall.Kill(os.Getpid(), syscall.SIGKILL) }

// TxHooker is a store that can call back in the middle of its checkpoint
// transaction (for the mid-transaction kill point).
type TxHooker interface {
	SetTxHook(func(stage string))
}

// Serve performs req on e and writes its messages to out, one JSON object a
// line: events as they happen, model deltas as they stream, then the result
// or the error, which it returns with the result.
func Serve(ctx context.Context, e *engine.Engine, req Request, out io.Writer) (engine.Result, error) {
	var mu sync.Mutex
	enc := json.NewEncoder(out)
	send := func(m Message) {
		mu.Lock()
		defer mu.Unlock()
		_ = enc.Encode(m)
		if f, ok := out.(interface{ Sync() error }); ok {
			_ = f.Sync()
		}
	}
	// A stream listener must not block the model call, so deltas go
	// through a queue; it is drained before the result is written.
	deltas := newDeltaQueue(send)
	ctx = stream.WithListener(ctx, deltas.push)
	res, err := Execute(ctx, e, req, send)
	deltas.close()
	if err != nil {
		if res.Thread != "" {
			send(Message{Result: &res})
		}
		msg := Message{Error: err.Error()}
		var f engine.Fixer
		if errors.As(err, &f) {
			msg.Fixes = f.Fixes()
		}
		send(msg)
		return res, err
	}
	send(Message{Result: &res})
	return res, nil
}

// Execute performs req on e, passing events (and a kill notice) to emit. A
// kill point, when reached, emits {"kill": point} and kills the process on
// the spot.
func Execute(ctx context.Context, e *engine.Engine, req Request, emit func(Message)) (engine.Result, error) {
	var trig *Trigger
	if req.KillAt != "" {
		p, nth, err := ParseFor(e.Graph(), req.KillAt)
		if err != nil {
			return engine.Result{}, err
		}
		trig = NewTrigger(p, nth, func(point KillPoint) {
			emit(Message{Kill: point})
			Killer()
			select {} // a replaced Killer must not let the run go on
		})
		trig.done = ctx.Done()
		if p.Name == MidTransaction {
			h, ok := e.Store().(TxHooker)
			if !ok {
				return engine.Result{}, fmt.Errorf("kill point mid-transaction: this store cannot stop inside a transaction; use sqlite or postgres")
			}
			h.SetTxHook(func(string) { trig.Reached(MidTransaction) })
		}
	}
	cfg := req.Config
	prevObserve := cfg.Observe
	cfg.Observe = func(ev engine.Event) {
		emit(Message{Event: &ev})
		if prevObserve != nil {
			prevObserve(ev)
		}
		trig.Observe(ev) // may hold a task (mid-fanout) or kill
	}
	prevHook := cfg.Hook
	cfg.Hook = func(point engine.HookPoint, info engine.HookInfo) {
		if prevHook != nil {
			prevHook(point, info)
		}
		trig.Hook(point, info)
	}
	res, err := perform(ctx, e, req, cfg)
	if err == nil && res.Status == engine.RunAwaitingApproval {
		trig.Reached(AwaitingApproval)
	}
	if err == nil && trig != nil && req.Unreached {
		// A kill ends the process: a run that returns was not killed.
		err = &UnreachedError{Point: trig.Point.Name, Nth: trig.Nth, Times: trig.Times()}
	}
	return res, err
}

func perform(ctx context.Context, e *engine.Engine, req Request, cfg engine.RunConfig) (engine.Result, error) {
	switch req.Op {
	case OpRun:
		if req.Input != nil {
			return e.Run(ctx, req.Thread, req.Input, cfg)
		}
		return e.Run(ctx, req.Thread, turnWrites(req), cfg)
	case OpResume:
		if req.Checkpoint != 0 {
			return e.ResumeAt(ctx, req.Thread, req.Checkpoint, cfg)
		}
		return e.Resume(ctx, req.Thread, cfg)
	case OpReplay:
		return e.Replay(ctx, req.Thread, req.Checkpoint, cfg)
	case OpFork:
		if req.Input != nil {
			return e.Fork(ctx, req.Thread, req.Checkpoint, req.Input, cfg)
		}
		return e.Fork(ctx, req.Thread, req.Checkpoint, turnWrites(req), cfg)
	case OpApprove, OpReject:
		n := registered(e.Graph().Name)
		if n == nil || n.Answer == nil {
			return engine.Result{}, fmt.Errorf("%s: graph %s has no approval gate this worker answers; edit the state its gate waits on and resume", req.Op, e.Graph().Name)
		}
		return n.Answer(ctx, e, req, cfg)
	}
	return engine.Result{}, fmt.Errorf("unknown worker op %q", req.Op)
}

// turnWrites is req's Turn's writes; none for a request without one.
func turnWrites(req Request) []engine.Write {
	if req.Turn == nil {
		return nil
	}
	return req.Turn.Writes()
}

// deltaQueue hands a run's stream deltas to send from its own goroutine, so
// the model calls that produce them never wait on the output. Consecutive
// text pieces of one call are merged while they wait.
type deltaQueue struct {
	send func(Message)

	mu     sync.Mutex
	queue  []stream.Delta
	closed bool
	wake   chan struct{}
	done   chan struct{}
}

func newDeltaQueue(send func(Message)) *deltaQueue {
	q := &deltaQueue{send: send, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go q.run()
	return q
}

func (q *deltaQueue) push(d stream.Delta) {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return
	}
	if n := len(q.queue); n > 0 && textOnly(d) && textOnly(q.queue[n-1]) && q.queue[n-1].Call == d.Call {
		q.queue[n-1].Text += d.Text
	} else {
		q.queue = append(q.queue, d)
	}
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

func textOnly(d stream.Delta) bool { return !d.Reset && !d.Done && d.Err == "" }

func (q *deltaQueue) run() {
	defer close(q.done)
	for {
		q.mu.Lock()
		batch, closed := q.queue, q.closed
		q.queue = nil
		q.mu.Unlock()
		for i := range batch {
			q.send(Message{Delta: &batch[i]})
		}
		if len(batch) > 0 {
			continue
		}
		if closed {
			return
		}
		<-q.wake
	}
}

// close writes what is queued and stops the queue.
func (q *deltaQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
	<-q.done
}

// Proc is a running worker process seen from the parent.
type Proc struct {
	cmd      *exec.Cmd
	messages chan Message
	done     chan struct{}
	waitErr  error
	stderr   *limitedBuffer
}

// Start launches exe with args (e.g. `rewind worker run …`) and streams its
// messages. The channel closes when the process's output ends.
func Start(ctx context.Context, exe string, args []string, env []string) (*Proc, error) {
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Env = env
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p := &Proc{cmd: cmd, messages: make(chan Message, 256), done: make(chan struct{}), stderr: &limitedBuffer{max: 64 << 10}}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start worker %s: %w", exe, err)
	}
	go func() {
		defer close(p.messages)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			var m Message
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				m = Message{Error: fmt.Sprintf("worker wrote a line that is not a message: %q", truncate(sc.Text(), 200))}
			}
			p.messages <- m
		}
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// Messages streams the worker's output.
func (p *Proc) Messages() <-chan Message { return p.messages }

// Kill sends SIGKILL: the same as `kill -9` from another terminal.
func (p *Proc) Kill() error {
	if p.cmd.Process == nil {
		return errors.New("worker not started")
	}
	return p.cmd.Process.Signal(syscall.SIGKILL)
}

// Stop asks the worker to stop (SIGTERM): its run is cancelled, what
// finished stays stored, and it exits with its error.
func (p *Proc) Stop() error {
	if p.cmd.Process == nil {
		return errors.New("worker not started")
	}
	return p.cmd.Process.Signal(syscall.SIGTERM)
}

// Pid is the worker's process id.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Wait waits for the process to exit and reports whether it was killed by
// SIGKILL, its exit code otherwise, and its stderr.
func (p *Proc) Wait() (killed bool, code int, stderr string) {
	for range p.messages {
	}
	<-p.done
	var ee *exec.ExitError
	if errors.As(p.waitErr, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			return true, -1, p.stderr.String()
		}
		return false, ee.ExitCode(), p.stderr.String()
	}
	return false, 0, p.stderr.String()
}

type limitedBuffer struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if room := b.max - len(b.buf); room > 0 {
		b.buf = append(b.buf, p[:min(len(p), room)]...)
	}
	return len(p), nil
}

func (b *limitedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}

// truncate is s cut to at most n bytes, between characters, with "…".
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
