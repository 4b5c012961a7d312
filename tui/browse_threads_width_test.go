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
