package tui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDemoLessonInTmux runs `rewind demo fork` in tmux as a teacher would:
// the lesson is prepared in its own store, the TUI opens on its thread with
// the script beside the panes and the verdict at the bottom; s hides the
// script and brings it back; at 80 columns the script goes over the panes.
// Then `rewind demo` alone opens the picker, and enter on a lesson opens it.
func TestDemoLessonInTmux(t *testing.T) {
	t.Parallel()
	tmuxBin := lookTmux(t)
	dir := t.TempDir()
	bin := rewindBinary(t)
	socket := fmt.Sprintf("rewind-demo-%d", os.Getpid())
	term := newTmux(t, tmuxBin, socket, "demo", filepath.Join(dir, "stderr"))
	tmux, waitFor, send, has := term.run, term.waitUntil, term.send, screenHas
	start := func(args string) {
		t.Helper()
		term.start(120, 40, fmt.Sprintf("env XDG_STATE_HOME=%s XDG_CONFIG_HOME=%s TERM=tmux-256color %s demo %s 2>>%s",
			filepath.Join(dir, "state"), filepath.Join(dir, "config"), bin, args, filepath.Join(dir, "stderr")))
	}

	start("fork")
	// The script shows once the lesson is prepared, the branches once the
	// thread's history has read: wait for both (under -race and load the
	// script came first and the timeline still read "loading…").
	waitFor("the lesson's thread with its script and its two branches",
		has("Lesson fork · s hides", "thread lesson:fork", "PASS: with @1", "1. open lesson:fork", "branch 2/2 at @1"))
	send("s")
	waitFor("s hides the script", func(s string) bool {
		return !strings.Contains(s, "Lesson fork") && strings.Contains(s, "thread lesson:fork")
	})
	send("s")
	waitFor("s shows it again", has("Lesson fork · s hides"))
	if out, err := tmux("resize-window", "-t", "demo", "-x", "80", "-y", "24"); err != nil {
		t.Fatalf("resize: %v\n%s", err, out)
	}
	s := waitFor("the script over the panes at 80 columns", has("Lesson fork 1/2", "1. open lesson:fork", "s: the next steps", "PASS: with @1"))
	for i, line := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		if n := len([]rune(line)); n > 80 {
			t.Fatalf("line %d is %d columns wide at 80:\n%s", i, n, s)
		}
	}
	send("s") // the steps that did not fit
	waitFor("the next page of steps", has("Lesson fork 2/2", "3. open lesson:fork-", "s hides this panel"))
	send("q")
	waitFor("the program to end", func(s string) bool { return !strings.Contains(s, "Lesson fork") })
	_, _ = tmux("kill-session", "-t", "demo")

	// The picker: enter on a lesson prepares it and opens it.
	start("")
	waitFor("the lesson picker", has("Lessons · 11", "✝ kills workers", "enter prepare"))
	send("j", "j", "j", "j", "j", "Enter") // summary, site-log, dangling-cut, narrative-summary, resume, fork
	waitFor("the fork lesson from the picker", has("Lesson fork · s hides", "thread lesson:fork"))
	send("q")
}
