package storetest

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"rewind/store"
)

// Watch (capability Watch, store.Watcher): a waiter wakes when a new
// checkpoint of its thread commits, from this handle or another, and not
// for a put that stored nothing, nor for another thread.

// wakeGuard bounds a wait that must end; it is a guard against a hang, not
// a measure of speed (SQLite polls every 200 ms).
const wakeGuard = 10 * time.Second

// quiet is how long a watcher is given to wake when it must not: waking
// late would still be caught by the next put's wake-up check (see
// wantQuiet).
const quiet = 600 * time.Millisecond

func watcher(t *testing.T, s store.Store) store.Watcher {
	t.Helper()
	w, ok := s.(store.Watcher)
	if !ok {
		t.Fatalf("%T declares %s but is no store.Watcher", s, Watch)
	}
	return w
}

func watch(t *testing.T, s store.Store, thread string) <-chan struct{} {
	t.Helper()
	c, err := watcher(t, s).Watch(t.Context(), thread)
	if err != nil {
		t.Fatalf("Watch(%s): %v", clip(thread), err)
	}
	return c
}

func wantWake(t *testing.T, c <-chan struct{}, what string) {
	t.Helper()
	select {
	case _, ok := <-c:
		if !ok {
			t.Fatalf("%s: the watch channel was closed", what)
		}
	case <-time.After(wakeGuard):
		t.Fatalf("%s: the watcher never woke", what)
	}
}

// wantQuiet wants no wake-up for a while. A wake-up that came later than
// that would still sit in the channel: the caller's next wantWake after
// drain catches it, since drain empties the channel first.
func wantQuiet(t *testing.T, c <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-c:
		t.Fatalf("%s woke the watcher", what)
	case <-time.After(quiet):
	}
}

func testWatch(t *testing.T, s store.Store) {
	ctx := t.Context()
	c := watch(t, s, "t")
	other := watch(t, s, "u")
	put(t, s, checkpoint("t", 1, 0))
	wantWake(t, c, "a new checkpoint")
	put(t, s, checkpoint("t", 2, 1))
	put(t, s, checkpoint("t", 3, 2))
	wantWake(t, c, "two new checkpoints")
	wantQuiet(t, other, "checkpoints of another thread")
	// Wake-ups coalesce: at most one is left after the last put.
	select {
	case <-c:
	default:
	}
	wantQuiet(t, c, "nothing")

	// Puts that store nothing.
	put(t, s, checkpoint("t", 3, 2)) // the same content: a no-op
	for _, err := range []error{
		s.PutCheckpoint(ctx, checkpoint("t", 3, 1), nil), // conflict
		s.PutCheckpoint(ctx, checkpoint("t", 2, 0), nil), // conflict, older
		s.PutCheckpoint(ctx, checkpoint("t", 9, 8), nil), // no parent
	} {
		if err == nil {
			t.Fatal("a put that should fail succeeded")
		}
	}
	wantQuiet(t, c, "puts that stored nothing")
	put(t, s, checkpoint("u", 1, 0))
	wantWake(t, other, "the other thread's checkpoint")
	wantQuiet(t, c, "another thread's checkpoint")

	// A cancelled watch closes its channel.
	wctx, cancel := context.WithCancel(ctx)
	d, err := watcher(t, s).Watch(wctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	for range d { // drains a wake-up, ends when closed
	}
}

// testWatchDelete: a thread's deletion wakes its watcher (a viewer
// following it says it is gone), and a put under the same id afterwards
// wakes it again.
func testWatchDelete(t *testing.T, s store.Store) {
	put(t, s, checkpoint("t", 1, 0))
	c := watch(t, s, "t")
	select { // a wake-up of the put, if it came late
	case <-c:
	case <-time.After(quiet):
	}
	if err := s.DeleteThread(t.Context(), "t"); err != nil {
		t.Fatal(err)
	}
	wantWake(t, c, "the thread's deletion")
	put(t, s, checkpoint("t", 1, 0))
	wantWake(t, c, "the thread written again under its id")
}

// testWatchRolledBack: a put whose transaction rolls back (the hook panics
// inside it) wakes nobody; the next one that commits does.
func testWatchRolledBack(t *testing.T, s store.Store) {
	put(t, s, checkpoint("t", 1, 0))
	c := watch(t, s, "t")
	h := s.(txHooker)
	h.SetTxHook(func(string) { panic("roll back") })
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("the hook's panic did not reach the caller")
			}
		}()
		_ = s.PutCheckpoint(t.Context(), checkpoint("t", 2, 1), nil)
	}()
	h.SetTxHook(nil)
	wantQuiet(t, c, "a rolled-back put")
	if _, err := s.Get(t.Context(), "t", 2); err == nil {
		t.Fatal("the rolled-back checkpoint is stored")
	}
	put(t, s, checkpoint("t", 2, 1))
	wantWake(t, c, "the put after the rollback")
}

// testWatchOtherHandle: a put through another handle on the same store
// (another connection, as another process has) wakes the watcher; so do
// long thread ids, which PostgreSQL's NOTIFY cannot carry whole.
func testWatchOtherHandle(t *testing.T, b Backend) {
	s, addr := b.Fresh(t)
	w := reopen(t, b, addr)
	long := strings.Repeat("x", 20000)
	c := watch(t, s, "t")
	cl := watch(t, s, long)
	put(t, w, checkpoint("t", 1, 0))
	wantWake(t, c, "a put by another handle")
	put(t, w, checkpoint(long, 1, 0))
	wantWake(t, cl, "a put of a 20,000-byte thread id")
	wantQuiet(t, c, "another thread's put by another handle")
}

// testWatchProcess: another process writes while this one waits.
func testWatchProcess(t *testing.T, b Backend) {
	s, addr := b.Fresh(t)
	c := watch(t, s, "t")
	p := child(t, b, partPutter, addr)
	p.say(t, "put 1", "ok 1")
	wantWake(t, c, "a checkpoint put by another process")
	if cp, err := s.Latest(t.Context(), "t"); err != nil || cp.ID != 1 {
		t.Fatalf("Latest after the wake-up = %d, %v; want 1", cp.ID, err)
	}
	p.say(t, "put 2", "ok 2")
	wantWake(t, c, "a second checkpoint put by another process")
}

// testLockHolder: the lock's holder is named while it lives, in another
// process too, and nobody once it is gone.
func testLockHolder(t *testing.T, b Backend) {
	s, addr := b.Fresh(t)
	h, ok := s.(store.LockHolders)
	if !ok {
		t.Fatalf("%T declares %s but is no store.LockHolders", s, Watch)
	}
	if who, err := h.LockHolder(t.Context(), "t"); err != nil || who != "" {
		t.Fatalf("LockHolder of a free thread = %q, %v; want nobody", who, err)
	}
	p := child(t, b, partLock, addr)
	p.say(t, "", "locked")
	who, err := h.LockHolder(t.Context(), "t")
	if err != nil {
		t.Fatal(err)
	}
	if want := "pid " + strconv.Itoa(p.cmd.Process.Pid); who != want && !strings.HasPrefix(who, want+" ") {
		t.Errorf("LockHolder = %q, want %q", who, want)
	}
	if who, err := h.LockHolder(t.Context(), "other"); err != nil || who != "" {
		t.Errorf("LockHolder of another thread = %q, %v; want nobody", who, err)
	}
	p.kill(t)
	_ = waitLock(t, s, "t")() // the server has seen the holder go
	if who, err := h.LockHolder(t.Context(), "t"); err != nil || who != "" {
		t.Errorf("LockHolder after the holder was killed = %q, %v; want nobody", who, err)
	}
}

// testLockHolderHere: this process's own lock is named, and nobody once
// it is released.
func testLockHolderHere(t *testing.T, s store.Store) {
	h, ok := s.(store.LockHolders)
	if !ok {
		t.Fatalf("%T declares %s but is no store.LockHolders", s, Watch)
	}
	release, err := s.Lock(t.Context(), "t")
	if err != nil {
		t.Fatal(err)
	}
	who, err := h.LockHolder(t.Context(), "t")
	if want := "pid " + strconv.Itoa(os.Getpid()); err != nil || who != want && !strings.HasPrefix(who, want+" ") {
		t.Errorf("LockHolder = %q, %v; want %q", who, err, want)
	}
	if err := release(); err != nil {
		t.Fatal(err)
	}
	if who, err := h.LockHolder(t.Context(), "t"); err != nil || who != "" {
		t.Errorf("LockHolder after release = %q, %v; want nobody", who, err)
	}
}
