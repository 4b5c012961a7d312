package cli

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A draft turn needs a grant: refused at the start, before anything runs.
func TestDraftWithoutAGrantIsRefused(t *testing.T) {
	db := "sqlite:" + filepath.Join(t.TempDir(), "r.db")
	for _, args := range [][]string{
		{"run", "--store", db, "--thread", "d", "--input", "refund SO1", "--draft"},
		{"run", "--store", db, "--thread", "d", "--input", "refund SO1", "--draft", "--auth-ttl", "-1h"},
	} {
		code, _, stderr := run(t, args...)
		if code != ExitUsage || !strings.Contains(stderr, "--auth-ttl") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line naming --auth-ttl", args, code, stderr)
		}
	}
	if code, out, _ := run(t, "threads", "--store", db); code != ExitOK || !strings.Contains(out, "no threads yet") {
		t.Errorf("a refused draft turn wrote a thread: %q", out)
	}
}

// An approval whose write is blocked (the grant expired while waiting) is
// not a success: exit 1, the reason printed, no draft made.
func TestBlockedApprovalExitsNonZero(t *testing.T) {
	db := "sqlite:" + filepath.Join(t.TempDir(), "r.db")
	code, out, stderr := run(t, "run", "--store", db, "--thread", "b", "--input", "refund SO20260555 please", "--draft", "--auth-ttl", "1s")
	if code != ExitOK || !strings.Contains(out, "awaiting approval") {
		t.Fatalf("draft turn: exit %d\n%s%s", code, out, stderr)
	}
	time.Sleep(1100 * time.Millisecond)
	code, out, stderr = run(t, "approve", "--store", db, "b")
	if code != ExitFail || !strings.Contains(out, "✗ blocked") || !strings.Contains(stderr, "expired") {
		t.Fatalf("approve after the grant expired: exit %d\nstdout %s\nstderr %s", code, out, stderr)
	}
}
