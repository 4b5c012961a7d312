package cli

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"rewind/store"
	"rewind/store/backend"
	"rewind/store/sqlite"
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
	t.Parallel()
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

// rm is a writer's act: a thread another process runs is refused, and
// --take-over fences that process out and deletes.
func TestRmRefusesALiveThread(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "r.db")
	db := "sqlite:" + path
	if code, out, stderr := run(t, "run", "--store", db, "--thread", "live", "--input", "where is SO1?"); code != ExitOK {
		t.Fatalf("run: %d %s %s", code, out, stderr)
	}
	st, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	release, err := st.Lock(context.Background(), "live") // a live writer
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	code, _, stderr := run(t, "rm", "--store", db, "live")
	if code != ExitFail || !strings.Contains(stderr, "--take-over") {
		t.Fatalf("rm of a live thread: exit %d, %q; want exit 1 naming --take-over", code, stderr)
	}
	if _, err := st.Latest(context.Background(), "live"); err != nil {
		t.Fatalf("the refused rm deleted the thread: %v", err)
	}
	if code, out, stderr := run(t, "rm", "--store", db, "live", "--take-over"); code != ExitOK || !strings.Contains(out, "deleted") {
		t.Fatalf("rm --take-over: exit %d %s %s", code, out, stderr)
	}
}

// approve and reject are writers: a thread another live process holds is
// refused (naming --take-over, on one line), and --take-over fences that
// process out, records the decision and carries on.
func TestAnswerHonoursTakeOver(t *testing.T) {
	t.Parallel()
	for _, op := range [][]string{{"approve"}, {"reject", "--reason", "wrong amount"}} {
		t.Run(op[0], func(t *testing.T) {
			eachStore(t, func(t *testing.T, db string) {
				ctx := context.Background()
				if code, out, stderr := run(t, "run", "--store", db, "--thread", "gate", "--input", "refund SO20260555 please", "--draft", "--auth-ttl", "1h"); code != ExitOK || !strings.Contains(out, "awaiting approval") {
					t.Fatalf("draft turn: exit %d\n%s%s", code, out, stderr)
				}
				st, err := backend.Open(ctx, db)
				if err != nil {
					t.Fatal(err)
				}
				defer st.Close()
				release, err := st.Lock(ctx, "gate") // a live (stuck) writer
				if err != nil {
					t.Fatal(err)
				}
				defer release()
				stale, err := st.Fence(ctx, "gate")
				if err != nil {
					t.Fatal(err)
				}
				args := append(append([]string{}, op...), "--store", db, "gate")
				code, _, stderr := run(t, args...)
				if code != ExitFail || !strings.HasSuffix(strings.TrimSpace(stderr), "--take-over") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
					t.Fatalf("%s of a held thread: exit %d, %q; want exit 1, one line ending with the fix, --take-over", op[0], code, stderr)
				}
				code, out, stderr := run(t, append(args, "--take-over")...)
				if code != ExitOK || !strings.Contains(out, "done at checkpoint") {
					t.Fatalf("%s --take-over: exit %d\n%s%s", op[0], code, out, stderr)
				}
				// The process it took over from is fenced out.
				err = st.PutWrites(ctx, store.TaskWrites{ThreadID: "gate", CheckpointID: 1, TaskID: "late", Writes: []byte(`{}`), Epoch: stale})
				if !errors.Is(err, store.ErrFenced) {
					t.Errorf("the taken-over writer's late write = %v, want ErrFenced", err)
				}
			})
		})
	}
}
