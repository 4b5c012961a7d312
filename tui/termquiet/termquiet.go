// Package termquiet stops Bubble Tea v1 from asking the terminal for its
// background colour as every rewind process starts.
//
// Bubble Tea v1's package init calls lipgloss.HasDarkBackground, which
// writes an OSC 11 query and a cursor-position request to a terminal
// stdout and waits up to five seconds for the answer: every command paid
// a round trip, and one whose terminal never answers (script(1), a
// pre-commit runner's pty, ssh -tt) stalled five seconds and printed the
// query's bytes (upstream: charmbracelet/bubbletea#1771, not fixed in v1).
// This init runs first because Go initialises ready packages in import
// path order and this module's path, early.rewind.invalid/…, sorts
// before github.com/charmbracelet/bubbletea: the only reason it is a
// module of its own (rewind/… sorts after). The TUI asks the terminal itself before its program
// takes the input (tui.Run) and tells lipgloss the answer.
package termquiet

import "github.com/charmbracelet/lipgloss"

func init() {
	// Dark is what lipgloss assumes when the terminal does not answer.
	lipgloss.SetHasDarkBackground(true)
}
