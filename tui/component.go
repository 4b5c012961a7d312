package tui

import "github.com/charmbracelet/bubbles/help"

// component is what every part of the main TUI is to the root
// (AGENTS.md: the component contract): the root gives it its room with
// SetSize (one signature: w columns, h rows) and asks it for its keys, for
// the footer (ShortHelp) and the ? screen (FullHelp). Its Update takes its
// own keys and messages and returns what it asks of the root as a value
// (each component its own type: composerOutcome, listAction, runNews, …)
// or a tea.Cmd; its View draws what it rendered for its size.
// TestEveryRootFieldIsAComponentOrListed holds every field of Model to
// this type or to a reasoned list.
type component interface {
	SetSize(w, h int)
	help.KeyMap
}

// The panes, strips, screens and dialogs of the main TUI.
var (
	_ component = (*timelinePane)(nil)
	_ component = (*contentPanes)(nil)
	_ component = (*liveStrip)(nil)
	_ component = (*composer)(nil)
	_ component = (*threadList)(nil)
	_ component = (*pager)(nil)
	_ component = (*lessonPicker)(nil)
	_ component = dialog(nil)
)
