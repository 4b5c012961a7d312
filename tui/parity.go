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
	// mark is the checkpoint m marked on markThread ("": none).
	mark       string
	markThread string
	// edit is the state edit under way (editstate.go).
	edit *stateEdit
}

// editing is the state edit under way (nil: none, it ended).
func (p *parity) editing(ed *stateEdit) { p.edit = ed }

// toggleMark marks checkpoint id of thread, or unmarks it when it is the
// mark: on is whether it is marked now.
func (p *parity) toggleMark(thread string, id string) (on bool) {
	if p.mark == id && p.markThread == thread {
		p.mark = ""
		return false
	}
	p.mark, p.markThread = id, thread
	return true
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
	case key.Matches(msg, k.Prompt):
		return m.openSaw(), true
	}
	return nil, false
}

// parityLoading: a parity box is still reading what it shows.
func (m *Model) parityLoading() bool {
	d, ok := m.dialog.(*compareDialog)
	saw, reading := m.dialog.(*sawDialog)
	return ok && d.loading || reading && saw.loading || m.threads.inFlight > 0 || m.threadStatesMissing()
}

// threadStatesMissing says a visible row of the threads list has no state
// read for the current listing yet.
func (m *Model) threadStatesMissing() bool {
	return m.screen == screenThreads && m.threads.statesMissing()
}

// statesMissing says a visible row has no state read for the current
// listing yet.
func (l *threadList) statesMissing() bool {
	if !l.loaded || l.err != nil {
		return false
	}
	for i := l.off; i < len(l.rows) && i < l.off+max(l.h, 1); i++ {
		if l.states[l.rows[i].id].gen != l.gen {
			return true
		}
	}
	return false
}

// splitRunes: Bubble Tea v1 may deliver fast-typed keys as one message
// ("jjj"); a list box takes each rune as its own key. It returns the keys
// one by one, or nil when msg is a single key.
func splitRunes(msg tea.Msg) []tea.KeyMsg {
	k, ok := msg.(tea.KeyMsg)
	if !ok || k.Type != tea.KeyRunes || len(k.Runes) < 2 || k.Paste {
		return nil
	}
	out := make([]tea.KeyMsg, len(k.Runes))
	for i, r := range k.Runes {
		out[i] = tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}, Alt: k.Alt}
	}
	return out
}

// eachKey runs update on every key of a split message, stopping when the
// box closes.
func eachKey(keys []tea.KeyMsg, update func(tea.Msg) (bool, tea.Cmd)) (bool, tea.Cmd) {
	var cmds []tea.Cmd
	for _, k := range keys {
		done, cmd := update(k)
		cmds = append(cmds, cmd)
		if done {
			return true, tea.Batch(cmds...)
		}
	}
	return false, tea.Batch(cmds...)
}
