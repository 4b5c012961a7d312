package tui

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"rewind/store/browse"
	"rewind/store/langgraph"
	"rewind/store/langgraph/lgtest"
	"rewind/themes"
)

// openFixture opens a copy of a LangGraph fixture, closed when the test
// ends, and returns it with the copy's path.
func openFixture(t *testing.T, name string) (browse.Source, string) {
	t.Helper()
	path := lgtest.Copy(t, name)
	src, err := langgraph.Open(context.Background(), "sqlite:"+path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = src.Close() })
	return src, path
}

// browseSettling quits once no read is in flight and the checkpoint under
// the cursor is read, so the final view does not depend on timing.
type browseSettling struct{ *Browser }

func (s browseSettling) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if _, ok := msg.(quitWhenSettled); ok {
		if s.Browser.Settled() {
			return s, tea.Quit
		}
		return s, tea.Tick(5*time.Millisecond, func(time.Time) tea.Msg { return quitWhenSettled{} })
	}
	_, cmd := s.Browser.Update(msg)
	return s, cmd
}

// The read-only browser on LangGraph's Python SqliteSaver file: the
// threads with the subgraph run, the timeline with its fork points and
// the state at a checkpoint, a writing key refused on the status line;
// goldens in testdata/TestBrowseGolden (`go test ./tui -run
// TestBrowseGolden -update`).
func TestBrowseGolden(t *testing.T) {
	screens := []struct {
		name string
		// keys, then once t-main's chain shows, then.
		keys, then []string
		wait       []string
	}{
		{"threads", nil, nil, []string{"t-main", "└ review:", "LangGraph database, read-only"}},
		{"chain", []string{"down", "enter"}, nil, []string{"thread t-main · 12/12", "⑂", "#3 tool ← call_1: 3 hits for tables"}},
		{"sends", []string{"down", "enter"}, []string{"home", "right", "right", "right", "right"}, []string{"5/12", "Send worker", `"part":2`}},
		{"refused", []string{"down", "enter"}, []string{"f"}, []string{"read-only: forking would write to this LangGraph database"}},
	}
	for _, theme := range []string{themes.Dark, themes.Light} {
		for _, size := range [][2]int{{80, 24}, {160, 48}} {
			for _, sc := range screens {
				t.Run(fmt.Sprintf("%s/%dx%d/%s", theme, size[0], size[1], sc.name), func(t *testing.T) {
					src, path := openFixture(t, "sqlite-python.db")
					before := sum(t, path)
					m := NewBrowser(context.Background(), src, "sqlite:sqlite-python.db", "", themes.Or(theme))
					tm := teatest.NewTestModel(t, browseSettling{m}, teatest.WithInitialTermSize(size[0], size[1]))
					waitScreen(t, tm, "t-main")
					for _, k := range sc.keys {
						tm.Send(keyMsg(k))
					}
					if sc.then != nil {
						waitScreen(t, tm, "12/12")
						for _, k := range sc.then {
							tm.Send(keyMsg(k))
						}
					}
					tm.Send(quitWhenSettled{})
					final := tm.FinalModel(t, teatest.WithFinalTimeout(60*time.Second)).(browseSettling).Browser
					view := final.View()
					for _, want := range sc.wait {
						if !strings.Contains(view, want) {
							t.Fatalf("the final view lacks %q:\n%s", want, view)
						}
					}
					teatest.RequireEqualOutput(t, []byte(view))
					if sum(t, path) != before {
						t.Error("the browser changed the database")
					}
				})
			}
		}
	}
}

// Every key that writes in the thread view is refused with a status line
// naming what it would do; moving on clears it.
func TestBrowseRefusesWritingKeys(t *testing.T) {
	src, _ := openFixture(t, "sqlite-js.db")
	m := NewBrowser(context.Background(), src, "sqlite:sqlite-js.db", "t-fail", themes.Or(themes.Dark))
	run := runBrowser(m)
	run(m.Init())
	if m.onThreads || m.chain.Thread != "t-fail" || len(m.tl.Listings()) == 0 {
		t.Fatalf("want thread t-fail open at start, got threads screen %v, chain %+v", m.onThreads, m.chain)
	}
	for k, what := range writeKeys {
		_, cmd := m.Update(keyMsg(k))
		run(cmd)
		if !strings.Contains(m.View(), "read-only: "+what+" would write to this LangGraph database") {
			t.Errorf("key %q: the status line does not refuse it:\n%s", k, m.View())
		}
	}
	_, cmd := m.Update(keyMsg("left"))
	run(cmd)
	if strings.Contains(m.View(), "would write") {
		t.Error("the refusal stays after a move")
	}
}

// runBrowser runs a command and what it leads to, in the test's
// goroutine; follow is off, so no tick waits.
func runBrowser(m *Browser) func(tea.Cmd) {
	m.follow.on = false
	var run func(tea.Cmd)
	run = func(cmd tea.Cmd) {
		if cmd == nil {
			return
		}
		switch msg := cmd().(type) {
		case nil:
		case tea.BatchMsg:
			for _, c := range msg {
				run(c)
			}
		default:
			_, next := m.Update(msg)
			run(next)
		}
	}
	return run
}

func sum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}
