package cli_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"rewind/engine/model/openai/openaitest"
)

// --max-tokens-per-turn stops a run cleanly: exit 1 with one line naming
// the budget and the resume, everything stored; show sums the thread's
// tokens by role and turn; a resume without the flag finishes the turn.
func TestTokenBudgetThroughTheBinary(t *testing.T) {
	t.Parallel()
	_, spec := dbSpec(t)
	env := []string{"REWIND_STORE=" + spec}
	r := rewind(t, env, "run", "--thread", "b", "--input", "Where is SO20260901, and can I get a refund?", "--max-tokens-per-turn", "300")
	if r.code != 1 || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "token budget of 300") || !strings.HasSuffix(strings.TrimSpace(r.stderr), "carry on with `rewind resume b`, or with a larger --max-tokens-per-turn, or without it") || !strings.Contains(r.stdout, "stopped at checkpoint") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	show := rewind(t, env, "show", "b")
	for _, want := range []string{"run paused as of @", "token budget of 300", "TOKENS of the thread, all branches (each call once):", "  planner      1 call(s)",
		"  this branch (root to @", "  last turn (from @1):", "    planner      1 call(s)", "turn @1 ", "PENDING TASKS"} {
		if !strings.Contains(show.stdout, want) {
			t.Errorf("show lacks %q:\n%s", want, show.stdout)
		}
	}
	// threads: the run's status and its tokens, from the listings.
	var rows []struct {
		ID, Status, Reason string
		Tokens             struct {
			Total    struct{ PromptTokens, CompletionTokens int }
			LastTurn *struct {
				Start int64
				Total struct{ PromptTokens int }
			}
		}
	}
	mustDecode(t, rewind(t, env, "threads", "--json", "--tokens").stdout, &rows)
	if len(rows) != 1 || rows[0].Status != "paused" || !strings.Contains(rows[0].Reason, "token budget of 300") || rows[0].Tokens.Total.PromptTokens == 0 ||
		rows[0].Tokens.LastTurn == nil || rows[0].Tokens.LastTurn.Start != 1 || rows[0].Tokens.LastTurn.Total.PromptTokens != rows[0].Tokens.Total.PromptTokens {
		t.Fatalf("threads --json %+v", rows)
	}
	if out := rewind(t, env, "threads", "--tokens").stdout; !strings.Contains(out, "STATUS") || !strings.Contains(out, "LAST TURN IN/OUT") || !strings.Contains(out, " paused ") {
		t.Errorf("threads:\n%s", out)
	}
	// Without --tokens, threads reads only each thread's newest listing.
	if out := rewind(t, env, "threads").stdout; !strings.Contains(out, " paused ") || strings.Contains(out, "TOKENS") {
		t.Errorf("threads without --tokens:\n%s", out)
	}
	if r := rewind(t, env, "resume", "b", "--max-tokens-per-turn", "300"); r.code != 1 || !strings.Contains(r.stderr, "--max-tokens-per-turn") || strings.Contains(r.stdout, "model calls: 1") {
		t.Fatalf("resume under the same budget: exit %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r := rewind(t, env, "resume", "b"); r.code != 0 || !strings.Contains(r.stdout, "done at checkpoint") {
		t.Fatalf("resume: exit %d %s %s", r.code, r.stdout, r.stderr)
	}
	if out := rewind(t, env, "threads").stdout; !strings.Contains(out, " done ") {
		t.Errorf("threads after the resume:\n%s", out)
	}
	var js struct {
		Costs struct {
			Roles map[string]struct{ Calls, PromptTokens, CompletionTokens int }
			Turns []struct{ Start int64 }
		}
	}
	mustDecode(t, rewind(t, env, "show", "b", "--json").stdout, &js)
	if c := js.Costs.Roles["reply"]; c.Calls != 1 || c.CompletionTokens == 0 || len(js.Costs.Turns) != 1 || js.Costs.Turns[0].Start != 1 {
		t.Fatalf("show --json costs %+v", js.Costs)
	}
	if r := rewind(t, env, "run", "--thread", "c", "--input", "hi", "--max-tokens-per-turn", "-5"); r.code != 2 {
		t.Fatalf("a negative budget: exit %d %s", r.code, r.stderr)
	}
}

// The shipped demo replays through the binary, README's commands as
// written; show then sums the recorded tokens, the summarizer's too.
func TestShippedDemoReplaysThroughTheBinary(t *testing.T) {
	t.Parallel()
	_, spec := dbSpec(t)
	rec, err := filepath.Abs("../demo/recorded/ticket-1.json")
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"REWIND_STORE=" + spec, "REWIND_PROVIDER=openai"}
	for _, in := range []string{
		"My order SO20260901 hasn't arrived yet: what is the order status, where is the parcel now, and can I get a refund if it is lost?",
		"Thanks. What is the status of SO20260901 now, where is the parcel, and is the refund still possible?",
	} {
		if r := rewind(t, env, "run", "--thread", "class-1", "--input", in, "--replay", rec); r.code != 0 || !strings.Contains(r.stdout, "done at checkpoint") {
			t.Fatalf("turn %q: exit %d\n%s\n%s", in, r.code, r.stdout, r.stderr)
		}
	}
	show := rewind(t, env, "show", "class-1").stdout
	for _, want := range []string{"SUMMARY of #1–", "  summarizer   1 call(s)", "  planner      2 call(s)"} {
		if !strings.Contains(show, want) {
			t.Errorf("show lacks %q:\n%s", want, show)
		}
	}
}

// With a local server and no model named, the binary asks the server,
// uses its only model and says so; --json-mode reaches the requests and
// the events.
func TestLocalServerWithoutAModelThroughTheBinary(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(openaitest.TicketBrain)
	defer srv.Close()
	srv.SetModels([]string{"local-model"})
	_, spec := dbSpec(t)
	env := []string{"REWIND_STORE=" + spec, "REWIND_PROVIDER=openai", "OPENAI_BASE_URL=" + srv.BaseURL()}
	r := rewind(t, env, "run", "--thread", "l", "--input", "Where is SO20260901?", "--json-mode", "object")
	if r.code != 0 || !strings.Contains(r.stderr, `rewind: no model named for any role: using "local-model", the only model 127.0.0.1:`) {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	var evs []struct {
		Type string
		Data json.RawMessage
	}
	mustDecode(t, rewind(t, env, "events", "l", "--json").stdout, &evs)
	modes := ""
	for _, ev := range evs {
		var d struct{ Role, JSONMode string }
		if ev.Type == "model.called" && json.Unmarshal(ev.Data, &d) == nil && d.JSONMode != "" {
			modes += d.Role + "=" + d.JSONMode + " "
		}
	}
	if modes != "planner=object critic=object critic=object " {
		t.Errorf("modes in the events: %q", modes)
	}
	for _, q := range srv.Requests() {
		if q.Path == "/v1/chat/completions" && q.Model != "local-model" {
			t.Fatalf("a request for model %q", q.Model)
		}
	}
	srv.SetModels([]string{"a", "b"})
	if r := rewind(t, env, "run", "--thread", "m", "--input", "Where is SO20260901?"); r.code != 1 || !strings.Contains(r.stderr, `offers 2 models ("a", "b"): set OPENAI_MODEL`) || strings.Count(r.stderr, "\n") != 1 {
		t.Fatalf("two models: exit %d %s", r.code, r.stderr)
	}
	if r := rewind(t, []string{"REWIND_STORE=" + spec}, "run", "--thread", "m", "--input", "hi", "--json-mode", "object"); r.code != 2 || !strings.Contains(r.stderr, "--json-mode") {
		t.Fatalf("--json-mode with the mock: exit %d %s", r.code, r.stderr)
	}
}
