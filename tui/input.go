package tui

import (
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"rewind/tui/termtext"
)

// A message typed or pasted into the composer or a dialog holds at most
// termtext.MaxInput bytes, the CLI's limit too. textinput alone would cut a
// paste at its CharLimit without a word; a key or paste that would go past
// the limit is refused whole instead, and the user is told.

// newInput is a text input that holds a message.
func newInput() textinput.Model {
	in := textinput.New()
	// In runes, so never reached before the byte limit admit checks: a
	// backstop only.
	in.CharLimit = termtext.MaxInput
	return in
}

// admit says why k would take in past termtext.MaxInput ("" when it may
// go in).
func admit(in textinput.Model, k tea.KeyMsg) string {
	if len(k.Runes) == 0 {
		return ""
	}
	added := len(string(k.Runes))
	switch {
	case len(in.Value())+added <= termtext.MaxInput:
		return ""
	case k.Paste || len(k.Runes) > 1:
		return "paste of " + termtext.Size(added) + " refused, nothing added: a message holds at most " + termtext.Size(termtext.MaxInput)
	}
	return "the message is full: it holds at most " + termtext.Size(termtext.MaxInput)
}
