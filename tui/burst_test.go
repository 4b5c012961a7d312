package tui

import (
	"fmt"
	"github.com/muesli/termenv"
	"rewind/engine/worker"
	"rewind/themes"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
)

// overlayKind names what is over the thread view: the help, the status
// log, a dialog (by type), the go-to prompt, or "" for nothing.
func overlayKind(m *Model) string {
	switch {
	case m.pager.help:
		return "help"
	case m.pager.log:
		return "log"
	case m.dialog != nil:
		return fmt.Sprintf("%T", m.dialog)
	case m.nav.prompt != nil:
		return "prompt"
	}
	return ""
}

// Every overlay of the thread view survives a burst of keys it does not
// close on (Bubble Tea v1 delivers "jjjj" typed or repeated fast as one
// message; issue 33 saw the help and the status log close on one): it
// stays open, takes the keys one by one (the help scrolls by four), and
// the screen keeps its size, whatever the size.
func TestOverlaysSurviveKeyBursts(t *testing.T) {
	e := newEngine(t)
	seed(t, e, "t")
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		w, hgt := size[0], size[1]
		for _, o := range []struct {
			name string
			open func(h *harness)
		}{
			{"help", func(h *harness) { h.key("?") }},
			{"status log", func(h *harness) { h.key("L") }},
			{"kill dialog", func(h *harness) { h.m.openDialog(h.m.runs.killDialog(4242)) }},
			{"replay dialog", func(h *harness) { h.key("h", "p") }},
			{"what the model saw", func(h *harness) { h.key("P") }},
			{"kill points", func(h *harness) {
				h.m.openDialog(newPointDialog(worker.Points, "", func(string) tea.Cmd { return nil }))
			}},
			{"breakpoints", func(h *harness) { h.key("b") }},
			{"fork form", func(h *harness) { h.key("f") }},
			{"search", func(h *harness) { h.key("/") }},
			{"graph view", func(h *harness) { h.key("v") }},
			{"compare", func(h *harness) { h.key("m", "h", "h", "=") }},
			{"edit state", func(h *harness) { h.key("e") }},
			{"go to", func(h *harness) { h.key(":") }},
		} {
			t.Run(fmt.Sprintf("%s %dx%d", o.name, w, hgt), func(t *testing.T) {
				h := newHarness(t, e, Settings{Thread: "t"}, w, hgt)
				h.until("the thread", h.loaded)
				o.open(h)
				h.drain()
				kind := overlayKind(h.m)
				if kind == "" {
					t.Fatalf("%s did not open:\n%s", o.name, h.screen())
				}
				h.typeText("jjjj")
				h.drain()
				// The keys of a burst are taken one by one: j four times.
				switch d := h.m.dialog.(type) {
				case *breakDialog:
					if d.sel != 4 {
						t.Errorf("jjjj moved the breakpoint selection to %d, want 4", d.sel)
					}
				case *pointDialog:
					if d.sel != 4 {
						t.Errorf("jjjj moved the kill point selection to %d, want 4", d.sel)
					}
				case nil:
					if kind == "help" {
						_, lines, _ := h.m.pagerContent()
						if want := min(4, max(len(lines)-h.m.pager.room(), 0)); h.m.pager.off != want {
							t.Errorf("jjjj scrolled the help to line %d, want %d", h.m.pager.off, want)
						}
					}
				}
				for _, burst := range []string{"kkkk", "jjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjj", "jkjkJZhlhl", "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkk"} {
					h.typeText(burst)
					h.drain()
					for range 12 {
						h.dispatch(tea.KeyMsg{Type: tea.KeyDown})
					}
					h.drain()
					if got := overlayKind(h.m); got != kind {
						t.Fatalf("the burst %q closed %s (%s → %q):\n%s", burst, o.name, kind, got, h.screen())
					}
					checkScreen(t, h, w, hgt)
				}
			})
		}
	}
}

// checkScreen: the screen is h lines of at most w cells.
func checkScreen(t *testing.T, h *harness, w, hgt int) {
	t.Helper()
	lines := strings.Split(ansi.Strip(h.m.View()), "\n")
	if len(lines) != hgt {
		t.Fatalf("the screen is %d lines, want %d:\n%s", len(lines), hgt, h.screen())
	}
	for i, l := range lines {
		if lw := lipgloss.Width(l); lw > w {
			t.Fatalf("line %d is %d cells wide, want ≤ %d: %q", i, lw, w, l)
		}
	}
}

// Every screen is painted on the theme's background, whole: each line
// starts in the screen's colours, takes them up again after each style
// ends, and fills the width (a light theme on a dark terminal, or the
// other way round, reads as the theme means), the help over it too.
func TestTheScreenIsPaintedWhole(t *testing.T) {
	e := newEngine(t)
	seed(t, e, "t")
	defer lipgloss.SetColorProfile(termenv.Ascii)
	for _, name := range []string{themes.Light, themes.Dark, themes.HighContrast} {
		for _, size := range [][2]int{{80, 24}, {120, 40}} {
			w, hgt := size[0], size[1]
			lipgloss.SetColorProfile(termenv.Ascii)
			h := newHarness(t, e, Settings{Thread: "t", Theme: themes.Or(name)}, w, hgt)
			h.until("the thread", h.loaded)
			lipgloss.SetColorProfile(termenv.TrueColor)
			h.m.setTheme(themes.Or(name)) // its styles rendered in colour
			for _, screen := range []string{"thread", "help"} {
				if screen == "help" {
					h.key("?")
				}
				view := h.m.View()
				lines := strings.Split(view, "\n")
				if len(lines) != hgt {
					t.Fatalf("%s %dx%d %s: %d lines", name, w, hgt, screen, len(lines))
				}
				bg := strings.SplitN(lines[0], "m", 2)[0] + "m"
				if !strings.Contains(bg, ";48;") && !strings.Contains(bg, "4") {
					t.Fatalf("%s %dx%d %s: the first line does not start with the screen's colours: %q", name, w, hgt, screen, lines[0])
				}
				for i, l := range lines {
					if !strings.HasPrefix(l, bg) || lipgloss.Width(l) != w {
						t.Fatalf("%s %dx%d %s: line %d is not painted whole (%d cells): %q", name, w, hgt, screen, i, lipgloss.Width(l), l)
					}
					body := strings.TrimSuffix(l, "\x1b[0m")
					if n, m := strings.Count(body, "\x1b[0m"), strings.Count(body, "\x1b[0m"+bg); n != m {
						t.Fatalf("%s %dx%d %s: line %d: %d resets leave the background off: %q", name, w, hgt, screen, i, n-m, l)
					}
				}
			}
		}
	}
}

// Two keys typed in one burst (Bubble Tea v1 delivers them as one
// message) do what they do typed apart: q closes the help and f, the
// thread view's, opens the fork form (the help dropped it with the rest
// of the burst); t opens the threads list and g, the list's, goes to its
// first thread (the list had no g: every list moves by g/G as the
// timeline does).
func TestTwoKeysInOneBurstBothAct(t *testing.T) {
	e := newEngine(t)
	seed(t, e, "a")
	seed(t, e, "b")
	h := newHarness(t, e, Settings{Thread: "a"}, 100, 30)
	h.until("the thread", h.loaded)
	h.key("?")
	h.typeText("qf")
	if h.m.pager.shown() {
		t.Fatalf("qf with ? open left the help open:\n%s", h.screen())
	}
	if _, ok := h.m.dialog.(*formDialog); !ok {
		t.Fatalf("qf with ? open: f did not open the fork form (dialog %T):\n%s", h.m.dialog, h.screen())
	}
	h.key("esc")
	h.key("t")
	h.until("the threads list", func() bool { return h.m.screen == screenThreads && h.m.threads.loaded })
	if len(h.m.threads.rows) < 2 {
		t.Fatalf("the list should show both threads:\n%s", h.screen())
	}
	// The list keeps the open thread selected; the test needs it not to
	// be the first row, so that g has somewhere to go.
	if first := h.m.threads.rows[0].id; first == "a" {
		h.key("j", "enter")
		h.until("thread b", func() bool { return h.m.sess.thread == "b" && h.loaded() })
	} else {
		h.key("esc")
	}
	open := h.m.sess.thread
	h.typeText("tg")
	h.until("the threads list", func() bool { return h.m.screen == screenThreads && h.m.threads.loaded })
	if _, c, _ := h.m.threads.selected(); h.m.threads.sel != 0 || c.Thread == open {
		t.Fatalf("tg in the thread view: the list should select its first thread, not %q (row %d):\n%s", c.Thread, h.m.threads.sel, h.screen())
	}
}
