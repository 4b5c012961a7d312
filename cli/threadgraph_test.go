package cli_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"rewind/engine"
	"rewind/engine/model"
	"rewind/store/sqlite"
)

// researchLesson is the research lesson's thread (lesson:research, done
// at @9) in a sqlite file of its own, written by `rewind demo research`,
// and the environment that names the file.
func researchLesson(t *testing.T) (path string, env []string) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "lesson.db")
	db := "sqlite:" + path
	if r := rewind(t, nil, "demo", "research", "--headless", "--store", db); r.code != 0 || !strings.Contains(r.stdout, "open it: rewind tui --store "+db+" lesson:research") {
		t.Fatalf("demo research: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	return path, []string{"REWIND_STORE=" + db}
}

// Issue 37: a thread records the graph it was run on, and the commands
// that read it build that graph without --graph. The research lesson's
// thread (written by `rewind demo research`) shows (a checkpoint inside a
// run too), logs and diffs as the research graph, with no migration
// words; --graph naming another graph is refused on one line (exit 2)
// naming both and the fix, by the commands that read and that write,
// before anything is written.
func TestAThreadOpensAsTheGraphItRecords(t *testing.T) {
	t.Parallel()
	_, env := researchLesson(t)
	const thread = "lesson:research"
	r := rewind(t, env, "show", thread)
	if r.code != 0 || !strings.Contains(r.stdout, "source loop, graph research, schema v1)") || !strings.Contains(r.stdout, "CHANNELS") || strings.Contains(r.stdout, "migrated") || strings.Contains(r.stdout, "review rounds") {
		t.Fatalf("show of the research thread without --graph: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r = rewind(t, env, "show", thread, "3"); r.code != 0 || !strings.Contains(r.stdout, "checkpoint @3 (parent @2, step 2, source loop, graph research, schema v1)") {
		t.Errorf("show of a checkpoint inside a run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r = rewind(t, env, "show", thread, "--json"); r.code != 0 || !strings.Contains(r.stdout, `"graph": "research"`) {
		t.Errorf("show --json does not name the graph: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r = rewind(t, env, "log", thread); r.code != 0 || !strings.Contains(r.stdout, "publish") {
		t.Errorf("log: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r = rewind(t, env, "diff", thread, "3", "4"); r.code != 0 || !strings.Contains(r.stdout, "@@ draft: changed") {
		t.Errorf("diff without --graph: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	before := rewind(t, env, "log", thread).stdout

	// --graph naming another graph: one line, both graphs and the fix,
	// and nothing written (the log reads as before).
	for _, args := range [][]string{
		{"show", thread, "--graph", "ticket"},
		{"resume", thread, "--graph", "ticket"},
		{"fork", thread, "2", "--input", "hello", "--graph", "ticket"},
		{"replay", thread, "2", "--graph", "ticket"},
		{"edit", thread, "4", "review", "--graph", "ticket", "--value", `{"decision":"approve","note":""}`},
	} {
		oneLine(t, rewind(t, env, args...), 2, "--graph ticket", "run on graph research", "drop --graph")
	}
	if after := rewind(t, env, "log", thread).stdout; after != before {
		t.Fatalf("a refused --graph wrote to the thread:\n%s\nwas\n%s", after, before)
	}
}

// Fork, replay, edit, resume, discard and prune (every thread) run a
// research thread as its own graph without --graph, and what they write
// keeps the record: it reads as research after each.
func TestAThreadRunsAsTheGraphItRecords(t *testing.T) {
	t.Parallel()
	_, env := researchLesson(t)
	const thread = "lesson:research"
	var r result
	if r = rewind(t, env, "fork", thread, "2", "--input", "What does synchronous=NORMAL lose on a power cut?"); r.code != 0 || !strings.Contains(r.stdout, "awaiting approval at checkpoint") || !strings.Contains(r.stdout, "rewind tui "+thread) {
		t.Fatalf("fork without --graph: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r = rewind(t, env, "replay", thread, "2"); r.code != 0 || !strings.Contains(r.stdout, "awaiting approval at checkpoint") {
		t.Fatalf("replay without --graph: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = rewind(t, env, "show", thread)
	head := strings.TrimPrefix(strings.Fields(r.stdout + " . . . .")[4], "@")
	if r.code != 0 || !strings.Contains(r.stdout, "graph research, schema v1)") {
		t.Fatalf("show of the replay's head: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r = rewind(t, env, "edit", thread, head, "review", "--value", `{"decision":"approve","note":""}`); r.code != 0 || !strings.Contains(r.stdout, "new checkpoint @") {
		t.Fatalf("edit without --graph: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r = rewind(t, env, "resume", thread); r.code != 0 || !strings.Contains(r.stdout, "done at checkpoint") {
		t.Fatalf("resume without --graph: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r = rewind(t, env, "show", thread); r.code != 0 || !strings.Contains(r.stdout, "graph research, schema v1)") || !strings.Contains(r.stdout, "published") {
		t.Fatalf("show after the resume: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// A discard and a prune (every thread) write through the graph the
	// thread records too: it still reads as research.
	if r = rewind(t, env, "fork", thread, "2", "--input", "And what does FULL cost?"); r.code != 0 {
		t.Fatalf("fork: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r = rewind(t, env, "discard", thread); r.code != 0 {
		t.Fatalf("discard: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r = rewind(t, env, "prune", "--all", "--keep-last", "3"); r.code != 0 || !strings.Contains(r.stdout, "pruned") {
		t.Fatalf("prune --all: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r = rewind(t, env, "show", thread); r.code != 0 || !strings.Contains(r.stdout, "graph research, schema v1)") || !strings.Contains(r.stdout, "CHANNELS") {
		t.Fatalf("show after a discard and a prune: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// A thread stored before graphs were recorded (the v8 fixture, upgraded
// by a turn on another thread) reads as the ticket's; the new turn
// records the ticket, and --graph naming another is refused.
func TestAThreadStoredBeforeGraphsReadsAsTheTickets(t *testing.T) {
	t.Parallel()
	var r result
	old := filepath.Join(t.TempDir(), "old.db")
	if err := os.WriteFile(old, gunzip(t, "store-v8.db.gz"), 0o600); err != nil {
		t.Fatal(err)
	}
	oldEnv := []string{"REWIND_STORE=sqlite:" + old}
	if r = rewind(t, oldEnv, "run", "--thread", "upgrade-first", "--input", "hello"); r.code != 0 {
		t.Fatalf("a turn that upgrades the store: %d %s", r.code, r.stderr)
	}
	if r = rewind(t, oldEnv, "show", "selftest:check5-v1"); r.code != 0 || !strings.Contains(r.stdout, "graph ticket (not recorded), schema v2") || !strings.Contains(r.stdout, "review rounds") {
		t.Errorf("show of a thread stored before graphs were recorded: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r = rewind(t, oldEnv, "show", "upgrade-first"); r.code != 0 || !strings.Contains(r.stdout, "graph ticket, schema v2)") {
		t.Errorf("show of a new ticket thread: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	oneLine(t, rewind(t, oldEnv, "show", "upgrade-first", "--graph", "research"), 2, "--graph research", "run on graph ticket")
}

// A graph of a user's own program, which rewind does not build: what
// rebuilds its state names it with the graphs rewind builds (exit 1);
// its listings read.
func TestAGraphRewindDoesNotBuildIsNamed(t *testing.T) {
	t.Parallel()
	path, env := researchLesson(t)
	var r result
	runMine(t, path)
	for _, args := range [][]string{{"show", "mine-1"}, {"resume", "mine-1"}} {
		oneLine(t, rewind(t, env, args...), 1, `graph mine`, "it builds research, ticket")
	}
	if r = rewind(t, env, "log", "mine-1"); r.code != 0 || !strings.Contains(r.stdout, "note") {
		t.Errorf("log of another program's graph: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// runMine stores thread mine-1 of graph "mine" (one node adding to a
// counter), a graph of a user's own program that rewind does not build,
// in the SQLite store at path.
func runMine(t *testing.T, path string) {
	t.Helper()
	st, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	g := engine.NewGraph("mine", 1).Channel("notes", engine.Counter, 0).
		Node("note", func(context.Context, *engine.NodeContext) ([]engine.Write, error) {
			return []engine.Write{engine.Put("notes", 1)}, nil
		}).Entry("note").Edge("note", engine.End)
	e, err := engine.New(st, g, model.NewMock(nil))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Run(t.Context(), "mine-1", []engine.Write{engine.Put("notes", 1)}, engine.RunConfig{}); err != nil {
		t.Fatal(err)
	}
}

// A prune that drops a killed run's first checkpoint, the one listing of
// the run that names its graph (the head is a middle one, which names
// none), keeps the thread's record: after `rewind prune T --keep-last 1`
// the research thread still shows, and resumes, as research, not as the
// ticket's.
func TestAPruneKeepsAKilledThreadsGraph(t *testing.T) {
	t.Parallel()
	_, spec := dbSpec(t)
	env := []string{"REWIND_STORE=" + spec}
	r := rewind(t, env, "run", "--graph", "research", "--thread", "r", "--input", "How does WAL mode commit, and what can a power cut lose?", "--kill-at", "before:write")
	if !strings.Contains(r.stdout, "kill point before:write reached") {
		t.Fatalf("run --kill-at before:write: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r = rewind(t, env, "prune", "r", "--keep-last", "1"); r.code != 0 || !strings.Contains(r.stdout, "pruned") {
		t.Fatalf("prune r --keep-last 1: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r = rewind(t, env, "show", "r"); r.code != 0 || !strings.Contains(r.stdout, "graph research, schema v1)") {
		t.Fatalf("show after the prune does not read the thread as research: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r = rewind(t, env, "resume", "r"); r.code != 0 || !strings.Contains(r.stdout, "awaiting approval at checkpoint") {
		t.Fatalf("resume after the prune: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
