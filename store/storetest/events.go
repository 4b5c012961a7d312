package storetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"rewind/store"
)

// Events and Threads: events listed in order with their checkpoint, and the
// listing of threads.

func testEvents(t *testing.T, s store.Store) {
	start := time.Now()
	// Given out of order; listed by Seq.
	put(t, s, checkpoint("t", 1, 0),
		store.Event{Seq: 3, Type: "c", Payload: []byte(`{"i":3}`)},
		store.Event{Seq: 1, Type: "a", Payload: []byte(`{"i":1}`)},
		store.Event{Seq: 2, Type: "b", Payload: []byte(`{"i":2}`)})
	put(t, s, checkpoint("t", 2, 1))
	// Unnumbered events take their position; an empty payload is {}.
	put(t, s, checkpoint("t", 3, 2), store.Event{Type: "d"}, store.Event{Type: "e", Payload: []byte(`[1]`)})
	put(t, s, checkpoint("t", 4, 1), event("f", `{"fork":true}`))
	put(t, s, checkpoint("u", 1, 0), event("other", `{}`))
	e := func(cp int64, seq int, typ, payload string) store.Event {
		return store.Event{CheckpointID: cp, Seq: seq, Type: typ, Payload: []byte(payload)}
	}
	e1 := []store.Event{e(1, 1, "a", `{"i":1}`), e(1, 2, "b", `{"i":2}`), e(1, 3, "c", `{"i":3}`)}
	e3 := []store.Event{e(3, 1, "d", `{}`), e(3, 2, "e", `[1]`)}
	e4 := []store.Event{e(4, 1, "f", `{"fork":true}`)}
	wantEvents(t, s, "t", 1, e1)
	wantEvents(t, s, "t", 2, nil)
	wantEvents(t, s, "t", 3, e3)
	wantEvents(t, s, "t", 0, slices.Concat(e1, e3, e4))
	wantEvents(t, s, "t", 9, nil)
	wantEvents(t, s, "nope", 0, nil)
	all, _ := s.Events(t.Context(), "t", 0)
	for _, ev := range all {
		if ev.ThreadID != "t" || ev.CreatedAt.Before(start.Add(-5*time.Minute)) || ev.CreatedAt.After(time.Now().Add(5*time.Minute)) {
			t.Errorf("event %d/%d has thread %q and CreatedAt %v, want t and about %v", ev.CheckpointID, ev.Seq, ev.ThreadID, ev.CreatedAt, start)
		}
	}
}

func testThreads(t *testing.T, s store.Store) {
	if th, err := s.Threads(t.Context()); err != nil || len(th) != 0 {
		t.Fatalf("Threads of an empty store = %v, %v; want none", th, err)
	}
	start := time.Now()
	for id := int64(1); id <= 3; id++ {
		put(t, s, checkpoint("b", id, id-1))
	}
	put(t, s, checkpoint("a", 1, 0))
	put(t, s, checkpoint("B", 1, 0))
	put(t, s, checkpoint("B", 4, 1))
	got, err := s.Threads(t.Context())
	if err != nil {
		t.Fatalf("Threads: %v", err)
	}
	want := []store.Thread{{ID: "B", Checkpoints: 2, LatestID: 4}, {ID: "a", Checkpoints: 1, LatestID: 1}, {ID: "b", Checkpoints: 3, LatestID: 3}}
	if len(got) != len(want) {
		t.Fatalf("Threads = %+v, want %+v", got, want)
	}
	for i, th := range got {
		if th.ID != want[i].ID || th.Checkpoints != want[i].Checkpoints || th.LatestID != want[i].LatestID {
			t.Errorf("Threads[%d] = %q %d %d, want %q %d %d (ordered bytewise)", i, th.ID, th.Checkpoints, th.LatestID, want[i].ID, want[i].Checkpoints, want[i].LatestID)
		}
		if th.UpdatedAt.Before(start.Add(-5*time.Minute)) || th.UpdatedAt.After(time.Now().Add(5*time.Minute)) {
			t.Errorf("Threads[%d].UpdatedAt = %v, want about %v", i, th.UpdatedAt, start)
		}
	}
}

// testThreadCounts: what Threads lists follows every put, refused put,
// prune and delete (a store may keep it beside the rows, as sqlite and
// PostgreSQL do, so that a listing counts no rows): the checkpoints the
// thread holds, its newest, and the newest's CreatedAt, even when an
// older checkpoint's is later.
func testThreadCounts(t *testing.T, s store.Store) {
	ctx := t.Context()
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	stamped := func(cp store.Checkpoint, hours int) store.Checkpoint {
		cp.CreatedAt = at.Add(time.Duration(hours) * time.Hour)
		return cp
	}
	want := func(how string, rows ...string) {
		t.Helper()
		ts, err := s.Threads(ctx)
		if err != nil {
			t.Fatalf("%s: Threads: %v", how, err)
		}
		var got []string
		for _, th := range ts {
			got = append(got, fmt.Sprintf("%s:%d/%d@%s", th.ID, th.Checkpoints, th.LatestID, th.UpdatedAt.UTC().Format("15:04")))
			// Latest is the newest listing, as History gives it.
			h, err := s.History(ctx, th.ID, 0, 1)
			if err != nil || len(h) != 1 {
				t.Fatalf("%s: History(%s, 0, 1) = %d rows, %v", how, th.ID, len(h), err)
			}
			l, w := th.Latest, h[0]
			if l.ThreadID != w.ThreadID || l.ID != w.ID || l.ParentID != w.ParentID || l.RerootedFrom != w.RerootedFrom || l.Base != w.Base ||
				!l.CreatedAt.Equal(w.CreatedAt) || !sameJSON(l.Meta, w.Meta) || (l.State == nil) != (w.State == nil) ||
				w.State != nil && !sameJSON(l.State, w.State) || !slices.Equal(l.BlobRefs, w.BlobRefs) || l.Rebased != nil || l.Head != nil {
				t.Errorf("%s: Threads' Latest of %s = %s/%d parent %d (rerooted from %d) base %v at %v meta %s state %s refs %q rebased %s head %s;"+
					" want History's newest: %s/%d parent %d (rerooted from %d) base %v at %v meta %s state %s refs %q", how, th.ID,
					l.ThreadID, l.ID, l.ParentID, l.RerootedFrom, l.Base, l.CreatedAt, l.Meta, l.State, l.BlobRefs, l.Rebased, l.Head,
					w.ThreadID, w.ID, w.ParentID, w.RerootedFrom, w.Base, w.CreatedAt, w.Meta, w.State, w.BlobRefs)
			}
		}
		if !slices.Equal(got, rows) {
			t.Errorf("%s: Threads as id:checkpoints/latest@updated = %q, want %q", how, got, rows)
		}
	}
	put(t, s, stamped(checkpoint("other", 1, 0), 0))
	put(t, s, stamped(checkpoint("t", 1, 0), 1))
	put(t, s, stamped(checkpoint("t", 2, 1), 3))
	put(t, s, stamped(checkpoint("t", 3, 2), 2)) // a clock that went back
	want("three puts", "other:1/1@12:00", "t:3/3@14:00")

	put(t, s, stamped(checkpoint("t", 2, 1), 9)) // a no-op
	changed := checkpoint("t", 2, 1)
	changed.State = []byte(`{"changed":true}`)
	wantIs(t, s.PutCheckpoint(ctx, changed, nil), store.ErrConflict)
	wantIs(t, s.PutCheckpoint(ctx, checkpoint("t", 9, 8), nil), store.ErrNotFound)
	putWrites(t, s, writes("t", 3, "task"))
	want("a no-op, refused puts and writes", "other:1/1@12:00", "t:3/3@14:00")

	put(t, s, stamped(checkpoint("t", 4, 1), 5)) // a fork
	newest := withMeta(delta("t", 5, 4))
	newest.BlobRefs = []string{store.ContentHash([]byte(`{"big":1}`))}
	newest.Blobs = []store.Blob{{Hash: newest.BlobRefs[0], Body: []byte(`{"big":1}`)}}
	put(t, s, stamped(newest, 6))
	if _, err := s.Prune(ctx, "t", []int64{2, 3, 3}, nil); err != nil {
		t.Fatalf("Prune: %v", err)
	}
	want("a fork, then a prune of its other branch", "other:1/1@12:00", "t:3/5@18:00")
	wantIs(t, s.PutCheckpoint(ctx, stamped(checkpoint("t", 3, 1), 7), nil), store.ErrStale)
	want("a stale put", "other:1/1@12:00", "t:3/5@18:00")
	// The newest re-rooted: its parent, and its blobs as the rebase adds them.
	put(t, s, stamped(withMeta(delta("t", 6, 5)), 10))
	if _, err := s.Prune(ctx, "t", []int64{5}, []store.Rebase{{ID: 6, State: []byte(`{"whole":6}`), BlobRefs: newest.BlobRefs}}); err != nil {
		t.Fatalf("Prune of the newest's parent: %v", err)
	}
	want("a prune that re-roots the newest", "other:1/1@12:00", "t:3/6@22:00")

	if err := s.DeleteThread(ctx, "t"); err != nil {
		t.Fatalf("DeleteThread: %v", err)
	}
	want("a delete", "other:1/1@12:00")
	put(t, s, stamped(checkpoint("t", 1, 0), 8))
	want("the thread begun again", "other:1/1@12:00", "t:1/1@20:00")
}
