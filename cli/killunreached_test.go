package cli_test

import (
	"path/filepath"
	"strings"
	"testing"
)

// A kill point the run never reaches is said after the run, on stderr,
// with how often the point was reached, and the exit code is 3: a person
// drilling crash recovery is not left believing the kill happened.
func TestAKillPointNeverReachedIsSaid(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		graph, point, reached string
	}{
		{"research", "mid-fanout@2", "mid-fanout was reached 1 time; @2 never came"},
		{"ticket", "after:reply@5", "after:reply was reached 1 time; @5 never came"},
		{"ticket", "before-summary", "kill point before-summary was never reached: nothing"}, // no @1 the user did not write
	} {
		env := []string{"REWIND_STORE=sqlite:" + filepath.Join(t.TempDir(), "db")}
		r := rewind(t, env, "run", "--thread", "t", "--graph", c.graph, "--input", "hello", "--kill-at", c.point)
		if r.code != 3 || !strings.Contains(r.stderr, c.reached) || !strings.Contains(r.stderr, "nothing was killed") {
			t.Errorf("%s --kill-at %s: exit %d, want 3 and %q:\n%s%s", c.graph, c.point, r.code, c.reached, r.stdout, r.stderr)
		}
	}
}
