package cli_test

import (
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"
)

// Issue 37: under --graph research the CLI speaks of the research graph.
// run's help names each graph's input and nodes (not the ticket's alone);
// an empty --input says what research takes (a question, not "the
// customer's message"); --mock-fail with a role research's mock does not
// play is refused on one line naming the roles it has (exit 2), before
// any store is made, and on a thread that records research without
// --graph, before anything is written.
func TestTheCLISpeaksOfTheResearchGraph(t *testing.T) {
	t.Parallel()
	help := strings.Join(strings.Fields(rewind(t, nil, "run", "--help").stdout), " ") // as one line: help wraps
	for _, want := range []string{"research: the question", "research: plan, publish, search, write"} {
		if !strings.Contains(help, want) {
			t.Errorf("run --help does not say %q:\n%s", want, help)
		}
	}
	path, spec := dbSpec(t)
	env := []string{"REWIND_STORE=" + spec}
	r := rewind(t, env, "run", "--graph", "research", "--thread", "r", "--input", "  ")
	oneLine(t, r, 2, "--input", "the question")
	if strings.Contains(r.stderr, "customer") {
		t.Errorf("an empty question is called the customer's message: %s", r.stderr)
	}
	for _, role := range []string{"critic", "summarizer"} {
		r = rewind(t, env, "run", "--graph", "research", "--thread", "r", "--input", "Why WAL?", "--mock-fail", role)
		oneLine(t, r, 2, `--mock-fail "`+role+`"`, "planner, executor, reply")
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a refused --mock-fail made the store %s (%v)", path, err)
	}
	if r = rewind(t, env, "run", "--graph", "research", "--thread", "r", "--input", "Why WAL?"); r.code != 0 || !strings.Contains(r.stdout, "awaiting approval at checkpoint") {
		t.Fatalf("run --graph research: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	before := rewind(t, env, "log", "r").stdout
	oneLine(t, rewind(t, env, "resume", "r", "--mock-fail", "critic"), 2, `--mock-fail "critic"`, "graph research", "planner, executor, reply")
	if after := rewind(t, env, "log", "r").stdout; after != before {
		t.Fatalf("a refused --mock-fail wrote to the thread:\n%s\nwas\n%s", after, before)
	}
}
