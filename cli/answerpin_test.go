package cli_test

import (
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"rewind/engine/ticket"
)

// waitingOp is the draft operation thread waits on.
func waitingOp(t *testing.T, env []string, thread string) string {
	t.Helper()
	for id, op := range operationsOf(t, env, thread) {
		if op.Status == "awaiting_approval" {
			return id
		}
	}
	t.Fatalf("thread %s waits on no draft", thread)
	return ""
}

// oneLine: exit code and a one-line stderr holding every want.
func oneLine(t *testing.T, r result, code int, wants ...string) {
	t.Helper()
	ok := r.code == code && strings.Count(strings.TrimSpace(r.stderr), "\n") == 0
	for _, w := range wants {
		ok = ok && strings.Contains(r.stderr, w)
	}
	if !ok {
		t.Fatalf("exit %d, want %d and one line with %q:\n%s%s", r.code, code, wants, r.stdout, r.stderr)
	}
}

// Issue 32, item 1: --op pins the draft the person reviewed. After a
// reject --redraft from elsewhere a new draft waits; approve
// --payload-file and reject with --op naming the reviewed one are refused
// in one line naming both, nothing recorded; with --op naming the waiting
// one the approval goes through with the file's text. --payload-file's
// errors name --payload-file (they said --input-file).
func TestAnswersPinTheReviewedDraftWithOp(t *testing.T) {
	t.Parallel()
	eachAnswerStore(t, func(t *testing.T, spec func(*testing.T) string) {
		db := spec(t)
		env := []string{"REWIND_STORE=" + db}
		startDraft(t, env, "P")
		reviewed := waitingOp(t, env, "P")
		if r := rewind(t, env, "reject", "P", "--reason", "say when it arrives", "--redraft", "--op", reviewed); r.code != 0 {
			t.Fatalf("reject --op of the waiting draft: %d %s %s", r.code, r.stdout, r.stderr)
		}
		now := waitingOp(t, env, "P")
		file := filepath.Join(t.TempDir(), "draft.txt")
		if err := os.WriteFile(file, []byte("Dear customer, it arrives Friday (edited).\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		oneLine(t, rewind(t, env, "approve", "P", "--payload-file", file, "--op", reviewed), 1,
			"the draft changed since it was looked at", now, reviewed, "nothing was approved: read it again, then answer: see `rewind show P`")
		oneLine(t, rewind(t, env, "reject", "P", "--reason", "no", "--op", reviewed), 1,
			"the draft changed since it was looked at", now, reviewed, "nothing was rejected")
		oneLine(t, rewind(t, append(env, "EDITOR=false"), "approve", "P", "--edit", "--op", reviewed), 1,
			"waits on draft "+now, "not on "+reviewed)
		if op := operationsOf(t, env, "P")[now]; op.Status != "awaiting_approval" || draftCount(t, db, "P") != 0 {
			t.Fatalf("after the refused answers %s is %+v, drafts %d", now, op, draftCount(t, db, "P"))
		}

		oneLine(t, rewind(t, env, "approve", "P", "--payload-file", filepath.Join(t.TempDir(), "missing.txt")), 2, "--payload-file")
		big := filepath.Join(t.TempDir(), "big.txt")
		if err := os.WriteFile(big, []byte(strings.Repeat("a", 70_000)), 0o600); err != nil {
			t.Fatal(err)
		}
		r := rewind(t, env, "approve", "P", "--payload-file", big)
		oneLine(t, r, 2, "the draft in "+big+" is longer than")
		if strings.Contains(r.stderr, "--input-file") || strings.Contains(r.stderr, "message") {
			t.Fatalf("--payload-file's error speaks of a message: %s", r.stderr)
		}

		if r := rewind(t, env, "approve", "P", "--payload-file", file, "--op", now); r.code != 0 {
			t.Fatalf("approve --op of the waiting draft: %d %s %s", r.code, r.stdout, r.stderr)
		}
		if op := operationsOf(t, env, "P")[now]; op.Status != "done" || draftCount(t, db, "P") != 1 {
			t.Fatalf("after the approval %s is %+v, drafts %d", now, op, draftCount(t, db, "P"))
		}
	})
}

// Issue 32, item 7: the v1 fixture's migrated draft (selftest:check5-v1,
// written by the release before, store-v8.db.gz) was written under no
// grant, so approving it alone is blocked. approve --auth-ttl gives it a
// grant with the answer, said on the way and named in the decision, and
// the draft is made. A draft that has a grant keeps it: --auth-ttl is
// refused there, nothing approved; and a grant of 0 is a usage error.
func TestApproveWithAuthTTLGrantsAMigratedV1Draft(t *testing.T) {
	t.Parallel()
	f, err := os.Open(filepath.Join("..", "store", "backend", "testdata", "upgrade", "store-v8.db.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "old.db")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"REWIND_STORE=sqlite:" + path}
	const thread = "selftest:check5-v1"
	// A read never upgrades a store: a command that writes (a turn on
	// another thread) brings it to this rewind's schema first.
	if r := rewind(t, env, "run", "--thread", "upgrade-first", "--input", "hello"); r.code != 0 {
		t.Fatalf("a turn that upgrades the store: %d %s", r.code, r.stderr)
	}
	op := waitingOp(t, env, thread)

	oneLine(t, rewind(t, env, "approve", thread, "--auth-ttl", "0s"), 2, "--auth-ttl", "longer than 0")
	r := rewind(t, env, "approve", thread, "--auth-ttl", "1h")
	if r.code != 0 || !strings.Contains(r.stdout, "+ grant "+ticket.GrantRef+" given to draft "+op+" by operator") {
		t.Fatalf("approve --auth-ttl: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	shown := rewind(t, env, "show", thread, "--json")
	var s struct {
		State struct {
			Approvals  map[string]ticket.Decision
			Operations map[string]ticket.Operation
		}
	}
	if err := json.Unmarshal([]byte(shown.stdout), &s); err != nil {
		t.Fatal(err)
	}
	if d := s.State.Approvals[op]; !d.Approved || d.Grant.Ref != ticket.GrantRef || d.Grant.ExpiresAt == "" || s.State.Operations[op].Status != ticket.OpDone {
		t.Fatalf("decision %+v, operation %+v: want the grant named in the decision and the draft done", d, s.State.Operations[op])
	}
	if n := draftCount(t, "sqlite:"+path, thread); n != 1 {
		t.Fatalf("%d drafts, want the v1 draft made", n)
	}

	startDraft(t, env, "G")
	own := waitingOp(t, env, "G")
	oneLine(t, rewind(t, env, "approve", "G", "--auth-ttl", "2h"), 1, "has its grant already", "approve without --auth-ttl", "nothing was approved")
	if op := operationsOf(t, env, "G")[own]; op.Status != "awaiting_approval" {
		t.Fatalf("the refused approval changed %s: %+v", own, op)
	}
}
