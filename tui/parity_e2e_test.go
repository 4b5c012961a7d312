package tui

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"rewind/engine"
	"rewind/engine/ticket"
	"rewind/store"
	"rewind/store/backend"
)

// draftSig is the line the EDITOR script adds to a draft.
const draftSig = "Edited by a person before approval."

// TestParityEndToEndInTmux drives the Studio-parity keys in the real
// binary with real worker processes: replay from @2 (a new branch
// appears), edit the customer's message at @1 with EDITOR set to a script,
// resume it (the new branch plans the edited question), compare two
// checkpoints across a fork, and the graph view.
func TestParityEndToEndInTmux(t *testing.T) {
	t.Parallel()
	tmuxBin := lookTmux(t)
	dir := t.TempDir()
	bin := rewindBinary(t)
	storeSpec := "sqlite:" + filepath.Join(dir, "x.db")

	// The thread: a first turn and a fork at @2 (16 checkpoints).
	ctx := context.Background()
	st, err := backend.Open(ctx, storeSpec)
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(st, ticket.NewGraph(), ticket.NewMock())
	if err != nil {
		t.Fatal(err)
	}
	seed(t, e, "p")
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	// The editor: a script that changes the customer's message.
	editor := filepath.Join(dir, "edit.sh")
	// A state value (.json) gets the customer's message changed; a draft
	// (.txt) gets a line added.
	script := "#!/bin/sh\ncase \"$1\" in\n*.json) sed -i 's/My order SO20260901 hasn.t arrived[^\"]*/" + forkInput + "/' \"$1\" ;;\n*) printf '\\n%s\\n' '" + draftSig + "' >> \"$1\" ;;\nesac\n"
	if err := os.WriteFile(editor, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}

	socket := fmt.Sprintf("rewind-parity-%d", os.Getpid())
	shell := fmt.Sprintf("env XDG_STATE_HOME=%s XDG_CONFIG_HOME=%s TERM=tmux-256color VISUAL= EDITOR=%s %s tui p --store %s 2>%s",
		filepath.Join(dir, "state"), filepath.Join(dir, "config"), editor, bin, storeSpec, filepath.Join(dir, "stderr"))
	term := newTmux(t, tmuxBin, socket, "par", filepath.Join(dir, "stderr"))
	term.start(120, 40, shell)
	waitFor, send := term.waitFor, term.send

	waitFor("the thread", "at @16 10/10")

	// Replay from @2: asked, then a new branch that the cursor follows.
	send("Home")
	waitFor("@1", "at @1 1/10")
	send("Right")
	waitFor("@2", "at @2 2/10", "Pending tasks (3)")
	send("p")
	waitFor("the replay question", "Replay from @2?", "executor ×3")
	send("y")
	waitFor("the replay", "@17  replay of @2", "done at @23", "branch 3/3 at @2")

	// Edit the customer's message at @1 in $EDITOR, then resume it.
	send("Home")
	waitFor("@1", "at @1 1/")
	send("e")
	waitFor("the channel list", "Edit state at @1 · which channel?", "messages")
	for range 8 { // approvals … facts, historyVersion, messages
		send("j")
	}
	waitFor("messages selected", "▶ messages")
	send("Enter")
	waitFor("the edit stored", "stored as update @24", "at @24")
	send("r")
	s := waitFor("the edited branch's reply", "done at @", "INV-")
	if strings.Contains(s, "refund") && !strings.Contains(s, "invoice") {
		t.Fatalf("the edited branch should plan the invoice question:\n%s", s)
	}

	// Compare the edited branch's end with the replay's, across the fork.
	send("m")
	waitFor("the mark", "marked @")
	send("[")
	waitFor("the replay branch", "at @23 ")
	send("=")
	waitFor("the compare", "Compare @", "(mark) → @", "different branches, parting after @1", "@@ messages:")
	send("Escape")
	waitFor("the compare closed", "? help")

	// The graph view of @2.
	send("Home", "Right")
	waitFor("@2", "at @2 2/")
	send("v")
	waitFor("the graph", "Graph · @2", "◌ executor ×3", "wrote @2")
	send("Escape")
	// Wait for it to close: an Escape followed at once by End's sequence
	// reads as alt+End, and the graph would stay open (a flake under -race).
	waitFor("the graph closed", "? help")

	// A draft turn: e in the approval edits the draft, y approves it as
	// edited, and the drafts table holds the edited text.
	send("End")
	send("i")
	send("C-d")
	waitFor("the draft toggle", "✉ draft reply")
	term.typeText(forkInput)
	send("Enter")
	waitFor("the approval gate", "waits for approval · a answers")
	send("a")
	waitFor("the approval dialog", "Draft to the customer", "e edit")
	send("e")
	waitFor("the edited draft", "EDITED", draftSig)
	send("y")
	waitFor("the approved draft", "approved ", "drafts table: 1 row for this thread")

	// The store agrees: @24 is an update of @1 whose branch planned the
	// invoice, and @17 the replay of @2.
	out, err := exec.Command(bin, "show", "p", "--json", "--store", storeSpec).CombinedOutput()
	if err != nil {
		t.Fatalf("rewind show: %v\n%s", err, out)
	}
	var show struct {
		State struct {
			Subtasks []struct {
				Topic string `json:"topic"`
			} `json:"subtasks"`
		} `json:"state"`
	}
	if err := json.Unmarshal(out, &show); err != nil {
		t.Fatalf("rewind show --json: %v\n%s", err, out)
	}
	if len(show.State.Subtasks) != 1 || show.State.Subtasks[0].Topic != "invoice" {
		t.Fatalf("the newest checkpoint should hold the invoice plan: %s", out)
	}
	out, err = exec.Command(bin, "log", "p", "--json", "--store", storeSpec).CombinedOutput()
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
	byID := map[int64]int{}
	for i, c := range log.Checkpoints {
		byID[c.ID] = i
	}
	if c := log.Checkpoints[byID[17]]; c.Parent != 2 || c.Source != "fork" {
		t.Fatalf("@17 should be the replay (a fork) of @2: %+v", c)
	}
	if c := log.Checkpoints[byID[24]]; c.Parent != 1 || c.Source != "update" {
		t.Fatalf("@24 should be the update of @1: %+v", c)
	}
	st, err = backend.Open(ctx, storeSpec)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ds, err := st.(store.Drafts).ListDrafts(ctx, "p")
	if err != nil || len(ds) != 1 || !strings.Contains(string(ds[0].Body), draftSig) {
		t.Fatalf("the drafts table should hold the edited draft: %+v (%v)", ds, err)
	}
}
