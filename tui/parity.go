package tui

import (
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
)

// LangGraph Studio parity in the thread view: replay (replay.go), edit
// state (editstate.go), compare (compare.go) and the graph view
// (graphview.go).

// parity is what those features keep between keys.
type parity struct {
	// mark is the checkpoint m marked on markThread (0: none).
	mark       int64
	markThread string
	// edit is the state edit under way (editstate.go).
	edit *stateEdit
}

// onParityKey handles the parity keys of the thread view.
func (m *Model) onParityKey(msg tea.KeyMsg) (tea.Cmd, bool) {
	k := m.keys
	switch {
	case key.Matches(msg, k.Replay):
		return m.askReplay(), true
	case key.Matches(msg, k.EditState):
		return m.openEditState(), true
	case key.Matches(msg, k.Mark):
		return m.toggleMark(), true
	case key.Matches(msg, k.Compare):
		return m.openCompare(), true
	case key.Matches(msg, k.Graph):
		return m.openGraph(), true
	}
	return nil, false
}

// parityLoading: a parity box is still reading what it shows.
func (m *Model) parityLoading() bool {
	d, ok := m.dialog.(*compareDialog)
	return ok && d.loading || m.threads.inFlight > 0
}
