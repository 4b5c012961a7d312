package tui

import (
	"github.com/charmbracelet/lipgloss"

	"rewind/themes"
	"rewind/tui/draw"
)

// renderer turns state into styled lines. It caches each message's lines
// of a message list drawn by shape (shape.go), so scrubbing between
// neighbouring checkpoints (which share almost all messages) re-renders
// only what is new.
type renderer struct {
	theme     *themes.Theme
	hl        *highlighter
	chatCache map[chatKey][]string
}

func newRenderer(th *themes.Theme) *renderer {
	return &renderer{theme: th, hl: newHighlighter(th.Chroma), chatCache: map[chatKey][]string{}}
}

// body wraps a message's text under an indent, clipped and folded so a huge
// message cannot stall rendering (draw.Body).
func (r *renderer) body(text string, w int, unfold bool, indent string, rail lipgloss.Style, textStyle lipgloss.Style) []string {
	return draw.Body(r.theme, text, w, unfold, indent, rail, textStyle)
}

// conversation is the Conversation pane: a read-only source's messages,
// the extension's conversation when the graph has one, else its first
// channel holding a message list.
func (r *renderer) conversation(d *detail, w int, unfold bool) []string {
	switch {
	case d == nil:
		return []string{r.theme.Muted.Render("loading…")}
	case d.src != nil:
		return r.sourceConversation(d.src, w, unfold)
	case d.ext != nil:
		if lines := d.ext.Conversation(r.shown(d, w, unfold)); lines != nil {
			return lines
		}
	}
	return r.shapeConversation(d, w, unfold)
}

// rule is a line across w with title in it (draw.Rule).
func rule(th *themes.Theme, title string, w int) string { return draw.Rule(th, title, w) }
