package tui

// Follow mode of the browser: while another process writes the database
// (a LangGraph app running), the chain on screen is polled every Interval
// through a tea.Tick-armed Cmd. New checkpoints join the timeline; the
// cursor stays where it is, unless it was at the head, which it follows.

import (
	"context"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"rewind/store/browse"
)

// followPage is how many of the newest listings a poll reads; when all of
// them are new, the whole chain is read again.
const followPage = 64

type followKeys struct{ Toggle key.Binding }

func (k followKeys) ShortHelp() []key.Binding  { return []key.Binding{k.Toggle} }
func (k followKeys) FullHelp() [][]key.Binding { return [][]key.Binding{k.ShortHelp()} }

type (
	// browseFollowTick says it is time to poll (gen: the follow's arming).
	browseFollowTick struct{ gen int }
	// browseFollowMsg is a poll's answer: the newest listings of c.
	browseFollowMsg struct {
		gen int
		c   browse.Chain
		h   []browse.Listing
		err error
	}
)

// browseFollow arms the polls.
type browseFollow struct {
	keys     followKeys
	on       bool
	interval time.Duration
	gen      int
	polling  bool
}

func newBrowseFollow(on bool, interval time.Duration) *browseFollow {
	return &browseFollow{keys: followKeys{bind("follow new checkpoints", "F")}, on: on, interval: interval}
}

// KeyMap is follow's key.
func (f *browseFollow) KeyMap() followKeys { return f.keys }

// SetSize: follow draws nothing of its own (the status bar says "following").
func (f *browseFollow) SetSize(int, int) {}

// View is the status bar's word for it.
func (f *browseFollow) View() string {
	if f.on {
		return "following"
	}
	return ""
}

// Arm starts the next wait; nil when follow is off.
func (f *browseFollow) Arm() tea.Cmd {
	if !f.on {
		return nil
	}
	gen := f.gen
	return tea.Tick(f.interval, func(time.Time) tea.Msg { return browseFollowTick{gen} })
}

// Toggle turns follow on or off, and arms it when on.
func (f *browseFollow) Toggle() tea.Cmd {
	f.on = !f.on
	f.gen++
	return f.Arm()
}

// Poll reads the newest listings of c, for a tick of this arming; nil for
// a stale tick or while a poll is out.
func (f *browseFollow) Poll(ctx context.Context, src browse.Source, t browseFollowTick, c browse.Chain) tea.Cmd {
	if t.gen != f.gen || !f.on || f.polling {
		return nil
	}
	f.polling = true
	gen := f.gen
	return func() tea.Msg {
		h, err := src.History(ctx, c, "", followPage)
		return browseFollowMsg{gen, c, h, err}
	}
}

// Update takes a poll's answer: it reports whether the answer is current
// (then the caller merges it), and arms the next poll.
func (f *browseFollow) Update(msg tea.Msg) (current bool, next tea.Cmd) {
	m, ok := msg.(browseFollowMsg)
	if !ok {
		return false, nil
	}
	if m.gen != f.gen {
		return false, nil
	}
	f.polling = false
	return true, f.Arm()
}
