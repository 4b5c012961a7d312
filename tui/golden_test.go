package tui

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"rewind/demo/research"
	"rewind/engine"
	"rewind/engine/ticket"
	"rewind/store"
	"rewind/store/langgraph/lgtest"
	"rewind/themes"
)

// TestGolden drives the real program (teatest) to each main screen and
// compares the final view with testdata/TestGolden/THEME/SIZE/SCREEN.golden
// (rewrite them with `go test ./tui -run TestGolden -update`).
func TestGolden(t *testing.T) {
	t.Parallel()
	// The two-branch thread most screens show, seeded once (not once for
	// each of the screens below): each screen reads it through an engine
	// of its own, and a screen that writes to it fails (frozen).
	seeded := newStore()
	seed(t, newClockedEngine(t, storeOnly{seeded}, ticket.NewGraph(), ticket.NewMock()), "t")
	seededEngine := func(t *testing.T) *engine.Engine {
		return newClockedEngine(t, storeOnly{frozen{seeded, t}}, ticket.NewGraph(), ticket.NewMock())
	}
	screens := []struct {
		name string
		keys []string
		// wait lists what the screen must show before the view is taken.
		wait []string
		// setup, when set, makes the thread (named "t") and the deps
		// instead of the seeded two-branch thread, and says what the first
		// screen shows.
		setup func(t *testing.T) (Deps, []string)
		// poke, when set, changes the settled model last: what keys alone
		// cannot reach without a run under way (whose timings vary).
		poke func(m *Model)
	}{
		{"thread", nil, []string{"· @16", "? help"}, nil, nil},
		{"inspector", []string{"home", "right", "3"}, []string{"at @2 2/10", "Pending tasks (3)"}, nil, nil},
		{"state", []string{"home", "right", "right", "right", "2"}, []string{"at @10 4/10", "t-1-invoice"}, nil, nil},
		{"threads", []string{"t"}, []string{"16 checkpoints", "? help"}, nil, nil},
		{"help", []string{"?"}, []string{"Keys · thread view", "close"}, nil, nil},
		{"help-scrolled", []string{"?", "G"}, []string{"Keys · thread view", "of"}, nil, nil},
		{"log", nil, []string{"Status log · 3", "ending here"}, nil, func(m *Model) {
			m.setFlash("theme light (saved to /home/you/.config/rewind/config.toml)", false)
			m.setFlash("run failed: resume thread \"ticket-1\" at checkpoint 87: a long error from the store that the status bar cannot hold whole, ending here", true)
			m.setFlash("stopped at @87: finished tasks are stored, r resumes the rest", false)
			m.openPager(false)
		}},
		{"status-cut", nil, []string{"(L)"}, nil, func(m *Model) {
			m.setFlash("run failed: resume thread \"ticket-1\" at checkpoint 87: a long error from the store that the status bar cannot hold whole, ending here, after more words than fit in a hundred and sixty columns", true)
		}},
		{"kill", nil, []string{"Kill the worker", "pid 4242"}, nil, func(m *Model) { m.openDialog(m.runs.killDialog(fakePid)) }},
		{"quit", nil, []string{"Quit during a run", "stays resumable"}, nil, func(m *Model) { m.openDialog(m.runs.quitDialog()) }},
		{"fork", []string{"home", "right", "f"}, []string{"Fork at @2"}, nil, nil},
		{"drill", []string{"K", "down", "down", "down"}, []string{"Crash drill", "mid-fanout: after one executor"}, func(t *testing.T) (Deps, []string) {
			e := seededEngine(t)
			return fakeDeps(e, &fakeRunner{local: NewLocalRunner(e)}), []string{"10/10", "· @16"}
		}, nil},
		{"pending", nil, []string{"@2 has 3 pending tasks", "not finished → redispatched"}, func(t *testing.T) (Deps, []string) {
			// Two executors failed, one stored its writes: what a crash
			// mid fan-out leaves behind.
			e, err := engine.New(storeOnly{newStore()}, ticket.NewGraph(), newFlaky("t-2-shipping", "t-3-refund"), engine.WithClock(fixedClock), countedRuns())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.Run(context.Background(), "t", ticket.Input(firstInput), engine.RunConfig{}); err == nil {
				t.Fatal("the flaky executors should stop the run")
			}
			return fakeDeps(e, &fakeRunner{local: NewLocalRunner(e)}), []string{"2/2", "finished → reused"}
		}, nil},
		{"compare", []string{"m", "["}, []string{"Compare @16 (mark) → @8 (cursor)", "parting after @2"}, nil, func(m *Model) {
			if msg := parKey(m, "=")(); msg != nil {
				m.dialog.Update(msg)
			}
		}},
		{"graph", []string{"home", "right"}, []string{"Graph · @2", "due ×3"}, nil, func(m *Model) { parKey(m, "v") }},
		// What the model saw: @3's first executor call, rebuilt exactly,
		// its tools, its tail and its tool call.
		{"saw", []string{":", "3", "enter", "P"}, []string{"What the model saw · @3 · call 1/", "exactly as sent", "tools offered"}, nil, nil},
		{"edit-channels", []string{"home"}, []string{"which channel?", "messages"}, nil, func(m *Model) { parKey(m, "e") }},
		{"threads-state", []string{"t"}, []string{"awaiting approval", "paused", "done", "“Where is the parcel"}, func(t *testing.T) (Deps, []string) {
			e, _ := newDraftEngine(t, ticket.NewMock())
			seed(t, e, "t")
			ctx := context.Background()
			if _, err := e.Run(ctx, "paused-one", ticket.Input("Where is the parcel for SO20260901?"), engine.RunConfig{InterruptBefore: []string{ticket.NodeExecutor}}); err != nil {
				t.Fatal(err)
			}
			turn := ticket.Turn{Text: forkInput, Draft: true, Authorization: &ticket.Authorization{Ref: "grant:x", ExpiresAt: "2099-01-01T00:00:00Z"}}
			if _, err := e.Run(ctx, "draft-one", turn.Writes(), engine.RunConfig{}); err != nil {
				t.Fatal(err)
			}
			return depsFor(e), []string{"10/10", "· @16"}
		}, nil},
		{"approval", []string{"a"}, []string{"Approval · @8", "Draft to the customer"}, func(t *testing.T) (Deps, []string) {
			e, _ := newDraftEngine(t, ticket.NewMock())
			turn := ticket.Turn{Text: firstInput, Draft: true, Authorization: &ticket.Authorization{Ref: "grant:customer-consent", ExpiresAt: "2099-01-01T00:00:00Z"}}
			if _, err := e.Run(context.Background(), "t", turn.Writes(), engine.RunConfig{}); err != nil {
				t.Fatal(err)
			}
			return depsFor(e), []string{"8/8", "waits for approval"}
		}, nil},
		{"following", nil, []string{"● live"}, func(t *testing.T) (Deps, []string) {
			deps := depsFor(seededEngine(t))
			deps.Backend = liveBackend{deps.Backend}
			return deps, []string{"10/10", "· @16", "● live"}
		}, nil},
		// Finding the way (nav.go, search.go, trace.go).
		{"turns", nil, []string{"turn 3", "▤ summary", "? answering #"}, longThread, nil},
		{"summary-pinned", []string{"tab", "up", "up", "up", "up", "up", "up", "up", "up"}, []string{"▤ summary", "? answering #"}, longThread, nil},
		{"search", []string{"/", "invoice", "enter"}, []string{`Search "invoice"`, "enter"}, nil, nil},
		{"zoom", []string{"tab", "+"}, []string{"1 Conversation", "· @16"}, nil, nil},
		{"zoom-timeline", []string{"+"}, []string{"Timeline · 16 · + back", "turn 2"}, nil, nil},
		{"trace", []string{"home", "right", "o"}, []string{"✝", "⟲", "reused (stored writes", "redispatched"}, resumedThread, nil},
		// The second demo graph, opened without an extension as `rewind
		// tui --graph research` opens it: its own nodes, its messages as a
		// conversation, its channels by shape, its declared drawing.
		{"research", nil, []string{"@6   loop   publish", "ai (publish)"}, researchThread, nil},
		{"research-state", []string{"2"}, []string{"[2 State]", "draft"}, researchThread, nil},
		{"research-fanout", []string{"home", "right", "3"}, []string{"Pending tasks (3)", "search"}, researchThread, nil},
		{"research-graph", []string{"home", "right"}, []string{"Graph · @2", "search"}, researchThread, func(m *Model) { parKey(m, "v") }},
		{"research-gate", []string{":", "4", "enter"}, []string{"Graph · @4", "publish ⟲ write", "⏸ approval"}, researchThread, func(m *Model) { parKey(m, "v") }},
	}
	// The main TUI on a read-only source (a LangGraph database: no
	// Backend, no runner), on copies of the Python and JS SqliteSaver
	// fixtures.
	readOnly := []struct {
		name, fixture, thread string
		keys, wait            []string
	}{
		{"lg-threads", "sqlite-python.db", "", nil, []string{"t-main", "└ review:43a3a66f…ecc4", "? help"}},
		{"lg-thread", "sqlite-python.db", "t-main", nil, []string{"research langgraph tables", "read-only"}},
		{"lg-state", "sqlite-python.db", "t-main", []string{"2"}, []string{"messages = "}},
		{"lg-inspector", "sqlite-js.db", "t-fail", []string{"3"}, []string{"worker 1 exploded", "→ worker (Send)"}},
		{"lg-subgraph", "sqlite-python.db", "", []string{"j", "j", "enter"}, []string{"t-main › review:"}},
		{"lg-refused", "sqlite-python.db", "t-main", []string{"f"}, []string{"forking is off"}},
		{"lg-help", "sqlite-python.db", "t-main", []string{"?"}, []string{"off: write a message"}},
		{"lg-search", "sqlite-python.db", "t-main", []string{"/", "tables", "enter"}, []string{`Search "tables"`}},
	}
	for _, theme := range []string{themes.Dark, themes.Light} {
		for _, size := range [][2]int{{80, 24}, {120, 40}, {160, 48}} {
			for _, sc := range screens {
				t.Run(fmt.Sprintf("%s/%dx%d/%s", theme, size[0], size[1], sc.name), func(t *testing.T) {
					t.Parallel() // each its own program and engine: most of a screen's time is waiting for its frames
					var deps Deps
					first := []string{"10/10", "· @16"}
					if sc.setup != nil {
						deps, first = sc.setup(t)
					} else {
						deps = depsFor(seededEngine(t))
					}
					goldenScreen(t, deps, Settings{Thread: "t", Theme: themes.Or(theme)}, size, first, sc.keys, sc.wait, sc.poke)
				})
			}
			for _, sc := range readOnly {
				t.Run(fmt.Sprintf("%s/%dx%d/%s", theme, size[0], size[1], sc.name), func(t *testing.T) {
					t.Parallel()
					src, path := openFixture(t, sc.fixture)
					// The thread loaded, its cursor at its head, before a key
					// (the read-only hint shows before the timeline does).
					first := []string{"read-only", map[string]string{"t-main": "6/6", "t-fail": "5/5"}[sc.thread]}
					if sc.thread == "" {
						first = []string{"checkpoints"}
					}
					goldenScreen(t, Deps{Source: src, StoreLabel: "sqlite:" + sc.fixture}, Settings{Thread: sc.thread, Theme: themes.Or(theme)}, size, first, sc.keys, sc.wait, nil)
					if lgtest.Sum(t, path) != lgtest.Sum(t, filepath.Join(lgtest.Dir(), sc.fixture)) {
						t.Fatalf("the TUI changed %s", sc.fixture)
					}
				})
			}
		}
	}
}

// goldenScreen runs the program on deps until it shows first, sends keys,
// pokes the settled model, and compares its view with the golden file,
// after checking it shows every string of wait.
func goldenScreen(t *testing.T, deps Deps, s Settings, size [2]int, first, keys, wait []string, poke func(*Model)) {
	t.Helper()
	m := New(context.Background(), deps, s)
	tm := teatest.NewTestModel(t, settling{Model: m}, teatest.WithInitialTermSize(size[0], size[1]))
	waitScreen(t, tm, first...)
	for _, k := range keys {
		tm.Send(keyMsg(k))
	}
	tm.Send(quitWhenSettled{poke: poke, t: t, by: time.Now().Add(45 * time.Second)})
	final := tm.FinalModel(t, teatest.WithFinalTimeout(60*time.Second)).(settling).Model
	view := final.View()
	for _, want := range wait {
		if !strings.Contains(view, want) {
			t.Fatalf("the final view lacks %q:\n%s", want, view)
		}
	}
	teatest.RequireEqualOutput(t, []byte(view))
}

// frozen is the seeded thread's store as the screens see it: they only
// read it, so a write is a screen that needs a thread of its own.
type frozen struct {
	store.Store
	t testing.TB
}

var errFrozen = errors.New("the golden screens' seeded thread is shared: it is not written")

func (f frozen) refuse(what string) error {
	f.t.Errorf("%s on the seeded thread: give this screen a setup of its own", what)
	return errFrozen
}

func (f frozen) PutCheckpoint(context.Context, store.Checkpoint, []store.Event) error {
	return f.refuse("PutCheckpoint")
}
func (f frozen) PutWrites(context.Context, store.TaskWrites) error { return f.refuse("PutWrites") }
func (f frozen) Fence(context.Context, string) (int64, error)      { return 0, f.refuse("Fence") }
func (f frozen) DeleteThread(context.Context, string) error        { return f.refuse("DeleteThread") }
func (f frozen) Prune(context.Context, string, []int64, []store.Rebase) (store.PruneResult, error) {
	return store.PruneResult{}, f.refuse("Prune")
}
func (f frozen) Lock(context.Context, string) (func() error, error) { return nil, f.refuse("Lock") }
func (f frozen) Close() error                                       { return nil }

// settling quits the program once the screen shows what the cursor asks
// for (no load or run in flight), so the final view does not depend on how
// fast the loads were. Once asked (quitWhenSettled), it checks after every
// message: only a message changes the model, and Bubble Tea draws a frame
// after each one, so polling on a timer drew hundreds of frames a screen
// for nothing (most of TestGolden's CPU under -race).
type settling struct {
	*Model
	q *quitWhenSettled // the quit asked for; nil before it, and once quitting
}

type quitWhenSettled struct {
	poke func(*Model)
	// t and by, when set, fail the test with what is still loading once by
	// passes: a screen that never settles says why, not only "timeout".
	t  testing.TB
	by time.Time
	// late is the deadline's own tick, which only checks by.
	late bool
}

// settleDeadline is how often an unsettled screen looks at its deadline:
// a screen waiting on nothing gets no message to check it after.
const settleDeadline = time.Second

// unsettled names what the model still waits for ("" when settled).
func unsettled(m *Model) string {
	var why []string
	for _, c := range []struct {
		busy bool
		name string
	}{
		{m.timeline.loading, "timeline page"},
		{m.busy(), "run"},
		{m.live.headLoading != 0, "head"},
		{m.live.costsLoading, "costs"},
		{m.nav.search.running, "search"},
		{m.nav.tracing, "trace"},
		{m.nav.origLoading != 0, "original"},
		{len(m.timeline.loadingWords) != 0, "timeline words"},
		{m.screen == screenThreads && !m.threads.loaded, "threads list"},
		{m.screen == screenThread && (m.cur == nil || m.cur.id != m.timeline.tree.cursor), "cursor checkpoint"},
		{parityLoading(m), "compare or thread states"},
	} {
		if c.busy {
			why = append(why, c.name)
		}
	}
	return strings.Join(why, ", ")
}

func (s settling) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	q, asked := msg.(quitWhenSettled)
	var cmd tea.Cmd
	switch {
	case asked && q.late && s.q == nil:
		return s, nil // settled and quitting already
	case asked && !q.late:
		s.q = &q
		cmd = s.deadline()
	case !asked:
		_, cmd = s.Model.Update(msg)
		if s.q == nil {
			return s, cmd
		}
	}
	cmd, done := s.q.step(s.Model, unsettled(s.Model), "the screen", asked && q.late, cmd)
	if done {
		s.q = nil
	}
	return s, cmd
}

// step is a settling model's look once the quit was asked, with why it
// still waits ("" when settled): quit (done) when settled, or when late
// (the deadline's tick) past the deadline, failing the test with why;
// else the deadline's next tick when late, and cmd otherwise.
func (q *quitWhenSettled) step(m *Model, why, what string, late bool, cmd tea.Cmd) (_ tea.Cmd, done bool) {
	if why == "" {
		if q.poke != nil {
			q.poke(m)
		}
		return tea.Quit, true
	}
	if !late {
		return cmd, false
	}
	if q.t != nil && time.Now().After(q.by) {
		q.t.Errorf("%s never settled: still waiting for %s", what, why)
		return tea.Quit, true
	}
	return settling{}.deadline(), false
}

func (s settling) deadline() tea.Cmd {
	return tea.Tick(settleDeadline, func(time.Time) tea.Msg { return quitWhenSettled{late: true} })
}

// waitScreen reads the program's output until every string has appeared.
func waitScreen(t *testing.T, tm *teatest.TestModel, wants ...string) {
	t.Helper()
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		for _, w := range wants {
			if !bytes.Contains(b, []byte(w)) {
				return false
			}
		}
		return true
	}, teatest.WithDuration(60*time.Second), teatest.WithCheckInterval(20*time.Millisecond))
}

// sharedThread is a thread that several screens show (each theme and
// size): written once, by the first screen that asks, and read by every
// screen through an engine of its own on the store frozen, as the seeded
// thread is. write writes it to st.
type sharedThread struct {
	once  sync.Once
	st    store.Store
	write func(t testing.TB, st store.Store)
}

func shared(write func(t testing.TB, st store.Store)) *sharedThread {
	return &sharedThread{write: write}
}

// store is the written thread's store, frozen for t.
func (s *sharedThread) store(t *testing.T) store.Store {
	s.once.Do(func() {
		st := newStore()
		s.write(t, st)
		s.st = st
	})
	if s.st == nil {
		t.Fatal("the shared thread was not written: see the screen that failed first")
	}
	return storeOnly{frozen{s.st, t}}
}

var longShared = shared(func(t testing.TB, st store.Store) { longEngineOn(t, storeOnly{st}) })

// longThread is three turns, compacted once: the turn headers and the
// pinned summary and question.
func longThread(t *testing.T) (Deps, []string) {
	e := newClockedEngine(t, longShared.store(t), ticket.NewGraph(), ticket.NewMock())
	return depsFor(e), []string{"turn 3", "? answering #"}
}

// longEngine holds thread "t": three turns (@1, @9, @17 start them), the
// last one's question compacted into the summary by its reply (@24).
func longEngine(t testing.TB) *engine.Engine { return longEngineOn(t, storeOnly{newStore()}) }

func longEngineOn(t testing.TB, st store.Store) *engine.Engine {
	e := newClockedEngine(t, st, ticket.NewGraph(), ticket.NewMock())
	for i := 0; i < 3; i++ {
		if _, err := e.Run(context.Background(), "t", ticket.Input(fmt.Sprintf("Turn %d: my order SO2026090%d hasn't arrived: where is the parcel, and can I get a refund?", i+1, i+1)), engine.RunConfig{}); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// resumedThread is a run stopped mid fan-out (two executors failed, one
// stored its writes) and resumed: the resume reused one task and
// redispatched two.
func resumedThread(t *testing.T) (Deps, []string) {
	e := newClockedEngine(t, resumedShared.store(t), ticket.NewGraph(), newFlaky("t-2-shipping", "t-3-refund"))
	return depsFor(e), []string{"⟲", "✝"}
}

var resumedShared = shared(func(t testing.TB, st store.Store) { resumedEngineOn(t, storeOnly{st}) })

func resumedEngine(t testing.TB) *engine.Engine { return resumedEngineOn(t, storeOnly{newStore()}) }

func resumedEngineOn(t testing.TB, st store.Store) *engine.Engine {
	e := newClockedEngine(t, st, ticket.NewGraph(), newFlaky("t-2-shipping", "t-3-refund"))
	ctx := context.Background()
	if _, err := e.Run(ctx, "t", ticket.Input(firstInput), engine.RunConfig{}); err == nil {
		t.Fatal("the flaky executors should stop the run")
	}
	if _, err := e.Resume(ctx, "t", engine.RunConfig{}); err != nil {
		t.Fatal(err)
	}
	return e
}

// researchThread is the second demo graph's thread at its end (asked,
// stopped at the publish gate, approved, published), opened without an
// extension: what `rewind tui --graph research` shows.
func researchThread(t *testing.T) (Deps, []string) {
	deps := depsFor(newClockedEngine(t, researchShared.store(t), research.Graph(), research.NewMock()))
	deps.Extension = nil
	return deps, []string{"6/6", "· @6"}
}

var researchShared = shared(func(t testing.TB, st store.Store) {
	ctx := context.Background()
	e := newClockedEngine(t, storeOnly{st}, research.Graph(), research.NewMock())
	in, err := e.Graph().TurnInput()(engine.Input{Text: research.Question}, fixedClock())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Run(ctx, "t", in, engine.RunConfig{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Answer(ctx, "t", research.Answer(research.Review{Decision: research.Approve}), engine.RunConfig{}); err != nil {
		t.Fatal(err)
	}
})
