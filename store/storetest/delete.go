package storetest

import (
	"testing"

	"rewind/store"
)

// DeleteThread: every row of a thread gone in one transaction, others
// untouched.

func testDeleteThread(t *testing.T, s store.Store) {
	for _, th := range []string{"x", "y"} {
		put(t, s, checkpoint(th, 1, 0), event("a", `{}`))
		put(t, s, checkpoint(th, 2, 1), event("b", `{}`), event("c", `{}`))
		putWrites(t, s, writes(th, 1, "task"))
		putWrites(t, s, writes(th, 2, "task"))
	}
	if err := s.DeleteThread(t.Context(), "x"); err != nil {
		t.Fatalf("DeleteThread: %v", err)
	}
	ctx := t.Context()
	_, err := s.Get(ctx, "x", 1)
	wantIs(t, err, store.ErrNotFound)
	_, err = s.Latest(ctx, "x")
	wantIs(t, err, store.ErrNotFound)
	if h, err := s.History(ctx, "x", 0, 0); err != nil || len(h) != 0 {
		t.Errorf("History after delete = %v, %v; want empty", idsOf(h), err)
	}
	wantTasks(t, s, "x", 1)
	wantTasks(t, s, "x", 2)
	wantEvents(t, s, "x", 0, nil)
	if th, err := s.Threads(ctx); err != nil || len(th) != 1 || th[0].ID != "y" || th[0].Checkpoints != 2 {
		t.Errorf("Threads after delete = %+v, %v; want only y with 2 checkpoints", th, err)
	}

	// The other thread is untouched.
	if got, err := s.Get(ctx, "y", 2); err != nil {
		t.Errorf("Get y/2: %v", err)
	} else {
		wantCheckpoint(t, got, checkpoint("y", 2, 1))
	}
	wantTasks(t, s, "y", 1, "task")
	wantTasks(t, s, "y", 2, "task")
	if evs, err := s.Events(ctx, "y", 0); err != nil || len(evs) != 3 {
		t.Errorf("Events of y = %d, %v; want 3", len(evs), err)
	}

	// No leftovers: the thread starts afresh at 1, without old events or writes.
	put(t, s, checkpoint("x", 1, 0))
	wantEvents(t, s, "x", 0, nil)
	wantTasks(t, s, "x", 1)
	if err := s.DeleteThread(ctx, "x"); err != nil {
		t.Fatalf("DeleteThread: %v", err)
	}
	wantIs(t, s.DeleteThread(ctx, "x"), store.ErrNotFound)
	wantIs(t, s.DeleteThread(ctx, "never"), store.ErrNotFound)
}
