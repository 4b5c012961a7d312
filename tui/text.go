package tui

import (
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"rewind/tui/draw"
	"rewind/tui/termtext"
)

// The package's panes draw with the kit extensions draw with
// (rewind/tui/draw), under these short names: one implementation.

// Limits that keep one huge message or tool result from freezing the UI
// (draw's).
const (
	maxRunesFolded   = draw.FoldedRunes
	maxRunesUnfolded = draw.UnfoldedRunes
	maxLinesUnfolded = draw.UnfoldedLines
)

// styleT is short for the lipgloss style type.
type styleT = lipgloss.Style

// wrap sanitises s and wraps it to width, returning its lines.
func wrap(s string, width int) []string { return draw.Wrap(s, width) }

// jsonBreaks are where JSON may wrap besides spaces (and ansi.Wrap's
// hyphens): after a comma, so a key and its value move whole to the next
// line (a colon would break times: "09:" / "12").
const jsonBreaks = ","

// wrapTokens wraps (styled, already safe) JSON or a diff of it to width at
// token boundaries (spaces, commas), never inside a key or a word
// ("add / i / tional_kwargs" it was); a token wider than the line is
// hard-wrapped.
func wrapTokens(s string, w int) []string { return draw.WrapAt(s, w, jsonBreaks) }

// clipRunes cuts s to at most n runes and says how many were left out.
func clipRunes(s string, n int) (string, int) { return draw.Clip(s, n) }

// fit truncates (styled) s to width w and pads it with spaces to exactly w.
func fit(s string, w int) string { return draw.Fit(s, w) }

// trunc truncates (styled) s to width w without padding.
func trunc(s string, w int) string { return draw.Cut(s, w) }

// width is the display width of a (styled) string.
func width(s string) int { return draw.Width(s) }

// frame draws a w×h box with a title in the top border around content
// lines (draw.Frame).
func frame(title string, lines []string, w, h int, focused bool, border, titleStyle lipgloss.Style) string {
	return draw.Frame(title, lines, w, h, focused, border, titleStyle)
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
