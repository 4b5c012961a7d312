package cli_test

import (
	"strings"
	"testing"
)

// `rewind events T`, `rewind stats T` and `rewind resume T --plan` read a
// research thread as the graph it records, as show, log and diff do: not
// through the ticket's graph, which called the thread corrupt ("write to
// unknown channel") and told the user to delete it.
func TestEventsAndStatsReadTheGraphAThreadRecords(t *testing.T) {
	t.Parallel()
	_, env := researchLesson(t)
	const thread = "lesson:research"
	// A branch from @2: its checkpoints are read by replaying @2's writes,
	// which only the research graph's channels take.
	if r := rewind(t, env, "fork", thread, "2", "--input", "what does fsync make durable?"); r.code != 0 {
		t.Fatalf("fork: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, args := range [][]string{{"events", thread}, {"events", thread, "3"}, {"stats", thread}, {"resume", thread, "--plan"}} {
		r := rewind(t, env, args...)
		if r.code != 0 || strings.Contains(r.stderr, "corrupt") || r.stdout == "" {
			t.Errorf("%s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
	}
}
