package cli_test

import (
	"encoding/json"
	"strings"
	"testing"

	"rewind/cli/rewindbin"
	"rewind/engine/drill"
	"rewind/store/postgres/pgtest"
)

// `rewind drill --graph research` drills the second graph with the
// generic matrix in real worker processes of this binary, on a sqlite
// file and on PostgreSQL: every point the uninterrupted run reached
// passes, including those past the publish gate (the drill answers it
// as a person would, then a new worker resumes) and the commits of the
// worker after the answer (a commit point's count goes on there).
func TestDrillTheResearchGraph(t *testing.T) {
	t.Parallel()
	_, spec := dbSpec(t)
	specs := []string{spec}
	if pgtest.Available(t) {
		specs = append(specs, pgtest.Fresh(t, "rewind_drill_research"))
	}
	// Both stores at once: the drill's workers are processes of their own.
	rewindbin.Cases(t, specs, func(s string) string { return strings.SplitN(s, ":", 2)[0] }, func(t *testing.T, s string) {
		r := rewind(t, nil, "drill", "--graph", "research", "--store", s, "--json")
		var res drill.Result
		if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
			t.Fatalf("%s: exit %d, not a drill's JSON: %v\n%s%s", s, r.code, err, r.stdout, r.stderr)
		}
		passed := map[string]bool{}
		for _, oc := range res.Outcomes {
			passed[oc.Point] = oc.Passed
			if !oc.Passed {
				t.Errorf("%s: %s failed: %+v", s, oc.Point, oc.Checks)
			}
		}
		for _, want := range []string{"mid-fanout", "before:publish", "after:publish", "before-commit@5", "after-commit@5"} {
			if _, ok := passed[want]; !ok {
				t.Errorf("%s: the matrix did not drill %s (drilled %d points)", s, want, len(res.Outcomes))
			}
		}
		if r.code != 0 {
			t.Errorf("%s: exit %d: %s", s, r.code, r.stderr)
		}
	})
	r := rewind(t, nil, "drill", "--graph", "research", "--store", spec, "--kill-at", "before:nope")
	if r.code != 2 || !strings.Contains(r.stderr, "before:publish") || r.stdout != "" {
		t.Errorf("an unknown point of the graph: exit %d, stdout %q, stderr %q; want a usage error listing its points", r.code, r.stdout, r.stderr)
	}
}

// `rewind run --graph research` runs the second graph from the CLI to its
// publish gate, and says how its gate is answered (not the ticket's
// approve/reject); show, diff, edit and resume take --graph too; what only
// the ticket's graph takes is refused before anything is opened.
func TestRunTheResearchGraph(t *testing.T) {
	t.Parallel()
	path, spec := dbSpec(t)
	env := []string{"REWIND_STORE=" + spec}
	r := rewind(t, env, "run", "--graph", "research", "--thread", "r", "--input", "How does WAL mode keep readers and writers apart, and what can a power cut lose?")
	if r.code != 0 || !strings.Contains(r.stdout, "awaiting approval at checkpoint 4") || !strings.Contains(r.stdout, "rewind tui r --graph research") || strings.Contains(r.stdout, "rewind approve") {
		t.Fatalf("run --graph research: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// show, diff and edit read it as its own graph (as the ticket's they
	// replayed its checkpoints into the ticket's channels and failed), and
	// the gate is answered from the CLI: edit its review, resume.
	r = rewind(t, env, "show", "r", "--graph", "research")
	if r.code != 0 || !strings.Contains(r.stdout, "CHANNELS") || !strings.Contains(r.stdout, `review         {"decision":"","note":""}`) || strings.Contains(r.stdout, "review rounds") {
		t.Fatalf("show --graph research: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r = rewind(t, env, "diff", "r", "3", "4", "--graph", "research"); r.code != 0 || !strings.Contains(r.stdout, "@@ draft: changed") {
		t.Fatalf("diff --graph research: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r = rewind(t, env, "edit", "r", "4", "review", "--graph", "research", "--value", `{"decision":"approve","note":""}`); r.code != 0 || !strings.Contains(r.stdout, "new checkpoint @5") || !strings.Contains(r.stdout, "rewind resume r 5 --graph research") {
		t.Fatalf("edit --graph research: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r = rewind(t, env, "resume", "r", "--graph", "research"); r.code != 0 || !strings.Contains(r.stdout, "done at checkpoint 6") {
		t.Fatalf("resume --graph research after the answer: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, args := range [][]string{
		{"run", "--graph", "research", "--thread", "r2", "--input", "why?", "--draft", "--auth-ttl", "1h"},
		{"run", "--graph", "research", "--thread", "r2", "--input", "why?", "--attach", "s3://x"},
		{"approve", "r", "--graph", "research"},
	} {
		r := rewind(t, env, args...)
		if r.code != 2 || !strings.Contains(r.stderr, "graph research") {
			t.Errorf("%v: exit %d, %q; want a usage error naming graph research", args, r.code, r.stderr)
		}
	}
	r = rewind(t, env, "log", "r2")
	if r.code == 0 {
		t.Errorf("a refused run left thread r2 behind in %s:\n%s", path, r.stdout)
	}
}
