package tui

import (
	"fmt"
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
			{"kill dialog", func(h *harness) { h.m.openDialog(h.m.killDialog(4242)) }},
			{"replay dialog", func(h *harness) { h.key("h", "p") }},
			{"what the model saw", func(h *harness) { h.key("P") }},
			{"kill points", func(h *harness) { h.m.openDialog(newPointDialog("", func(string) tea.Cmd { return nil })) }},
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
