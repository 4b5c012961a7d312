package engine_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"rewind/engine"
	"rewind/engine/ticket"
	"rewind/store"
	"rewind/store/memory"
)

// sessionClock is a clock a test moves on.
type sessionClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *sessionClock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *sessionClock) set(t time.Time) { c.mu.Lock(); defer c.mu.Unlock(); c.now = t }

// rowsOf counts what a refused run must not change: the thread's
// checkpoints, stored task writes and events.
func rowsOf(t *testing.T, st store.Store, thread string) [3]int {
	t.Helper()
	h, err1 := st.History(t.Context(), thread, 0, 0)
	w, err2 := st.Writes(t.Context(), thread, 0)
	ev, err3 := st.Events(t.Context(), thread, 0)
	if err := errors.Join(err1, err2, err3); err != nil {
		t.Fatal(err)
	}
	return [3]int{len(h), len(w), len(ev)}
}

// Issue 36, item 2: a run's session is checked before any task runs, on
// resume, fork, replay and a new turn, in the run's own session or the
// one it carries on in (recorded on the run's mark); so is the access to
// the sources the pending tasks will read. A refusal writes nothing.
func TestSessionAndAccessAreCheckedBeforeAnyTaskRuns(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	t0 := time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC)
	clock := &sessionClock{now: t0}
	st := memory.New(memory.WithClock(clock.Now))
	src := ticket.NewMemorySources()
	open := func() *engine.Engine { // a new process: nothing on trust
		e, err := engine.New(st, ticket.NewGraph(ticket.WithClock(clock.Now), ticket.WithSources(src), ticket.WithDrafts(st)),
			ticket.NewMock(), engine.WithClock(clock.Now))
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	s1 := &engine.Session{ID: "s1", Expires: t0.Add(time.Hour)}
	if _, err := open().Run(ctx, "t", ticket.Input("Where is my parcel SO20260901?"), engine.RunConfig{Session: s1, InterruptBefore: []string{ticket.NodeExecutor}}); err != nil {
		t.Fatal(err)
	}
	clock.set(t0.Add(2 * time.Hour)) // s1 expired while the run waited
	e := open()
	before := rowsOf(t, st, "t")
	refused := func(what string, err, want error, action engine.Action) {
		t.Helper()
		if !errors.Is(err, want) || !fixedBy(err, action, "t") {
			t.Errorf("%s = %v, want %v with its fix", what, err, want)
		}
		if after := rowsOf(t, st, "t"); after != before {
			t.Errorf("%s wrote: checkpoints, writes, events %v → %v", what, before, after)
		}
	}
	_, err := e.Resume(ctx, "t", engine.RunConfig{})
	refused("resume in the expired session", err, engine.ErrSessionExpired, engine.FixSession)
	_, err = e.Fork(ctx, "t", 2, ticket.Input("and the refund?"), engine.RunConfig{})
	refused("fork in the expired session", err, engine.ErrSessionExpired, engine.FixSession)
	_, err = e.Replay(ctx, "t", 2, engine.RunConfig{})
	refused("replay in the expired session", err, engine.ErrSessionExpired, engine.FixSession)
	_, err = e.Run(ctx, "t", ticket.Input("hello?"), engine.RunConfig{})
	if !errors.Is(err, engine.ErrSessionExpired) && !errors.As(err, new(*engine.PendingError)) {
		t.Errorf("new turn in the expired session = %v", err)
	}

	// A new session, but the pending executor's record was withdrawn.
	s2 := &engine.Session{ID: "s2", Expires: t0.Add(3 * time.Hour)}
	if err := src.SetWithdrawn(ctx, "shipments/SO20260901", true); err != nil {
		t.Fatal(err)
	}
	_, err = e.Resume(ctx, "t", engine.RunConfig{Session: s2})
	refused("resume reading a withdrawn source", err, engine.ErrAccessWithdrawn, engine.FixRestoreAccess)
	var f engine.Fixer
	if errors.As(err, &f) && f.Fixes()[0].Source != "shipments/SO20260901" {
		t.Errorf("the fix restores %q, want shipments/SO20260901", f.Fixes()[0].Source)
	}
	if err := src.SetWithdrawn(ctx, "shipments/SO20260901", false); err != nil {
		t.Fatal(err)
	}
	res, err := e.Resume(ctx, "t", engine.RunConfig{Session: s2})
	if err != nil || res.Status != engine.RunDone {
		t.Fatalf("resume in a valid session = %v, %v", res.Status, err)
	}
	// The resume's run recorded s2; the next turns carry on in it, in
	// this engine (on trust) and in a new one (from the mark).
	if _, err := e.Run(ctx, "t", ticket.Input("thanks, and the refund?"), engine.RunConfig{}); err != nil {
		t.Fatalf("a new turn in s2, still valid: %v", err)
	}
	clock.set(t0.Add(4 * time.Hour))
	before = rowsOf(t, st, "t")
	_, err = e.Run(ctx, "t", ticket.Input("one more thing"), engine.RunConfig{})
	refused("a trusted turn once s2 expired", err, engine.ErrSessionExpired, engine.FixSession)
	_, err = open().Run(ctx, "t", ticket.Input("one more thing"), engine.RunConfig{})
	refused("a new process's turn once s2 expired", err, engine.ErrSessionExpired, engine.FixSession)
	// Without sessions, nothing changes: a thread that never had one.
	if _, err := open().Run(ctx, "u", ticket.Input("where is SO20260901?"), engine.RunConfig{}); err != nil {
		t.Errorf("a turn without sessions: %v", err)
	}
}
