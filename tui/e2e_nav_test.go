package tui

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestNavigationInTmux drives the real binary in tmux on a 30-turn thread
// written by `rewind bench` (8 checkpoints a turn: turn N starts at
// @8(N-1)+1): { and } from turn to turn, : to a checkpoint (and an unknown
// one refused), / to search and enter to go to a match, n to the next.
func TestNavigationInTmux(t *testing.T) {
	t.Parallel()
	tmuxBin := lookTmux(t)
	dir := t.TempDir()
	bin := rewindBinary(t)
	storeSpec := "sqlite:" + filepath.Join(dir, "x.db")
	out, err := exec.Command(bin, "bench", "--store", storeSpec, "--turns", "30", "--json").Output()
	if err != nil {
		t.Fatalf("rewind bench: %v\n%s", err, out)
	}
	var rep struct {
		Thread      string `json:"thread"`
		Checkpoints int    `json:"checkpoints"`
	}
	if err := json.Unmarshal(out, &rep); err != nil || rep.Checkpoints != 240 {
		t.Fatalf("rewind bench --json: %v, %d checkpoints (want 240)\n%s", err, rep.Checkpoints, out)
	}
	socket := fmt.Sprintf("rewind-e2e-nav-%d", os.Getpid())
	shell := fmt.Sprintf("env XDG_STATE_HOME=%s XDG_CONFIG_HOME=%s TERM=tmux-256color %s tui --store %s %s 2>%s",
		filepath.Join(dir, "state"), filepath.Join(dir, "config"), bin, storeSpec, rep.Thread, filepath.Join(dir, "stderr"))
	term := newTmux(t, tmuxBin, socket, "nav", filepath.Join(dir, "stderr"))
	term.start(120, 40, shell)
	waitFor, send, typeText := term.waitFor, term.send, term.typeText

	// The newest checkpoint, under the last turn's header with its words.
	waitFor("the thread", "at @240 240/240", "turn 30", "› Refund SO20260030")
	send("{")
	waitFor("{: the start of turn 30", "at @233 233/240")
	send("{")
	waitFor("{: the start of turn 29", "at @225 225/240", "› The tracking for S")
	send("}")
	waitFor("}: the start of turn 30", "at @233 233/240")

	// : goes to a checkpoint; an unknown one is refused on the status line.
	send(":")
	waitFor("the : prompt", "@80 or 80: go to a checkpoint")
	typeText("@100")
	send("Enter")
	waitFor(": @100", "at @100 100/240")
	send(":")
	waitFor("the : prompt", "@80 or 80: go to a checkpoint")
	typeText("9999")
	send("Enter")
	waitFor(": 9999 refused", "no checkpoint @9999", "at @100 100/240")

	// / searches the messages (turn 7's question and the answers that
	// quote its order); enter goes to the first match, n to the next.
	send("/")
	waitFor("the / prompt", "search words in every branch")
	typeText("SO20260007")
	send("Enter")
	waitFor("the results", `Search "SO20260007"`, "#67 user")
	send("Enter")
	waitFor("the first match", "at @49 49/240", "match 1/")
	send("n")
	waitFor("the next match", "match 2/")
	send("q")
}
