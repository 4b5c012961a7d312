package tui

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/spinner"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"

	"rewind/cli/rewindbin"
	"rewind/engine"
	"rewind/engine/model"
	"rewind/engine/ticket"
	"rewind/store"
	"rewind/store/backend/backendtest"
	"rewind/store/browse"
	"rewind/store/memory"
	"rewind/store/postgres/pgtest"
	"rewind/themes"
)

// TestMain pins what would make views differ between machines: colours
// (Ascii profile: goldens hold text only) and the time zone.
func TestMain(m *testing.M) {
	lipgloss.SetColorProfile(termenv.Ascii)
	time.Local = time.UTC
	rewindbin.WaitMostly()   // the goldens' screens, tmux, the real workers
	backendtest.SyncNormal() // no test here is about an OS crash
	code := pgtest.Run(m)
	for _, r := range realThreads {
		r.close()
	}
	for _, remove := range realRemove {
		if err := remove(); err != nil {
			fmt.Fprintln(os.Stderr, "remove the benchmarks' store:", err)
		}
	}
	rewindbin.Exit(code)
}

// rewindBinary is the real rewind binary (rewindbin: one link the test
// packages share; workers and the end-to-end test run it).
func rewindBinary(t testing.TB) string { return rewindbin.Path(t) }

const (
	firstInput = "My order SO20260901 hasn't arrived: what is the order status, where is the parcel, and can I get a refund?"
	forkInput  = "Please send me the invoice for SO20260901."
)

var epoch = time.Date(2026, 9, 1, 9, 0, 0, 0, time.UTC)

// fixedClock is the tests' clock: the engine and the memory store stamp
// every event, checkpoint, row and duration with epoch (durations are 0),
// so views are byte-for-byte stable, and so are the sizes a listing
// records (they count the digits of those times).
func fixedClock() time.Time { return epoch }

// newStore is a memory store on the fixed clock.
func newStore() *memory.Store { return memory.New(memory.WithClock(fixedClock)) }

// storeOnly is a store with the store.Store contract alone: it cannot be
// watched (the view does not follow it) and has no drafts table, like a
// backend without those capabilities. Most tests and the goldens use it.
type storeOnly struct{ store.Store }

// newClockedEngine is an engine on st with the fixed clock.
func newClockedEngine(t testing.TB, st store.Store, g *engine.Graph, m model.Model) *engine.Engine {
	t.Helper()
	e, err := engine.New(st, g, m, engine.WithClock(fixedClock), countedRuns())
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// countedRuns names an engine's runs run-1, run-2, … (the inspector
// shows a checkpoint's run: goldens need the same names every time).
func countedRuns() engine.Option {
	var mu sync.Mutex
	n := 0
	return engine.WithRunIDs(func() string {
		mu.Lock()
		defer mu.Unlock()
		n++
		return fmt.Sprintf("run-%d", n)
	})
}

func newEngine(t testing.TB) *engine.Engine {
	t.Helper()
	return newClockedEngine(t, storeOnly{newStore()}, ticket.NewGraph(), ticket.NewMock())
}

// seed runs the first turn on thread and forks at checkpoint 2: 16
// checkpoints in two branches.
func seed(t testing.TB, e *engine.Engine, thread string) {
	t.Helper()
	ctx := context.Background()
	if _, err := e.Run(ctx, thread, ticket.Input(firstInput), engine.RunConfig{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Fork(ctx, thread, 2, ticket.Input(forkInput), engine.RunConfig{}); err != nil {
		t.Fatal(err)
	}
}

func depsFor(e *engine.Engine) Deps {
	return Deps{Source: e.Browse(browse.About{}), Backend: EngineBackend(e), Runner: NewLocalRunner(e), StoreLabel: "memory:", Extension: TicketExtension()}
}

// harness is a small event loop for model tests: commands run on their own
// goroutines like in Bubble Tea, their messages come back through a
// channel, and a test waits for a condition with a generous deadline. Timer
// messages (spinner, cursor blink, flash expiry) are dropped so nothing
// depends on time.
type harness struct {
	t    testing.TB
	m    *Model
	msgs chan tea.Msg
	done chan struct{}
}

func newHarness(t testing.TB, e *engine.Engine, s Settings, w, h int) *harness {
	t.Helper()
	return newHarnessDeps(t, depsFor(e), s, w, h)
}

func newHarnessDeps(t testing.TB, deps Deps, s Settings, w, h int) *harness {
	t.Helper()
	if s.Theme == nil {
		s.Theme = themes.Or(themes.Dark)
	}
	hs := &harness{t: t, m: New(context.Background(), deps, s), msgs: make(chan tea.Msg, 256), done: make(chan struct{})}
	t.Cleanup(func() { close(hs.done) })
	hs.dispatch(tea.WindowSizeMsg{Width: w, Height: h})
	hs.exec(hs.m.Init())
	return hs
}

func (h *harness) exec(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	go func() {
		msg := cmd()
		select {
		case h.msgs <- msg:
		case <-h.done:
		}
	}()
}

func (h *harness) dispatch(msg tea.Msg) {
	switch msg := msg.(type) {
	case nil, spinner.TickMsg, cursor.BlinkMsg, flashExpiredMsg:
		return
	case tea.BatchMsg:
		for _, c := range msg {
			h.exec(c)
		}
		return
	}
	if v := reflect.ValueOf(msg); v.Kind() == reflect.Slice && v.Type().String() == "tea.sequenceMsg" {
		cmds := make([]tea.Cmd, v.Len())
		for i := range cmds {
			cmds[i], _ = v.Index(i).Interface().(tea.Cmd)
		}
		go func() {
			for _, c := range cmds {
				if c == nil {
					continue
				}
				msg := c()
				select {
				case h.msgs <- msg:
				case <-h.done:
					return
				}
			}
		}()
		return
	}
	_, cmd := h.m.Update(msg)
	h.exec(cmd)
}

// until processes messages until cond holds. cond is also checked again
// every few milliseconds: it may wait for something outside the model (a
// fake worker's run settling) that changes after the last message, and
// then no message would come to wake it (this hung
// TestKillShowsStoredWritesAndResumeRedispatchesOnlyTheRest under load).
func (h *harness) until(what string, cond func() bool) {
	h.t.Helper()
	deadline := time.After(60 * time.Second)
	recheck := time.NewTicker(5 * time.Millisecond)
	defer recheck.Stop()
	for !cond() {
		select {
		case msg := <-h.msgs:
			h.dispatch(msg)
		case <-recheck.C:
		case <-deadline:
			h.t.Fatalf("timed out waiting for %s; screen:\n%s", what, h.screen())
		}
	}
}

// drain handles whatever messages are already queued, without waiting.
func (h *harness) drain() {
	for {
		select {
		case msg := <-h.msgs:
			h.dispatch(msg)
		default:
			return
		}
	}
}

func (h *harness) key(keys ...string) {
	for _, k := range keys {
		h.dispatch(keyMsg(k))
	}
}

func (h *harness) typeText(s string) {
	h.dispatch(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)})
}

func keyMsg(k string) tea.KeyMsg {
	switch k {
	case "left":
		return tea.KeyMsg{Type: tea.KeyLeft}
	case "right":
		return tea.KeyMsg{Type: tea.KeyRight}
	case "up":
		return tea.KeyMsg{Type: tea.KeyUp}
	case "down":
		return tea.KeyMsg{Type: tea.KeyDown}
	case "home":
		return tea.KeyMsg{Type: tea.KeyHome}
	case "end":
		return tea.KeyMsg{Type: tea.KeyEnd}
	case "enter":
		return tea.KeyMsg{Type: tea.KeyEnter}
	case "esc":
		return tea.KeyMsg{Type: tea.KeyEsc}
	case "tab":
		return tea.KeyMsg{Type: tea.KeyTab}
	case "ctrl+c":
		return tea.KeyMsg{Type: tea.KeyCtrlC}
	case "ctrl+d":
		return tea.KeyMsg{Type: tea.KeyCtrlD}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}
}

// screen is the current view without styling.
func (h *harness) screen() string { return ansi.Strip(h.m.View()) }

// loaded reports that the thread view shows the checkpoint under the cursor.
func (h *harness) loaded() bool {
	m := h.m
	return !m.timeline.loading && m.cur != nil && m.timeline.tree.cursor == m.cur.id && !m.busy()
}

func (h *harness) at(id int64) bool { return h.loaded() && h.m.timeline.tree.cursor == idOf(id) }

func (h *harness) contains(s string) bool { return strings.Contains(h.screen(), s) }

// assertFits fails unless view fills the terminal exactly: size[1] lines,
// none wider than size[0] (after: what was pressed, for the message).
func assertFits(t testing.TB, view string, size [2]int, after any) {
	t.Helper()
	lines := strings.Split(view, "\n")
	if len(lines) != size[1] {
		t.Fatalf("at %dx%d after %v the view has %d lines, want %d:\n%s", size[0], size[1], after, len(lines), size[1], view)
	}
	for i, l := range lines {
		if w := width(l); w > size[0] {
			t.Fatalf("at %dx%d after %v line %d is %d wide:\n%s", size[0], size[1], after, i, w, l)
		}
	}
}
