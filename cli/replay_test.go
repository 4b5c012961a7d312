package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// replay runs a checkpoint's due tasks again on a new branch: log marks the
// copy as a replay of its checkpoint, and diff finds nothing between the
// two ends with the deterministic mock. A turn's end has nothing to replay.
func TestReplayFromTheCLI(t *testing.T) {
	t.Parallel()
	db := "sqlite:" + filepath.Join(t.TempDir(), "r.db")
	if code, out, stderr := run(t, "run", "--store", db, "--thread", "r", "--input", "Where is SO20260901?"); code != ExitOK {
		t.Fatalf("run: %d %s %s", code, out, stderr)
	}
	code, out, stderr := run(t, "replay", "--store", db, "r", "@2")
	if code != ExitOK || !strings.Contains(out, "done at checkpoint 15") {
		t.Fatalf("replay: %d\n%s%s", code, out, stderr)
	}
	code, out, _ = run(t, "log", "--store", db, "r")
	if code != ExitOK || !strings.Contains(out, "(replay of @2)") {
		t.Fatalf("log after a replay:\n%s", out)
	}
	code, out, _ = run(t, "log", "--store", db, "r", "--json")
	var log struct {
		Checkpoints []struct {
			ID       int64 `json:"id"`
			Parent   int64 `json:"parent"`
			ReplayOf int64 `json:"replayOf"`
		} `json:"checkpoints"`
	}
	if code != ExitOK || json.Unmarshal([]byte(out), &log) != nil || log.Checkpoints[8].ReplayOf != 2 || log.Checkpoints[8].Parent != 2 {
		t.Fatalf("log --json after a replay: %s", out)
	}
	if code, out, _ := run(t, "diff", "--store", db, "r", "8", "15"); code != ExitOK || !strings.Contains(out, "0 channel(s) changed") {
		t.Fatalf("the replay's end differs from the original's:\n%s", out)
	}
	if code, _, stderr := run(t, "replay", "--store", db, "r", "8"); code != ExitFail || !strings.Contains(stderr, "nothing to replay") {
		t.Fatalf("replay of a turn's end: %d %s", code, stderr)
	}
}

// approve --edit opens the draft in $EDITOR; the operation records the
// edited text, create_draft writes it, verify passes, and the conversation
// says the draft went out edited. An editor that fails approves nothing.
func TestApproveAnEditedDraft(t *testing.T) {
	db := "sqlite:" + filepath.Join(t.TempDir(), "e.db")
	if code, out, stderr := run(t, "run", "--store", db, "--thread", "e", "--draft", "--auth-ttl", "1h", "--input", "Where is SO20260901?"); code != ExitOK {
		t.Fatalf("run: %d %s %s", code, out, stderr)
	}
	t.Setenv("VISUAL", "")
	t.Setenv("EDITOR", "false")
	if code, _, stderr := run(t, "approve", "--store", db, "e", "--edit"); code != ExitFail || !strings.Contains(stderr, "nothing was approved") {
		t.Fatalf("approve with a failing editor: %d %s", code, stderr)
	}
	t.Setenv("EDITOR", "sed -i s/Here/HERE/")
	code, out, stderr := run(t, "approve", "--store", db, "e", "--edit")
	if code != ExitOK {
		t.Fatalf("approve --edit: %d\n%s%s", code, out, stderr)
	}
	code, out, _ = run(t, "show", "--store", db, "e")
	if code != ExitOK || !strings.Contains(out, "edited by operator before approval") || !strings.Contains(out, "approval: approved with edits by operator") || !strings.Contains(out, "verified (") {
		t.Fatalf("show after an edited approval:\n%s", out)
	}
	code, out, _ = run(t, "show", "--store", db, "e", "--json")
	var got struct {
		State struct {
			Operations map[string]struct {
				Payload  string `json:"payload"`
				Original string `json:"original"`
			} `json:"operations"`
		} `json:"state"`
	}
	if code != ExitOK || json.Unmarshal([]byte(out), &got) != nil || len(got.State.Operations) != 1 {
		t.Fatalf("show --json: %s", out)
	}
	for _, op := range got.State.Operations {
		if !strings.HasPrefix(op.Payload, "HERE is where") || !strings.HasPrefix(op.Original, "Here is where") {
			t.Fatalf("operation payload %q (original %q): the edit is not what it records", op.Payload, op.Original)
		}
	}
}

// edit sets a channel at a checkpoint as a new update checkpoint (in
// $EDITOR, or --value), and a resume of it runs the due tasks on the
// edited state; a value the channel cannot hold stores nothing.
func TestEditStateFromTheCLI(t *testing.T) {
	db := "sqlite:" + filepath.Join(t.TempDir(), "s.db")
	if code, out, stderr := run(t, "run", "--store", db, "--thread", "s", "--input", "Where is my parcel SO20260901?"); code != ExitOK {
		t.Fatalf("run: %d %s %s", code, out, stderr)
	}
	t.Setenv("VISUAL", "")
	t.Setenv("EDITOR", "sed -i s/Where.is.my.parcel/Send.the.invoice.for/")
	code, out, stderr := run(t, "edit", "--store", db, "s", "@1", "messages")
	if code != ExitOK || !strings.Contains(out, "new checkpoint @9 (update, parent @1)") || !strings.Contains(out, "rewind resume s 9") {
		t.Fatalf("edit in $EDITOR: %d\n%s%s", code, out, stderr)
	}
	if code, out, stderr := run(t, "resume", "--store", db, "s", "9"); code != ExitOK {
		t.Fatalf("resume the edited branch: %d\n%s%s", code, out, stderr)
	}
	if code, out, _ := run(t, "show", "--store", db, "s"); code != ExitOK || !strings.Contains(out, "t-1-invoice") || !strings.Contains(out, "Send.the.invoice.for SO20260901") {
		t.Fatalf("the edited branch's end:\n%s", out)
	}
	before := func() string { _, out, _ := run(t, "log", "--store", db, "s"); return out }()
	if code, _, stderr := run(t, "edit", "--store", db, "s", "1", "messages", "--value", `"x"`); code != ExitFail || !strings.Contains(stderr, "nothing was stored") {
		t.Fatalf("an edit the channel cannot hold: %d %s", code, stderr)
	}
	if code, _, stderr := run(t, "edit", "--store", db, "s", "1", "messages", "--value", `{`); code != ExitUsage || !strings.Contains(stderr, "not JSON") {
		t.Fatalf("an edit that is not JSON: %d %s", code, stderr)
	}
	if after := func() string { _, out, _ := run(t, "log", "--store", db, "s"); return out }(); after != before {
		t.Fatalf("a refused edit changed the thread:\n%s\nthen\n%s", before, after)
	}
	if code, out, _ := run(t, "edit", "--store", db, "s", "8", "reviewRounds", "--value", "2", "--json"); code != ExitOK || !strings.Contains(out, `"checkpoint": 17`) {
		t.Fatalf("edit --value --json: %d %s", code, out)
	}
}

// log -n N lists the newest N checkpoints, oldest first, and says where
// the earlier ones start; a negative N is a usage error.
func TestLogNewest(t *testing.T) {
	db := "sqlite:" + filepath.Join(t.TempDir(), "n.db")
	if code, out, stderr := run(t, "run", "--store", db, "--thread", "n", "--input", "Where is SO20260901?"); code != ExitOK {
		t.Fatalf("run: %d %s %s", code, out, stderr)
	}
	code, out, stderr := run(t, "log", "--store", db, "n", "-n", "3")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != ExitOK || len(lines) != 5 || !strings.HasPrefix(lines[1], "6 ") || !strings.HasPrefix(lines[3], "8 ") ||
		!strings.Contains(lines[4], "earlier checkpoints from @5 down") {
		t.Fatalf("log -n 3: exit %d\n%s%s", code, out, stderr)
	}
	if code, out, _ := run(t, "log", "--store", db, "n", "--last", "100"); code != ExitOK || strings.Contains(out, "earlier") || strings.Count(out, "\n") != 9 {
		t.Fatalf("log --last 100 of 8 checkpoints:\n%s", out)
	}
	if code, _, stderr := run(t, "log", "--store", db, "n", "-n", "-1"); code != ExitUsage || !strings.Contains(stderr, "-n 20") {
		t.Fatalf("log -n -1: exit %d %s", code, stderr)
	}
}
