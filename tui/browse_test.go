package tui

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
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
// threads with the subgraph run, the timeline tree with its fork points,
// the conversation with the tool call joined to its result, the state
// tree with the queued Sends, the failed fan-out's writes, a diff across
// a fork, a subgraph's run entered, a writing key refused; goldens in
// testdata/TestBrowseGolden (`go test ./tui -run TestBrowseGolden
// -update`), each taken once every read of the screen is in.
func TestBrowseGolden(t *testing.T) {
	screens := []struct {
		name string
		// keys, then once the chain shows (then), then.
		keys, then []string
		chain      string
		wait       []string
	}{
		{"threads", nil, nil, "", []string{"t-main", "└ review:", "LangGraph database, read-only"}},
		{"conversation", []string{"down", "enter"}, nil, "12/12", []string{"thread t-main · 12/12", "⑂", "└→ #3 tool: 3 hits for tables", "← call_1 of #2"}},
		{"fork", []string{"down", "enter"}, []string{"g", "j", "j"}, "12/12", []string{"3/12", "⑂", "└✎", "update", "└●"}},
		{"sends", []string{"down", "enter"}, append(gotoID("8a03"), "2"), "12/12", []string{"9/12", "queued Sends (__pregel_tasks) = 3", "Send → worker"}},
		{"failed", []string{"enter"}, []string{"3"}, "5/5", []string{"thread t-fail", "[error] __error__", "error: RuntimeError('worker 1 exploded')"}},
		{"diff", []string{"down", "enter"}, []string{"m", "k", "k", "k", "="}, "12/12", []string{"@1f1ed296-8a69 → @1f1ed296-8a03", "is an", "@@ findings"}},
		{"subgraph", []string{"down", "enter"}, append(gotoID("8a09"), "enter"), "12/12", []string{"subgraph review:", "3/3"}},
		{"refused", []string{"down", "enter"}, []string{"f"}, "12/12", []string{"read-only: forking would write to this LangGraph database"}},
	}
	for _, theme := range []string{themes.Dark, themes.Light} {
		for _, size := range [][2]int{{80, 24}, {120, 40}} {
			for _, sc := range screens {
				if theme == themes.Light && sc.name != "conversation" && sc.name != "failed" {
					continue // the light theme: two screens are enough
				}
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
						waitScreen(t, tm, sc.chain)
						for _, k := range sc.then {
							tm.Send(keyMsg(k))
						}
					}
					tm.Send(quitWhenSettled{})
					final := tm.FinalModel(t, teatest.WithFinalTimeout(60*time.Second)).(browseSettling).Browser
					view := final.View()
					plain := ansi.Strip(view)
					for _, want := range sc.wait {
						if !strings.Contains(plain, want) {
							t.Fatalf("the final view lacks %q:\n%s", want, plain)
						}
					}
					assertFits(t, view, size, sc.name)
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
	if m.onThreads || m.chain.Thread != "t-fail" || len(m.timeline.Listings()) == 0 {
		t.Fatalf("want thread t-fail open at start, got threads screen %v, chain %+v", m.onThreads, m.chain)
	}
	own := browserHelp{m}.FullHelp()
	for _, o := range browseOffKeys() {
		for _, k := range o.b.Keys() {
			if k == "enter" || ownKey(own[:len(own)-1], k) {
				continue // the browser's own (n: next match); enter: no subgraph here
			}
			_, cmd := m.Update(browseKey(k))
			run(cmd)
			if !strings.Contains(m.View(), "read-only: "+o.what+" would write to this LangGraph database") {
				t.Errorf("key %q: the status line does not refuse it:\n%s", k, m.View())
			}
		}
	}
	_, cmd := m.Update(keyMsg("enter"))
	run(cmd)
	if !strings.Contains(m.View(), "read-only: writing a message would write") {
		t.Errorf("enter off a subgraph run is not refused:\n%s", m.View())
	}
	_, cmd = m.Update(keyMsg("left"))
	run(cmd)
	if strings.Contains(m.View(), "would write") {
		t.Error("the refusal stays after a move")
	}
}

// ownKey is whether the browser binds k in groups.
func ownKey(groups [][]key.Binding, k string) bool {
	for _, g := range groups {
		for _, b := range g {
			if slices.Contains(b.Keys(), k) {
				return true
			}
		}
	}
	return false
}

// browseKey is keyMsg, with the keys it does not know.
func browseKey(k string) tea.KeyMsg {
	switch k {
	case "ctrl+k":
		return tea.KeyMsg{Type: tea.KeyCtrlK}
	case "backspace":
		return tea.KeyMsg{Type: tea.KeyBackspace}
	case "delete":
		return tea.KeyMsg{Type: tea.KeyDelete}
	case "ctrl+d":
		return tea.KeyMsg{Type: tea.KeyCtrlD}
	}
	return keyMsg(k)
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
