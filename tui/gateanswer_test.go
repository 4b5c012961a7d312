package tui

import (
	"strings"
	"testing"

	"rewind/engine"
)

// plainExt is a graph author's Extension with no approval gate (no
// Gater): its panes only.
type plainExt struct{}

func (plainExt) Decode(engine.Values) (any, error)         { return nil, nil }
func (plainExt) State(Shown) []string                      { return nil }
func (plainExt) Conversation(Shown) []string               { return nil }
func (plainExt) Input(engine.Values) (string, bool, error) { return "", false, nil }
func (plainExt) InputHints() (message, attachment string)  { return "", "" }

// TestGateAnswerOfAnExtensionWithoutGater: a graph whose extension has no
// approval dialog (no Gater) is told to edit the state its gate reads and
// resume, as a graph without an extension is; before, the strip said "a
// answers", and a then said "this graph has no approval dialog: a
// answers".
func TestGateAnswerOfAnExtensionWithoutGater(t *testing.T) {
	keys := newThreadKeys()
	for _, x := range []Extension{nil, plainExt{}} {
		c := runControl{sess: &session{deps: Deps{Extension: x}}, keys: keys}
		got := c.gateAnswer()
		if strings.Contains(got, "answers") || !strings.Contains(got, "edits it") {
			t.Errorf("extension %T: gateAnswer %q, want the edit-and-resume words", x, got)
		}
	}
	c := runControl{sess: &session{deps: Deps{Extension: TicketExtension()}}, keys: keys}
	if got := c.gateAnswer(); !strings.Contains(got, "answers") {
		t.Errorf("the ticket's extension: gateAnswer %q, want its dialog's key", got)
	}
}
