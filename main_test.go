package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"rewind/store"
	"rewind/store/sqlite"
)

var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "rewind-bin")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "rewind")
	if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
		os.Stderr.Write(out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type result struct {
	code           int
	stdout, stderr string
}

// cli runs the real binary in its own process with a clean environment.
func cli(t *testing.T, env []string, args ...string) result {
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
	_, spec := dbSpec(t)
	r := cli(t, nil, "selftest", "--store", spec, "--json")
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
	h := cli(t, nil, "selftest", "--store", spec)
	if h.code != 0 || !strings.Contains(h.stdout, "5 passed, 0 failed") {
		t.Fatalf("human selftest: %d\n%s", h.code, h.stdout)
	}
}

// The same checks give byte-identical --json on every store (its figures
// hold no timestamps, and checkpoint ids are per-thread sequences).
func TestSelftestJSONIsTheSameOnEveryStore(t *testing.T) {
	_, spec := dbSpec(t)
	specs := []string{"memory:", spec}
	if pg := os.Getenv("REWIND_TEST_POSTGRES"); pg != "" {
		specs = append(specs, pg)
	} else if os.Getenv("CI") != "" {
		t.Fatal("CI must provide PostgreSQL: REWIND_TEST_POSTGRES is unset")
	} else {
		t.Log("REWIND_TEST_POSTGRES is unset: comparing memory and sqlite only")
	}
	var first result
	for i, s := range specs {
		r := cli(t, nil, "selftest", "--store", s, "--json")
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
	_, spec := dbSpec(t)
	env := []string{"REWIND_STORE=" + spec}
	r1 := cli(t, env, "run", "--thread", "ticket-1", "--input", "Where is my parcel for order SO20260901, what is the order status, and can I get a refund?", "--attach", "blob://tickets/2026/att-1.png", "--interrupt-before", "executor", "--json")
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
	r2 := cli(t, env, "resume", "ticket-1", "--json")
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
	if res.Status != "done" || res.ModelCalls["planner"] != 0 || res.Steps[0].ModelCalls["executor"] != 3 || len(res.Steps[0].ModelCalls) != 1 {
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
	mustDecode(t, cli(t, env, "show", "ticket-1", "--json").stdout, &show)
	copies := 0
	for _, m := range show.State.Messages {
		if strings.HasPrefix(m.Content, "Where is my parcel for order SO20260901") {
			copies++
		}
	}
	if copies != 1 {
		t.Fatalf("the input appears %d times after resume", copies)
	}
	again := cli(t, env, "resume", "ticket-1")
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
	return cli(t, env, "log", thread, "--json").stdout + cli(t, env, "events", thread, "--json").stdout
}

func TestBadInputGivesOneLineErrorAndLeavesDataAlone(t *testing.T) {
	path, spec := dbSpec(t)
	env := []string{"REWIND_STORE=" + spec}
	if r := cli(t, env, "run", "--thread", "t", "--input", "Where is my parcel SO20260901?", "--interrupt-before", "executor"); r.code != 0 {
		t.Fatalf("setup run: %s", r.stderr)
	}
	if r := cli(t, env, "run", "--thread", "other", "--input", "What is the order status of SO20260901?"); r.code != 0 {
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
		{"corrupt row", []string{"show", "corrupt"}, 1, "corrupt"},
		{"newer schema", []string{"resume", "newer"}, 1, "upgrade rewind"},
		{"unknown interrupt node", []string{"run", "--thread", "x", "--input", "hi", "--interrupt-before", "exector"}, 1, "the nodes are"},
		{"unknown command", []string{"frobnicate"}, 2, "rewind help"},
		{"unknown flag", []string{"log", "t", "--colour"}, 2, "flag provided but not defined"},
		{"bad mock role", []string{"run", "--thread", "x", "--input", "hi", "--mock-fail", "oracle"}, 2, "not a model role"},
		{"unknown store", []string{"threads", "--store", "mysql://x"}, 1, "memory:, sqlite:PATH or postgres://"},
	}
	if runtime.GOOS == "linux" && os.Geteuid() != 0 {
		cases = append(cases, struct {
			name string
			args []string
			code int
			want string
		}{"unwritable store path", []string{"threads", "--store", "sqlite:" + filepath.Join(unwritable, "sub", "x.db")}, 1, filepath.Join(unwritable, "sub")})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := cli(t, env, tc.args...)
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
	_, spec := dbSpec(t)
	env := []string{"REWIND_STORE=" + spec}
	hostile := "order SO20260901 status?\x1b]52;c;cm0gLXJmIC8=\x07\x1b[2J\u202eevil\r\u009b31m"
	if r := cli(t, env, "run", "--thread", "esc", "--input", hostile); r.code != 0 {
		t.Fatalf("run: %s", r.stderr)
	}
	r := cli(t, env, "show", "esc")
	for _, bad := range []string{"\x1b", "\x07", "\u202e", "\r", "\u009b"} {
		if strings.Contains(r.stdout, bad) {
			t.Errorf("show printed raw %q", bad)
		}
	}
	if !strings.Contains(r.stdout, `\x1b]52;c;`) || !strings.Contains(r.stdout, `\u202e`) {
		t.Errorf("escapes are not visible:\n%s", r.stdout)
	}
	// The stored text itself is kept exactly.
	j := cli(t, env, "show", "esc", "--json")
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
	_, spec := dbSpec(t)
	env := []string{"REWIND_STORE=" + spec}
	if r := cli(t, env, "run", "--thread", "f", "--input", "What is the order status of SO20260901 and where is the parcel?"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	r := cli(t, env, "fork", "f", "1", "--input", "Please send me the invoice for SO20260901.", "--json")
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
	lg := cli(t, env, "log", "f")
	if !strings.Contains(lg.stdout, "fork") || !strings.Contains(lg.stdout, "executor ×2") {
		t.Fatalf("log:\n%s", lg.stdout)
	}
	th := cli(t, env, "threads", "--json")
	if !strings.Contains(th.stdout, `"id": "f"`) {
		t.Fatalf("threads: %s", th.stdout)
	}
	if rm := cli(t, env, "rm", "f"); rm.code != 0 {
		t.Fatal(rm.stderr)
	}
	if gone := cli(t, env, "log", "f"); gone.code != 1 {
		t.Fatalf("log after rm: %d", gone.code)
	}
}

func TestBadPostgresURLNamesHostAndHidesPassword(t *testing.T) {
	// Port 1 on loopback: nothing listens, so the refusal is immediate.
	r := cli(t, nil, "threads", "--store", "postgres://rewind:s3cr3t-pass@127.0.0.1:1/ticketsdb?sslmode=disable")
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
	bad := cli(t, nil, "threads", "--store", "postgres://%zz@host/db")
	if bad.code != 1 || !strings.Contains(bad.stderr, "postgres://USER") {
		t.Errorf("malformed URL: %d %s", bad.code, bad.stderr)
	}
}
