package cli

import "testing"

// Counts read as English: "1 model call", "2 pending tasks", never "(s)"
// (issue 33).
func TestCountReadsAsEnglish(t *testing.T) {
	for _, c := range []struct {
		n          int
		noun, want string
	}{{1, "model call", "1 model call"}, {0, "model call", "0 model calls"}, {3, "pending task", "3 pending tasks"}} {
		if got := count(c.n, c.noun); got != c.want {
			t.Errorf("count(%d, %q) = %q, want %q", c.n, c.noun, got, c.want)
		}
	}
}
