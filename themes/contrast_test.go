package themes

import (
	"math"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
)

// TestEveryThemeIsReadable: every foreground a theme draws (its styles and
// its chroma tokens) keeps WCAG contrast against the background it is drawn
// on, on a dark and on a light terminal: the theme's own screen when it
// paints one, else the terminal's.
func TestEveryThemeIsReadable(t *testing.T) {
	for _, name := range Names() {
		th := Or(name)
		for _, bg := range []string{DarkTerminal, LightTerminal} {
			for _, f := range th.Faint(bg) {
				t.Errorf("%s on a %s terminal: %s", name, bg, f)
			}
		}
		if err := th.Readable("#000000"); err != nil {
			t.Errorf("%s on a black terminal: %v", name, err)
		}
	}
}

// TestFaintCatchesTheIssuesLightTheme: the light theme as it was (near-black
// text, no background of its own) is refused on a dark terminal, naming the
// style, and read fine on a light one.
func TestFaintCatchesTheIssuesLightTheme(t *testing.T) {
	th := Or(Light)
	th.Screen = lipgloss.NewStyle()
	if f := th.Faint(LightTerminal); len(f) != 0 {
		t.Fatalf("the light palette on a light terminal: %v", f)
	}
	faint := th.Faint(DarkTerminal)
	names := map[string]bool{}
	for _, f := range faint {
		names[f.Style] = true
	}
	if !names["Text"] || !names["Strong"] {
		t.Fatalf("near-black text on a dark terminal not caught: %v", faint)
	}
	err := th.Readable(DarkTerminal)
	if err == nil || !strings.Contains(err.Error(), "too faint on this terminal's background #1e1e1e: ") {
		t.Fatalf("Readable(dark) = %v", err)
	}
	if err := th.Readable(LightTerminal); err != nil {
		t.Fatalf("Readable(light) = %v", err)
	}
}

func TestContrastRatios(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want float64
	}{
		{"#000000", "#ffffff", 21},
		{"#ffffff", "#ffffff", 1},
		{"#777777", "#ffffff", 4.48},
		{"0", "15", 21},
		{"#fff", "#000", 21},
		{"232", "#080808", 1},
	} {
		a, okA := parseColour(c.a)
		b, okB := parseColour(c.b)
		if !okA || !okB {
			t.Fatalf("%s, %s do not parse", c.a, c.b)
		}
		if got := contrast(a, b); math.Abs(got-c.want) > 0.01 {
			t.Errorf("contrast(%s, %s) = %.3f, want %.2f", c.a, c.b, got, c.want)
		}
	}
	if _, ok := parseColour("#12345"); ok {
		t.Error("a five-digit colour parsed")
	}
}
