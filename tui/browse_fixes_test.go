package tui

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"rewind/store/browse"
	"rewind/themes"
)

// ? lists every key the browser binds, each whole, at 60, 80 and 120
// columns (it was one row of columns cut at the screen's edge: at 80
// columns the state keys and quit were not there); the help scrolls and
// esc closes it.
func TestBrowseHelpShowsEveryKey(t *testing.T) {
	src, _ := openFixture(t, "sqlite-python.db")
	for _, size := range [][2]int{{60, 20}, {80, 24}, {120, 40}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			m, press := openBrowser(t, src, "t-main", size[0], size[1])
			press("?")
			seen := ""
			for range 40 { // scroll through the help
				s := screenOf(m)
				for i, line := range strings.Split(m.View(), "\n") {
					if w := ansi.StringWidth(line); w > size[0] {
						t.Fatalf("help line %d is %d cells wide on a %d-column screen", i, w, size[0])
					}
				}
				seen += s
				press("j")
			}
			for _, g := range (browserHelp{m}).FullHelp() {
				for _, b := range g {
					if !strings.Contains(seen, b.Help().Desc) {
						t.Errorf("the help never shows %q (%s):\n%s", b.Help().Desc, b.Help().Key, seen)
					}
				}
			}
			press("esc")
			if strings.Contains(screenOf(m), "Keys ·") {
				t.Errorf("esc leaves the help open:\n%s", screenOf(m))
			}
		})
	}
}

// / searches the chain's messages as `rewind search` does on a LangGraph
// database (one scan, browse.Search): the list shows the hits the CLI
// prints, enter goes to a hit's checkpoint and shows its conversation, n
// steps to the next hit.
func TestBrowseSearchFindsWhatTheCLIFinds(t *testing.T) {
	bin := rewindBinary(t)
	src, path := openFixture(t, "sqlite-python.db")
	out, err := exec.Command(bin, "search", "t-main", "tables", "--store", "sqlite:"+path).CombinedOutput()
	if err != nil {
		t.Fatalf("rewind search: %v\n%s", err, out)
	}
	cliHits := strings.Split(strings.TrimSpace(string(out)), "\n")[1:]
	if len(cliHits) == 0 {
		t.Fatalf("rewind search finds nothing:\n%s", out)
	}
	m, press := openBrowser(t, src, "t-main", 120, 40)
	press("/", "t", "a", "b", "l", "e", "s", "enter")
	s := screenOf(m)
	if !strings.Contains(s, fmt.Sprintf("Search %q · %d match(es)", "tables", len(cliHits))) {
		t.Fatalf("the search list does not count the CLI's %d hits:\n%s\n%s", len(cliHits), out, s)
	}
	for _, line := range cliHits {
		id, _, _ := strings.Cut(strings.TrimPrefix(line, "@"), " ")
		short := m.timeline.Short(id)
		if !strings.Contains(s, "@"+short) {
			t.Errorf("the list lacks the CLI's hit at @%s (%s):\n%s", short, line, s)
		}
	}
	first, _, _ := strings.Cut(strings.TrimPrefix(cliHits[0], "@"), " ")
	press("enter")
	if m.timeline.CurrentID() != first || m.tab != tabConv {
		t.Errorf("enter goes to @%s (pane %d), want @%s and the conversation", m.timeline.CurrentID(), m.tab, first)
	}
	if !strings.Contains(screenOf(m), "tables") {
		t.Errorf("the hit's message is not on screen:\n%s", screenOf(m))
	}
	press("n")
	if !strings.Contains(screenOf(m), fmt.Sprintf("match %d/%d", 1%len(cliHits)+1, len(cliHits))) {
		t.Errorf("n does not step to the next hit:\n%s", screenOf(m))
	}
	press("/", "z", "q", "x", "enter")
	if !strings.Contains(screenOf(m), `no message of this chain holds "zqx"`) {
		t.Errorf("a search without hits does not say so:\n%s", screenOf(m))
	}
}

// The diff pane shows a comparison only in the chain it was made in: a
// subgraph's run entered from t-main, or another thread, shows no diff of
// t-main's (they showed the parent's, the previous thread's), and coming
// back to t-main finds the mark again.
func TestBrowseDiffStaysWithItsChain(t *testing.T) {
	src, _ := openFixture(t, "sqlite-python.db")
	m, press := openBrowser(t, src, "t-main", 120, 40)
	press("m", "g", "j", "j", "j", "j", "=")
	parentDiff := "@1f1ed296-8a69 → @1f1ed296-8a4f"
	if !strings.Contains(screenOf(m), parentDiff) {
		t.Fatalf("no diff in t-main:\n%s", screenOf(m))
	}
	press(gotoID("8a09")...)
	press("enter", "4")
	if m.chain.NS == "" {
		t.Fatal("enter on ⤷review does not open the run")
	}
	if s := screenOf(m); strings.Contains(s, parentDiff) || !strings.Contains(s, "m marks the checkpoint") {
		t.Errorf("the subgraph's diff pane shows its parent's diff:\n%s", s)
	}
	press("esc", "4")
	if s := screenOf(m); !strings.Contains(s, parentDiff) {
		t.Errorf("back in t-main, its diff is gone:\n%s", s)
	}
	press("t", "up", "enter", "4")
	if m.chain.Thread == "t-main" {
		t.Fatalf("no other thread opened: %+v", m.chain)
	}
	if s := screenOf(m); strings.Contains(s, parentDiff) || !strings.Contains(s, "m marks the checkpoint") {
		t.Errorf("thread %s's diff pane shows t-main's diff:\n%s", m.chain.Thread, s)
	}
}

// A chain whose parent links loop (a damaged table read by a source that
// does not cut the cycle) shows every checkpoint: the timeline walked
// down from the roots, and a cycle has none, so it said "reading the
// chain…" for ever. A chain read empty says so.
func TestBrowseTimelineShowsAParentCycle(t *testing.T) {
	tl := newBrowseTimeline(themes.Or(themes.Dark))
	tl.SetSize(60, 10)
	c := browse.Chain{Thread: "t"}
	tl.SetListings([]browse.Listing{
		{Chain: c, ID: "a1", Parent: "c3", Source: browse.SourceInput},
		{Chain: c, ID: "b2", Parent: "a1", Step: 1, Source: browse.SourceLoop},
		{Chain: c, ID: "c3", Parent: "b2", Step: 2, Source: browse.SourceLoop},
		{Chain: c, ID: "d4", Parent: "c3", Step: 3, Source: browse.SourceLoop},
	})
	v := ansi.Strip(tl.View())
	for _, id := range []string{"a", "b", "c", "d"} {
		if !strings.Contains(v, " "+id+" ") {
			t.Errorf("the timeline lacks @%s:\n%s", id, v)
		}
	}
	if tl.CurrentID() != "d4" {
		t.Errorf("the cursor is on %q, want the newest, d4", tl.CurrentID())
	}
	empty := newBrowseTimeline(themes.Or(themes.Dark))
	if v := ansi.Strip(empty.View()); !strings.Contains(v, "reading the chain") {
		t.Errorf("before its listings come, the timeline says %q", v)
	}
	empty.SetListings(nil)
	if v := ansi.Strip(empty.View()); strings.Contains(v, "reading") || !strings.Contains(v, "no checkpoint") {
		t.Errorf("a chain read empty says %q, want that it has no checkpoint", v)
	}
}
