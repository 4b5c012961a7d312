package tui_test

import (
	"bytes"
	"context"
	"strings"
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
	tm := openTrail(t, trailPane{}, engine.RunConfig{})
	waitAll(t, tm, "this graph keeps no conversation")
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("2")})
	waitAll(t, tm, "Trail · 3 steps", "1. go", "2. first", "3. second")
}

// openTrail runs one turn of the trail graph on thread t (with cfg) and
// opens the TUI on it with ext, as a program outside package tui does.
func openTrail(t *testing.T, ext tui.Extension, cfg engine.RunConfig) *teatest.TestModel {
	t.Helper()
	ctx := context.Background()
	e, err := engine.New(memory.New(), trailGraph(), model.NewMock(nil))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Run(ctx, "t", []engine.Write{engine.Put("trail", "go")}, cfg); err != nil {
		t.Fatal(err)
	}
	deps := tui.Deps{Source: e.Browse(browse.About{}), Backend: tui.EngineBackend(e), Runner: tui.NewLocalRunner(e), StoreLabel: "memory:", Extension: ext}
	tm := teatest.NewTestModel(t, tui.New(ctx, deps, tui.Settings{Thread: "t"}), teatest.WithInitialTermSize(120, 40))
	t.Cleanup(func() { _ = tm.Quit() })
	return tm
}

// waitAll reads tm's output until every string has appeared.
func waitAll(t *testing.T, tm *teatest.TestModel, wants ...string) {
	t.Helper()
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		for _, w := range wants {
			if !bytes.Contains(b, []byte(w)) {
				return false
			}
		}
		return true
	}, teatest.WithDuration(30*time.Second), teatest.WithCheckInterval(20*time.Millisecond))
}

// gatedTrail is trailPane with an approval gate of its own: a thread
// paused before second waits for a person to publish its trail.
type gatedTrail struct{ trailPane }

func (gatedTrail) Gate(head engine.Checkpoint, v any, _ time.Time) (tui.Gate, bool) {
	if len(head.Tasks) == 0 || head.Tasks[0].Node != "second" {
		return tui.Gate{}, false
	}
	steps, _ := v.([]string)
	return tui.Gate{Checkpoint: head.ID, Op: tui.GateOp{Kind: "publish", ID: "trail-1", Payload: strings.Join(steps, " then ")},
		Question: "publish this trail?", DraftTitle: "Trail to publish", NoGrant: true}, true
}

func (gatedTrail) Answered(any, string) []tui.GateLine { return nil }

// TestAnExtensionOutsideTheTUIHasAnApprovalGate: an extension written
// outside package tui implements Gater: the live strip shows its gate
// and a opens the approval dialog with the extension's words, none of
// the ticket's.
func TestAnExtensionOutsideTheTUIHasAnApprovalGate(t *testing.T) {
	t.Parallel()
	tm := openTrail(t, gatedTrail{}, engine.RunConfig{InterruptBefore: []string{"second"}})
	waitAll(t, tm, "waits for approval", "publish trail-1", "go then first")
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("a")})
	waitAll(t, tm, "Approval · @2", "publish this trail?", "Trail to publish")
}
