package themes

import (
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

// TestPaintCoversEveryCell: a painted screen starts every line in the
// theme's screen colours, takes them up again after every reset a style
// ends with, fills each line to the width and the screen to the height.
func TestPaintCoversEveryCell(t *testing.T) {
	defer lipgloss.SetColorProfile(lipgloss.ColorProfile())
	lipgloss.SetColorProfile(termenv.TrueColor)
	th := Or(Light)
	seq := th.screenSeq(termenv.TrueColor)
	if !strings.HasPrefix(seq, "\x1b[38;2;36;") || !strings.HasSuffix(seq, ";48;2;255;255;255m") {
		t.Fatalf("light's screen: %q, want #24292f on #ffffff", seq)
	}
	view := "ab " + th.Error.Render("err") + " cd\nplain\x1b[m!"
	got := th.Paint(view, 12, 3)
	lines := strings.Split(got, "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3: %q", len(lines), got)
	}
	for i, l := range lines {
		if !strings.HasPrefix(l, seq) || !strings.HasSuffix(l, "\x1b[0m") {
			t.Errorf("line %d is not painted: %q", i, l)
		}
		if w := lipgloss.Width(l); w != 12 {
			t.Errorf("line %d is %d cells wide, want 12: %q", i, w, l)
		}
		// After every reset but the last, the screen's colours again.
		body := strings.TrimSuffix(l, "\x1b[0m")
		for _, r := range []string{"\x1b[0m", "\x1b[m"} {
			if n, m := strings.Count(body, r), strings.Count(body, r+seq); n != m {
				t.Errorf("line %d: %d of %d resets %q leave the screen's colours off: %q", i, n-m, n, r, l)
			}
		}
	}
	if !strings.Contains(lines[0], th.Error.Render("err")+seq+" cd") {
		t.Errorf("the error style is not kept whole: %q", lines[0])
	}
}

// TestPaintLeavesAViewWithoutColoursAlone: no-color, and any theme in
// the Ascii profile (the tests', NO_COLOR's), draw in the terminal's own
// colours: the view comes back as it was.
func TestPaintLeavesAViewWithoutColoursAlone(t *testing.T) {
	defer lipgloss.SetColorProfile(lipgloss.ColorProfile())
	view := "a\nb"
	lipgloss.SetColorProfile(termenv.TrueColor)
	if got := Or(NoColor).Paint(view, 10, 4); got != view {
		t.Errorf("no-color painted: %q", got)
	}
	lipgloss.SetColorProfile(termenv.Ascii)
	if got := Or(Dark).Paint(view, 10, 4); got != view {
		t.Errorf("Ascii painted: %q", got)
	}
	lipgloss.SetColorProfile(termenv.ANSI)
	if got := Or(HighContrast).Paint(view, 1, 2); !strings.HasPrefix(got, "\x1b[97;40m") {
		t.Errorf("high-contrast in 16 colours: %q", got)
	}
}

// BenchmarkPaint paints a 160×48 screen of styled text in true colour: the
// cost Paint adds to every frame.
func BenchmarkPaint(b *testing.B) {
	defer lipgloss.SetColorProfile(lipgloss.ColorProfile())
	lipgloss.SetColorProfile(termenv.TrueColor)
	th := Or(Dark)
	line := strings.Repeat(th.Muted.Render("@12 ")+th.Text.Render("loop executor ")+th.Accent.Render("· "), 6)
	lines := make([]string, 48)
	for i := range lines {
		lines[i] = line
	}
	view := strings.Join(lines, "\n")
	b.SetBytes(int64(len(view)))
	b.ResetTimer()
	for b.Loop() {
		_ = th.Paint(view, 160, 48)
	}
}

// Painted draws what Paint draws: again for the same screen, anew for a
// changed screen, size or theme (a stale memory would leave the old
// screen up).
func TestPaintedRemembersOnlyTheSameScreen(t *testing.T) {
	defer lipgloss.SetColorProfile(lipgloss.ColorProfile())
	lipgloss.SetColorProfile(termenv.TrueColor)
	light, dark := Or(Light), Or(Dark)
	var p Painted
	for _, c := range []struct {
		th   *Theme
		view string
		w, h int
	}{
		{light, "one", 10, 2}, {light, "one", 10, 2}, {light, "two", 10, 2},
		{light, "two", 12, 2}, {light, "two", 12, 3}, {dark, "two", 12, 3}, {light, "one", 10, 2},
	} {
		if got, want := p.Paint(c.th, c.view, c.w, c.h), c.th.Paint(c.view, c.w, c.h); got != want {
			t.Errorf("Painted(%s, %q, %d×%d) = %q, want %q", c.th.Name, c.view, c.w, c.h, got, want)
		}
	}
}
