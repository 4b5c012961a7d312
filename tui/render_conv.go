package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/lipgloss"

	"rewind/themes"
)

// renderer turns state into styled lines. It caches each message's lines,
// so scrubbing between neighbouring checkpoints (which share almost all
// messages) re-renders only what is new.
type renderer struct {
	theme    *themes.Theme
	hl       *highlighter
	msgCache map[msgKey][]string
	// chatCache is the same for a message list drawn by shape (shape.go).
	chatCache map[chatKey][]string
}

type msgKey struct {
	index    int
	hash     uint64
	width    int
	unfold   bool
	attached bool
	note     string
}

func newRenderer(th *themes.Theme) *renderer {
	return &renderer{theme: th, hl: newHighlighter(th.Chroma), msgCache: map[msgKey][]string{}, chatCache: map[chatKey][]string{}}
}

// body wraps a message's text under an indent, clipped and folded so a huge
// message cannot stall rendering.
func (r *renderer) body(text string, w int, unfold bool, indent string, rail lipgloss.Style, textStyle lipgloss.Style) []string {
	limit := maxRunesFolded
	if unfold {
		limit = maxRunesUnfolded
	}
	text, cut := clipRunes(text, limit)
	inner := max(w-width(indent), 8)
	lines := wrap(text, inner)
	maxLines := foldLines
	if unfold {
		maxLines = maxLinesUnfolded
	}
	hidden := 0
	if len(lines) > maxLines {
		hidden = len(lines) - (maxLines - 1)
		lines = lines[:maxLines-1]
	}
	pre := rail.Render(indent)
	out := make([]string, 0, len(lines)+1)
	for _, l := range lines {
		out = append(out, pre+textStyle.Render(l))
	}
	var more []string
	if hidden > 0 {
		more = append(more, fmt.Sprintf("%d more lines", hidden))
	}
	if cut > 0 {
		more = append(more, fmt.Sprintf("%d more characters", cut))
	}
	if len(more) > 0 {
		tail := " · z unfolds"
		if unfold {
			tail = " not shown"
		}
		out = append(out, pre+r.theme.Fold.Render("… "+strings.Join(more, ", ")+tail))
	}
	return out
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

func rule(th *themes.Theme, title string, w int) string {
	t := "── " + title + " "
	if n := w - width(t); n > 0 {
		t += strings.Repeat("─", n)
	}
	return th.Muted.Render(trunc(t, w))
}
