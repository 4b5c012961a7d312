package tui

// What the read-only browser's detail panes share: a scrolling list of
// drawn lines (conversation, writes, diff) and its keys. Each pane makes
// its lines once per checkpoint and width (SetSize or new content), so
// View only cuts the window out of them.

import (
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
)

// paneKeys scroll a pane that has the focus.
type paneKeys struct {
	Up, Down, PageUp, PageDown, Top, Bottom key.Binding
}

func newPaneKeys() paneKeys {
	return paneKeys{
		Up:       bind("scroll up", "up", "k"),
		Down:     bind("scroll down", "down", "j"),
		PageUp:   bind("page up", "pgup", "ctrl+u"),
		PageDown: bind("page down", "pgdown"),
		Top:      bind("top", "home", "g"),
		Bottom:   bind("bottom", "end", "G"),
	}
}

func (k paneKeys) ShortHelp() []key.Binding { return []key.Binding{k.Up, k.Down, k.PageUp, k.PageDown} }
func (k paneKeys) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom}}
}

// linePane is a window on drawn lines.
type linePane struct {
	keys  paneKeys
	lines []string
	top   int
	w, h  int
}

func newLinePane() linePane { return linePane{keys: newPaneKeys(), w: 40, h: 10} }

// SetSize sets the window; the caller redraws its lines for the width.
func (p *linePane) SetSize(w, h int) { p.w, p.h = max(1, w), max(1, h); p.clamp() }

// setLines replaces the content; keep holds the scroll position.
func (p *linePane) setLines(lines []string, keep bool) {
	p.lines = lines
	if !keep {
		p.top = 0
	}
	p.clamp()
}

func (p *linePane) clamp() { p.top = max(0, min(p.top, len(p.lines)-p.h)) }

// Update scrolls on the pane's keys; handled says whether it took the key.
func (p *linePane) Update(msg tea.KeyMsg) (handled bool) {
	switch {
	case key.Matches(msg, p.keys.Up):
		p.top--
	case key.Matches(msg, p.keys.Down):
		p.top++
	case key.Matches(msg, p.keys.PageUp):
		p.top -= p.h - 1
	case key.Matches(msg, p.keys.PageDown):
		p.top += p.h - 1
	case key.Matches(msg, p.keys.Top):
		p.top = 0
	case key.Matches(msg, p.keys.Bottom):
		p.top = len(p.lines)
	default:
		return false
	}
	p.clamp()
	return true
}

// View is the window, each line cut to the width.
func (p *linePane) View() string {
	end := min(len(p.lines), p.top+p.h)
	out := make([]string, 0, p.h)
	for _, l := range p.lines[p.top:end] {
		out = append(out, ansi.Truncate(l, p.w, "…"))
	}
	return strings.Join(out, "\n")
}

// wrapText breaks sanitized text into lines of at most w cells, each
// prefixed with indent.
func wrapText(s string, w int, indent string) []string {
	var out []string
	width := max(8, w-ansi.StringWidth(indent))
	for _, para := range strings.Split(s, "\n") {
		wrapped := ansi.Wrap(para, width, "")
		for _, l := range strings.Split(wrapped, "\n") {
			out = append(out, indent+l)
		}
	}
	return out
}
