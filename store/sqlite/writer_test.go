package sqlite_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"rewind/store"
	"rewind/store/sqlite"
)

// holdWrite starts a put on s and returns once it is inside its
// transaction, holding the file's write lock until release is called;
// release (again: the same) returns the put's error.
func holdWrite(t *testing.T, s *sqlite.Store) (release func() error) {
	t.Helper()
	inside, let := make(chan struct{}), make(chan struct{})
	s.SetTxHook(func(string) {
		close(inside)
		<-let
	})
	done := make(chan error, 1)
	go func() {
		done <- s.PutCheckpoint(context.Background(), store.Checkpoint{ThreadID: "holder", ID: 1, State: []byte(`{}`)}, nil)
	}()
	<-inside
	return sync.OnceValue(func() error {
		close(let)
		err := <-done
		s.SetTxHook(nil)
		return err
	})
}

// TestWriteWaitsForAnotherWriter: a write finding the file's write lock
// held by another connection (another process's, as far as SQLite can
// tell) waits for it under busy_timeout, and then commits.
func TestWriteWaitsForAnotherWriter(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "rewind.db")
	holder, waiter := open(t, path), open(t, path)
	release := holdWrite(t, holder)
	done := make(chan error, 1)
	go func() {
		done <- waiter.PutCheckpoint(context.Background(), store.Checkpoint{ThreadID: "waiter", ID: 1, State: []byte(`{}`)}, nil)
	}()
	time.Sleep(100 * time.Millisecond) // not an assertion: time for the waiter to find the lock taken
	if err := release(); err != nil {
		t.Fatalf("holder: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("a write behind another's: %v, want it to wait and commit", err)
	}
	for _, thread := range []string{"holder", "waiter"} {
		if _, err := waiter.Latest(context.Background(), thread); err != nil {
			t.Errorf("Latest(%s): %v", thread, err)
		}
	}
}

// TestCancelledWhileWaitingForTheWriteLock: a write waiting for another
// writer's lock stops waiting once its context ends, saying so (not
// that the store was busy, busy_timeout later), and commits nothing.
func TestCancelledWhileWaitingForTheWriteLock(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "rewind.db")
	holder, waiter := open(t, path), open(t, path)
	release := holdWrite(t, holder)
	defer release()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	err := waiter.PutCheckpoint(ctx, store.Checkpoint{ThreadID: "waiter", ID: 1, State: []byte(`{}`)}, nil)
	if !errors.Is(err, context.Canceled) || strings.Contains(err.Error(), "another process") {
		t.Fatalf("put cancelled while waiting for the write lock: %v, want context.Canceled alone", err)
	}
	if err := release(); err != nil {
		t.Fatalf("holder: %v", err)
	}
	if _, err := waiter.Latest(context.Background(), "waiter"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Latest after the cancelled put: %v, want ErrNotFound", err)
	}
}

// TestWriteAfterTheTransactionWasLost: when SQLite ended a write's
// transaction under it (as an I/O error or an interrupt can), the write
// fails and commits nothing, and the writer lets its connection go: the
// next write starts on a new one, never inside a transaction left open.
func TestWriteAfterTheTransactionWasLost(t *testing.T) {
	t.Parallel()
	s := open(t, filepath.Join(t.TempDir(), "rewind.db"))
	ctx := context.Background()
	before := sqlite.WriteConn(s)
	s.SetTxHook(func(string) {
		if err := sqlite.LoseTheTransaction(s); err != nil {
			t.Error(err)
		}
	})
	if err := s.PutCheckpoint(ctx, cp(1, 0), nil); err == nil || !strings.Contains(err.Error(), "no transaction") {
		t.Fatalf("put whose transaction was lost: %v, want COMMIT's error", err)
	}
	s.SetTxHook(nil)
	if _, err := s.Latest(ctx, "t"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Latest after the lost put: %v, want ErrNotFound", err)
	}
	for id := int64(1); id <= 2; id++ {
		if err := s.PutCheckpoint(ctx, cp(id, id-1), nil); err != nil {
			t.Fatalf("put %d after the lost one: %v", id, err)
		}
	}
	if after := sqlite.WriteConn(s); after == nil || after == before {
		t.Errorf("the writer kept its connection after a failed ROLLBACK")
	}
	if got, err := s.Latest(ctx, "t"); err != nil || got.ID != 2 {
		t.Fatalf("Latest: %d, %v; want 2", got.ID, err)
	}
}

// TestWriteAfterClose: a closed store refuses a write, in one line.
func TestWriteAfterClose(t *testing.T) {
	t.Parallel()
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "rewind.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.PutCheckpoint(context.Background(), cp(1, 0), nil); err == nil || strings.Contains(err.Error(), "\n") {
		t.Fatalf("put after Close: %v, want a one-line error", err)
	}
}
