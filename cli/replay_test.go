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
