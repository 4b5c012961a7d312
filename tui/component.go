package tui

import (
	"github.com/charmbracelet/bubbles/help"
	tea "github.com/charmbracelet/bubbletea"
)

// component is what every part of the main TUI is to the root
// (AGENTS.md: the component contract). Update takes its own keys and
// messages (a key the root routes to it, or a message its Cmds return)
// and returns what it asks of the root as a value of its own type O
// (composerOutcome, listAction, runNews, …) and a tea.Cmd; SetSize gives
// it its room (w columns, h rows); ShortHelp and FullHelp are its keys, for
// the footer and the ? screen. Its View draws what it rendered for its
// size, from what the root passes in (each component's own arguments).
// TestEveryRootFieldIsAComponentOrListed holds every field of Model to
// this type or to a reasoned list.
type component[O any] interface {
	Update(msg tea.Msg) (O, tea.Cmd)
	SetSize(w, h int)
	help.KeyMap
}

// The panes, strips, screens and dialogs of the main TUI, and what each
// Update returns.
var (
	_ component[scrubbed]        = (*timelinePane)(nil)
	_ component[bool]            = (*contentPanes)(nil) // handled
	_ component[runNews]         = (*liveStrip)(nil)
	_ component[composerOutcome] = (*composer)(nil)
	_ component[listAction]      = (*threadList)(nil)
	_ component[bool]            = (*pager)(nil) // closed
	_ component[lessonAsk]       = (*lessonPicker)(nil)
	_ component[bool]            = dialog(nil) // done
	_ component[parOutcome]      = (*parity)(nil)
	_ component[bool]            = (*fidelityChecks)(nil) // kept
	_ component[struct{}]        = (*statusLine)(nil)
	_ component[runAsk]          = (*runControl)(nil)
	_ component[followNews]      = (*follower)(nil)
	_ component[bool]            = (*scriptPanel)(nil) // relayout
	_ component[navNews]         = (*navState)(nil)
)
