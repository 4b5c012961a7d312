package cli_test

import (
	"path/filepath"
	"testing"
)

// --graph naming another graph than a ticket thread's, with a --mock-fail
// role of the graph named, is refused for the real mistake (the graph),
// with the fix, not for --mock-fail.
func TestAWrongGraphIsBlamedBeforeMockFail(t *testing.T) {
	t.Parallel()
	env := []string{"REWIND_STORE=sqlite:" + filepath.Join(t.TempDir(), "db")}
	if r := rewind(t, env, "run", "--thread", "t1", "--input", "hello"); r.code != 0 {
		t.Fatalf("run t1: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r := rewind(t, env, "run", "--thread", "t1", "--graph", "research", "--mock-fail", "critic", "--input", "x")
	oneLine(t, r, 2, "--graph research", "run on graph ticket", "drop --graph", "new thread")
	// The role is the thread's graph's: without --graph the run takes it.
	r = rewind(t, env, "run", "--thread", "t1", "--mock-fail", "critic", "--input", "x")
	oneLine(t, r, 1, "critic")
}

// The TUI checks --mock-fail against the graph it starts on: a role of
// another graph only is refused with words that say so and name the graph
// whose role it is.
func TestTheTUIRefusesAMockFailOfAnotherGraphSayingWhy(t *testing.T) {
	t.Parallel()
	env := []string{"REWIND_STORE=sqlite:" + filepath.Join(t.TempDir(), "db")}
	r := rewind(t, env, "tui", "--graph", "research", "--mock-fail", "critic")
	oneLine(t, r, 2, `"critic"`, "the graph the TUI starts on", "--graph ticket")
}

// A --mock-fail role no graph plays is refused by the TUI naming the
// roles the graph it starts on does play: the fix is one of them.
func TestTheTUIRefusesAnUnknownMockFailRoleNamingTheRoles(t *testing.T) {
	t.Parallel()
	env := []string{"REWIND_STORE=sqlite:" + filepath.Join(t.TempDir(), "db")}
	r := rewind(t, env, "tui", "--mock-fail", "nobody")
	oneLine(t, r, 2, `"nobody"`, "no graph's mock plays it", "planner, executor, critic, summarizer, reply")
	r = rewind(t, env, "tui", "--graph", "research", "--mock-fail", "nobody")
	oneLine(t, r, 2, `"nobody"`, "planner, executor, reply")
}
