package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// diff compares any two checkpoints: along a branch and across a fork.
func TestDiffAlongAndAcrossBranches(t *testing.T) {
	t.Parallel()
	db := "sqlite:" + filepath.Join(t.TempDir(), "r.db")
	if code, out, stderr := run(t, "run", "--store", db, "--thread", "d", "--input", "Where is SO20260901?"); code != ExitOK {
		t.Fatalf("run: %d %s %s", code, out, stderr)
	}
	if code, out, stderr := run(t, "fork", "--store", db, "d", "1", "--input", "Send the invoice for SO20260902"); code != ExitOK {
		t.Fatalf("fork: %d %s %s", code, out, stderr)
	}
	code, out, stderr := run(t, "diff", "--store", db, "d", "1", "2")
	if code != ExitOK || !strings.Contains(out, "@1 is an ancestor of @2") || !strings.Contains(out, "@@ subtasks") {
		t.Fatalf("diff along the branch: %d\n%s%s", code, out, stderr)
	}
	code, out, stderr = run(t, "diff", "--store", db, "d", "8", "16", "--json")
	var got struct {
		Relation string `json:"relation"`
		Channels []struct {
			Channel string   `json:"channel"`
			Lines   []string `json:"lines"`
		} `json:"channels"`
	}
	if code != ExitOK || json.Unmarshal([]byte(out), &got) != nil {
		t.Fatalf("diff across branches: %d\n%s%s", code, out, stderr)
	}
	changed := map[string]bool{}
	for _, c := range got.Channels {
		changed[c.Channel] = true
	}
	if got.Relation != "different branches, parting after @1" || !changed["messages"] || !changed["request"] {
		t.Fatalf("diff across branches = %+v", got)
	}
	if code, _, stderr := run(t, "diff", "--store", db, "d", "1", "99"); code != ExitFail || !strings.Contains(stderr, "not found") {
		t.Fatalf("diff with an unknown checkpoint: %d %s", code, stderr)
	}
}
