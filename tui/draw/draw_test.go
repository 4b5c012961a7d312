package draw_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"

	"rewind/themes"
	"rewind/tui/draw"
)

// An extension's State pane: a title rule, a wrapped value, a counted
// list, each line kept to the pane's width.
func Example() {
	th, err := themes.Get("no-color")
	if err != nil {
		panic(err)
	}
	const w = 24
	lines := []string{draw.Rule(th, "trail", w)}
	lines = append(lines, draw.Wrap("go > first > second > third", w)...)
	lines = append(lines, draw.Cut(draw.Plural(3, "step", "steps")+" written by the nodes first and second", w))
	for _, l := range lines {
		fmt.Printf("%q\n", l)
	}
	// Output:
	// "── trail ───────────────"
	// "go > first > second >"
	// "third"
	// "3 steps written by the …"
}

func ExampleFit() {
	fmt.Printf("[%s]\n", draw.Fit("planner", 10))
	fmt.Printf("[%s]\n", draw.Fit("a summary too long for its column", 10))
	// Output:
	// [planner   ]
	// [a summary…]
}

// Stored or model text reaches the terminal only through Wrap (or
// termtext): an escape sequence in a value is shown, never obeyed.
func TestWrapDisarmsEscapeSequences(t *testing.T) {
	for _, l := range draw.Wrap("ok \x1b]52;c;cGFzdGU=\x07 then \x1b[2J cleared?", 80) {
		if strings.ContainsRune(l, '\x1b') || strings.ContainsRune(l, '\x07') {
			t.Fatalf("%q: an escape sequence reaches the terminal", l)
		}
	}
}

// Wide characters count two cells: a cut line never overflows its pane.
func TestCutAndFitCountCells(t *testing.T) {
	for _, s := range []string{"日本語のメッセージです", "plain ascii text here", "é́ combining marks é́ é́"} {
		for w := 1; w <= 12; w++ {
			if got := draw.Width(draw.Cut(s, w)); got > w {
				t.Errorf("Cut(%q, %d) is %d cells", s, w, got)
			}
			if got := draw.Width(draw.Fit(s, w)); got != w {
				t.Errorf("Fit(%q, %d) is %d cells, want exactly %d", s, w, got, w)
			}
		}
	}
}

// A long message folds after FoldedLines lines with a last line saying
// how much is hidden and that z unfolds it; unfolded, it is whole.
func TestBodyFoldsALongMessage(t *testing.T) {
	th, err := themes.Get("no-color")
	if err != nil {
		t.Fatal(err)
	}
	var text []string
	for i := range 40 {
		text = append(text, fmt.Sprintf("line %d", i))
	}
	plain := lipgloss.NewStyle()
	folded := draw.Body(th, strings.Join(text, "\n"), 30, false, "  ", plain, plain)
	if len(folded) != draw.FoldedLines {
		t.Fatalf("folded to %d lines, want %d:\n%s", len(folded), draw.FoldedLines, strings.Join(folded, "\n"))
	}
	last := folded[len(folded)-1]
	if !strings.Contains(last, "27 more lines") || !strings.Contains(last, "z unfolds") {
		t.Errorf("last line %q: want how many lines are hidden and that z unfolds them", last)
	}
	whole := draw.Body(th, strings.Join(text, "\n"), 30, true, "  ", plain, plain)
	if len(whole) != 40 || !strings.HasSuffix(whole[39], "line 39") {
		t.Errorf("unfolded: %d lines, last %q; want all 40", len(whole), whole[len(whole)-1])
	}
}
