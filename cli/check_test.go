package cli

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"rewind/engine"
	"rewind/engine/ticket"
	"rewind/store/sqlite"
)

// check fidelity passes on what the summarizer stored and fails, naming
// the fact and what the summary says instead, once a summary changes an
// amount; the stored thread is left as it was.
func TestCheckFidelityPassesThenCatchesAnAlteredFact(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "f.db")
	db := "sqlite:" + path
	for _, in := range []string{"Where is my order SO20260901? I paid 49.95 EUR and want a refund.", "change the delivery address to my office"} {
		if code, out, stderr := run(t, "run", "--store", db, "--thread", "f", "--input", in); code != ExitOK {
			t.Fatalf("run: %d %s %s", code, out, stderr)
		}
	}
	code, out, stderr := run(t, "check", "fidelity", "--store", db, "f")
	if code != ExitOK || !strings.Contains(out, "PASS:") || !strings.Contains(out, "summary of #1–") {
		t.Fatalf("check fidelity on the mock's summary: %d\n%s%s", code, out, stderr)
	}

	ctx := context.Background()
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(st, ticket.NewGraph(), ticket.NewMock())
	if err != nil {
		t.Fatal(err)
	}
	head, err := e.Latest(ctx, "f")
	if err != nil {
		t.Fatal(err)
	}
	s, err := ticket.Decode(head.Values, "summary")
	if err != nil || s.Summary == nil || !strings.Contains(s.Summary.Text, "49.95 EUR") {
		t.Fatalf("no summary keeping 49.95 EUR to alter: %v %+v", err, s.Summary)
	}
	altered := *s.Summary
	altered.Text = strings.ReplaceAll(altered.Text, "49.95 EUR", "94.95 EUR")
	cp, err := e.UpdateState(ctx, "f", head.ID, []engine.Write{engine.Put("summary", altered)}, "")
	st.Close()
	if err != nil {
		t.Fatal(err)
	}

	code, out, stderr = run(t, "check", "fidelity", "--store", db, "f")
	if code != ExitFail || !strings.Contains(out, "altered  #1 user: 49.95 EUR (the summary says [94.95 EUR])") || !strings.Contains(out, "FAIL:") || !strings.Contains(stderr, "fidelity check failed") {
		t.Fatalf("check fidelity on an altered summary: %d\n%s%s", code, out, stderr)
	}
	code, out, _ = run(t, "check", "fidelity", "--store", db, "f", "--json")
	var got struct {
		Checkpoint int64 `json:"checkpoint"`
		Pass       bool  `json:"pass"`
		Report     struct {
			Counts struct{ Altered int } `json:"counts"`
		} `json:"report"`
	}
	if code != ExitFail || json.Unmarshal([]byte(out), &got) != nil || got.Pass || got.Report.Counts.Altered == 0 || got.Checkpoint != cp.ID {
		t.Fatalf("--json on an altered summary: %d %+v\n%s", code, got, out)
	}
	// The checkpoint before the edit still passes.
	if code, out, stderr := run(t, "check", "fidelity", "--store", db, "f", "@"+jsonNumber(head.ID)); code != ExitOK {
		t.Fatalf("check fidelity at the checkpoint before the edit: %d\n%s%s", code, out, stderr)
	}
}

func jsonNumber(n int64) string { b, _ := json.Marshal(n); return string(b) }

// rewind demo lists the lessons, and a lesson prepares its threads in the
// store given, prints its script and its verdict, and says how to open it.
func TestDemoLessonPreparesItsThreadsAndReachesItsVerdict(t *testing.T) {
	t.Parallel()
	code, out, stderr := run(t, "demo")
	if code != ExitOK || !strings.Contains(out, "summary ") || !strings.Contains(out, "stale-source") {
		t.Fatalf("demo: %d\n%s%s", code, out, stderr)
	}
	db := "sqlite:" + filepath.Join(t.TempDir(), "demo.db")
	code, out, stderr = run(t, "demo", "fork", "--store", db)
	if code != ExitOK || !strings.Contains(out, "LESSON fork") || !strings.Contains(out, "1. open lesson:fork") ||
		!strings.Contains(out, "PASS: with @1: 2 branches from @1") || !strings.Contains(out, "open it: rewind tui --store "+db+" lesson:fork") {
		t.Fatalf("demo fork: %d\n%s%s", code, out, stderr)
	}
	if code, out, stderr := run(t, "log", "--store", db, "lesson:fork"); code != ExitOK || !strings.Contains(out, "fork") {
		t.Fatalf("the lesson's thread is not in its store: %d\n%s%s", code, out, stderr)
	}
	code, out, _ = run(t, "demo", "summary", "--store", db, "--json")
	var got struct {
		Lesson  struct{ Name string }
		Verdict struct {
			Passed bool
			Line   string
		}
	}
	if code != ExitOK || json.Unmarshal([]byte(out), &got) != nil || !got.Verdict.Passed || got.Lesson.Name != "summary" {
		t.Fatalf("demo summary --json: %d %+v\n%s", code, got, out)
	}
	if code, _, stderr := run(t, "demo", "kill", "--store", "memory:"); code != ExitUsage || !strings.Contains(stderr, "kills real worker processes") {
		t.Fatalf("a process lesson on memory: %d %s", code, stderr)
	}
}
