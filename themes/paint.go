package themes

import (
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

// Paint draws view (h lines of w cells: the TUI's whole screen) on the
// theme's Screen: every cell gets its background, and text no style
// colours its foreground, so the screen reads the same on a dark and a
// light terminal. A style's own colours win where it sets them, and after
// each reset the screen's colours start again. With no Screen colours (the
// no-color theme) or no colours at all (the Ascii profile, NO_COLOR) the
// view is returned as it is.
func (t *Theme) Paint(view string, w, h int) string {
	seq := t.screenSeq(lipgloss.ColorProfile())
	if seq == "" {
		return view
	}
	lines := strings.Split(view, "\n")
	rows := max(len(lines), h)
	var b strings.Builder
	// The screen's colours go after every reset (at most every escape)
	// and at each line's start; the padding fills the width.
	b.Grow(len(view) + (strings.Count(view, "\x1b[")+rows)*len(seq) + rows*(w+4))
	for i := 0; i < rows; i++ {
		if i > 0 {
			b.WriteByte('\n')
		}
		line := ""
		if i < len(lines) {
			line = lines[i]
		}
		b.WriteString(seq)
		rest := line
		for {
			j := strings.Index(rest, "\x1b[")
			if j < 0 {
				b.WriteString(rest)
				break
			}
			b.WriteString(rest[:j+2])
			rest = rest[j+2:]
			// A reset: "\x1b[0m" or "\x1b[m".
			if n := resetLen(rest); n > 0 {
				b.WriteString(rest[:n])
				rest = rest[n:]
				b.WriteString(seq)
			}
		}
		if pad := w - lipgloss.Width(line); pad > 0 {
			b.WriteString(strings.Repeat(" ", pad))
		}
		b.WriteString("\x1b[0m")
	}
	return b.String()
}

// resetLen is the length of the rest of an SGR reset that s starts with
// (after its "\x1b["), or 0.
func resetLen(s string) int {
	switch {
	case strings.HasPrefix(s, "m"):
		return 1
	case strings.HasPrefix(s, "0m"):
		return 2
	}
	return 0
}

// screenSeq is the SGR sequence of the Screen's colours in profile p, or
// "" when it has none.
func (t *Theme) screenSeq(p termenv.Profile) string {
	var parts []string
	if c, ok := t.Screen.GetForeground().(lipgloss.Color); ok {
		if s := p.Color(string(c)); s != nil && s.Sequence(false) != "" {
			parts = append(parts, s.Sequence(false))
		}
	}
	if c, ok := t.Screen.GetBackground().(lipgloss.Color); ok {
		if s := p.Color(string(c)); s != nil && s.Sequence(true) != "" {
			parts = append(parts, s.Sequence(true))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return termenv.CSI + strings.Join(parts, ";") + "m"
}

// Painted is Paint with a memory of its last screen: Bubble Tea asks for
// View after every message, most of which change nothing on screen, and a
// frame's paint costs about as much as the rest of View. The zero value
// is ready.
type Painted struct {
	theme *Theme
	in    string
	w, h  int
	out   string
}

// Paint is t.Paint(view, w, h), the last answer again when none of them
// changed.
func (p *Painted) Paint(t *Theme, view string, w, h int) string {
	if p.theme == t && p.w == w && p.h == h && p.in == view && p.out != "" {
		return p.out
	}
	p.theme, p.in, p.w, p.h, p.out = t, view, w, h, t.Paint(view, w, h)
	return p.out
}
