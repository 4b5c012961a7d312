package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"rewind/engine/worker"
)

// An unknown kill point on the command line is a usage error (exit 2) that
// lists every valid one, on every command with --kill-at; a valid one is
// taken. Nothing is opened or run before the refusal.
func TestUnknownKillPointListsValidOnes(t *testing.T) {
	db := "sqlite:" + filepath.Join(t.TempDir(), "kp.db")
	forms := map[string][]string{
		"run":            {"run", "--thread", "t", "--input", "hi", "--store", db},
		"resume":         {"resume", "t", "--store", db},
		"fork":           {"fork", "t", "1", "--input", "hi", "--store", db},
		"replay":         {"replay", "t", "1", "--store", db},
		"worker replay":  {"worker", "replay", "t", "1", "--store", db},
		"approve":        {"approve", "t", "--store", db},
		"reject":         {"reject", "t", "--reason", "no", "--store", db},
		"drill":          {"drill", "--store", db},
		"worker run":     {"worker", "run", "--thread", "t", "--input", "hi", "--store", db},
		"worker resume":  {"worker", "resume", "t", "--store", db},
		"worker fork":    {"worker", "fork", "t", "1", "--input", "hi", "--store", db},
		"worker approve": {"worker", "approve", "t", "--store", db},
		"worker reject":  {"worker", "reject", "t", "--reason", "no", "--store", db},
	}
	seen := 0
	for path, c := range commands() {
		if c.Flags().Lookup("kill-at") == nil {
			continue
		}
		seen++
		args, ok := forms[path]
		if !ok {
			t.Errorf("%s has --kill-at: add its form to this test", path)
			continue
		}
		for _, bad := range []string{"nope", "nope@2", "Before-Model-Call"} {
			code, _, stderr := run(t, append(args, "--kill-at", bad)...)
			if code != 2 {
				t.Errorf("%s --kill-at %s: exit %d, want 2 (usage): %s", path, bad, code, stderr)
			}
			if !strings.Contains(stderr, "unknown kill point") {
				t.Errorf("%s --kill-at %s: %q does not say the point is unknown", path, bad, stderr)
			}
			for _, p := range worker.Points {
				if !strings.Contains(stderr, string(p.Name)) {
					t.Errorf("%s --kill-at %s: the error does not list %s: %s", path, bad, p.Name, stderr)
				}
			}
		}
	}
	if seen < len(forms) {
		t.Errorf("%d commands have --kill-at, want %d", seen, len(forms))
	}
}

// The typed list is the one list: names are unique, each parses to itself,
// and a drill's spec parses back to its point.
func TestKillPointsParse(t *testing.T) {
	seen := map[worker.KillPoint]bool{}
	for _, p := range worker.Points {
		if seen[p.Name] {
			t.Errorf("kill point %s listed twice", p.Name)
		}
		seen[p.Name] = true
		got, nth, err := worker.Parse(p.DrillSpec())
		if err != nil || got.Name != p.Name || nth != max(p.DrillAt, 1) {
			t.Errorf("Parse(%q) = %s, %d, %v", p.DrillSpec(), got.Name, nth, err)
		}
	}
}
