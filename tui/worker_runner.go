package tui

import (
	"context"
	"errors"
	"fmt"
	"os"
	"rewind/engine"
	"strconv"
	"strings"
	"sync/atomic"

	"rewind/engine/worker"
)

// WorkerConfig says how to start `rewind worker …` processes.
type WorkerConfig struct {
	// Exe is the rewind binary (os.Executable in the real program).
	Exe string
	// Store is the resolved store spec every worker opens: the TUI and its
	// workers share the same sqlite file or PostgreSQL database.
	Store string
	// Flags are passed to every worker as they are: the model's flags
	// (--mock-latency 400ms, --provider openai, …).
	Flags []string
	// Env is the workers' environment; nil means this process's.
	Env []string
}

// NewWorkerRunner runs every run, resume, fork and approval answer in a new
// `rewind worker` process, so `k` is a real SIGKILL of a real process and a
// resume really happens in another process. A memory: store cannot be
// shared across processes: use NewLocalRunner for it.
func NewWorkerRunner(c WorkerConfig) Runner { return &workerRunner{cfg: c} }

type workerRunner struct{ cfg WorkerConfig }

func (w *workerRunner) CanKill() bool { return true }

// args builds `worker OP [flags] [-- POSITIONAL…]`: flags first, and the
// positionals after `--` so a thread named "-x" stays a thread name.
func (w *workerRunner) args(op string, rs RunSettings, flags []string, pos ...string) []string {
	a := []string{"worker", op, "--store", w.cfg.Store}
	a = append(a, w.cfg.Flags...)
	for _, n := range rs.InterruptBefore {
		a = append(a, "--interrupt-before", n)
	}
	for _, n := range rs.InterruptAfter {
		a = append(a, "--interrupt-after", n)
	}
	if rs.KillAt != "" {
		a = append(a, "--kill-at", rs.KillAt)
	}
	a = append(a, flags...)
	if len(pos) > 0 {
		a = append(append(a, "--"), pos...)
	}
	return a
}

func turnFlags(in Input) ([]string, error) {
	if strings.TrimSpace(in.Text) == "" {
		return nil, errors.New("the message is empty")
	}
	f := []string{"--input=" + in.Text}
	for _, ref := range in.Attach {
		f = append(f, "--attach="+ref)
	}
	if in.Draft {
		f = append(f, "--draft")
		if in.AuthTTL > 0 {
			f = append(f, "--auth-ttl="+in.AuthTTL.String())
		}
	}
	return f, nil
}

func (w *workerRunner) Start(ctx context.Context, thread string, in Input, rs RunSettings) (RunHandle, error) {
	f, err := turnFlags(in)
	if err != nil {
		return nil, err
	}
	return w.start(ctx, w.args(worker.OpRun, rs, append([]string{"--thread=" + thread}, f...)))
}

func (w *workerRunner) Resume(ctx context.Context, thread string, rs RunSettings) (RunHandle, error) {
	if rs.At != 0 {
		return w.start(ctx, w.args(worker.OpResume, rs, nil, thread, strconv.FormatInt(rs.At, 10)))
	}
	return w.start(ctx, w.args(worker.OpResume, rs, nil, thread))
}

func (w *workerRunner) Fork(ctx context.Context, thread string, checkpoint int64, in Input, rs RunSettings) (RunHandle, error) {
	f, err := turnFlags(in)
	if err != nil {
		return nil, err
	}
	return w.start(ctx, w.args(worker.OpFork, rs, f, thread, strconv.FormatInt(checkpoint, 10)))
}

// Answer runs `rewind worker approve|reject`, passing what the dialog
// showed (--op, --seen-head, --seen-sha256) for the worker to check under
// the thread's lock; an edited draft goes in a file (answerEdited).
func (w *workerRunner) Answer(ctx context.Context, thread string, a Answer, rs RunSettings) (RunHandle, error) {
	var flags []string
	if s := a.Seen; s.Operation != "" {
		flags = append(flags, "--op="+s.Operation, "--seen-head="+strconv.FormatInt(s.Head, 10), "--seen-sha256="+s.PayloadHash)
	}
	if !a.Approve {
		if strings.TrimSpace(a.Reason) == "" {
			return nil, errors.New("a rejection needs a reason")
		}
		return w.start(ctx, w.args(worker.OpReject, rs, append(flags, "--reason="+a.Reason), thread))
	}
	if a.AuthTTL > 0 {
		flags = append(flags, "--auth-ttl="+a.AuthTTL.String())
	}
	if a.Edited {
		return w.answerEdited(ctx, thread, a.Payload, flags, rs)
	}
	return w.start(ctx, w.args(worker.OpApprove, rs, flags, thread))
}

func (w *workerRunner) start(ctx context.Context, args []string) (RunHandle, error) {
	env := w.cfg.Env
	if env == nil {
		env = os.Environ()
	}
	p, err := worker.Start(ctx, w.cfg.Exe, args, env)
	if err != nil {
		return nil, err
	}
	r := &workerRun{proc: p, out: make(chan RunUpdate)}
	go r.pump()
	return r, nil
}

// workerRun is one worker process seen as a RunHandle.
type workerRun struct {
	proc     *worker.Proc
	out      chan RunUpdate
	stopping atomic.Bool
}

func (r *workerRun) Updates() <-chan RunUpdate { return r.out }

// Cancel asks the worker to stop (SIGTERM): what finished stays stored.
func (r *workerRun) Cancel() {
	r.stopping.Store(true)
	_ = r.proc.Stop()
}

func (r *workerRun) Kill() error { return r.proc.Kill() }
func (r *workerRun) Pid() int    { return r.proc.Pid() }

// pump turns the worker's JSON lines into updates, then reports how the
// process ended: its result, its error, or its death by SIGKILL.
func (r *workerRun) pump() {
	defer close(r.out)
	var final RunUpdate
	var errMsg, point string
	var fixes []engine.Fix
	gotResult := false
	for m := range r.proc.Messages() {
		switch {
		case m.Event != nil:
			r.out <- RunUpdate{Event: m.Event}
		case m.Delta != nil:
			r.out <- RunUpdate{Delta: m.Delta}
		case m.Kill != "":
			point = string(m.Kill)
			r.out <- RunUpdate{Kill: point}
		}
		if m.Result != nil {
			final.Result, gotResult = *m.Result, true
		}
		if m.Error != "" {
			errMsg, fixes = m.Error, m.Fixes
		}
	}
	killed, code, stderr := r.proc.Wait()
	final.Done = true
	switch {
	case killed:
		final.Err = &KilledError{Pid: r.proc.Pid(), Point: point}
	case errMsg != "" && r.stopping.Load() && strings.Contains(errMsg, context.Canceled.Error()):
		final.Err = fmt.Errorf("%w (worker pid %d stopped)", context.Canceled, r.proc.Pid())
	case errMsg != "" && len(fixes) > 0:
		final.Err = &engine.FixError{Err: errors.New(errMsg), Fix: fixes}
	case errMsg != "":
		final.Err = errors.New(errMsg)
	case code != 0:
		final.Err = fmt.Errorf("worker pid %d exited with code %d: %s", r.proc.Pid(), code, lastLine(stderr))
	case !gotResult:
		final.Err = fmt.Errorf("worker pid %d ended without a result", r.proc.Pid())
	}
	r.out <- final
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if s == "" {
		return "no message on stderr"
	}
	return s
}
