package tui

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"rewind/themes"
)

// TestGolden drives the real program (teatest) to each main screen and
// compares the final view with testdata/TestGolden/THEME/SIZE/SCREEN.golden
// (rewrite them with `go test ./tui -run TestGolden -update`).
func TestGolden(t *testing.T) {
	screens := []struct {
		name string
		keys []string
		// wait lists what the screen must show before the view is taken.
		wait []string
	}{
		{"thread", nil, []string{"· #16"}},
		{"inspector", []string{"home", "right", "3"}, []string{"at #2 2/10", "Pending tasks (3)"}},
		{"state", []string{"home", "right", "right", "right", "2"}, []string{"at #10 4/10", "t-1-invoice"}},
		{"threads", []string{"t"}, []string{"16 checkpoints"}},
		{"help", []string{"?"}, []string{"Keys · thread view"}},
		{"fork", []string{"home", "right", "f"}, []string{"Fork at #2"}},
	}
	for _, theme := range []string{themes.Dark, themes.Light} {
		for _, size := range [][2]int{{80, 24}, {160, 48}} {
			for _, sc := range screens {
				t.Run(fmt.Sprintf("%s/%dx%d/%s", theme, size[0], size[1], sc.name), func(t *testing.T) {
					e := newEngine(t)
					seed(t, e, "t")
					m := New(context.Background(), depsFor(e), Settings{Thread: "t", Theme: themes.Or(theme)})
					tm := teatest.NewTestModel(t, settling{m}, teatest.WithInitialTermSize(size[0], size[1]))
					waitScreen(t, tm, "10/10", "· #16")
					for _, k := range sc.keys {
						tm.Send(keyMsg(k))
					}
					tm.Send(quitWhenSettled{})
					final := tm.FinalModel(t, teatest.WithFinalTimeout(60*time.Second)).(settling).Model
					view := final.View()
					for _, want := range sc.wait {
						if !strings.Contains(view, want) {
							t.Fatalf("the final view lacks %q:\n%s", want, view)
						}
					}
					teatest.RequireEqualOutput(t, []byte(view))
				})
			}
		}
	}
}

// settling quits the program once the screen shows what the cursor asks
// for (no load or run in flight), so the final view does not depend on how
// fast the loads were.
type settling struct{ *Model }

type quitWhenSettled struct{}

func (s settling) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if _, ok := msg.(quitWhenSettled); ok {
		m := s.Model
		settled := !m.loading && !m.busy() && (m.screen == screenThreads && m.threads.loaded ||
			m.screen == screenThread && m.cur != nil && m.cur.cp.ID == m.tree.cursor)
		if settled {
			return s, tea.Quit
		}
		return s, tea.Tick(5*time.Millisecond, func(time.Time) tea.Msg { return quitWhenSettled{} })
	}
	_, cmd := s.Model.Update(msg)
	return s, cmd
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
