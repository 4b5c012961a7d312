package tui

// The browser's prompt on the footer line: an id prefix for goto (:),
// enter going to the one checkpoint of the chain it starts, or the words
// of a search (/); esc cancels.

import (
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"rewind/themes"
	"rewind/tui/termtext"
)

type gotoKeys struct{ Go, Cancel, Erase key.Binding }

func (k gotoKeys) ShortHelp() []key.Binding  { return []key.Binding{k.Go, k.Cancel} }
func (k gotoKeys) FullHelp() [][]key.Binding { return [][]key.Binding{{k.Go, k.Cancel, k.Erase}} }

// browseGoto is the prompt.
type browseGoto struct {
	theme  *themes.Theme
	keys   gotoKeys
	active bool
	label  string
	text   []rune
	w      int
}

func newBrowseGoto(th *themes.Theme) *browseGoto {
	return &browseGoto{theme: th, w: 80, keys: gotoKeys{
		Go: bind("go", "enter"), Cancel: bind("cancel", "esc"), Erase: bind("erase", "backspace"),
	}}
}

// KeyMap is the prompt's keys.
func (g *browseGoto) KeyMap() gotoKeys { return g.keys }

// SetSize sets the prompt's width.
func (g *browseGoto) SetSize(w, _ int) { g.w = w }

// Open starts a prompt after label.
func (g *browseGoto) Open(label string) { g.active, g.label, g.text = true, label, nil }

// Update edits; done holds the prefix when enter was pressed.
func (g *browseGoto) Update(msg tea.Msg) (done bool, prefix string) {
	k, ok := msg.(tea.KeyMsg)
	if !ok {
		return false, ""
	}
	switch {
	case key.Matches(k, g.keys.Go):
		g.active = false
		return true, string(g.text)
	case key.Matches(k, g.keys.Cancel):
		g.active = false
	case key.Matches(k, g.keys.Erase):
		if len(g.text) > 0 {
			g.text = g.text[:len(g.text)-1]
		}
	case k.Type == tea.KeyRunes:
		if len(g.text) < 200 {
			g.text = append(g.text, k.Runes...)
		}
	}
	return false, ""
}

// View is the prompt line.
func (g *browseGoto) View() string {
	return g.theme.Prompt.Render(g.label) + termtext.Name(string(g.text)) + g.theme.Cursor.Render("▏")
}
