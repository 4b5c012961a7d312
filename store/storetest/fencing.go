package storetest

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"rewind/store"
)

// Fencing (capability Fencing): Fence hands out epochs from one counter;
// a fenced writer's writes are refused, also across DeleteThread.

func fence(t *testing.T, s store.Store, thread string) int64 {
	t.Helper()
	e, err := s.Fence(t.Context(), thread)
	if err != nil {
		t.Fatalf("Fence(%s): %v", clip(thread), err)
	}
	return e
}

func withEpoch(cp store.Checkpoint, epoch int64) store.Checkpoint {
	cp.Epoch = epoch
	return cp
}

func writesEpoch(w store.TaskWrites, epoch int64) store.TaskWrites {
	w.Epoch = epoch
	return w
}

// wantFenced: refused as fenced, and not as anything else.
func wantFenced(t *testing.T, err error, thread string) {
	t.Helper()
	switch {
	case !errors.Is(err, store.ErrFenced):
		t.Errorf("error = %v, want ErrFenced", err)
	case errors.Is(err, store.ErrConflict), errors.Is(err, store.ErrStale), errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrInvalid):
		t.Errorf("error = %v, want only ErrFenced", err)
	case !strings.Contains(err.Error(), "newer writer took over thread "+fmt.Sprintf("%q", thread)):
		t.Errorf("error %q does not say a newer writer took over thread %q", err, thread)
	}
}

func testFenceEpochs(t *testing.T, s store.Store) {
	ctx := t.Context()
	for want := int64(1); want <= 3; want++ {
		if got := fence(t, s, "t"); got != want {
			t.Errorf("Fence #%d = %d, want %d", want, got, want)
		}
	}
	// One counter for the store: every epoch is higher than every one
	// before it, whichever thread had it.
	last := int64(3)
	higher := func(th string) {
		t.Helper()
		if got := fence(t, s, th); got <= last {
			t.Errorf("Fence(%s) = %d after %d: epochs never go back, whatever the thread", clip(th), got, last)
		} else {
			last = got
		}
	}
	higher("u")
	long := strings.Repeat("x", 64<<10)
	for _, th := range []string{"'; drop table graph_epochs;--", "$1", "%", long, long + "y"} {
		higher(th)
	}
	for name, th := range map[string]string{"empty": "", "NUL": "a\x00", "not UTF-8": "a\xff"} {
		_, err := s.Fence(ctx, th)
		t.Run(name, func(t *testing.T) { wantRefused(t, err, "fence") })
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.Fence(cancelled, "t"); !errors.Is(err, context.Canceled) {
		t.Errorf("Fence on a cancelled context = %v, want context.Canceled", err)
	}
	if got := fence(t, s, "t"); got != last+1 {
		t.Errorf("Fence after a cancelled one = %d, want %d", got, last+1)
	}
	last++
	// An epoch is not a checkpoint: the thread has none to list or read.
	if th, err := s.Threads(ctx); err != nil || len(th) != 0 {
		t.Errorf("Threads after fencing only = %+v, %v; want none", th, err)
	}
	_, err := s.Latest(ctx, "t")
	wantIs(t, err, store.ErrNotFound)

	// DeleteThread removes the epoch, also of a thread that has nothing
	// else, but not the counter: the thread's next epoch is higher still.
	put(t, s, checkpoint("t", 1, 0))
	if err := s.DeleteThread(ctx, "t"); err != nil {
		t.Fatalf("DeleteThread: %v", err)
	}
	if n, err := s.Size(ctx, "t"); err != nil || n != 0 {
		t.Errorf("Size after DeleteThread = %d, %v; want 0: nothing of the thread stays", n, err)
	}
	higher("t")
	if err := s.DeleteThread(ctx, "u"); err != nil {
		t.Errorf("DeleteThread of a thread with only an epoch: %v", err)
	}
	wantIs(t, s.DeleteThread(ctx, "u"), store.ErrNotFound)
	higher("u")
	if err := s.DeleteThread(ctx, long); err != nil {
		t.Errorf("DeleteThread of a thread with only an epoch: %v", err)
	}
	higher(long)
}

func testFencedWrites(t *testing.T, s store.Store) {
	ctx := t.Context()
	// Unfenced writes are accepted before and after any fencing.
	put(t, s, checkpoint("t", 1, 0))
	old := fence(t, s, "t") // the writer that will be taken over
	put(t, s, withEpoch(checkpoint("t", 2, 1), old), event("by-old", `{}`))
	putWrites(t, s, writesEpoch(writes("t", 2, "a"), old))
	cur := fence(t, s, "t") // the takeover
	if cur <= old {
		t.Fatalf("Fence = %d after %d, want it higher", cur, old)
	}

	// The old writer's new work is refused and leaves nothing.
	diff := withEpoch(checkpoint("t", 2, 1), old)
	diff.State = []byte(`{"different":true}`)
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"next checkpoint", s.PutCheckpoint(ctx, withEpoch(checkpoint("t", 3, 2), old), []store.Event{event("late", `{}`)})},
		{"different content at a stored id, not a conflict", s.PutCheckpoint(ctx, diff, nil)},
		{"a stale id", s.PutCheckpoint(ctx, withEpoch(checkpoint("t", 1, 0), old), []store.Event{event("x", `{}`)})},
		{"a missing parent", s.PutCheckpoint(ctx, withEpoch(checkpoint("t", 9, 8), old), nil)},
		{"a new task's writes", s.PutWrites(ctx, writesEpoch(writes("t", 2, "b"), old))},
		{"different writes of a stored task, not a conflict", s.PutWrites(ctx, store.TaskWrites{ThreadID: "t", CheckpointID: 2, TaskID: "a", Writes: []byte(`{"other":1}`), Epoch: old})},
		{"writes of a missing checkpoint", s.PutWrites(ctx, writesEpoch(writes("t", 9, "a"), old))},
	} {
		t.Run(tc.name, func(t *testing.T) { wantFenced(t, tc.err, "t") })
	}
	if got, err := s.Latest(ctx, "t"); err != nil || got.ID != 2 {
		t.Errorf("Latest after refused writes = %d, %v; want 2", got.ID, err)
	}
	wantEvents(t, s, "t", 0, []store.Event{{CheckpointID: 2, Type: "by-old"}})
	wantTasks(t, s, "t", 2, "a")

	// Its redelivered identical writes are harmless no-ops: epoch is not content.
	for name, err := range map[string]error{
		"identical checkpoint":      s.PutCheckpoint(ctx, withEpoch(checkpoint("t", 2, 1), old), []store.Event{event("by-old", `{}`)}),
		"identical writes":          s.PutWrites(ctx, writesEpoch(writes("t", 2, "a"), old)),
		"identical, current epoch":  s.PutCheckpoint(ctx, withEpoch(checkpoint("t", 2, 1), cur), []store.Event{event("by-old", `{}`)}),
		"identical, unfenced":       s.PutCheckpoint(ctx, checkpoint("t", 2, 1), []store.Event{event("by-old", `{}`)}),
		"identical writes, current": s.PutWrites(ctx, writesEpoch(writes("t", 2, "a"), cur)),
	} {
		if err != nil {
			t.Errorf("%s re-put: %v, want nil", name, err)
		}
	}

	// Epochs are checked, not kept: reads give 0.
	if got, err := s.Get(ctx, "t", 2); err != nil || got.Epoch != 0 {
		t.Errorf("Get of a fenced write = epoch %d, %v; want 0", got.Epoch, err)
	}
	if ws, err := s.Writes(ctx, "t", 2); err != nil || len(ws) != 1 || ws[0].Epoch != 0 {
		t.Errorf("Writes of a fenced write = %+v, %v; want one with epoch 0", ws, err)
	}

	// The new writer goes on; a conflict under the current epoch is still a conflict.
	put(t, s, withEpoch(checkpoint("t", 3, 2), cur))
	putWrites(t, s, writesEpoch(writes("t", 3, "a"), cur))
	wantIs(t, s.PutCheckpoint(ctx, withEpoch(diff, cur), nil), store.ErrConflict)
	wantIs(t, s.PutCheckpoint(ctx, withEpoch(checkpoint("t", 2, 1), cur), nil), store.ErrConflict)
	put(t, s, checkpoint("u", 1, 0))
	put(t, s, checkpoint("t", 4, 3)) // unfenced is still accepted

	// An epoch never handed out is invalid, on a fenced thread and an
	// unfenced one (cur is the store's newest).
	wantRefused(t, s.PutCheckpoint(ctx, withEpoch(checkpoint("t", 5, 4), cur+1), nil), "checkpoint")
	wantRefused(t, s.PutWrites(ctx, writesEpoch(writes("t", 4, "a"), cur+1)), "writes")
	wantRefused(t, s.PutCheckpoint(ctx, withEpoch(checkpoint("u", 2, 1), cur+1), nil), "checkpoint")
	wantRefused(t, s.PutWrites(ctx, writesEpoch(writes("u", 1, "a"), cur+1)), "writes")
	if got, err := s.Latest(ctx, "t"); err != nil || got.ID != 4 {
		t.Errorf("Latest = %d, %v; want 4", got.ID, err)
	}

	// Epochs survive in the store, not in the writer: a fresh fence is higher.
	if got := fence(t, s, "t"); got != cur+1 {
		t.Errorf("next Fence = %d, want %d", got, cur+1)
	}
	wantFenced(t, s.PutCheckpoint(ctx, withEpoch(checkpoint("t", 5, 4), cur), nil), "t")
}

// A writer is stuck (say, SIGSTOPped) while the thread is deleted and a
// new writer starts it again: the stuck writer's late work is refused
// (ErrFenced), before and after the new writer fenced, whatever it would
// otherwise have been (a new root, a child of the new writer's checkpoint,
// a conflict, writes), and leaves nothing behind.
func testFencedAcrossDelete(t *testing.T, s store.Store) {
	ctx := t.Context()
	old := fence(t, s, "t")
	put(t, s, withEpoch(checkpoint("t", 1, 0), old), event("by-old", `{}`))
	put(t, s, withEpoch(checkpoint("t", 2, 1), old))
	putWrites(t, s, writesEpoch(writes("t", 2, "a"), old))
	if err := s.DeleteThread(ctx, "t"); err != nil {
		t.Fatalf("DeleteThread: %v", err)
	}
	late := func(stage string) map[string]error {
		next := withEpoch(checkpoint("t", 2, 1), old)
		next.State = []byte(`{"late":"` + stage + `"}`)
		root := withEpoch(checkpoint("t", 1, 0), old)
		root.State = []byte(`{"late root":"` + stage + `"}`)
		return map[string]error{
			"a new root":                s.PutCheckpoint(ctx, root, []store.Event{event("late", `{}`)}),
			"the next checkpoint":       s.PutCheckpoint(ctx, next, nil),
			"a checkpoint far ahead":    s.PutCheckpoint(ctx, withEpoch(checkpoint("t", 9, 1), old), nil),
			"writes of checkpoint 1":    s.PutWrites(ctx, writesEpoch(writes("t", 1, "late"), old)),
			"writes of a gone one":      s.PutWrites(ctx, writesEpoch(writes("t", 2, "late"), old)),
			"its deleted root, again":   s.PutCheckpoint(ctx, withEpoch(checkpoint("t", 1, 0), old), []store.Event{event("by-old", `{}`)}),
			"its deleted writes, again": s.PutWrites(ctx, writesEpoch(writes("t", 2, "a"), old)),
		}
	}
	// Before anyone takes the thread again.
	for name, err := range late("deleted") {
		t.Run("deleted/"+name, func(t *testing.T) { wantFenced(t, err, "t") })
	}
	if n, err := s.Size(ctx, "t"); err != nil || n != 0 {
		t.Errorf("Size after the late writes to a deleted thread = %d, %v; want 0", n, err)
	}
	// A new writer starts the thread afresh at 1, with a higher epoch.
	cur := fence(t, s, "t")
	if cur <= old {
		t.Fatalf("Fence after DeleteThread = %d, want more than the deleted thread's %d", cur, old)
	}
	mine := withEpoch(checkpoint("t", 1, 0), cur)
	mine.State = []byte(`{"by":"the new writer"}`)
	put(t, s, mine, event("new", `{}`))
	for name, err := range late("taken") {
		t.Run("taken/"+name, func(t *testing.T) { wantFenced(t, err, "t") })
	}
	h, err := s.History(ctx, "t", 0, 0)
	if err != nil || len(h) != 1 || h[0].ID != 1 {
		t.Fatalf("History after the late writes = %v, %v; want only the new writer's 1", idsOf(h), err)
	}
	if got, err := s.Get(ctx, "t", 1); err != nil || !sameJSON(got.State, mine.State) {
		t.Errorf("checkpoint 1 = %s, %v; want the new writer's", got.State, err)
	}
	wantEvents(t, s, "t", 0, []store.Event{{CheckpointID: 1, Type: "new"}})
	wantTasks(t, s, "t", 1)
	// The new writer goes on; an epoch never handed out is still invalid.
	put(t, s, withEpoch(checkpoint("t", 2, 1), cur))
	putWrites(t, s, writesEpoch(writes("t", 2, "a"), cur))
	wantRefused(t, s.PutCheckpoint(ctx, withEpoch(checkpoint("t", 3, 2), cur+1), nil), "checkpoint")
	if err := s.DeleteThread(ctx, "t"); err != nil {
		t.Fatalf("DeleteThread: %v", err)
	}
	wantRefused(t, s.PutCheckpoint(ctx, withEpoch(checkpoint("t", 1, 0), cur+1), nil), "checkpoint")
	wantFenced(t, s.PutCheckpoint(ctx, withEpoch(checkpoint("t", 1, 0), cur), nil), "t")
}

// A fenced writer's thread is deleted under it, mid-stream: what it wrote
// before goes with the thread, what it writes after is refused, and
// nothing of it is left, not even a write that was in flight.
func testDeleteRacesWriter(t *testing.T, s store.Store) {
	ctx := t.Context()
	for round := range 5 {
		thread := fmt.Sprint("race-", round)
		old := fence(t, s, thread)
		var acked atomic.Int64
		done := make(chan error, 1)
		go func() {
			for id := int64(1); ; id++ {
				if err := s.PutCheckpoint(ctx, withEpoch(checkpoint(thread, id, id-1), old), []store.Event{event("old", `{}`)}); err != nil {
					done <- err
					return
				}
				if err := s.PutWrites(ctx, writesEpoch(writes(thread, id, "task"), old)); err != nil {
					done <- err
					return
				}
				acked.Store(id)
			}
		}()
		for acked.Load() < int64(3+round*7) {
			select {
			case err := <-done:
				t.Fatalf("the writer failed before the delete: %v", err)
			default:
				runtime.Gosched()
			}
		}
		if err := s.DeleteThread(ctx, thread); err != nil {
			t.Fatalf("DeleteThread: %v", err)
		}
		wantFenced(t, <-done, thread)
		if cp, err := s.Latest(ctx, thread); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("round %d: after DeleteThread, checkpoint %d of the writer is there (%v): a write in flight outlived the delete", round, cp.ID, err)
		}
		if n, err := s.Size(ctx, thread); err != nil || n != 0 {
			t.Errorf("round %d: Size after DeleteThread = %d, %v; want 0", round, n, err)
		}
	}
}

// A writer is fenced between two of its writes: everything it wrote before
// the fence is there, nothing it wrote after is, and the new writer
// continues the chain from exactly where the old one stopped.
func testFencedBetweenWrites(t *testing.T, s store.Store) {
	ctx := t.Context()
	for round := range 5 {
		thread := fmt.Sprint("race-", round)
		old := fence(t, s, thread)
		var acked atomic.Int64 // the old writer's last fully stored checkpoint
		done := make(chan error, 1)
		go func() {
			for id := int64(1); ; id++ {
				if err := s.PutCheckpoint(ctx, withEpoch(checkpoint(thread, id, id-1), old), []store.Event{event("old", `{}`)}); err != nil {
					done <- err
					return
				}
				if err := s.PutWrites(ctx, writesEpoch(writes(thread, id, "task"), old)); err != nil {
					done <- err
					return
				}
				acked.Store(id)
			}
		}()
		// Let the old writer get going, then take over mid-stream.
		for acked.Load() < int64(3+round*7) {
			select {
			case err := <-done:
				t.Fatalf("the old writer failed before the takeover: %v", err)
			default:
				runtime.Gosched()
			}
		}
		cur := fence(t, s, thread)
		latest, err := s.Latest(ctx, thread)
		if err != nil {
			t.Fatalf("Latest: %v", err)
		}
		put(t, s, withEpoch(checkpoint(thread, latest.ID+1, latest.ID), cur), event("new", `{}`))

		wantFenced(t, <-done, thread)
		if last := acked.Load(); last > latest.ID {
			t.Errorf("round %d: the old writer's put of %d succeeded after the fence (the new writer saw %d as the latest)", round, last, latest.ID)
		}
		h, err := s.History(ctx, thread, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(h) == 0 || h[0].ID != latest.ID+1 {
			t.Fatalf("round %d: history %v, want the new writer's %d on top", round, idsOf(h), latest.ID+1)
		}
		for i, cp := range h {
			if want := h[0].ID - int64(i); cp.ID != want || cp.ParentID != want-1 {
				t.Fatalf("round %d: the chain forked or has a gap: %d (parent %d) at position %d, want %d (parent %d)", round, cp.ID, cp.ParentID, i, want, want-1)
			}
		}
		// Writes of the old writer are there only for checkpoints before the fence.
		for id := int64(1); id <= latest.ID+1; id++ {
			ws, err := s.Writes(ctx, thread, id)
			if err != nil {
				t.Fatal(err)
			}
			if id == latest.ID+1 && len(ws) != 0 {
				t.Errorf("round %d: the old writer stored writes at the new writer's checkpoint %d", round, id)
			}
		}
	}
}

// testEpochReads: Epoch reads what Fence set, per thread, and nothing
// once the thread is deleted; reading changes nothing.
func testEpochReads(t *testing.T, s store.Store) {
	ctx := t.Context()
	epoch := func(th string) int64 {
		t.Helper()
		e, err := s.Epoch(ctx, th)
		if err != nil {
			t.Fatalf("Epoch(%s): %v", clip(th), err)
		}
		return e
	}
	if got := epoch("t"); got != 0 {
		t.Errorf("Epoch of a thread never fenced = %d, want 0", got)
	}
	first := fence(t, s, "t")
	other := fence(t, s, "u")
	for range 2 { // a read is not a fence
		if got := epoch("t"); got != first {
			t.Errorf("Epoch(t) = %d, want %d: what its last Fence handed out", got, first)
		}
	}
	if got := epoch("u"); got != other {
		t.Errorf("Epoch(u) = %d, want %d", got, other)
	}
	// The epoch read is the one writes are checked against.
	put(t, s, withEpoch(checkpoint("t", 1, 0), epoch("t")))
	again := fence(t, s, "t")
	if got := epoch("t"); got != again || got <= first {
		t.Errorf("Epoch(t) after a second Fence = %d, want %d (above %d)", got, again, first)
	}
	wantFenced(t, s.PutCheckpoint(ctx, withEpoch(checkpoint("t", 2, 1), first), nil), "t")
	long := strings.Repeat("x", 64<<10)
	if e := fence(t, s, long); epoch(long) != e {
		t.Errorf("Epoch of a 64 KB thread id = %d, want %d", epoch(long), e)
	}
	if err := s.DeleteThread(ctx, "t"); err != nil {
		t.Fatalf("DeleteThread: %v", err)
	}
	if got := epoch("t"); got != 0 {
		t.Errorf("Epoch after DeleteThread = %d, want 0: the thread has no writer", got)
	}
	if got := epoch("u"); got != other {
		t.Errorf("Epoch(u) after deleting t = %d, want %d", got, other)
	}
	for name, th := range map[string]string{"empty": "", "NUL": "a\x00", "not UTF-8": "a\xff"} {
		_, err := s.Epoch(ctx, th)
		t.Run(name, func(t *testing.T) { wantRefused(t, err, "read the writer epoch") })
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.Epoch(cancelled, "u"); !errors.Is(err, context.Canceled) {
		t.Errorf("Epoch on a cancelled context = %v, want context.Canceled", err)
	}
}
