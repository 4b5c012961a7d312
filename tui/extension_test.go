package tui_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"rewind/engine"
	"rewind/engine/model"
	"rewind/store/browse"
	"rewind/store/memory"
	"rewind/tui"
)

// TestAnExtensionOutsideTheTUIDrawsTheStatePane: an extension written
// outside package tui, through its exported methods alone (trailPane,
// ExampleExtension's), draws the State pane of a graph built inline, in
// place of its channels by shape, and its Conversation's nil leaves that
// pane to the shape (which says the graph keeps none).
func TestAnExtensionOutsideTheTUIDrawsTheStatePane(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, err := engine.New(memory.New(), trailGraph(), model.NewMock(nil))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Run(ctx, "t", []engine.Write{engine.Put("trail", "go")}, engine.RunConfig{}); err != nil {
		t.Fatal(err)
	}
	deps := tui.Deps{Source: e.Browse(browse.About{}), Backend: tui.EngineBackend(e), Runner: tui.NewLocalRunner(e), StoreLabel: "memory:", Extension: trailPane{}}
	tm := teatest.NewTestModel(t, tui.New(ctx, deps, tui.Settings{Thread: "t"}), teatest.WithInitialTermSize(120, 40))
	t.Cleanup(func() { _ = tm.Quit() })
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("this graph keeps no conversation")) },
		teatest.WithDuration(30*time.Second), teatest.WithCheckInterval(20*time.Millisecond))
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("2")})
	wants := [][]byte{[]byte("Trail · 3 steps"), []byte("1. go"), []byte("2. first"), []byte("3. second")}
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		for _, w := range wants {
			if !bytes.Contains(b, w) {
				return false
			}
		}
		return true
	}, teatest.WithDuration(30*time.Second), teatest.WithCheckInterval(20*time.Millisecond))
}
