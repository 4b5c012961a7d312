package storetest

import (
	"errors"
	"testing"

	"rewind/store"
)

// Lock: one live writer of a thread. Across processes, and released by a
// SIGKILL, in process.go.

func testLock(t *testing.T, s store.Store) {
	ctx := t.Context()
	lock := func(thread string) func() error {
		t.Helper()
		release, err := s.Lock(ctx, thread)
		if err != nil {
			t.Fatalf("Lock(%s): %v", clip(thread), err)
		}
		return release
	}
	locked := func(thread string) {
		t.Helper()
		release, err := s.Lock(ctx, thread)
		if !errors.Is(err, store.ErrLocked) {
			if err == nil {
				release()
			}
			t.Fatalf("second Lock(%s) = %v, want ErrLocked", clip(thread), err)
		}
	}
	release := lock("a")
	locked("a")
	other := lock("b")
	locked("b")
	if err := release(); err != nil {
		t.Fatalf("release: %v", err)
	}
	if err := release(); err != nil {
		t.Errorf("second release: %v, want nil", err)
	}
	again := lock("a")
	// A stale release must not free the new holder's lock.
	if err := release(); err != nil {
		t.Errorf("third release: %v, want nil", err)
	}
	locked("a")
	for _, r := range []func() error{again, other} {
		if err := r(); err != nil {
			t.Errorf("release: %v", err)
		}
	}
	lock("a")()
	lock("b")()
}
