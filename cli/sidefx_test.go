package cli_test

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// startDraft runs a turn on thread that stops at its draft's approval.
func startDraft(t *testing.T, env []string, thread string) {
	t.Helper()
	if r := rewind(t, env, "run", "--thread", thread, "--input", draftSentence, "--draft", "--auth-ttl", "1h"); r.code != 0 || !strings.Contains(r.stdout, "awaiting approval") {
		t.Fatalf("run --draft: %d %s %s", r.code, r.stdout, r.stderr)
	}
}

const draftSentence = "My order SO20260901 hasn't arrived yet: what is the order status, where is the parcel now, and can I get a refund if it is lost?"

// Issue 10, item 3, across processes: a record bumped by `rewind source
// bump` in one process is seen by the approving process, which blocks the
// draft and exits 1 naming the record and both versions; `show` lists the
// versions read and what they are now.
func TestSourceBumpInAnotherProcessBlocksTheDraft(t *testing.T) {
	t.Parallel()
	path, spec := dbSpec(t)
	env := []string{"REWIND_STORE=" + spec}
	startDraft(t, env, "s")
	if r := rewind(t, env, "source", "bump", "shipments/SO20260901"); r.code != 0 || r.stdout != "shipments/SO20260901: v1 → v2\n" {
		t.Fatalf("bump: %d %q %s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(path + ".sources.json"); err != nil {
		t.Fatalf("the versions are not beside the store: %v", err)
	}
	r := rewind(t, env, "approve", "s")
	if r.code != 1 || !strings.Contains(r.stderr, "shipments/SO20260901 v1 → v2") || !strings.Contains(r.stdout, "✗ blocked") {
		t.Fatalf("approve after the bump: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = rewind(t, env, "show", "s", "--json")
	var shown struct {
		RunStatus  struct{ Status string }
		SourcesNow map[string]int
		State      struct {
			SourceVersions map[string]int
			Operations     map[string]struct{ Status, Result string }
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &shown); err != nil {
		t.Fatalf("show --json: %v\n%s", err, r.stdout)
	}
	if shown.State.SourceVersions["shipments/SO20260901"] != 1 || shown.SourcesNow["shipments/SO20260901"] != 2 || shown.RunStatus.Status != "done" || len(shown.State.SourceVersions) != 3 {
		t.Fatalf("show: %+v", shown)
	}
	for _, op := range shown.State.Operations {
		if op.Status != "blocked" {
			t.Fatalf("operation %+v", op)
		}
	}
	text := rewind(t, env, "show", "s").stdout
	for _, want := range []string{"SOURCE VERSIONS", "shipments/SO20260901         v1 · changed since: now v2", "[read orders/SO20260901 v1]", "OPERATIONS", "built from"} {
		if !strings.Contains(text, want) {
			t.Errorf("show lacks %q:\n%s", want, text)
		}
	}
	r = rewind(t, env, "source", "--json")
	if r.code != 0 || !strings.Contains(r.stdout, `"version": 2`) {
		t.Fatalf("source --json: %d %s", r.code, r.stdout)
	}
	for _, bad := range [][]string{{"source", "bump", "SO20260901"}, {"source", "bump"}, {"source", "nowhere/x"}} {
		if r := rewind(t, env, bad...); r.code != 2 || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("rewind %v: exit %d %q, want a one-line usage error", bad, r.code, r.stderr)
		}
	}
	if r := rewind(t, nil, "source", "bump", "shipments/SO1", "--store", "memory:"); r.code != 2 || !strings.Contains(r.stderr, "REWIND_SOURCES") {
		t.Errorf("bump on memory: %d %s", r.code, r.stderr)
	}
}

// Issue 10, item 5, across processes: `rewind cancel` ends a run another
// process is in the middle of; that process's late result is refused, no
// resume revives the run, and a new turn starts a new one.
func TestCancelARunningProcess(t *testing.T) {
	t.Parallel()
	_, spec := dbSpec(t)
	env := []string{"REWIND_STORE=" + spec}
	cmd := exec.Command(binary, "run", "--thread", "c", "--input", "Where is the parcel for SO20260901 and can I get a refund?", "--mock-latency", "2s")
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	for sc.Scan() && !strings.Contains(sc.Text(), "▸ executor") {
	}
	r := rewind(t, env, "cancel", "c", "--reason", "the customer withdrew")
	if r.code != 0 || !strings.Contains(r.stdout, "cancelled the run of thread c") || !strings.Contains(r.stdout, "executor") {
		t.Fatalf("cancel: %d %s %s", r.code, r.stdout, r.stderr)
	}
	for sc.Scan() {
	}
	err = cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(stderr.String(), "late result is refused") {
		t.Fatalf("the cancelled run: %v\n%s", err, stderr.String())
	}
	r = rewind(t, env, "resume", "c")
	if r.code != 1 || !strings.Contains(r.stderr, "the run was cancelled at @") || !strings.Contains(r.stderr, "the customer withdrew") {
		t.Fatalf("resume: %d %s", r.code, r.stderr)
	}
	if r := rewind(t, env, "show", "c"); !strings.Contains(r.stdout, "run cancelled as of @") {
		t.Fatalf("show: %s", r.stdout)
	}
	if r := rewind(t, env, "cancel", "c"); r.code != 1 {
		t.Fatalf("cancel twice: %d %s", r.code, r.stderr)
	}
	if r := rewind(t, env, "run", "--thread", "c", "--input", "Only the refund for SO20260901, please."); r.code != 0 {
		t.Fatalf("a new turn after the cancel: %d %s", r.code, r.stderr)
	}
	if r := rewind(t, env, "cancel", "c"); r.code != 1 || !strings.Contains(r.stderr, "done at @") {
		t.Fatalf("cancel a done run: %d %s", r.code, r.stderr)
	}
}

// Issue 10, item 3: a resume after a record changed says what it re-reads,
// in text and in --json.
func TestResumeSaysWhatItReReads(t *testing.T) {
	t.Parallel()
	_, spec := dbSpec(t)
	env := []string{"REWIND_STORE=" + spec}
	for _, th := range []string{"text", "json"} {
		if r := rewind(t, env, "run", "--thread", th, "--input", draftSentence, "--interrupt-before", "summarizer"); r.code != 0 {
			t.Fatalf("run: %d %s", r.code, r.stderr)
		}
	}
	if r := rewind(t, env, "source", "bump", "shipments/SO20260901"); r.code != 0 {
		t.Fatalf("bump: %d %s", r.code, r.stderr)
	}
	r := rewind(t, env, "resume", "text")
	if r.code != 0 || !strings.Contains(r.stdout, "↻ sources changed since they were read: shipments/SO20260901 v1 → v2 (read by t-2-shipping); re-read: redispatched executor") {
		t.Fatalf("resume: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = rewind(t, env, "resume", "json", "--json")
	var rep struct {
		Rechecked struct {
			Reason     string
			Checkpoint int64
			Next       string
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || r.code != 0 || rep.Rechecked.Next != "executor" || rep.Rechecked.Checkpoint == 0 || !strings.Contains(rep.Rechecked.Reason, "v1 → v2") {
		t.Fatalf("resume --json: %d %v %+v\n%s", r.code, err, rep, r.stdout)
	}
}
