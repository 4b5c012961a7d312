package cli_test

import (
	"encoding/json"
	"strings"
	"testing"

	"rewind/cli"
	"rewind/engine"
)

// `rewind resume T --plan` prints what a resume would reuse and redispatch
// (the engine's ResumePlan) and runs nothing; after a real kill in the
// middle of a fan-out it names the one executor whose writes were stored,
// and the resume's report (text and --json) says it reused that one and
// redispatched the other two; `rewind runs` chains the three runs.
func TestResumePlanAfterKill(t *testing.T) {
	t.Parallel()
	for name, spec := range cli.SharedStores("resumeplan") {
		t.Run(name, func(t *testing.T) {
			db := spec(t)
			must := func(r result, code int, args ...string) result {
				t.Helper()
				if r.code != code {
					t.Fatalf("rewind %s: exit %d, want %d\n%s\n%s", strings.Join(args, " "), r.code, code, r.stdout, r.stderr)
				}
				return r
			}
			do := func(code int, args ...string) result {
				t.Helper()
				return must(rewind(t, nil, append(args, "--store", db)...), code, args...)
			}
			plan := func() engine.ResumePlan {
				t.Helper()
				var p engine.ResumePlan
				r := do(0, "resume", "t", "--plan", "--json")
				if err := json.Unmarshal([]byte(r.stdout), &p); err != nil {
					t.Fatalf("--plan --json: %v\n%s", err, r.stdout)
				}
				return p
			}
			do(0, "run", "--thread", "t", "--input", "Where is my order SO20260901? Can I get a refund?", "--interrupt-before", "executor")
			p := plan()
			if len(p.Tasks) != 3 || len(p.Reused()) != 0 {
				t.Fatalf("plan before any executor ran: %+v", p)
			}
			// The plan runs nothing: asked twice, it is the same.
			if again := plan(); again.Checkpoint != p.Checkpoint || len(again.Tasks) != 3 {
				t.Fatalf("--plan changed the thread: %+v then %+v", p, again)
			}
			r := do(-1, "resume", "t", "--kill-at", "mid-fanout")
			if !strings.Contains(r.stdout, "kill point mid-fanout reached") {
				t.Fatalf("the resume was not killed at mid-fanout:\n%s\n%s", r.stdout, r.stderr)
			}
			p = plan()
			if p.Checkpoint == 0 || len(p.Tasks) != 3 || len(p.Reused()) != 1 || len(p.Redispatched()) != 2 {
				t.Fatalf("plan after the kill: %+v, want 1 reused and 2 to redispatch", p)
			}
			text := do(0, "resume", "t", "--plan").stdout
			if !strings.Contains(text, "1 reused (writes stored), 2 to redispatch") || strings.Count(text, "redispatched, no writes stored") != 2 || strings.Count(text, "reused, writes stored") != 1 {
				t.Fatalf("--plan text:\n%s", text)
			}
			var rep struct {
				Status string `json:"status"`
				Resume *struct {
					Plan    engine.ResumePlan    `json:"plan"`
					Outcome engine.ResumeOutcome `json:"outcome"`
				} `json:"resume"`
			}
			out := do(0, "resume", "t", "--json").stdout
			if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.Resume == nil {
				t.Fatalf("resume --json has no resume report (%v):\n%s", err, out)
			}
			o := rep.Resume.Outcome
			if rep.Status != "done" || rep.Resume.Plan.Checkpoint != p.Checkpoint || !o.Complete || len(o.Reused) != 1 || o.Reused[0].ID != p.Reused()[0].ID || len(o.Redispatched) != 2 || len(o.RanAgain) != 0 {
				t.Fatalf("resume report: %s\n%s", o, out)
			}
			checkRunsAfterKill(t, do, p.Checkpoint)
		})
	}
}

// checkRunsAfterKill (issue 36): `rewind runs` names the killed resume,
// which stored no checkpoint but an executor's result, and the resume
// from @from that continued it and reused that result.
func checkRunsAfterKill(t *testing.T, do func(code int, args ...string) result, from int64) {
	t.Helper()
	var runs struct{ Runs []engine.RunSummary }
	if out := do(0, "runs", "t", "--json").stdout; json.Unmarshal([]byte(out), &runs) != nil || len(runs.Runs) != 3 {
		t.Fatalf("runs --json: want the turn, the killed resume and the resume:\n%s", out)
	}
	turn, killed, last := runs.Runs[0], runs.Runs[1], runs.Runs[2]
	if turn.Kind != engine.KindTurn || turn.Status != engine.RunPaused || killed.Status != engine.RunStopped || killed.Checkpoints != 0 ||
		last.Kind != engine.KindResume || last.Continues != killed.ID || last.From != from || last.Reused != 1 || last.Redispatched != 2 || last.Status != engine.RunDone {
		t.Fatalf("runs: %+v", runs.Runs)
	}
	text := do(0, "runs", "t").stdout
	for _, want := range []string{"run " + killed.ID + " from @", "stopped before it stored a checkpoint", "continued by " + last.ID,
		"run " + last.ID + " (resume) from @", "continues " + killed.ID, "reused 1 task result and redispatched 2, done at @"} {
		if !strings.Contains(text, want) {
			t.Errorf("runs does not say %q:\n%s", want, text)
		}
	}
	if r := do(1, "runs", "nosuch"); strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || !strings.Contains(r.stderr, "not found") {
		t.Errorf("runs of an unknown thread: %q", r.stderr)
	}
}
