package cli_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// `rewind tui --graph research` opens the second demo graph (no TUI code
// names it): on the research lesson's thread its first screen shows the
// graph's own nodes, its messages channel as a conversation, and nothing
// of the ticket; a new thread's run is a worker process X kills and r
// resumes; a graph it does not know is refused before any screen.
func TestTUIOpensTheResearchGraph(t *testing.T) {
	t.Parallel()
	if r := rewind(t, nil, "tui", "--graph", "nosuch", "--store", "memory:"); r.code != 2 || !strings.Contains(r.stderr, "--graph nosuch: no such graph; choose research, ticket") {
		t.Fatalf("--graph nosuch: exit %d, %q; want exit 2 naming the graphs", r.code, r.stderr)
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed: the screen is not tested")
	}
	db := "sqlite:" + filepath.Join(t.TempDir(), "lesson.db")
	if r := rewind(t, nil, "demo", "research", "--headless", "--store", db); r.code != 0 || !strings.Contains(r.stdout, "open it: rewind tui --store "+db+" lesson:research") {
		t.Fatalf("demo research: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	tmux, _ := tmuxServer(t, "graph")
	home := t.TempDir()
	tmux("new-session", "-d", "-x", "120", "-y", "40", "-s", "g", "env HOME="+home+" XDG_CONFIG_HOME="+home+" XDG_STATE_HOME="+home+" "+binary+" tui --mock-latency 2s --mock-jitter 0 --store "+db+" lesson:research; sleep 60")
	var screen string
	// Polled, not timed: the screen is read until its head loaded.
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if screen = tmux("capture-pane", "-p", "-t", "g"); strings.Contains(screen, "@9") && strings.Contains(screen, "publish") && strings.Contains(screen, "(publish)") {
			break
		}
	}
	for _, w := range []string{"Timeline · 9", "@2   loop   plan", "@3   loop   search", "@4   loop   write", "@5   update", "@9   loop   publish", "ai (publish)", "published the approved draft", "runs worker processes"} {
		if !strings.Contains(screen, w) {
			t.Errorf("the research graph's first screen lacks %q:\n%s", w, screen)
		}
	}
	for _, w := range []string{"Subtasks", "Attachments", "review rounds", "tool budget", "SO20260901", "fidelity"} {
		if strings.Contains(screen, w) {
			t.Errorf("the research graph's first screen shows the ticket's %q:\n%s", w, screen)
		}
	}

	// A new thread's run is a worker process of this binary that builds
	// the research graph (--graph): X kills it for real, r resumes it in
	// a new worker, and the run goes on to the publish gate.
	waitFor := paneWaiter(t, tmux, "g", &screen)
	tmux("send-keys", "-t", "g", "t")
	waitFor("the threads list", "Threads ·", "lesson:research")
	tmux("send-keys", "-t", "g", "n")
	waitFor("the new-thread dialog", "New thread", "research-")
	tmux("send-keys", "-t", "g", "Tab")
	tmux("send-keys", "-t", "g", "-l", "How does WAL mode keep readers and writers apart, and what can a power cut lose?")
	tmux("send-keys", "-t", "g", "Enter")
	// X once plan committed (the search fan-out is under way): a kill
	// before the first commit leaves nothing to resume. Each model call
	// takes 2 s (the flags above), so the keys land before the gate even
	// on a loaded box: at the default 0-800 ms the run once reached it
	// before X was read.
	waitFor("a run in a worker past plan", "X/ctrl+k kills it", "worker pid", "loop   plan")
	tmux("send-keys", "-t", "g", "X")
	waitFor("the kill question", "Send SIGKILL to worker pid")
	tmux("send-keys", "-t", "g", "y")
	waitFor("the kill report", "✝ killed · worker pid", "to redispatch")
	tmux("send-keys", "-t", "g", "r")
	waitFor("the resumed run at the gate", "resumed from @", "waiting for approval at @", "operation publish")
	// K arms this graph's kill points (its nodes'), not the ticket's.
	tmux("send-keys", "-t", "g", "K")
	if s := waitFor("the kill points", "Crash drill", "before:plan"); strings.Contains(s, "before-summary") || strings.Contains(s, "create_draft") {
		t.Errorf("K on the research graph lists the ticket's kill points:\n%s", s)
	}
	tmux("send-keys", "-t", "g", "Escape")
	tmux("send-keys", "-t", "g", "q")
}

// `rewind tui` with no thread lists every graph's threads; the research
// lesson's, opened from the list of a screen built on the ticket's graph,
// opens on research's own (its panes, none of the ticket's), and a
// ticket thread opened after reads as the ticket's again.
func TestTUIListOpensEachThreadOnItsGraph(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed: the screen is not tested")
	}
	db := "sqlite:" + filepath.Join(t.TempDir(), "both.db")
	if r := rewind(t, nil, "demo", "research", "--headless", "--store", db); r.code != 0 {
		t.Fatalf("demo research: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// "a-ticket" lists before "lesson:research" (the list is by id).
	if r := rewind(t, nil, "run", "--store", db, "--thread", "a-ticket", "--input", "My order SO20260901 hasn't arrived: where is it?"); r.code != 0 {
		t.Fatalf("run a-ticket: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	tmux, _ := tmuxServer(t, "both")
	home := t.TempDir()
	tmux("new-session", "-d", "-x", "140", "-y", "40", "-s", "b", "env HOME="+home+" XDG_CONFIG_HOME="+home+" XDG_STATE_HOME="+home+" "+binary+" tui --store "+db+"; sleep 60")
	var screen string
	waitFor := paneWaiter(t, tmux, "b", &screen)
	waitFor("the threads list", "Threads ·", "a-ticket", "lesson:research")
	tmux("send-keys", "-t", "b", "j")
	tmux("send-keys", "-t", "b", "Enter")
	s := waitFor("the research thread on its graph", "lesson:research: opened on graph research", "@9", "ai (publish)", "published the approved draft")
	for _, no := range []string{"misread", "Subtasks", "Attachments", "fidelity"} {
		if strings.Contains(s, no) {
			t.Errorf("the research thread opened from the list shows %q:\n%s", no, s)
		}
	}
	tmux("send-keys", "-t", "b", "2")
	if s := waitFor("research's State pane, by its channels' shape", "messages • changed · 19 messages"); strings.Contains(s, "review rounds") || strings.Contains(s, "tool budget") {
		t.Errorf("the research thread's State pane reads it as the ticket's:\n%s", s)
	}
	tmux("send-keys", "-t", "b", "t")
	waitFor("the threads list again", "Threads ·")
	tmux("send-keys", "-t", "b", "k")
	tmux("send-keys", "-t", "b", "Enter")
	waitFor("the ticket thread as the ticket's", "a-ticket: opened on graph ticket", "review rounds")
	tmux("send-keys", "-t", "b", "q")
}

// paneWaiter polls tmux session's pane into *screen until it shows every
// want (30 s, then the test fails naming what it waited for): polled,
// not timed.
func paneWaiter(t *testing.T, tmux func(...string) string, session string, screen *string) func(what string, want ...string) string {
	return func(what string, want ...string) string {
		t.Helper()
		for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
			*screen = tmux("capture-pane", "-p", "-t", session)
			all := true
			for _, w := range want {
				all = all && strings.Contains(*screen, w)
			}
			if all {
				return *screen
			}
		}
		t.Fatalf("waiting for %s (%q):\n%s", what, want, *screen)
		return ""
	}
}
