// Package draw is what a TUI extension (rewind/tui's Extension) draws its
// panes with, the same helpers the TUI's own panes use: text wrapped or cut
// to a width in cells, a message body folded as the conversation folds it,
// a rule and a framed box. Colours come from the theme the TUI hands the
// extension (tui.Shown.Theme); text from the store or a model goes through
// rewind/tui/termtext (Wrap does it itself).
package draw

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"rewind/themes"
	"rewind/tui/termtext"
)

// The limits that keep one huge message or tool result from freezing the
// UI: text past FoldedRunes (UnfoldedRunes once unfolded, z) is not
// wrapped at all, and a body longer than FoldedLines lines
// (UnfoldedLines) is folded (Body).
const (
	FoldedRunes   = 8_000
	UnfoldedRunes = 200_000
	FoldedLines   = 14
	UnfoldedLines = 3_000
)

// Wrap sanitises stored or model text (termtext.Text) and word-wraps it
// to w cells, returning its lines.
func Wrap(s string, w int) []string {
	return WrapAt(termtext.Text(s), w, "")
}

// WrapAt word-wraps already safe (styled) text to w cells, breaking at
// spaces and after any of breaks; a word wider than the line is
// hard-wrapped.
func WrapAt(s string, w int, breaks string) []string {
	if w < 1 {
		w = 1
	}
	lines := strings.Split(ansi.Wrap(s, w, breaks), "\n")
	// ansi.Wrap can leave a line one cell too wide (a leading space before
	// a long word), so such lines are hard-wrapped again.
	for i := 0; i < len(lines); i++ {
		if ansi.StringWidth(lines[i]) <= w {
			continue
		}
		hard := strings.Split(ansi.Hardwrap(lines[i], w, true), "\n")
		lines = append(lines[:i], append(hard, lines[i+1:]...)...)
		i += len(hard) - 1
	}
	return lines
}

// Clip cuts s to at most n runes and says how many were left out: what a
// pane does before wrapping text that may be huge.
func Clip(s string, n int) (string, int) {
	if len(s) <= n {
		return s, 0
	}
	count := 0
	for i := range s {
		if count == n {
			rest := len([]rune(s[i:]))
			return s[:i], rest
		}
		count++
	}
	return s, 0
}

// Fit cuts (styled) s to w cells, with an ellipsis, and pads it with
// spaces to exactly w.
func Fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	sw := ansi.StringWidth(s)
	if sw > w {
		s = ansi.Truncate(s, w, "…")
		sw = ansi.StringWidth(s)
	}
	if sw < w {
		s += strings.Repeat(" ", w-sw)
	}
	return s
}

// Cut cuts (styled) s to w cells, with an ellipsis, without padding: a
// pane's line kept to its width.
func Cut(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if ansi.StringWidth(s) > w {
		return ansi.Truncate(s, w, "…")
	}
	return s
}

// Width is the display width of a (styled) string, in cells.
func Width(s string) int { return ansi.StringWidth(s) }

// Plural is n and the word for n of it: "1 message", "3 messages".
func Plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// Body is a message's text as the conversation draws it: sanitised,
// wrapped to w cells under indent (drawn in rail), clipped and folded to
// the limits above, with a last line saying what was left out (th.Fold)
// and that z unfolds it.
func Body(th *themes.Theme, text string, w int, unfold bool, indent string, rail, textStyle lipgloss.Style) []string {
	limit := FoldedRunes
	if unfold {
		limit = UnfoldedRunes
	}
	text, cut := Clip(text, limit)
	inner := max(w-Width(indent), 8)
	lines := Wrap(text, inner)
	maxLines := FoldedLines
	if unfold {
		maxLines = UnfoldedLines
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
		out = append(out, pre+th.Fold.Render("… "+strings.Join(more, ", ")+tail))
	}
	return out
}

// Rule is a line across w cells with title in it ("── title ───"), in
// th.Muted: what heads a conversation.
func Rule(th *themes.Theme, title string, w int) string {
	t := "── " + title + " "
	if n := w - Width(t); n > 0 {
		t += strings.Repeat("─", n)
	}
	return th.Muted.Render(Cut(t, w))
}

// borderSet is one frame's glyphs.
type borderSet struct{ topLeft, topRight, bottomLeft, bottomRight, horizontal, vertical string }

var (
	plainBorder   = borderSet{"╭", "╮", "╰", "╯", "─", "│"}
	focusedBorder = borderSet{"┏", "┓", "┗", "┛", "━", "┃"}
)

// Frame draws a w×h box with a title in its top border around lines
// (already styled and safe; each is cut and padded to the box), as the
// TUI frames its panes. A focused box gets a heavy border, so focus shows
// even without colour.
func Frame(title string, lines []string, w, h int, focused bool, border, titleStyle lipgloss.Style) string {
	if w < 2 || h < 2 {
		return ""
	}
	bs := plainBorder
	if focused {
		bs = focusedBorder
	}
	inner := w - 2
	var b strings.Builder
	b.Grow((w + 8) * h)
	t := ""
	if title != "" && inner > 4 {
		t = Cut(" "+title+" ", inner-2)
	}
	tw := Width(t)
	b.WriteString(border.Render(bs.topLeft + bs.horizontal))
	b.WriteString(titleStyle.Render(t))
	if rest := inner - 1 - tw; rest > 0 {
		b.WriteString(border.Render(strings.Repeat(bs.horizontal, rest)))
	}
	b.WriteString(border.Render(bs.topRight))
	v := border.Render(bs.vertical)
	for i := 0; i < h-2; i++ {
		b.WriteByte('\n')
		line := ""
		if i < len(lines) {
			line = lines[i]
		}
		b.WriteString(v)
		b.WriteString(Fit(line, inner))
		b.WriteString(v)
	}
	b.WriteByte('\n')
	b.WriteString(border.Render(bs.bottomLeft + strings.Repeat(bs.horizontal, inner) + bs.bottomRight))
	return b.String()
}
