// Tests that drive the built binary in processes of its own, as a script
// or a person would.
package cli_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"rewind/store/postgres/pgtest"
	"runtime"
	"strings"
	"testing"
	"time"

	"rewind/cli"
	"rewind/cli/rewindbin"
	"rewind/engine/ticket"
	"rewind/engine/worker"
	"rewind/store"
	"rewind/store/sqlite"
)

var binary string

func TestMain(m *testing.M) {
	var err error
	if binary, err = rewindbin.Build(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		rewindbin.Exit(1)
	}
	cli.SetBenchExe(binary) // not this test binary
	rewindbin.WaitMostly()  // the tests that drive the binary are parallel
	rewindbin.Exit(pgtest.Run(m))
}

type result struct {
	code           int
	stdout, stderr string
}

// rewind runs the real binary in its own process with a clean environment.
func rewind(t *testing.T, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{code, out.String(), errb.String()}
}

func dbSpec(t *testing.T) (string, string) {
	path := filepath.Join(t.TempDir(), "state", "rewind.db")
	return path, "sqlite:" + path
}

func TestSelftestPassesOnSQLite(t *testing.T) {
	t.Parallel()
	_, spec := dbSpec(t)
	r := rewind(t, nil, "selftest", "--store", spec, "--json")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	var out struct {
		Passed bool `json:"passed"`
		Checks []struct {
			N       int            `json:"n"`
			Passed  bool           `json:"passed"`
			Figures map[string]any `json:"figures"`
		} `json:"checks"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("selftest --json is not JSON: %v\n%s", err, r.stdout)
	}
	if !out.Passed || len(out.Checks) != 5 {
		t.Fatalf("selftest: %s", r.stdout)
	}
	for _, c := range out.Checks {
		if !c.Passed || len(c.Figures) == 0 {
			t.Errorf("check %d: passed %v, figures %v", c.N, c.Passed, c.Figures)
		}
	}
	// Human output ends with the plain tally line.
	h := rewind(t, nil, "selftest", "--store", spec)
	if h.code != 0 || !strings.Contains(h.stdout, "5 passed, 0 failed") {
		t.Fatalf("human selftest: %d\n%s", h.code, h.stdout)
	}
}

// The same checks give byte-identical --json on every store (its figures
// hold no timestamps, and checkpoint ids are per-thread sequences).
func TestSelftestJSONIsTheSameOnEveryStore(t *testing.T) {
	t.Parallel()
	_, spec := dbSpec(t)
	specs := []string{"memory:", spec}
	if pgtest.Available(t) {
		specs = append(specs, pgtest.Fresh(t, "rewind_selftest"))
	}
	var first result
	for i, s := range specs {
		r := rewind(t, nil, "selftest", "--store", s, "--json")
		if r.code != 0 {
			t.Fatalf("%s: exit %d\n%s", s, r.code, r.stderr)
		}
		if i == 0 {
			first = r
			continue
		}
		if r.stdout != first.stdout {
			t.Fatalf("%s differs from memory:\n%s\n---\n%s", s, first.stdout, r.stdout)
		}
	}
}

// The seed's check 2 across real processes: interrupt in one, resume in another.
func TestInterruptInOneProcessResumeInAnother(t *testing.T) {
	t.Parallel()
	_, spec := dbSpec(t)
	env := []string{"REWIND_STORE=" + spec}
	r1 := rewind(t, env, "run", "--thread", "ticket-1", "--input", "Where is my parcel for order SO20260901, what is the order status, and can I get a refund?", "--attach", "blob://tickets/2026/att-1.png", "--interrupt-before", "executor", "--json")
	if r1.code != 0 {
		t.Fatalf("run: %d %s", r1.code, r1.stderr)
	}
	var run struct {
		Checkpoint int64 `json:"checkpoint"`
		Status     string
		Pending    []struct{ Node string } `json:"pending"`
		ModelCalls map[string]int          `json:"modelCalls"`
	}
	mustDecode(t, r1.stdout, &run)
	if run.Status != "interrupted" || len(run.Pending) != 3 || run.ModelCalls["planner"] != 1 {
		t.Fatalf("run: %s", r1.stdout)
	}
	r2 := rewind(t, env, "resume", "ticket-1", "--json")
	if r2.code != 0 {
		t.Fatalf("resume: %d %s", r2.code, r2.stderr)
	}
	var res struct {
		Status         string         `json:"status"`
		ModelCalls     map[string]int `json:"modelCalls"`
		MessagesBefore int            `json:"messagesBefore"`
		MessagesAfter  int            `json:"messagesAfter"`
		Steps          []struct {
			ModelCalls map[string]int `json:"modelCalls"`
		} `json:"steps"`
	}
	mustDecode(t, r2.stdout, &res)
	if res.Status != "done" || res.ModelCalls["planner"] != 0 || res.Steps[0].ModelCalls["executor"] != 3*ticket.MockCallsPerSubtask || len(res.Steps[0].ModelCalls) != 1 {
		t.Fatalf("resume: %s", r2.stdout)
	}
	if res.MessagesBefore != 1 || res.MessagesAfter <= 1 {
		t.Fatalf("messages %d → %d", res.MessagesBefore, res.MessagesAfter)
	}
	var show struct {
		State struct {
			Messages []struct{ Content string } `json:"messages"`
		} `json:"state"`
	}
	mustDecode(t, rewind(t, env, "show", "ticket-1", "--json").stdout, &show)
	copies := 0
	for _, m := range show.State.Messages {
		if strings.HasPrefix(m.Content, "Where is my parcel for order SO20260901") {
			copies++
		}
	}
	if copies != 1 {
		t.Fatalf("the input appears %d times after resume", copies)
	}
	again := rewind(t, env, "resume", "ticket-1")
	if again.code != 1 || !strings.Contains(again.stderr, "nothing to resume") {
		t.Fatalf("second resume: %d %s", again.code, again.stderr)
	}
}

func mustDecode(t *testing.T, s string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, s)
	}
}

// snapshot is everything a user could read about a thread.
func snapshot(t *testing.T, env []string, thread string) string {
	t.Helper()
	return rewind(t, env, "log", thread, "--json").stdout + rewind(t, env, "events", thread, "--json").stdout
}

func TestBadInputGivesOneLineErrorAndLeavesDataAlone(t *testing.T) {
	t.Parallel()
	path, spec := dbSpec(t)
	env := []string{"REWIND_STORE=" + spec}
	if r := rewind(t, env, "run", "--thread", "t", "--input", "Where is my parcel SO20260901?", "--interrupt-before", "executor"); r.code != 0 {
		t.Fatalf("setup run: %s", r.stderr)
	}
	if r := rewind(t, env, "run", "--thread", "other", "--input", "What is the order status of SO20260901?"); r.code != 0 {
		t.Fatalf("setup run: %s", r.stderr)
	}
	// Plant a corrupt row and a checkpoint from a newer rewind.
	ctx := context.Background()
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	for thread, doc := range map[string]string{"corrupt": `{"schemaVersion":2,"values":{},"tasks":"not a list"}`, "newer": `{"schemaVersion":99,"values":{}}`} {
		if err := st.PutCheckpoint(ctx, store.Checkpoint{ThreadID: thread, ID: 1, State: []byte(doc)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	before := snapshot(t, env, "t") + snapshot(t, env, "other")

	unwritable := filepath.Join(t.TempDir(), "ro")
	if err := os.MkdirAll(unwritable, 0o500); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unknown thread", []string{"resume", "nope"}, 1, "rewind threads"},
		{"unknown thread log", []string{"log", "nope"}, 1, "rewind threads"},
		{"unknown checkpoint", []string{"show", "t", "99"}, 1, "rewind log t"},
		{"checkpoint of another thread", []string{"fork", "t", "7", "--input", "x"}, 1, "rewind log t"},
		{"not a checkpoint id", []string{"show", "t", "abc"}, 2, "rewind log THREAD"},
		{"empty input", []string{"run", "--thread", "t", "--input", "  "}, 2, "--input"},
		{"missing thread", []string{"run", "--input", "hi"}, 2, "--thread"},
		{"resume with input", []string{"resume", "t", "--input", "again"}, 2, "resume takes no input"},
		{"fork without input", []string{"fork", "t", "2"}, 2, "fork needs --input"},
		{"new turn with pending tasks", []string{"run", "--thread", "t", "--input", "more"}, 1, "rewind resume t"},
		{"corrupt row", []string{"show", "corrupt"}, 1, "delete the thread with `rewind rm corrupt`"},
		{"newer schema", []string{"resume", "newer"}, 1, "upgrade rewind"},
		{"unknown interrupt node", []string{"run", "--thread", "x", "--input", "hi", "--interrupt-before", "exector"}, 2, "the nodes are"},
		{"unknown interrupt-after node", []string{"resume", "t", "--interrupt-after", "critc"}, 2, "--interrupt-after critc: no such node; the nodes are"},
		{"unknown command", []string{"frobnicate"}, 2, "rewind help"},
		{"unknown flag", []string{"log", "t", "--colour"}, 2, "flag provided but not defined"},
		{"bad mock role", []string{"run", "--thread", "x", "--input", "hi", "--mock-fail", "oracle"}, 2, "not a model role"},
		{"unknown store", []string{"threads", "--store", "mysql://x"}, 1, "memory:, sqlite:PATH or postgres://"},
		{"sqlite in memory", []string{"threads", "--store", "sqlite:?mode=memory"}, 1, "use memory:"},
		{"prune without a rule", []string{"prune", "t"}, 2, "--keep-last N"},
		{"prune keeping none", []string{"prune", "t", "--keep-last", "0"}, 2, "at least 1"},
		{"prune keep-last not a number", []string{"prune", "t", "--keep-last", "ten"}, 2, "at least 1"},
		{"prune bad duration", []string{"prune", "t", "--older-than", "30d"}, 2, "720h"},
		{"prune negative duration", []string{"prune", "t", "--older-than", "-1h"}, 2, "720h"},
		{"prune thread and --all", []string{"prune", "t", "--all", "--keep-last", "1"}, 2, "not both"},
		{"prune no thread", []string{"prune", "--keep-last", "1"}, 2, "--all"},
		{"prune unknown thread", []string{"prune", "nope", "--keep-last", "1"}, 1, "rewind threads"},
	}
	if runtime.GOOS == "linux" && os.Geteuid() != 0 {
		cases = append(cases, struct {
			name string
			args []string
			code int
			want string
		}{"unwritable store path", []string{"run", "--thread", "x", "--input", "hi", "--store", "sqlite:" + filepath.Join(unwritable, "sub", "x.db")}, 1, filepath.Join(unwritable, "sub")})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := rewind(t, env, tc.args...)
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", r.code, tc.code, r.stdout, r.stderr)
			}
			msg := strings.TrimSpace(r.stderr)
			if strings.Count(msg, "\n") != 0 || !strings.HasPrefix(msg, "rewind: ") {
				t.Errorf("want one line starting with \"rewind: \", got %q", msg)
			}
			if !strings.Contains(msg, tc.want) {
				t.Errorf("error %q does not name the fix %q", msg, tc.want)
			}
			if strings.Contains(msg, "panic") || strings.Contains(msg, "goroutine") {
				t.Errorf("panic: %s", msg)
			}
		})
	}
	if after := snapshot(t, env, "t") + snapshot(t, env, "other"); after != before {
		t.Fatal("a refused command changed stored data")
	}
}

func TestEscapeSequencesArePrintedHarmless(t *testing.T) {
	t.Parallel()
	_, spec := dbSpec(t)
	env := []string{"REWIND_STORE=" + spec}
	hostile := "order SO20260901 status?\x1b]52;c;cm0gLXJmIC8=\x07\x1b[2J\u202eevil\r\u009b31m"
	if r := rewind(t, env, "run", "--thread", "esc", "--input", hostile); r.code != 0 {
		t.Fatalf("run: %s", r.stderr)
	}
	r := rewind(t, env, "show", "esc")
	for _, bad := range []string{"\x1b", "\x07", "\u202e", "\r", "\u009b"} {
		if strings.Contains(r.stdout, bad) {
			t.Errorf("show printed raw %q", bad)
		}
	}
	if !strings.Contains(r.stdout, "␛]52;c;") || !strings.Contains(r.stdout, "⟨U+202E⟩") {
		t.Errorf("escapes are not visible:\n%s", r.stdout)
	}
	// The stored text itself is kept exactly.
	j := rewind(t, env, "show", "esc", "--json")
	var out struct {
		State struct {
			Messages []struct{ Content string } `json:"messages"`
		} `json:"state"`
	}
	mustDecode(t, j.stdout, &out)
	if out.State.Messages[0].Content != hostile {
		t.Fatalf("stored text changed: %q", out.State.Messages[0].Content)
	}
}

func TestForkAndLog(t *testing.T) {
	t.Parallel()
	_, spec := dbSpec(t)
	env := []string{"REWIND_STORE=" + spec}
	if r := rewind(t, env, "run", "--thread", "f", "--input", "What is the order status of SO20260901 and where is the parcel?"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	r := rewind(t, env, "fork", "f", "1", "--input", "Please send me the invoice for SO20260901.", "--json")
	if r.code != 0 {
		t.Fatal(r.stderr)
	}
	var fork struct {
		Start  int64  `json:"start"`
		Status string `json:"status"`
	}
	mustDecode(t, r.stdout, &fork)
	if fork.Start != 1 || fork.Status != "done" {
		t.Fatalf("fork: %s", r.stdout)
	}
	lg := rewind(t, env, "log", "f")
	if !strings.Contains(lg.stdout, "fork") || !strings.Contains(lg.stdout, "executor ×2") {
		t.Fatalf("log:\n%s", lg.stdout)
	}
	th := rewind(t, env, "threads", "--json")
	if !strings.Contains(th.stdout, `"id": "f"`) {
		t.Fatalf("threads: %s", th.stdout)
	}
	if rm := rewind(t, env, "rm", "f"); rm.code != 0 {
		t.Fatal(rm.stderr)
	}
	if gone := rewind(t, env, "log", "f"); gone.code != 1 {
		t.Fatalf("log after rm: %d", gone.code)
	}
}

func TestBadPostgresURLNamesHostAndHidesPassword(t *testing.T) {
	t.Parallel()
	// Port 1 on loopback: nothing listens, so the refusal is immediate.
	r := rewind(t, nil, "threads", "--store", "postgres://rewind:s3cr3t-pass@127.0.0.1:1/ticketsdb?sslmode=disable")
	if r.code != 1 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	msg := r.stderr
	if !strings.Contains(msg, "127.0.0.1:1") || !strings.Contains(msg, "ticketsdb") {
		t.Errorf("error does not name host and database: %s", msg)
	}
	if strings.Contains(msg, "s3cr3t-pass") {
		t.Errorf("error leaks the password: %s", msg)
	}
	if strings.Count(strings.TrimSpace(msg), "\n") != 0 {
		t.Errorf("not one line: %q", msg)
	}
	bad := rewind(t, nil, "threads", "--store", "postgres://%zz@host/db")
	if bad.code != 1 || !strings.Contains(bad.stderr, "postgres://USER") {
		t.Errorf("malformed URL: %d %s", bad.code, bad.stderr)
	}
}

type logRow struct {
	ID           int64 `json:"id"`
	Parent       int64 `json:"parent"`
	RerootedFrom int64 `json:"rerootedFrom"`
	Next         []struct {
		Node string `json:"node"`
	} `json:"next"`
}

func logOf(t *testing.T, env []string, thread string) []logRow {
	t.Helper()
	r := rewind(t, env, "log", thread, "--json")
	if r.code != 0 {
		t.Fatalf("log %s: %d %s", thread, r.code, r.stderr)
	}
	var out struct {
		Checkpoints []logRow `json:"checkpoints"`
	}
	mustDecode(t, r.stdout, &out)
	return out.Checkpoints
}

// stateOf is a checkpoint's state as `rewind show --json` gives it.
func stateOf(t *testing.T, env []string, thread string, id int64) string {
	t.Helper()
	r := rewind(t, env, "show", thread, fmt.Sprint(id), "--json")
	if r.code != 0 {
		t.Fatalf("show %s %d: %d %s", thread, id, r.code, r.stderr)
	}
	var out struct {
		State json.RawMessage `json:"state"`
	}
	mustDecode(t, r.stdout, &out)
	return string(out.State)
}

type pruneOut struct {
	DryRun   bool    `json:"dryRun"`
	Pruned   []int64 `json:"pruned"`
	Kept     int     `json:"kept"`
	Rerooted []struct {
		ID   int64 `json:"id"`
		From int64 `json:"from"`
	} `json:"rerooted"`
	Events int `json:"events"`
}

// Prune on a sqlite file: a thread with a fork whose branch point goes
// (older-than), then all but the newest few (keep-last), with a paused
// head that still resumes. Dry runs change nothing; kept checkpoints read
// back as they were.
func TestPrune(t *testing.T) {
	t.Parallel()
	path, spec := dbSpec(t)
	env := []string{"REWIND_STORE=" + spec}
	for _, args := range [][]string{
		{"run", "--thread", "t", "--input", "Where is my parcel for order SO20260901?"},
		{"fork", "t", "2", "--input", "Please send me the invoice for SO20260901."},
		{"run", "--thread", "t", "--input", "And what is the refund status of SO20260901?", "--interrupt-before", "executor"},
		{"run", "--thread", "other", "--input", "What is the order status of SO20260901?"},
	} {
		if r := rewind(t, env, args...); r.code != 0 {
			t.Fatalf("%v: %s", args, r.stderr)
		}
	}
	before := logOf(t, env, "t")
	byID := map[int64]logRow{}
	var forkID int64
	for _, row := range before {
		byID[row.ID] = row
		if row.Parent == 2 && row.ID != 3 {
			forkID = row.ID
		}
	}
	head := before[len(before)-1]
	if byID[3].Parent != 2 || forkID == 0 || len(head.Next) == 0 {
		t.Fatalf("setup: want 3 and a fork as children of 2 and a paused head, got %+v", before)
	}
	states := map[int64]string{}
	for _, id := range []int64{3, forkID, head.ID} {
		states[id] = stateOf(t, env, "t", id)
	}
	other := snapshot(t, env, "other")

	// Age checkpoints 1 and 2 by two days: older-than 24h prunes them
	// and re-roots both children of the branch point.
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE graph_checkpoints SET created_at = created_at - ? WHERE thread_id = 't' AND checkpoint_id <= 2`,
		(48 * time.Hour).Microseconds()); err != nil {
		t.Fatal(err)
	}
	db.Close()

	unchanged := snapshot(t, env, "t")
	dry := rewind(t, env, "prune", "t", "--older-than", "24h", "--dry-run", "--json")
	if dry.code != 0 {
		t.Fatalf("dry run: %d %s", dry.code, dry.stderr)
	}
	var plan pruneOut
	mustDecode(t, dry.stdout, &plan)
	if !plan.DryRun || fmt.Sprint(plan.Pruned) != "[1 2]" || fmt.Sprint(plan.Rerooted) != fmt.Sprintf("[{3 2} {%d 2}]", forkID) {
		t.Fatalf("dry run plan: %s", dry.stdout)
	}
	if human := rewind(t, env, "prune", "t", "--older-than", "24h", "--dry-run"); !strings.HasPrefix(human.stdout, "would prune 2 checkpoint(s) of thread t;") {
		t.Errorf("dry run says %q", human.stdout)
	}
	if snapshot(t, env, "t") != unchanged {
		t.Fatal("a dry run changed the thread")
	}

	r := rewind(t, env, "prune", "t", "--older-than", "24h")
	want := fmt.Sprintf("pruned 2 checkpoint(s) of thread t; re-rooted @3 (was child of @2), @%d (was child of @2); %d kept\n", forkID, len(before)-2)
	if r.code != 0 || r.stdout != want {
		t.Fatalf("prune --older-than: exit %d\n%q\nwant %q\n%s", r.code, r.stdout, want, r.stderr)
	}
	after := logOf(t, env, "t")
	if len(after) != len(before)-2 || after[0].ID != 3 {
		t.Fatalf("after prune, log starts at %d with %d checkpoints, want 3 with %d", after[0].ID, len(after), len(before)-2)
	}
	for _, row := range after {
		wantRow := byID[row.ID]
		if row.ID == 3 || row.ID == forkID {
			wantRow.Parent, wantRow.RerootedFrom = 0, 2
		}
		if row.Parent != wantRow.Parent || row.RerootedFrom != wantRow.RerootedFrom {
			t.Errorf("checkpoint %d: parent %d, rerooted from %d; want %d, %d", row.ID, row.Parent, row.RerootedFrom, wantRow.Parent, wantRow.RerootedFrom)
		}
	}
	lg := rewind(t, env, "log", "t").stdout
	for _, id := range []int64{3, forkID} {
		if !regexp.MustCompile(fmt.Sprintf(`(?m)^%d\s+pruned \(was @2\)\s`, id)).MatchString(lg) {
			t.Errorf("log does not show %d as `pruned (was @2)`:\n%s", id, lg)
		}
	}
	for id, st := range states {
		if got := stateOf(t, env, "t", id); got != st {
			t.Errorf("checkpoint %d reads back differently after prune", id)
		}
	}
	if ev := rewind(t, env, "events", "t", "2"); ev.code != 1 || !strings.Contains(ev.stderr, "rewind log t") {
		t.Errorf("events of a pruned checkpoint: %d %s", ev.code, ev.stderr)
	}

	// Keep the newest 3: the old branch's finished tip goes too.
	r = rewind(t, env, "prune", "t", "--keep-last", "3", "--json")
	var kept pruneOut
	mustDecode(t, r.stdout, &kept)
	if r.code != 0 || kept.DryRun || len(kept.Pruned) != len(before)-5 || kept.Kept != 3 || kept.Events == 0 ||
		fmt.Sprint(kept.Rerooted) != fmt.Sprintf("[{%d %d}]", head.ID-2, head.ID-3) {
		t.Fatalf("prune --keep-last 3: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if ids := logOf(t, env, "t"); len(ids) != 3 || ids[0].ID != head.ID-2 || ids[2].ID != head.ID {
		t.Fatalf("after keep-last 3: %+v", ids)
	}
	if got := stateOf(t, env, "t", head.ID); got != states[head.ID] {
		t.Error("the paused head reads back differently after prune")
	}
	if r := rewind(t, env, "prune", "t", "--keep-last", "3"); r.code != 0 || !strings.HasPrefix(r.stdout, "nothing to prune on thread t") {
		t.Errorf("second prune: %d %q %s", r.code, r.stdout, r.stderr)
	}

	// The paused head resumes: exactly its pending executors run.
	res := rewind(t, env, "resume", "t", "--json")
	var resumed struct {
		Status string `json:"status"`
		Start  int64  `json:"start"`
		Steps  []struct {
			ModelCalls map[string]int `json:"modelCalls"`
		} `json:"steps"`
	}
	mustDecode(t, res.stdout, &resumed)
	if res.code != 0 || resumed.Status != "done" || resumed.Start != head.ID || resumed.Steps[0].ModelCalls["executor"] != len(head.Next)*ticket.MockCallsPerSubtask {
		t.Fatalf("resume after prune: %d %s %s", res.code, res.stdout, res.stderr)
	}

	// --all: every thread; a dry run still changes nothing.
	unchanged = snapshot(t, env, "t") + snapshot(t, env, "other")
	all := rewind(t, env, "prune", "--all", "--keep-last", "1", "--dry-run")
	if all.code != 0 || !strings.Contains(all.stdout, "of thread t;") || !strings.Contains(all.stdout, "of thread other;") {
		t.Fatalf("prune --all --dry-run: %d %s %s", all.code, all.stdout, all.stderr)
	}
	if snapshot(t, env, "t")+snapshot(t, env, "other") != unchanged {
		t.Fatal("a dry run of --all changed data")
	}
	if snapshot(t, env, "other") != other {
		t.Error("pruning thread t changed thread other")
	}
}

func TestPruneIsDocumented(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile("(?m)^\\| `rewind prune ").Match(readme) {
		t.Error("README's CLI table has no `rewind prune` row")
	}
	if help := rewind(t, nil, "help").stdout; !strings.Contains(help, "rewind prune") {
		t.Errorf("`rewind help` does not list prune:\n%s", help)
	}
}

func TestCommandsOnAnUnknownThreadLeaveNoTrace(t *testing.T) {
	t.Parallel()
	_, spec := dbSpec(t)
	env := []string{"REWIND_STORE=" + spec}
	for _, args := range [][]string{{"resume", "ghost"}, {"fork", "ghost", "1", "--input", "x"}, {"discard", "ghost"}, {"approve", "ghost"}} {
		if r := rewind(t, env, args...); r.code != 1 || !strings.Contains(r.stderr, "rewind threads") {
			t.Errorf("%v: exit %d %s", args, r.code, r.stderr)
		}
	}
	if r := rewind(t, env, "rm", "ghost"); r.code != 1 || !strings.Contains(r.stderr, "not found") {
		t.Fatalf("rm of a thread that never existed: exit %d %s%s", r.code, r.stdout, r.stderr)
	}
}

func TestHelpNamesEveryKillPoint(t *testing.T) {
	t.Parallel()
	r := rewind(t, nil, "help")
	for _, p := range worker.Points {
		if !strings.Contains(r.stdout, string(p.Name)) {
			t.Errorf("`rewind help` does not name kill point %q", p.Name)
		}
	}
}

// A generic point on the ticket's nodes kills where its name says: killed
// before the critic's task ran, the executors' superstep is committed and
// the resume has the critic alone to run, with no writes of it stored.
func TestGenericKillPointOnTheTicket(t *testing.T) {
	t.Parallel()
	_, spec := dbSpec(t)
	env := []string{"REWIND_STORE=" + spec}
	r := rewind(t, env, "run", "--thread", "t", "--input", "Where is my parcel for order SO20260901?", "--kill-at", "before:critic")
	if !strings.Contains(r.stdout, "kill point before:critic reached") {
		t.Fatalf("run --kill-at before:critic: exit %d, %s%s", r.code, r.stdout, r.stderr)
	}
	r = rewind(t, env, "resume", "t", "--plan")
	if r.code != 0 || !strings.Contains(r.stdout, "1 pending task(s): 0 reused") || !strings.Contains(r.stdout, "○ critic") {
		t.Errorf("resume --plan after the kill: exit %d, %s%s; want the critic alone, redispatched", r.code, r.stdout, r.stderr)
	}
}

// On a terminal, rewind log of a long thread lists a screenful of its
// newest checkpoints and says how to list them all (issue 31: a 5,000-turn
// thread took 1.5 s to print whole); piped, it lists every one.
func TestLogOnATerminalListsAScreenful(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed: the terminal case is not tested")
	}
	db := "sqlite:" + filepath.Join(t.TempDir(), "s.db")
	for i := range 5 { // 40 checkpoints: more than a 24-line screen
		if r := rewind(t, nil, "run", "--store", db, "--thread", "s", "--input", fmt.Sprintf("Where is SO2026090%d?", i)); r.code != 0 {
			t.Fatalf("run: %d %s %s", r.code, r.stdout, r.stderr)
		}
	}
	if r := rewind(t, nil, "log", "--store", db, "s"); r.code != 0 || strings.Count(r.stdout, "\n") != 41 {
		t.Fatalf("log piped: exit %d, want all 40 checkpoints:\n%s", r.code, r.stdout)
	}
	tmux, sock := tmuxServer(t, "log")
	tmux("new-session", "-d", "-x", "120", "-y", "24", "-s", "log", binary+" log s --store "+db+"; tmux -L "+sock+" wait-for -S logged; sleep 60")
	tmux("wait-for", "logged")
	screen := tmux("capture-pane", "-p", "-t", "log")
	lines := strings.Split(strings.TrimRight(screen, "\n"), "\n")
	if len(lines) != 23 || !strings.HasPrefix(lines[1], "21 ") || !strings.HasPrefix(lines[20], "40 ") ||
		!strings.Contains(screen, "earlier checkpoints from @20 down") || !strings.Contains(screen, "every checkpoint: rewind log s -n 0") {
		t.Fatalf("log on a 24-line terminal: want the newest 20 and how to list them all:\n%s", screen)
	}
}

// tmuxServer is a tmux server of the test's own (its socket, killed when
// the test ends) and a function that runs a tmux command on it, failing
// the test on an error.
func tmuxServer(t *testing.T, name string) (tmux func(args ...string) string, sock string) {
	sock = fmt.Sprintf("rewind-%s-%d", name, os.Getpid())
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", sock, "kill-server").Run() })
	return func(args ...string) string {
		t.Helper()
		out, err := exec.Command("tmux", append([]string{"-L", sock}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return string(out)
	}, sock
}
