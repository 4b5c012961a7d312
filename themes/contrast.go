package themes

import (
	"cmp"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/alecthomas/chroma/v2"
	"github.com/charmbracelet/lipgloss"
)

// Minimum WCAG 2 contrast ratios a theme's text keeps against the
// background it is drawn on: body text, and dim or secondary marks
// (borders, rails, muted notes, placeholders).
const (
	MinBody      = 4.5
	MinSecondary = 3.0
)

// Terminal backgrounds a theme that paints
// no background of its own must read on: a typical dark terminal's and a
// light one's.
const (
	DarkTerminal  = "#1e1e1e"
	LightTerminal = "#ffffff"
)

// secondary are the styles held to MinSecondary: what is dim on purpose.
var secondary = map[string]bool{
	"Border": true, "PaneTitle": true, "Tab": true, "Muted": true,
	"Index": true, "SummaryText": true, "Fold": true, "OffBranch": true,
	"Rail": true, "SourceLoop": true, "StatusPending": true,
	"StatusLabel": true, "HelpDesc": true, "HelpSep": true,
	"Placeholder": true,
}

// Faint is a style (or a chroma token) too faint on the background it is
// drawn on.
type Faint struct {
	Style      string  // the Theme field, or "chroma " and the token type
	Ratio      float64 // its contrast
	Want       float64 // the minimum
	Foreground string  // the colours compared, #rrggbb
	Background string
}

func (f Faint) String() string {
	return fmt.Sprintf("%s: %s on %s is %.2f:1 (want %.1f)", f.Style, f.Foreground, f.Background, f.Ratio, f.Want)
}

// Faint lists what the theme draws too faint to read on a terminal whose
// background is terminalBg (DarkTerminal, LightTerminal, or any #rrggbb).
// A theme that paints its own screen (Screen's background) is checked on
// that and reads the same on every terminal; text no style colours is
// drawn in Screen's foreground, or else the terminal's own, which is
// readable on its own background by definition.
func (t *Theme) Faint(terminalBg string) []Faint {
	bg, ok := rgbOf(t.Screen.GetBackground())
	if !ok {
		if bg, ok = parseColour(terminalBg); !ok {
			return nil
		}
	}
	defFg, defOK := rgbOf(t.Screen.GetForeground())
	var out []Faint
	check := func(name string, fg, on lipgloss.TerminalColor, want float64) {
		f, ok := rgbOf(fg)
		if !ok {
			if !defOK {
				return // the terminal's own foreground
			}
			f = defFg
		}
		b, ok := rgbOf(on)
		if !ok {
			b = bg
		}
		if r := contrast(f, b); r < want {
			out = append(out, Faint{Style: name, Ratio: r, Want: want, Foreground: f.hex(), Background: b.hex()})
		}
	}
	if _, painted := rgbOf(t.Screen.GetBackground()); painted || defOK {
		check("Screen", t.Screen.GetForeground(), t.Screen.GetBackground(), MinBody)
	}
	v := reflect.ValueOf(*t)
	for i := 0; i < v.NumField(); i++ {
		f := v.Type().Field(i)
		if !f.IsExported() || f.Name == "Screen" {
			continue
		}
		st, ok := v.Field(i).Interface().(lipgloss.Style)
		if !ok {
			continue
		}
		want := MinBody
		if secondary[f.Name] {
			want = MinSecondary
		}
		check(f.Name, st.GetForeground(), st.GetBackground(), want)
	}
	// Highlighted JSON and diffs: the TUI takes a token's colour (never
	// its background) from the chroma style, drawn on the screen.
	cs := t.Chroma()
	for _, tt := range cs.Types() {
		if tt < 0 || tt == chroma.TextWhitespace {
			continue // line numbers, the wrapper: not drawn; spaces: no ink
		}
		e := cs.Get(tt)
		if !e.Colour.IsSet() {
			continue
		}
		want := MinBody
		if tt.InCategory(chroma.Comment) {
			want = MinSecondary
		}
		check("chroma "+tt.String(), lipgloss.Color(e.Colour.String()), lipgloss.NoColor{}, want)
	}
	return out
}

// Readable says whether the theme reads on a terminal whose background is
// terminalBg (#rrggbb), and if not, why, in one line (the faintest style).
func (t *Theme) Readable(terminalBg string) error {
	faint := t.Faint(terminalBg)
	if len(faint) == 0 {
		return nil
	}
	// The faintest style, before any chroma token.
	worst := slices.MinFunc(faint, func(a, b Faint) int {
		ac, bc := strings.HasPrefix(a.Style, "chroma "), strings.HasPrefix(b.Style, "chroma ")
		if ac != bc {
			if ac {
				return 1
			}
			return -1
		}
		return cmp.Compare(a.Ratio, b.Ratio)
	})
	if len(faint) == 1 {
		return fmt.Errorf("too faint on this terminal's background %s: %s", terminalBg, worst)
	}
	return fmt.Errorf("too faint on this terminal's background %s: %s (and %d more)", terminalBg, worst, len(faint)-1)
}

// rgb is a colour's red, green and blue, 0-255.
type rgb struct{ r, g, b uint8 }

func (c rgb) hex() string { return fmt.Sprintf("#%02x%02x%02x", c.r, c.g, c.b) }

// rgbOf is a lipgloss colour's value: #rrggbb, or an ANSI number in
// xterm's default palette (terminals map the 16 basic colours their own
// way; xterm's is the common reference). ok is false for no colour.
func rgbOf(c lipgloss.TerminalColor) (rgb, bool) {
	s, ok := c.(lipgloss.Color)
	if !ok {
		return rgb{}, false
	}
	return parseColour(string(s))
}

// xterm16 is xterm's default palette for the ANSI colours 0-15.
var xterm16 = [16]rgb{
	{0, 0, 0}, {205, 0, 0}, {0, 205, 0}, {205, 205, 0}, {0, 0, 238}, {205, 0, 205}, {0, 205, 205}, {229, 229, 229},
	{127, 127, 127}, {255, 0, 0}, {0, 255, 0}, {255, 255, 0}, {92, 92, 255}, {255, 0, 255}, {0, 255, 255}, {255, 255, 255},
}

func parseColour(s string) (rgb, bool) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "#") {
		h := s[1:]
		if len(h) == 3 {
			h = string([]byte{h[0], h[0], h[1], h[1], h[2], h[2]})
		}
		v, err := strconv.ParseUint(h, 16, 32)
		if len(h) != 6 || err != nil {
			return rgb{}, false
		}
		return rgb{uint8(v >> 16), uint8(v >> 8), uint8(v)}, true
	}
	n, err := strconv.Atoi(s)
	switch {
	case err != nil || n < 0 || n > 255:
		return rgb{}, false
	case n < 16:
		return xterm16[n], true
	case n < 232:
		n -= 16
		step := func(i int) uint8 {
			if i == 0 {
				return 0
			}
			return uint8(55 + 40*i)
		}
		return rgb{step(n / 36), step(n / 6 % 6), step(n % 6)}, true
	}
	g := uint8(8 + 10*(n-232))
	return rgb{g, g, g}, true
}

// luminance is WCAG 2's relative luminance.
func (c rgb) luminance() float64 {
	ch := func(v uint8) float64 {
		x := float64(v) / 255
		if x <= 0.03928 {
			return x / 12.92
		}
		return math.Pow((x+0.055)/1.055, 2.4)
	}
	return 0.2126*ch(c.r) + 0.7152*ch(c.g) + 0.0722*ch(c.b)
}

// contrast is WCAG 2's contrast ratio, 1 to 21.
func contrast(a, b rgb) float64 {
	la, lb := a.luminance(), b.luminance()
	if la < lb {
		la, lb = lb, la
	}
	return (la + 0.05) / (lb + 0.05)
}
