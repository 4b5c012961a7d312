package engine_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"rewind/engine"
	"rewind/engine/model"
	"rewind/store"
)

// gateGraph: start → work → gate → end. work runs nodeWork; gate waits for
// an "ok" item in the log before it lets the run end.
func gateGraph(nodeWork engine.NodeFunc) *engine.Graph {
	logged := func(by string) engine.NodeFunc {
		return func(context.Context, *engine.NodeContext) ([]engine.Write, error) {
			return []engine.Write{engine.Put("log", []map[string]any{{"by": by}})}, nil
		}
	}
	if nodeWork == nil {
		nodeWork = logged("work")
	}
	gate := func(_ context.Context, nc *engine.NodeContext) ([]engine.Write, error) {
		if !strings.Contains(string(nc.Values["log"]), `"ok"`) {
			return nil, engine.AwaitApproval("op-1", "go on?")
		}
		return nil, nil
	}
	return engine.NewGraph("status-test", 1).
		Channel("log", engine.IndexedAppend("index"), []any{}).
		Node("start", logged("start")).Node("work", nodeWork).Node("gate", gate).Gate("gate").
		Entry("start").Edge("start", "work").Edge("work", "gate").Edge("gate", engine.End)
}

func newTestEngine(t *testing.T, st store.Store, g *engine.Graph) *engine.Engine {
	t.Helper()
	e, err := engine.New(st, g, model.NewMock(model.Text(func(model.Request) (string, error) { return "ok", nil })))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func input(by string) []engine.Write {
	return []engine.Write{engine.Put("log", []map[string]any{{"by": by}})}
}

// reopened is an engine on a new handle of st's data (st itself when the
// store cannot be reopened), so nothing comes from a cache.
func reopened(t *testing.T, st store.Store, reopen func() store.Store, g *engine.Graph) *engine.Engine {
	if reopen != nil {
		st = reopen()
	}
	return newTestEngine(t, st, g)
}

func wantStatus(t *testing.T, e *engine.Engine, thread, want string) engine.RunStatus {
	t.Helper()
	st, err := e.Status(t.Context(), thread)
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != want {
		t.Fatalf("thread %s: status %+v, want %s", thread, st, want)
	}
	return st
}

// Issue 10, item 5: every commit records where the run stands, in the
// listing, so a fresh process reads it without a state.
func TestRunStatusIsStoredWithEachCheckpoint(t *testing.T) {
	t.Parallel()
	for _, sc := range storeCases {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel() // each store its own: PostgreSQL's mostly waits
			ctx := t.Context()
			st, reopen := sc.open(t)
			g := gateGraph(nil)
			e := newTestEngine(t, st, g)
			if _, err := e.Run(ctx, "s", input("user"), engine.RunConfig{InterruptBefore: []string{"work"}}); err != nil {
				t.Fatal(err)
			}
			wantStatus(t, reopened(t, st, reopen, g), "s", engine.RunPaused)
			res, err := e.Resume(ctx, "s", engine.RunConfig{})
			if err != nil || res.Status != "awaiting-approval" {
				t.Fatalf("resume: %v %s", err, res.Status)
			}
			gate := wantStatus(t, reopened(t, st, reopen, g), "s", engine.RunAwaitingApproval)
			if gate.Checkpoint != res.Checkpoint {
				t.Fatalf("status read at @%d, the gate is @%d", gate.Checkpoint, res.Checkpoint)
			}
			if _, err := e.UpdateState(ctx, "s", res.Checkpoint, input("ok"), ""); err != nil {
				t.Fatal(err)
			}
			wantStatus(t, reopened(t, st, reopen, g), "s", engine.RunPaused)
			// A run in progress records running at each commit.
			var during []string
			e2 := reopened(t, st, reopen, g)
			if _, err := e2.Resume(ctx, "s", engine.RunConfig{Hook: func(point engine.HookPoint, info engine.HookInfo) {
				if point == engine.HookAfterCommit {
					during = append(during, info.Committed.Metadata.Status)
				}
			}}); err != nil {
				t.Fatal(err)
			}
			if strings.Join(during, ",") != engine.RunDone {
				t.Fatalf("statuses committed by the last resume: %v, want [done]", during)
			}
			wantStatus(t, reopened(t, st, reopen, g), "s", engine.RunDone)
			hist, err := reopened(t, st, reopen, g).History(ctx, "s", 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			var all []string
			for _, cp := range hist {
				all = append(all, cp.Metadata.Status)
			}
			if got := strings.Join(all, " "); got != "done paused awaiting-approval paused running" {
				t.Fatalf("statuses newest first: %s", got)
			}
		})
	}
}

// blocker is a work node that waits until released, so a test can act
// while a run is in the middle of it.
type blocker struct {
	started chan struct{}
	release chan struct{}
	once    sync.Once
}

func newBlocker() *blocker {
	return &blocker{started: make(chan struct{}), release: make(chan struct{})}
}

func (b *blocker) node(context.Context, *engine.NodeContext) ([]engine.Write, error) {
	b.once.Do(func() { close(b.started) })
	<-b.release
	return []engine.Write{engine.Put("log", []map[string]any{{"by": "late work"}})}, nil
}

// Issue 10, item 5: cancel takes the thread from the live run that holds
// it; that run's late result is refused (it was fenced) and changes
// nothing; a resume does not revive the run; a new turn may start.
func TestCancelRefusesTheLateResultAndAnyResume(t *testing.T) {
	t.Parallel()
	for _, sc := range storeCases {
		t.Run(sc.name, func(t *testing.T) {
			ctx := t.Context()
			st, reopen := sc.open(t)
			b := newBlocker()
			g := gateGraph(b.node)
			e := newTestEngine(t, st, g)
			type out struct {
				res engine.Result
				err error
			}
			done := make(chan out, 1)
			go func() {
				res, err := e.Run(ctx, "c", input("user"), engine.RunConfig{})
				done <- out{res, err}
			}()
			<-b.started
			other := reopened(t, st, reopen, g)
			cp, err := other.Cancel(ctx, "c", "the customer withdrew the request")
			if err != nil {
				t.Fatal(err)
			}
			if cp.Metadata.Status != engine.RunCancelled || len(cp.Tasks) != 0 || len(cp.Metadata.Discarded) != 1 || cp.Metadata.Discarded[0].Node != "work" {
				t.Fatalf("cancel wrote %+v", cp.Metadata)
			}
			close(b.release)
			late := <-done
			if !errors.Is(late.err, store.ErrFenced) {
				t.Fatalf("the late result: %v, want it refused as fenced", late.err)
			}
			e3 := reopened(t, st, reopen, g)
			latest, err := e3.Latest(ctx, "c")
			if err != nil {
				t.Fatal(err)
			}
			if latest.ID != cp.ID || strings.Contains(string(latest.Values["log"]), "late work") {
				t.Fatalf("latest @%d %s: the late result changed the thread", latest.ID, latest.Values["log"])
			}
			st3 := wantStatus(t, e3, "c", engine.RunCancelled)
			if st3.Reason != "the customer withdrew the request" {
				t.Fatalf("reason %q", st3.Reason)
			}
			_, err = e3.Resume(ctx, "c", engine.RunConfig{})
			var ended *engine.RunEndedError
			if !errors.Is(err, engine.ErrRunCancelled) || !errors.As(err, &ended) || !errors.Is(err, engine.ErrNothingToResume) ||
				!strings.Contains(err.Error(), "was cancelled at @") || !fixedBy(err, engine.FixNewTurn, "c") {
				t.Fatalf("resume after cancel: %v", err)
			}
			// Its parent still has the task, but the run went on from it:
			// that is not a branch to resume either.
			if _, err := e3.ResumeAt(ctx, "c", cp.ParentID, engine.RunConfig{}); !errors.Is(err, engine.ErrNothingToResume) {
				t.Fatalf("resume the cancelled run's parent: %v", err)
			}
			if _, err := e3.Cancel(ctx, "c", ""); !errors.Is(err, engine.ErrRunCancelled) {
				t.Fatalf("cancel twice: %v", err)
			}
			evs, err := e3.Events(ctx, "c", cp.ID)
			if err != nil {
				t.Fatal(err)
			}
			if len(evs) != 1 || evs[0].Type != engine.EventRunCancelled || !strings.Contains(string(evs[0].Data), "withdrew") {
				t.Fatalf("events of the cancel: %+v", evs)
			}
			// A new turn is a new run.
			b2 := newBlocker()
			close(b2.release)
			e4 := newTestEngine(t, e3.Store(), gateGraph(b2.node))
			if res, err := e4.Run(ctx, "c", input("again"), engine.RunConfig{}); err != nil || res.Status != "awaiting-approval" {
				t.Fatalf("a new turn after the cancel: %v %s", err, res.Status)
			}
		})
	}
}

// A done run has nothing to cancel.
func TestCancelRefusesADoneRun(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	st, _ := storeCases[0].open(t)
	e := newTestEngine(t, st, gateGraph(nil))
	if _, err := e.Run(ctx, "d", input("ok"), engine.RunConfig{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Cancel(ctx, "d", ""); !errors.Is(err, engine.ErrNothingToResume) || !strings.Contains(err.Error(), "done at @") {
		t.Fatalf("cancel a done run: %v", err)
	}
	if _, err := e.Cancel(ctx, "nope", ""); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("cancel an unknown thread: %v", err)
	}
}

// Issue 10, item 5: a node that fails the run (NodeContext.Fail, or an
// error wrapped by engine.Fail) ends it: the failure is stored, its
// pending tasks dropped, and no resume revives it. What the node said
// would fix it is kept as data (issue 35: its reason names no command),
// in the error, the stored status and a resume's refusal. A plain error
// leaves the run to a resume.
func TestFailedRunIsNotRevived(t *testing.T) {
	t.Parallel()
	for _, sc := range storeCases {
		t.Run(sc.name, func(t *testing.T) {
			ctx := t.Context()
			st, reopen := sc.open(t)
			bad := errors.New("the stored draft is not the approved one")
			for _, tc := range []struct {
				thread string
				work   engine.NodeFunc
				// wrote: the failing task's writes are kept
				wrote bool
				fixes []engine.Action // the node's
			}{
				{"by-fail", func(_ context.Context, nc *engine.NodeContext) ([]engine.Write, error) {
					nc.Fail("verification failed: compare the draft, then fork", engine.FixShow, engine.FixNewTurn)
					return []engine.Write{engine.Put("log", []map[string]any{{"by": "verify"}})}, nil
				}, true, []engine.Action{engine.FixShow, engine.FixNewTurn}},
				{"by-error", func(context.Context, *engine.NodeContext) ([]engine.Write, error) {
					return nil, engine.Fail(bad)
				}, false, nil},
			} {
				g := gateGraph(tc.work)
				e := newTestEngine(t, st, g)
				res, err := e.Run(ctx, tc.thread, input("user"), engine.RunConfig{})
				var fe *engine.RunFailedError
				if !errors.Is(err, engine.ErrRunFailed) || !errors.As(err, &fe) || fe.Node != "work" || res.Status != engine.RunFailed {
					t.Fatalf("%s: %v (status %s)", tc.thread, err, res.Status)
				}
				if !tc.wrote && !errors.Is(err, bad) {
					t.Fatalf("%s: %v does not wrap the node's error", tc.thread, err)
				}
				e2 := reopened(t, st, reopen, g)
				latest, err := e2.Latest(ctx, tc.thread)
				if err != nil {
					t.Fatal(err)
				}
				if latest.ID != fe.Checkpoint || len(latest.Tasks) != 0 || strings.Contains(string(latest.Values["log"]), `"verify"`) != tc.wrote {
					t.Fatalf("%s: latest @%d (failure at @%d) tasks %v log %s", tc.thread, latest.ID, fe.Checkpoint, latest.Tasks, latest.Values["log"])
				}
				if tc.wrote && (len(latest.Metadata.Discarded) != 1 || latest.Metadata.Discarded[0].Node != "gate") {
					t.Fatalf("%s: discarded %v, want the gate that would have run next", tc.thread, latest.Metadata.Discarded)
				}
				if s := wantStatus(t, e2, tc.thread, engine.RunFailed); !strings.Contains(s.Reason, "draft") && !strings.Contains(s.Reason, "verification") {
					t.Fatalf("%s: reason %q", tc.thread, s.Reason)
				}
				wantFailedRunFixes(t, e2, fe, tc.thread, tc.fixes)
			}
			// A plain error is not the run's end: nothing is committed and
			// the run stays running for a resume.
			g := failsOnceGraph()
			e := newTestEngine(t, st, g)
			if _, err := e.Run(ctx, "flaky", input("user"), engine.RunConfig{}); err == nil || errors.Is(err, engine.ErrRunFailed) || !fixedBy(err, engine.FixResume, "flaky") {
				t.Fatalf("a plain error: %v", err)
			}
			wantStatus(t, reopened(t, st, reopen, g), "flaky", engine.RunRunning)
			if res, err := e.Resume(ctx, "flaky", engine.RunConfig{}); err != nil || res.Status != "awaiting-approval" {
				t.Fatalf("resume after a plain error: %v %s", err, res.Status)
			}
		})
	}
}

// Issue 33, item 4: a run whose listing says running while no process
// holds the thread's lock (it stopped on an error, was stopped or killed)
// shows as stopped; while the lock is held it is running; a store that
// cannot name the holder keeps the listing's word.
func TestLiveStatusShowsARunNobodyHoldsAsStopped(t *testing.T) {
	t.Parallel()
	for _, sc := range storeCases {
		t.Run(sc.name, func(t *testing.T) {
			ctx := t.Context()
			st, reopen := sc.open(t)
			g := failsOnceGraph()
			e := newTestEngine(t, st, g)
			if _, err := e.Run(ctx, "s", input("user"), engine.RunConfig{}); err == nil {
				t.Fatal("the flaky node's error should stop the run")
			}
			e2 := reopened(t, st, reopen, g)
			stored := wantStatus(t, e2, "s", engine.RunRunning)
			live := func(want string) engine.RunStatus {
				t.Helper()
				got, err := e2.LiveStatus(ctx, "s")
				if err != nil || got.Status != want {
					t.Fatalf("LiveStatus: %+v %v, want %s", got, err, want)
				}
				return got
			}
			if got := live(engine.RunStopped); got.Checkpoint != stored.Checkpoint || !strings.Contains(got.Reason, "resume") {
				t.Fatalf("stopped as of @%d (%q), the listing is @%d", got.Checkpoint, got.Reason, stored.Checkpoint)
			}
			release, err := st.Lock(ctx, "s")
			if err != nil {
				t.Fatal(err)
			}
			live(engine.RunRunning) // a holder: a run is under way
			if err := release(); err != nil {
				t.Fatal(err)
			}
			live(engine.RunStopped)
			blind := newTestEngine(t, noHolders{st}, g)
			if got, err := blind.LiveStatus(ctx, "s"); err != nil || got.Status != engine.RunRunning {
				t.Fatalf("a store that cannot name the holder: %+v %v, want the listing's running", got, err)
			}
			if _, err := e2.Resume(ctx, "s", engine.RunConfig{}); err != nil {
				t.Fatal(err)
			}
			live(engine.RunAwaitingApproval)
		})
	}
}

// noHolders is a store that cannot say who holds a lock.
type noHolders struct{ store.Store }

// failsOnceGraph is gateGraph whose work node fails its first call (a
// model that timed out) and succeeds after: a run stops on an error, and
// a resume finishes it.
func failsOnceGraph() *engine.Graph {
	var once sync.Once
	return gateGraph(func(context.Context, *engine.NodeContext) ([]engine.Write, error) {
		var err error
		once.Do(func() { err = errors.New("model timed out") })
		return []engine.Write{engine.Put("log", []map[string]any{{"by": "work"}})}, err
	})
}

// wantFailedRunFixes checks that the node's fixes of thread's failed run
// are in its error (fe), its stored status, and a resume's refusal
// (before a new turn and a fork), and that the resume is refused.
func wantFailedRunFixes(t *testing.T, e *engine.Engine, fe *engine.RunFailedError, thread string, actions []engine.Action) {
	t.Helper()
	var want []engine.Fix
	for _, a := range actions {
		want = append(want, engine.Fix{Action: a, Thread: thread})
	}
	if got := fe.Fixes(); !slices.Equal(got, want) {
		t.Fatalf("%s: the run's error fixes %+v, want %+v", thread, got, want)
	}
	if got := wantStatus(t, e, thread, engine.RunFailed).Fix; !slices.Equal(got, want) {
		t.Fatalf("%s: the stored status's fixes %+v, want %+v", thread, got, want)
	}
	_, err := e.Resume(t.Context(), thread, engine.RunConfig{})
	if !errors.Is(err, engine.ErrRunFailed) || !strings.Contains(err.Error(), "failed at @") {
		t.Fatalf("%s: resume a failed run: %v", thread, err)
	}
	var fixer engine.Fixer
	ended := append(slices.DeleteFunc(slices.Clone(want), func(fx engine.Fix) bool { return fx.Action == engine.FixNewTurn }),
		engine.NewTurnFix(thread), engine.ForkFix(thread, 0))
	if !errors.As(err, &fixer) || !slices.Equal(fixer.Fixes(), ended) {
		t.Fatalf("%s: the resume's refusal offers %+v, want %+v", thread, fixer, ended)
	}
}
