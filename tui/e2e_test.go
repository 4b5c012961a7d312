package tui

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"rewind/engine/ticket"
	"rewind/store"
	"rewind/store/backend"
)

// TestEndToEndInTmux builds the real binary and drives it in tmux like a
// person: send a message, wait for the reply, scrub back, fork with new
// input; then the crash drills in real worker processes: kill a run with X
// (asked, y) while its executors run and resume it, arm a kill point from
// the drill menu and resume, approve a draft, and quit during a run (asked);
// and check the screen and then the store. It starts as README's first
// run does: the threads list, n for a new thread.
func TestEndToEndInTmux(t *testing.T) {
	t.Parallel()
	tmuxBin := lookTmux(t)
	dir := t.TempDir()
	bin := rewindBinary(t)
	storeSpec := "sqlite:" + filepath.Join(dir, "x.db")
	socket := fmt.Sprintf("rewind-e2e-%d", os.Getpid())
	// The program gets its own state and config dirs; TERM names tmux so the
	// terminal is not queried for its background colour.
	shell := fmt.Sprintf("env XDG_STATE_HOME=%s XDG_CONFIG_HOME=%s TERM=tmux-256color %s tui --store %s --mock-latency 400ms 2>%s",
		filepath.Join(dir, "state"), filepath.Join(dir, "config"), bin, storeSpec, filepath.Join(dir, "stderr"))
	term := newTmux(t, tmuxBin, socket, "e2e", filepath.Join(dir, "stderr"))
	term.start(120, 40, shell)
	tmux, capture, waitFor, send, typeText := term.run, term.capture, term.waitUntil, term.send, term.typeText
	has := screenHas

	// The first screen is the threads list: n makes a thread with its first
	// message.
	waitFor("the threads list", has("Threads · sqlite", "n new thread"))
	send("n")
	waitFor("the new-thread dialog", has("New thread", "ticket-1"))
	send("C-u") // the suggested name goes
	typeText("e2e")
	send("Tab")
	typeText(firstInput)
	send("Enter")
	s := waitFor("the reply", has("Here is where things stand", "at @8 8/8", "thread e2e"))
	if !strings.Contains(s, "#1 user") && !strings.Contains(s, "refund") {
		t.Fatalf("the conversation should show the turn:\n%s", s)
	}

	// k and j move the timeline's row, like every Bubble Tea list.
	send("k")
	waitFor("k: one row up", has("at @7 7/8"))
	send("j")
	waitFor("j: one row down", has("at @8 8/8"))

	// Scrub back to the start, then one step forward.
	send("Home")
	s = waitFor("checkpoint #1", has("at @1 1/8", "Conversation · @1"))
	if strings.Contains(s, "Here is where things stand") {
		t.Fatalf("at @1 the reply must not show yet:\n%s", s)
	}
	send("Right")
	s = waitFor("checkpoint #2", has("at @2 2/8", "Checkpoint @2 "))
	if !strings.Contains(s, "Pending tasks (3)") {
		t.Fatalf("#2 should show its three pending executor tasks:\n%s", s)
	}

	// Fork at @2 with new input.
	send("f")
	waitFor("the fork dialog", has("Fork at @2"))
	typeText(forkInput)
	send("Enter")
	s = waitFor("the fork's reply", has("at @16 10/10", "branch 2/2 at @2", "INV-"))
	if !strings.Contains(s, "fork") {
		t.Fatalf("the timeline should show the fork:\n%s", s)
	}

	// The original branch is still there: switch to it at the same step.
	send("[")
	waitFor("the original branch", has("branch 1/2 at @2"))
	send("End")
	s = waitFor("the original reply", has("at @8 8/8", "refund"))
	if strings.Contains(s, "INV-") {
		t.Fatalf("the original branch must not show the fork's invoice:\n%s", s)
	}

	// Back to the newest checkpoint, where new turns go.
	send("]")
	waitFor("the fork's branch", has("branch 2/2 at @2"))
	send("End")
	waitFor("the newest checkpoint", has("at @16 10/10"))
	if strings.Contains(capture(), "runs in-process") {
		t.Fatal("a sqlite store should run in worker processes")
	}

	// Kill the worker by hand while its executors run.
	send("i")
	typeText(firstInput)
	send("Enter")
	waitFor("the executors to run", has("● executor t-", "X/ctrl+k kills it"))
	send("X")
	waitFor("the kill question", has("Kill the worker", "Send SIGKILL to worker pid"))
	send("y")
	// The report is whole once its count line and a row for each task are
	// on the screen: tmux can be read while a frame is half drawn (the
	// count line new, the task rows still the running ones).
	s = waitFor("the kill report with a row for each task", func(s string) bool { return killReportWhole(s) })
	pending, stored, todo := killCounts(s)
	if pending == 0 || pending != stored+todo {
		t.Fatalf("inconsistent kill report %d: %d finished, %d to redispatch:\n%s", pending, stored, todo, s)
	}
	executorsOnly := strings.Count(s, "○ executor t-") == todo
	send("r")
	s = waitFor("the resumed turn", has(fmt.Sprintf("resume: %d redispatched, %d reused, ", todo, stored), "resumed from @", "up to @"))
	calls := regexp.MustCompile(`resume: \d+ redispatched, \d+ reused, (\d+) model calls?`).FindStringSubmatch(s)
	if n, _ := strconv.Atoi(calls[1]); executorsOnly && n != todo*ticket.MockCallsPerSubtask {
		t.Fatalf("the resume phase made %d model calls for %d redispatched executors:\n%s", n, todo, s)
	}

	// Arm a kill point from the drill menu: the next worker dies mid
	// fan-out, with one executor's writes stored; r redispatches the others.
	send("Escape") // waited for: an ESC with the next key in one read is alt+key
	waitFor("the report to close", func(s string) bool { return !strings.Contains(s, "resumed from @") })
	send("K")
	waitFor("the drill menu", has("Crash drill · kill point for the next run", "mid-fanout"))
	send("Down", "Down", "Down", "Enter")
	waitFor("the armed point", has("✝ next run dies at mid-fanout"))
	send("i")
	typeText(firstInput)
	send("Enter")
	waitFor("the worker's death", has("SIGKILL at kill point mid-fanout", "3 pending tasks: 1 finished (writes stored), 2 to redispatch"))
	send("r")
	waitFor("the drill's resume", has("resume: 2 redispatched, 1 reused, 4 model calls", "up to @"))

	// A draft turn, answered with approve.
	send("Escape")
	waitFor("the report to close", func(s string) bool { return !strings.Contains(s, "resumed from @") })
	send("i")
	send("C-d")
	waitFor("the draft toggle", has("✉ draft reply"))
	typeText("Please send me the invoice for SO20260901.")
	send("Enter")
	s = waitFor("the approval gate", has("waits for approval · a answers", "authorization grant:customer-consent expires"))
	opID := regexp.MustCompile(`op-draft-c\d+-[0-9a-f]+`).FindString(s)
	if opID == "" {
		t.Fatalf("the gate should name the operation:\n%s", s)
	}
	send("a")
	waitFor("the approval dialog", has("Approval · @", "Draft to the customer", "y approve"))
	send("y")
	waitFor("the approved draft", has("approved "+opID, "drafts table: 1 row for this thread"))

	// q during a run asks, saying the run stays resumable; n stays, y quits.
	send("Escape")
	waitFor("the report to close", func(s string) bool { return !strings.Contains(s, "drafts table: 1 row") })
	send("i")
	typeText(forkInput)
	send("Enter")
	waitFor("a run under way", has("x stops it"))
	send("q")
	waitFor("the quit question", has("Quit during a run", "stays resumable"))
	send("n")
	waitFor("the question to close", func(s string) bool { return !strings.Contains(s, "Quit during a run") })
	send("q")
	waitFor("the quit question again", has("Quit during a run"))
	send("y")
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := tmux("has-session", "-t", "e2e"); err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("q did not quit; screen:\n%s", capture())
		}
		time.Sleep(100 * time.Millisecond)
	}

	// The store agrees with the screen.
	out, err := exec.Command(bin, "log", "e2e", "--json", "--store", storeSpec).CombinedOutput()
	if err != nil {
		t.Fatalf("rewind log: %v\n%s", err, out)
	}
	var log struct {
		Checkpoints []struct {
			ID     int64  `json:"id"`
			Parent int64  `json:"parent"`
			Source string `json:"source"`
		} `json:"checkpoints"`
	}
	if err := json.Unmarshal(out, &log); err != nil {
		t.Fatalf("rewind log --json: %v\n%s", err, out)
	}
	if len(log.Checkpoints) < 16 {
		t.Fatalf("want at least 16 checkpoints (8 + a fork of 8 + the drills), got %d", len(log.Checkpoints))
	}
	if c := log.Checkpoints[8]; c.ID != 9 || c.Parent != 2 || c.Source != "fork" {
		t.Fatalf("checkpoint 9 should be the fork of #2, got %+v", c)
	}

	// The approved draft is one row in the store's drafts table, and the
	// operation is recorded as done.
	st, err := backend.Open(context.Background(), storeSpec)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	drafts, ok := st.(store.Drafts)
	if !ok {
		t.Fatal("the sqlite store has no drafts table")
	}
	ds, err := drafts.ListDrafts(context.Background(), "e2e")
	if err != nil || len(ds) != 1 || ds[0].OperationID != opID {
		t.Fatalf("want exactly one draft row for %s, got %+v (%v)", opID, ds, err)
	}
	out, err = exec.Command(bin, "show", "e2e", "--json", "--store", storeSpec).CombinedOutput()
	if err != nil {
		t.Fatalf("rewind show: %v\n%s", err, out)
	}
	var show struct {
		State struct {
			Operations map[string]struct {
				Status string `json:"status"`
			} `json:"operations"`
			Approvals map[string]struct {
				Approved bool `json:"approved"`
			} `json:"approvals"`
		} `json:"state"`
	}
	if err := json.Unmarshal(out, &show); err != nil {
		t.Fatalf("rewind show --json: %v\n%s", err, out)
	}
	if show.State.Operations[opID].Status != "done" || !show.State.Approvals[opID].Approved {
		t.Fatalf("the operation should be approved and done: %s", out)
	}
}

// Mouse capture is on by default and off with --no-mouse or mouse = false
// in the config file, as tmux sees it (the pane's mouse flag): then the
// terminal selects text.
// killCountLine is the kill report's count of pending tasks.
var killCountLine = regexp.MustCompile(`(\d+) pending tasks?: (\d+) finished \(writes stored\), (\d+) to redispatch`)

// killCounts reads the kill report's count line (zeros when absent).
func killCounts(s string) (pending, stored, todo int) {
	counts := killCountLine.FindStringSubmatch(s)
	if counts == nil {
		return 0, 0, 0
	}
	pending, _ = strconv.Atoi(counts[1])
	stored, _ = strconv.Atoi(counts[2])
	todo, _ = strconv.Atoi(counts[3])
	return pending, stored, todo
}

// killReportWhole: the kill report and its count line are on the screen
// with a row for each task it counts.
func killReportWhole(s string) bool {
	if !strings.Contains(s, "✝ killed · worker pid") || !killCountLine.MatchString(s) {
		return false
	}
	_, stored, todo := killCounts(s)
	return strings.Count(s, "not finished → redispatched on resume") == todo && strings.Count(s, "finished → reused, not run again") == stored
}

func TestMouseCaptureIsOptionalInTmux(t *testing.T) {
	t.Parallel()
	tmuxBin := lookTmux(t)
	bin := rewindBinary(t)
	for _, c := range []struct {
		name, flag, config, want string
	}{
		{"default", "", "", "1"},
		{"flag", "--no-mouse", "", "0"},
		{"config", "", "mouse = false\n", "0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if c.config != "" {
				if err := os.MkdirAll(filepath.Join(dir, "config", "rewind"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "config", "rewind", "config.toml"), []byte(c.config), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			socket := fmt.Sprintf("rewind-mouse-%d-%s", os.Getpid(), c.name)
			shell := fmt.Sprintf("env XDG_STATE_HOME=%s XDG_CONFIG_HOME=%s TERM=tmux-256color %s tui %s --store sqlite:%s 2>%s",
				filepath.Join(dir, "state"), filepath.Join(dir, "config"), bin, c.flag, filepath.Join(dir, "x.db"), filepath.Join(dir, "stderr"))
			term := newTmux(t, tmuxBin, socket, "m", filepath.Join(dir, "stderr"))
			term.start(100, 30, shell)
			term.waitFor("the threads list", "No threads yet")
			out, err := term.run("display-message", "-p", "-t", "m", "#{mouse_any_flag}")
			if err != nil {
				t.Fatalf("tmux display-message: %v %s", err, out)
			}
			if got := strings.TrimSpace(out); got != c.want {
				t.Fatalf("the pane's mouse flag is %q, want %q", got, c.want)
			}
		})
	}
}
