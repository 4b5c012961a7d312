package engine

// Sessions (issue 36; seed 002's recovery: "check the session is still
// valid", "check the user still has rights to the source"). A run may
// act in a session: who it acts for, until when. The session is recorded
// on the run's mark (RunMark.Session), and a run that builds on the
// run's checkpoints without a session of its own (a resume after a kill,
// a fork, a new turn) carries on in it. Before any task runs, and before
// anything is written, a resume, an answer, a replay, a fork and a new
// turn check that the session is still valid and (Graph.OnAccess) that
// the tasks they will run may still read what they read. A refusal is
// one line with its fix; nothing was run or written.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"rewind/engine/chainformat"
	"rewind/engine/internal/userpanic"
	"rewind/store"
)

// Session is who a run acts for, until when.
type Session struct {
	ID      string
	Expires time.Time
}

var (
	// ErrSessionExpired: the run's session (its own, or the one it
	// carries on in) expired before it started.
	ErrSessionExpired = errors.New("the session has expired")
	// ErrAccessWithdrawn: a task the run would run reads something its
	// session may no longer read.
	ErrAccessWithdrawn = errors.New("access was withdrawn")
	// ErrBadSession: a session without an id, or without an expiry.
	ErrBadSession = errors.New("not a session")
)

// AccessCheck is a graph's check that tasks, pending at checkpoint at of
// thread, may read what they will read (see OnAccess). An error refuses
// the run; it must say what to do.
type AccessCheck func(ctx context.Context, thread string, at int64, tasks []Task) error

// OnAccess registers the graph's access check (see AccessCheck).
func (g *Graph) OnAccess(fn AccessCheck) *Graph { g.accessCheck = fn; return g }

// checkSession checks a run that builds on cp and will run tasks (none
// for a run that starts with new input): its session (cfg's, else the
// one the run that wrote cp acted in, which cfg then carries) must not
// have expired, and the graph's access check must pass. what names the
// run for the refusal ("resume thread \"t\"").
func (e *Engine) checkSession(ctx context.Context, what string, thread string, cp Checkpoint, tasks []Task, cfg *RunConfig) error {
	if cfg.Session == nil {
		s, err := e.sessionAt(ctx, thread, cp)
		if err != nil {
			return err
		}
		cfg.Session = s
	}
	return e.validSession(ctx, what, thread, cp, tasks, cfg.Session)
}

// validSession is checkSession's check of session s (nil: none).
func (e *Engine) validSession(ctx context.Context, what string, thread string, cp Checkpoint, tasks []Task, s *Session) error {
	if s != nil {
		if s.ID == "" || s.Expires.IsZero() {
			return fmt.Errorf("%s: %w: a session needs an id and an expiry", what, ErrBadSession)
		}
		if now := e.now(); !now.Before(s.Expires) {
			return Fixable(thread, cp.ID, fmt.Errorf("%s: %w: session %s expired at %s, %s ago; nothing was run", what, ErrSessionExpired,
				store.Name(s.ID), s.Expires.UTC().Format(time.RFC3339), now.Sub(s.Expires).Round(time.Second)), Fix{Action: FixSession, Thread: thread})
		}
	}
	if len(tasks) == 0 || e.graph.accessCheck == nil {
		return nil
	}
	if err := userpanic.Do("OnAccess check of "+describeTasks(tasks), func() error { return e.graph.accessCheck(ctx, thread, cp.ID, tasks) }); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// sessionAt is the session of the run that wrote cp (its mark's, else
// its nearest marked ancestor's), nil when it had none.
func (e *Engine) sessionAt(ctx context.Context, thread string, cp Checkpoint) (*Session, error) {
	m, err := e.markAt(ctx, thread, cp)
	if err != nil || m == nil {
		return nil, err
	}
	return sessionOf(thread, m)
}

// sessionOf reads the session a run's mark recorded.
func sessionOf(thread string, m *RunMark) (*Session, error) {
	if m.Session == "" {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339Nano, m.SessionExpires)
	if err != nil {
		return nil, corrupt(thread, 0, fmt.Errorf("thread %q: run %s recorded session %s with expiry %q, which is not a time: %w",
			threadName(thread), m.ID, store.Name(m.Session), strings.TrimSpace(m.SessionExpires), ErrCorrupt))
	}
	return &Session{ID: m.Session, Expires: t}, nil
}

// markSession records s on a run's mark.
func markSession(m *chainformat.RunMark, s *Session) {
	if m == nil || s == nil {
		return
	}
	m.Session, m.SessionExpires = s.ID, s.Expires.UTC().Format(time.RFC3339Nano)
}
