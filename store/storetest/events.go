package storetest

import (
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
