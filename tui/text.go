package tui

import (
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"rewind/tui/termtext"
)

// Limits that keep one huge message or tool result from freezing the UI:
// text past maxRunes is not wrapped at all, and a message longer than
// foldLines lines is folded until the user unfolds it (z).
const (
	maxRunesFolded   = 8_000
	maxRunesUnfolded = 200_000
	foldLines        = 14
	maxLinesUnfolded = 3_000
)

// styleT is short for the lipgloss style type.
type styleT = lipgloss.Style

// wrap sanitises s and wraps it to width, returning its lines.
func wrap(s string, width int) []string {
	return wrapLines(termtext.Text(s), width)
}

// wrapLines word-wraps (styled, already safe) text to width.
func wrapLines(s string, w int) []string { return wrapAt(s, w, "") }

// jsonBreaks are where JSON may wrap besides spaces (and ansi.Wrap's
// hyphens): after a comma, so a key and its value move whole to the next
// line (a colon would break times: "09:" / "12").
const jsonBreaks = ","

// wrapTokens wraps (styled, already safe) JSON or a diff of it to width at
// token boundaries (spaces, commas), never inside a key or a word
// ("add / i / tional_kwargs" it was); a token wider than the line is
// hard-wrapped.
func wrapTokens(s string, w int) []string { return wrapAt(s, w, jsonBreaks) }

// wrapAt word-wraps s to width w, breaking at spaces and after any of
// breaks.
// ansi.Wrap can leave a line one cell too wide (a leading space before a
// long word), so such lines are hard-wrapped again.
func wrapAt(s string, w int, breaks string) []string {
	if w < 1 {
		w = 1
	}
	lines := strings.Split(ansi.Wrap(s, w, breaks), "\n")
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

// clipRunes cuts s to at most n runes and says how many were left out.
func clipRunes(s string, n int) (string, int) {
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

// fit truncates (styled) s to width w and pads it with spaces to exactly w.
func fit(s string, w int) string {
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

// trunc truncates (styled) s to width w without padding.
func trunc(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if ansi.StringWidth(s) > w {
		return ansi.Truncate(s, w, "…")
	}
	return s
}

// width is the display width of a (styled) string.
func width(s string) int { return ansi.StringWidth(s) }

// borderSet is one frame's glyphs.
type borderSet struct{ topLeft, topRight, bottomLeft, bottomRight, horizontal, vertical string }

var (
	plainBorder   = borderSet{"╭", "╮", "╰", "╯", "─", "│"}
	focusedBorder = borderSet{"┏", "┓", "┗", "┛", "━", "┃"}
)

// frame draws a w×h box with a title in the top border around content
// lines (already rendered; they are truncated and padded here). The focused
// pane gets a heavy border so focus is visible even without colour.
func frame(title string, lines []string, w, h int, focused bool, border, titleStyle lipgloss.Style) string {
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
		t = trunc(" "+title+" ", inner-2)
	}
	tw := width(t)
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
		b.WriteString(fit(line, inner))
		b.WriteString(v)
	}
	b.WriteByte('\n')
	b.WriteString(border.Render(bs.bottomLeft + strings.Repeat(bs.horizontal, inner) + bs.bottomRight))
	return b.String()
}

// overlay draws box (a block of lines) centred over bg (the screen).
func overlay(bg string, box string, w, h int) string {
	bgLines := strings.Split(bg, "\n")
	for len(bgLines) < h {
		bgLines = append(bgLines, "")
	}
	boxLines := strings.Split(box, "\n")
	bw := 0
	for _, l := range boxLines {
		bw = max(bw, width(l))
	}
	x := max((w-bw)/2, 0)
	y := max((h-len(boxLines))/2, 0)
	for i, l := range boxLines {
		row := y + i
		if row >= len(bgLines) {
			break
		}
		base := bgLines[row]
		left := fit(ansi.Truncate(base, x, ""), x)
		right := ansi.TruncateLeft(base, x+bw, "")
		reset := ""
		if strings.Contains(base, "\x1b") {
			reset = "\x1b[0m" // a cut may leave the background's style open
		}
		bgLines[row] = left + reset + fit(l, bw) + reset + right
	}
	return strings.Join(bgLines[:h], "\n")
}

// lgShortID is a UUID's distinctive part: its first 8 and last 4 characters.
func lgShortID(id string) string {
	if len(id) <= 16 {
		return termtext.Name(id)
	}
	return termtext.Name(id[:8] + "…" + id[len(id)-4:])
}
