package engine_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"rewind/engine"
	"rewind/store/sqlite"
)

// hookChild is set in the child process TestAHookPanicInAProcess starts:
// "HOOK|PATH", the hook to panic and the SQLite file.
const hookChild = "REWIND_TEST_HOOK_PANIC"

// In a process of its own on SQLite, a hook that panics while the thread
// is locked (a resume's recheck and access check, a cancel's writes) ends
// the call with the panic's error, not a crash: the process exits as it
// chose to, the stored chain is what it was, and the thread is not left
// held: this process resumes it without taking it over.
func TestAHookPanicInAProcess(t *testing.T) {
	ctx := context.Background()
	if spec := os.Getenv(hookChild); spec != "" {
		hook, path, _ := strings.Cut(spec, "|")
		e, closeStore := sqliteHookEngine(t, path, hook, false)
		defer closeStore()
		var err error
		if hook == "OnCancel" {
			_, err = e.Cancel(ctx, "t", "stop")
		} else {
			_, err = e.Resume(ctx, "t", engine.RunConfig{})
		}
		t.Logf("CHILD ERROR: %v", err)
		return
	}
	path := filepath.Join(t.TempDir(), "s.db")
	e, closeStore := sqliteHookEngine(t, path, "", true)
	if _, err := e.Run(ctx, "t", input("user"), engine.RunConfig{}); err == nil {
		t.Fatal("the turn did not fail: nothing pending to resume")
	}
	before := chainOf(t, e)
	closeStore()
	for _, hook := range []string{"OnResume", "OnAccess", "OnCancel"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestAHookPanicInAProcess$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), hookChild+"="+hook+"|"+path)
		out, err := cmd.CombinedOutput()
		if err != nil || strings.Contains(string(out), "goroutine ") {
			t.Fatalf("%s: the child crashed: %v\n%s", hook, err, out)
		}
		if !strings.Contains(string(out), "CHILD ERROR: ") || !strings.Contains(string(out), "panicked: ") || !strings.Contains(string(out), "fix the "+hook) {
			t.Errorf("%s: the child's error does not name the panic and the hook:\n%s", hook, out)
		}
	}
	e, closeStore = sqliteHookEngine(t, path, "", false)
	defer closeStore()
	if after := chainOf(t, e); after != before {
		t.Errorf("the panics changed the stored chain:\nbefore %s\nafter  %s", before, after)
	}
	if res, err := e.Resume(ctx, "t", engine.RunConfig{}); err != nil || res.Status != "done" {
		t.Errorf("a resume after the panics: %v (%s), want done without a take-over", err, res.Status)
	}
}

// sqliteHookEngine is hookGraph's engine on the SQLite file at path, its
// hook panicking and its work failing as told, and how to close it.
func sqliteHookEngine(t *testing.T, path, hook string, fail bool) (*engine.Engine, func()) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	var panicking atomic.Value
	var failing atomic.Bool
	panicking.Store(hook)
	failing.Store(fail)
	return newTestEngine(t, st, hookGraph(&panicking, &failing)), func() { _ = st.Close() }
}
