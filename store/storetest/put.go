package storetest

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"rewind/store"
)

// PutCheckpoint and PutWrites: the outcome order (no-op, fenced, conflict,
// stale, missing parent), racing writers, and the writes a checkpoint
// settles.

func testRoundTrip(t *testing.T, s store.Store) {
	start := time.Now()
	want := checkpoint("t", 1, 0)
	put(t, s, want, event("node.started", `{"node":"planner"}`))
	got, err := s.Get(t.Context(), "t", 1)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	wantCheckpoint(t, got, want)
	if got.CreatedAt.Before(start.Add(-5*time.Minute)) || got.CreatedAt.After(time.Now().Add(5*time.Minute)) {
		t.Errorf("CreatedAt = %v, want about %v", got.CreatedAt, start)
	}
	latest, err := s.Latest(t.Context(), "t")
	if err != nil {
		t.Fatalf("Latest: %v", err)
	}
	wantCheckpoint(t, latest, want)
}

func testSameContent(t *testing.T, s store.Store) {
	evs := []store.Event{event("a", `{"n":1}`), event("b", `{"n":2}`), event("c", `{}`)}
	put(t, s, checkpoint("t", 1, 0))
	put(t, s, checkpoint("t", 2, 1), evs...)
	first, err := s.Get(t.Context(), "t", 2)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	put(t, s, checkpoint("t", 3, 2))
	time.Sleep(5 * time.Millisecond) // so a rewritten row would get a new CreatedAt

	// Re-delivered puts, also after a newer checkpoint exists, and with the
	// same JSON written differently (jsonb normalises it anyway).
	reformatted := checkpoint("t", 2, 1)
	reformatted.State = reformat(t, reformatted.State)
	numbered := slices.Clone(evs)
	for i := range numbered {
		numbered[i].Seq = i + 1
		numbered[i].Payload = reformat(t, numbered[i].Payload)
	}
	for name, put := range map[string]func() error{
		"identical":   func() error { return s.PutCheckpoint(t.Context(), checkpoint("t", 2, 1), evs) },
		"reformatted": func() error { return s.PutCheckpoint(t.Context(), reformatted, numbered) },
		"no events":   func() error { return s.PutCheckpoint(t.Context(), checkpoint("t", 3, 2), nil) },
		"newest":      func() error { return s.PutCheckpoint(t.Context(), checkpoint("t", 3, 2), []store.Event{}) },
	} {
		if err := put(); err != nil {
			t.Errorf("%s re-put: %v, want nil", name, err)
		}
	}
	got, err := s.Get(t.Context(), "t", 2)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	wantCheckpoint(t, got, first)
	if !got.CreatedAt.Equal(first.CreatedAt) {
		t.Errorf("CreatedAt changed by a no-op put: %v, then %v", first.CreatedAt, got.CreatedAt)
	}
	wantEvents(t, s, "t", 2, evs)
	if all, _ := s.Events(t.Context(), "t", 0); len(all) != len(evs) {
		t.Errorf("thread has %d events after no-op puts, want %d", len(all), len(evs))
	}
	if h, _ := s.History(t.Context(), "t", 0, 0); len(h) != 3 {
		t.Errorf("History has %d checkpoints after no-op puts, want 3", len(h))
	}
}

func testConflict(t *testing.T, s store.Store) {
	evs := []store.Event{event("a", `{"n":1}`), event("b", `{"n":2}`), event("c", `{}`)}
	put(t, s, checkpoint("t", 1, 0))
	orig := put(t, s, checkpoint("t", 2, 1), evs...)
	put(t, s, checkpoint("t", 3, 2))
	other := orig
	other.State = []byte(`{"step":2,"other":true}`)
	changed := func(i int, e store.Event) []store.Event {
		c := slices.Clone(evs)
		c[i] = e
		return c
	}
	for _, tc := range []struct {
		name   string
		cp     store.Checkpoint
		events []store.Event
	}{
		{"other state", other, evs},
		{"other parent, a root", checkpoint("t", 2, 0), evs},
		{"other parent, a newer one", checkpoint("t", 2, 3), evs},
		{"other event payload", orig, changed(1, event("b", `{"n":3}`))},
		{"other event type", orig, changed(1, event("B", `{"n":2}`))},
		{"other event seq", orig, changed(2, store.Event{Seq: 7, Type: "c", Payload: []byte(`{}`)})},
		{"one event fewer", orig, evs[:2]},
		{"one event more", orig, append(slices.Clone(evs), event("d", `{}`))},
		{"no events", orig, nil},
		{"events on a checkpoint that had none", checkpoint("t", 3, 2), evs[:1]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantIs(t, s.PutCheckpoint(t.Context(), tc.cp, tc.events), store.ErrConflict)
			got, err := s.Get(t.Context(), "t", 2)
			if err != nil {
				t.Fatalf("Get: %v", err)
			}
			wantCheckpoint(t, got, orig)
			wantEvents(t, s, "t", 2, evs)
			wantEvents(t, s, "t", 3, nil)
		})
	}
}

func testStale(t *testing.T, s store.Store) {
	put(t, s, checkpoint("t", 1, 0), event("one", `{}`))
	put(t, s, checkpoint("t", 3, 1), event("three", `{}`))
	put(t, s, checkpoint("u", 5, 0))
	for _, tc := range []struct {
		name string
		cp   store.Checkpoint
	}{
		{"lower id", checkpoint("t", 2, 1)},
		{"lower id, a root", checkpoint("t", 2, 0)},
		{"lower id, missing parent", checkpoint("t", 2, 99)}, // staleness is checked first
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantIs(t, s.PutCheckpoint(t.Context(), tc.cp, []store.Event{event("two", `{}`)}), store.ErrStale)
			if _, err := s.Get(t.Context(), "t", 2); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("stale checkpoint was stored (Get: %v)", err)
			}
			wantEvents(t, s, "t", 0, []store.Event{
				{CheckpointID: 1, Seq: 1, Type: "one", Payload: []byte(`{}`)},
				{CheckpointID: 3, Seq: 1, Type: "three", Payload: []byte(`{}`)},
			})
			if got, err := s.Latest(t.Context(), "t"); err != nil || got.ID != 3 {
				t.Errorf("Latest = %d, %v; want 3", got.ID, err)
			}
		})
	}
	put(t, s, checkpoint("u", 6, 5)) // other threads keep their own newest
}

// Racing writers of one key: exactly one wins, the others see a conflict
// (or a no-op for the same content), and nothing is written twice.
func testConcurrent(t *testing.T, s store.Store) {
	const n = 8
	race := func(put func(i int) error) (wins, conflicts int) {
		errs := make(chan error, n)
		for i := range n {
			go func() { errs <- put(i) }()
		}
		for range n {
			switch err := <-errs; {
			case err == nil:
				wins++
			case errors.Is(err, store.ErrConflict):
				conflicts++
			default:
				t.Errorf("racing put: %v", err)
			}
		}
		return wins, conflicts
	}
	ctx := t.Context()
	mine := func(i int) []byte { return fmt.Appendf(nil, `{"writer":%d}`, i) }
	wins, _ := race(func(i int) error {
		return s.PutCheckpoint(ctx, store.Checkpoint{ThreadID: "t", ID: 1, State: mine(i)}, []store.Event{event("e", string(mine(i)))})
	})
	got, err := s.Get(ctx, "t", 1)
	if wins != 1 || err != nil {
		t.Fatalf("%d of %d different puts of one id won (Get: %v), want exactly 1", wins, n, err)
	}
	wantEvents(t, s, "t", 1, []store.Event{{Type: "e", Payload: got.State}})

	if wins, _ := race(func(int) error { return s.PutCheckpoint(ctx, checkpoint("t", 2, 1), []store.Event{event("e", `{}`)}) }); wins != n {
		t.Errorf("%d of %d identical puts succeeded, want all", wins, n)
	}
	wantEvents(t, s, "t", 2, []store.Event{event("e", `{}`)})

	wins, _ = race(func(i int) error {
		return s.PutWrites(ctx, store.TaskWrites{ThreadID: "t", CheckpointID: 2, TaskID: "task", Writes: mine(i)})
	})
	if ws, err := s.Writes(ctx, "t", 2); wins != 1 || err != nil || len(ws) != 1 {
		t.Errorf("%d of %d different writes of one task won, %d stored (%v); want 1 and 1", wins, n, len(ws), err)
	}

	// Writers of separate threads and readers do not disturb each other.
	done := make(chan error, n)
	for i := range n {
		go func() {
			thread := fmt.Sprint("w", i)
			for id := int64(1); id <= 10; id++ {
				if err := s.PutCheckpoint(ctx, checkpoint(thread, id, id-1), nil); err != nil {
					done <- err
					return
				}
				if h, err := s.History(ctx, thread, 0, 0); err != nil || len(h) != int(id) {
					done <- fmt.Errorf("History(%s) = %d checkpoints, %v; want %d", thread, len(h), err, id)
					return
				}
			}
			done <- nil
		}()
	}
	for range n {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

func testWrites(t *testing.T, s store.Store) {
	put(t, s, checkpoint("t", 1, 0))
	put(t, s, checkpoint("t", 2, 1))
	put(t, s, checkpoint("u", 3, 0))
	start := time.Now()
	tasks := []string{"b", "a", "B", "a\u00e9", "a1"} // sorted bytewise: B a a1 aé b
	for _, task := range tasks {
		putWrites(t, s, writes("t", 2, task))
	}
	putWrites(t, s, writes("t", 1, "x"))
	got, err := s.Writes(t.Context(), "t", 2)
	if err != nil {
		t.Fatalf("Writes: %v", err)
	}
	var order []string
	for _, w := range got {
		order = append(order, w.TaskID)
		want := writes("t", 2, w.TaskID)
		if w.ThreadID != "t" || w.CheckpointID != 2 || !sameJSON(w.Writes, want.Writes) {
			t.Errorf("Writes returned %s/%d/%q %s, want %s", w.ThreadID, w.CheckpointID, w.TaskID, clip(string(w.Writes)), want.Writes)
		}
		if w.CreatedAt.Before(start.Add(-5*time.Minute)) || w.CreatedAt.After(time.Now().Add(5*time.Minute)) {
			t.Errorf("CreatedAt = %v, want about %v", w.CreatedAt, start)
		}
	}
	if want := []string{"B", "a", "a1", "a\u00e9", "b"}; !slices.Equal(order, want) {
		t.Errorf("Writes task order = %q, want %q (bytewise)", order, want)
	}
	wantTasks(t, s, "t", 1, "x")
	wantTasks(t, s, "t", 3)
	// Checkpoint 0: the whole thread's, by checkpoint then task.
	all, err := s.Writes(t.Context(), "t", 0)
	if err != nil {
		t.Fatalf("Writes of the whole thread: %v", err)
	}
	var keys []string
	for _, w := range all {
		keys = append(keys, fmt.Sprintf("%d/%s", w.CheckpointID, w.TaskID))
		if want := writes("t", w.CheckpointID, w.TaskID); w.ThreadID != "t" || !sameJSON(w.Writes, want.Writes) {
			t.Errorf("Writes(0) returned %s/%d/%q %s, want %s", w.ThreadID, w.CheckpointID, w.TaskID, clip(string(w.Writes)), want.Writes)
		}
	}
	if want := []string{"1/x", "2/B", "2/a", "2/a1", "2/a\u00e9", "2/b"}; !slices.Equal(keys, want) {
		t.Errorf("Writes(0) = %q, want %q (by checkpoint, then task bytewise)", keys, want)
	}
	wantTasks(t, s, "u", 0)
	wantTasks(t, s, "nope", 0)
	wantTasks(t, s, "nope", 1)
	wantTasks(t, s, "u", 3)

	// Idempotence and conflicts.
	putWrites(t, s, writes("t", 2, "a"))
	again := writes("t", 2, "a")
	again.Writes = reformat(t, again.Writes)
	putWrites(t, s, again)
	changed := writes("t", 2, "a")
	changed.Writes = []byte(`{"other":true}`)
	wantIs(t, s.PutWrites(t.Context(), changed), store.ErrConflict)
	got, _ = s.Writes(t.Context(), "t", 2)
	if len(got) != len(tasks) {
		t.Errorf("Writes has %d entries after re-puts, want %d", len(got), len(tasks))
	}
	for _, w := range got {
		if w.TaskID == "a" && !sameJSON(w.Writes, writes("t", 2, "a").Writes) {
			t.Errorf("a conflicting put changed the writes to %s", w.Writes)
		}
	}

	// The checkpoint must exist, in the same thread.
	for _, w := range []store.TaskWrites{writes("t", 9, "a"), writes("nope", 1, "a"), writes("u", 1, "a"), writes("t", 3, "a")} {
		wantIs(t, s.PutWrites(t.Context(), w), store.ErrNotFound)
		wantTasks(t, s, w.ThreadID, w.CheckpointID)
	}
}

func testSettles(t *testing.T, s store.Store) {
	ctx := t.Context()
	put(t, s, checkpoint("t", 1, 0))
	putWrites(t, s, writes("t", 1, "a"))
	putWrites(t, s, writes("t", 1, "b"))
	put(t, s, checkpoint("other", 1, 0))
	putWrites(t, s, writes("other", 1, "a"))
	// A refused put settles nothing.
	cp2 := delta("t", 2, 1)
	cp2.Settles = 1
	unfenced := cp2
	unfenced.Epoch = 5 // never handed out
	wantRefused(t, s.PutCheckpoint(ctx, unfenced, nil), "never handed out")
	wantTasks(t, s, "t", 1, "a", "b")
	put(t, s, cp2)
	wantTasks(t, s, "t", 1)
	wantTasks(t, s, "other", 1, "a")
	put(t, s, cp2) // redelivered: still a no-op
	bad := delta("t", 3, 2)
	bad.Settles = 1
	wantRefused(t, s.PutCheckpoint(ctx, bad, nil), "only settle its parent")
}

// testWritersCreatedAt: a CreatedAt the writer gives is the row's (and its
// events' and new messages', and the thread's UpdatedAt), to the
// microsecond, on every read; a no-op re-put with another time keeps the
// first; a zero one is the store's clock.
func testWritersCreatedAt(t *testing.T, s store.Store) {
	ctx := t.Context()
	at := time.Date(2021, 3, 4, 5, 6, 7, 123456000, time.UTC) // long ago: no store's clock gives it
	same := func(what string, got time.Time) {
		t.Helper()
		if !got.Equal(at) {
			t.Errorf("%s created %v, want the writer's %v", what, got, at)
		}
	}
	cp := checkpoint("t", 1, 0)
	cp.CreatedAt = at
	m := message(1, "where is SO20260901?")
	cp.Messages = []store.Message{m}
	put(t, s, cp, event("node.started", `{"node":"planner"}`))
	d := delta("t", 2, 1)
	d.CreatedAt = at.In(time.FixedZone("east", 5*3600)) // the same instant, written elsewhere
	put(t, s, d)

	got, err := s.Get(ctx, "t", 1)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	same("Get @1", got.CreatedAt)
	chain, err := s.Chain(ctx, "t", 2)
	if err != nil || len(chain) != 2 {
		t.Fatalf("Chain = %d rows, %v; want 2", len(chain), err)
	}
	same("Chain @2", chain[0].CreatedAt)
	same("Chain @1", chain[1].CreatedAt)
	latest, err := s.Latest(ctx, "t")
	if err != nil {
		t.Fatalf("Latest: %v", err)
	}
	same("Latest", latest.CreatedAt)
	h, err := s.History(ctx, "t", 0, 0)
	if err != nil || len(h) != 2 {
		t.Fatalf("History = %d rows, %v; want 2", len(h), err)
	}
	same("History @2", h[0].CreatedAt)
	same("History @1", h[1].CreatedAt)
	evs, err := s.Events(ctx, "t", 1)
	if err != nil || len(evs) != 1 {
		t.Fatalf("Events = %v, %v; want 1", evs, err)
	}
	same("the event of @1", evs[0].CreatedAt)
	ms, err := s.MessagesAt(ctx, "t", 1)
	if err != nil || len(ms) != 1 {
		t.Fatalf("MessagesAt = %v, %v; want 1", ms, err)
	}
	same("message #1", ms[0].CreatedAt)
	th, err := s.Threads(ctx)
	if err != nil || len(th) != 1 {
		t.Fatalf("Threads = %v, %v; want 1", th, err)
	}
	same("Threads' UpdatedAt", th[0].UpdatedAt)

	// A re-put of the same content is a no-op, whatever time it brings.
	again := checkpoint("t", 1, 0)
	again.CreatedAt = at.Add(time.Hour)
	if err := s.PutCheckpoint(ctx, again, []store.Event{event("node.started", `{"node":"planner"}`)}); err != nil {
		t.Fatalf("re-put: %v, want nil", err)
	}
	if got, err := s.Get(ctx, "t", 1); err != nil || !got.CreatedAt.Equal(at) {
		t.Errorf("after a no-op re-put @1 created %v (%v), want still %v", got.CreatedAt, err, at)
	}

	// Without one, the store's clock.
	start := time.Now()
	put(t, s, delta("t", 3, 2))
	if got, err := s.Get(ctx, "t", 3); err != nil || got.CreatedAt.Before(start.Add(-5*time.Minute)) || got.CreatedAt.After(time.Now().Add(5*time.Minute)) {
		t.Errorf("@3 put without a CreatedAt was created %v (%v), want about %v", got.CreatedAt, err, start)
	}
}
