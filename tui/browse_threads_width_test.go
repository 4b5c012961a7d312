package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"rewind/store/browse"
	"rewind/themes"
)

// A thread id in CJK or emoji takes two cells a character: the counts
// after it still line up (the name was padded to 40 runes, not cells).
func TestBrowseThreadsAlignByCells(t *testing.T) {
	p := newBrowseThreads(themes.Or(themes.Dark))
	p.SetSize(120, 10)
	var ts []browse.Thread
	for _, id := range []string{"plain", "工单-失败", "🎫ticket"} {
		ts = append(ts, browse.Thread{ID: id, Namespaces: []browse.Namespace{{Checkpoints: 5}}})
	}
	p.SetThreads(ts, nil)
	at := -1
	for _, line := range strings.Split(ansi.Strip(p.View()), "\n") {
		i := strings.Index(line, "5 checkpoints")
		if i < 0 {
			t.Fatalf("row %q has no count", line)
		}
		if col := ansi.StringWidth(line[:i]); at < 0 {
			at = col
		} else if col != at {
			t.Errorf("row %q: its count starts at cell %d, the first row's at %d", line, col, at)
		}
	}
}

// On a narrow screen the list gives up the date, then the word
// "checkpoints", never a status or a count: at 60, 80 and 120 columns
// every row holds its name, status and count whole, nothing cut.
func TestBrowseThreadsFitNarrowScreens(t *testing.T) {
	ts := []browse.Thread{
		{ID: "t-fail", Namespaces: []browse.Namespace{{Checkpoints: 5}}},
		{ID: "t-main", Namespaces: []browse.Namespace{{Checkpoints: 12},
			{NS: "review:43a3a66f-710b-a293-51f3-ab25d2c8ecc4", Parent: "", ParentCheckpoint: "1f1ed296-8a09-6881-8004-6404eb56cf41", Checkpoints: 3}}},
	}
	status := map[string]browse.Status{
		"t-fail": {State: browse.StateError, Where: "worker", Error: "RuntimeError('worker 1 exploded')"},
		"t-main": {State: browse.StateInterrupted, Where: "before review"},
	}
	for _, w := range []int{60, 80, 120} {
		p := newBrowseThreads(themes.Or(themes.Dark))
		p.SetSize(w, 10)
		p.SetThreads(ts, status)
		lines := strings.Split(ansi.Strip(p.View()), "\n")
		for i, want := range []string{"t-fail error at worker 5", "t-main interrupted before review 12", "└ review:43a3a66f…ecc4 from @1f1ed296…cf41 3"} {
			if i >= len(lines) || ansi.StringWidth(lines[i]) > w || strings.HasSuffix(strings.TrimSpace(lines[i]), "…") || !strings.HasPrefix(strings.Join(strings.Fields(strings.TrimPrefix(lines[i], "▸")), " "), want) {
				t.Errorf("at %d columns, row %d is %q, want %q whole", w, i, lines[min(i, len(lines)-1)], want)
			}
		}
	}
}
