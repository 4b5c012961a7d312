package cli_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"rewind/store/sqlite"
)

// storedRows counts what a refused command must not change: the thread's
// checkpoints, stored task writes and events, read from the file.
func storedRows(t *testing.T, path, thread string) [3]int {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	h, err1 := st.History(ctx, thread, 0, 0)
	w, err2 := st.Writes(ctx, thread, 0)
	ev, err3 := st.Events(ctx, thread, 0)
	if err := errors.Join(err1, err2, err3); err != nil {
		t.Fatal(err)
	}
	return [3]int{len(h), len(w), len(ev)}
}

// Issue 36, item 2, through the binary: a run killed mid-turn in a
// session that expires before its resume is not resumed (one line naming
// the fix, nothing written); in a new session, a pending task whose
// record's access was withdrawn blocks the resume the same way; with
// access back, it resumes. Bad session input is one line too.
func TestSessionExpiringAfterAKillBlocksTheResume(t *testing.T) {
	t.Parallel()
	path, spec := dbSpec(t)
	env := []string{"REWIND_STORE=" + spec}
	// Far enough for the run to start and be killed inside the session
	// on a loaded CI machine (2 s was thin), near enough to wait out.
	expires := time.Now().Add(5 * time.Second).UTC().Format(time.RFC3339)
	// Killed at the first executor's model call: the executors are pending.
	r := rewind(t, env, "run", "--thread", "t", "--input", "Where is my parcel SO20260901?",
		"--session", "s1", "--session-expires", expires, "--kill-at", "before-model-call@2")
	if r.code == 0 {
		t.Fatalf("the run was not killed: %s", r.stdout)
	}
	exp, _ := time.Parse(time.RFC3339, expires)
	time.Sleep(time.Until(exp) + 100*time.Millisecond) // the session expires while the thread waits
	before := storedRows(t, path, "t")
	oneLine := func(what string, r result, code int, says ...string) {
		t.Helper()
		msg := strings.TrimSpace(r.stderr)
		if r.code != code || strings.Count(msg, "\n") != 0 {
			t.Errorf("%s: exit %d (want %d), stderr %q; want one line", what, r.code, code, msg)
		}
		for _, s := range says {
			if !strings.Contains(msg, s) {
				t.Errorf("%s: %q does not say %q", what, msg, s)
			}
		}
		if after := storedRows(t, path, "t"); after != before {
			t.Errorf("%s wrote: checkpoints, writes, events %v → %v", what, before, after)
		}
	}
	oneLine("resume in the expired session", rewind(t, env, "resume", "t"), 1, "session s1 expired", "nothing was run", "--session ID --session-expires T")
	oneLine("fork in the expired session", rewind(t, env, "fork", "t", "1", "--input", "hi"), 1, "session s1 expired")

	if r := rewind(t, env, "source", "withdraw", "shipments/SO20260901"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	oneLine("resume reading a withdrawn source", rewind(t, env, "resume", "t", "--session", "s2", "--session-expires", "1h"), 1,
		"would read shipments/SO20260901: access was withdrawn", "rewind source restore shipments/SO20260901")
	if r := rewind(t, env, "source", "restore", "shipments/SO20260901"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	if r := rewind(t, env, "resume", "t", "--session", "s2", "--session-expires", "1h"); r.code != 0 {
		t.Fatalf("resume in a valid session with access back: exit %d: %s", r.code, r.stderr)
	}

	before = storedRows(t, path, "t")
	oneLine("a new turn in a session already expired", rewind(t, env, "run", "--thread", "t", "--input", "thanks",
		"--session", "s3", "--session-expires", "2020-01-01T00:00:00Z"), 1, "session s3 expired")
	oneLine("--session without its expiry", rewind(t, env, "run", "--thread", "t", "--input", "thanks", "--session", "s3"), 2, "--session-expires")
	oneLine("an expiry that is no time", rewind(t, env, "resume", "t", "--session", "s3", "--session-expires", "soon"), 2, "RFC 3339")
}
