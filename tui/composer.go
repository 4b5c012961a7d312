package tui

import (
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"rewind/themes"
	"rewind/tui/termtext"
)

// composer is the line where a message is written (i): the text input,
// whether it is open, and whether the reply to the next message is asked
// for as a draft (ctrl+d). It owns its keys; what a key asks of the rest
// of the screen (send, a status line) comes back as a composerOutcome, and
// the root acts on it.
type composer struct {
	theme *themes.Theme
	input textinput.Model
	open  bool // the input has focus: keys go to it
	draft bool // the next message asks for a draft reply
	keys  composerKeys
	w     int
}

// composerOutcome is what a key in the composer asks of the root.
type composerOutcome struct {
	send    string // the text to send (the composer keeps it until sent)
	cleared string // the text ctrl+c cleared, for the status log
	refused string // why the key was not taken in (too long)
	resized bool   // the draft tag changed: lay the screen out again
}

// newComposer: drafts says whether the graph's input takes a draft reply
// (the ticket's extension); without, ctrl+d is not a key of it.
func newComposer(drafts bool) composer {
	c := composer{input: newInput(), keys: newComposerKeys()}
	c.keys.Draft.SetEnabled(drafts)
	c.input.Prompt = "› "
	// ctrl+d toggles the draft request here; delete still deletes forward.
	c.input.KeyMap.DeleteCharacterForward = key.NewBinding(key.WithKeys("delete"))
	return c
}

// allowDrafts offers ctrl+d (a draft reply) when the graph's extension
// takes one.
func (c *composer) allowDrafts(on bool) {
	c.keys.Draft.SetEnabled(on)
	if !on {
		c.draft = false
	}
}

func (c *composer) setTheme(th *themes.Theme) {
	c.theme = th
	c.input.PromptStyle = th.Prompt
	c.input.TextStyle = th.Text
	c.input.PlaceholderStyle = th.Placeholder
	c.input.Cursor.Style = th.Accent
}

// SetSize takes the screen's width: the input gets what the draft tag
// leaves. The composer is one row whatever the height (its text scrolls
// sideways).
func (c *composer) SetSize(w, _ int) {
	c.w = w
	c.input.Width = max(w-4-width(c.draftTag()), 10)
}

// Value is the text written so far (kept while the composer is closed).
func (c *composer) Value() string { return c.input.Value() }

// Focus opens the composer.
func (c *composer) Focus() tea.Cmd {
	c.open = true
	return c.input.Focus()
}

func (c *composer) close() {
	c.open = false
	c.input.Blur()
}

// sent empties and closes the composer after its text went out; a draft is
// asked for one turn at a time.
func (c *composer) sent() {
	c.input.Reset()
	c.close()
	c.setDraft(false)
}

// setDraft turns the draft request of the next message on or off.
func (c *composer) setDraft(on bool) {
	c.draft = on
	desc := "reply as a draft: off"
	if on {
		desc = "reply as a draft: ON"
	}
	c.keys.Draft.SetHelp("ctrl+d", desc)
	c.SetSize(c.w, 1)
}

// Update takes a key while the composer is open, and what its input gets
// besides keys (a cursor blink).
func (c *composer) Update(m tea.Msg) (composerOutcome, tea.Cmd) {
	msg, ok := m.(tea.KeyMsg)
	if !ok {
		var cmd tea.Cmd
		c.input, cmd = c.input.Update(m)
		return composerOutcome{}, cmd
	}
	switch {
	case key.Matches(msg, c.keys.Clear):
		// Clear the text first (the status log keeps it), then close.
		if v := c.input.Value(); v != "" {
			c.input.Reset()
			return composerOutcome{cleared: v}, nil
		}
		c.close()
		return composerOutcome{}, nil
	case key.Matches(msg, c.keys.Leave):
		c.close()
		return composerOutcome{}, nil
	case key.Matches(msg, c.keys.Send):
		return composerOutcome{send: strings.TrimSpace(c.input.Value())}, nil
	case key.Matches(msg, c.keys.Draft):
		c.setDraft(!c.draft)
		return composerOutcome{resized: true}, nil
	}
	if why := admit(c.input, msg); why != "" {
		return composerOutcome{refused: why}, nil
	}
	var cmd tea.Cmd
	c.input, cmd = c.input.Update(msg)
	return composerOutcome{}, cmd
}

// draftTag tells, right of the input, whether the reply will be a draft.
func (c *composer) draftTag() string {
	if !c.keys.Draft.Enabled() {
		return ""
	}
	if c.draft {
		return c.theme.StatusApproval.Render(" ✉ draft reply: awaits approval · ctrl+d ")
	}
	return c.theme.Placeholder.Render(" ctrl+d: draft reply ")
}

// View is the composer's line: the input when open, else hint (what i
// would do here) or the text not sent yet.
func (c *composer) View(hint string) string {
	if c.open {
		tag := c.draftTag()
		return fit(" "+fit(c.input.View(), max(c.w-1-width(tag), 1))+tag, c.w)
	}
	if v := c.input.Value(); v != "" {
		hint = "unsent: " + termtext.Line(v) + "  (i edits)"
	}
	if c.draft {
		hint += " · the reply will be a draft (approval needed)"
	}
	return fit(" "+c.theme.Prompt.Render("›")+" "+c.theme.Placeholder.Render(hint), c.w)
}

// ShortHelp is the footer while the composer is open.
func (c *composer) ShortHelp() []key.Binding {
	if c.draft {
		return retitled(c.keys.ShortHelp(), c.keys.Draft, "draft: ON")
	}
	return c.keys.ShortHelp()
}

// FullHelp lists every composer key.
func (c *composer) FullHelp() [][]key.Binding { return c.keys.FullHelp() }
