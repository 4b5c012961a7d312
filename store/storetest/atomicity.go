package storetest

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"rewind/store"
)

// Atomicity (store.Store's doc): a refused or failed call leaves nothing
// behind, bytes are never shared with the caller, a cancelled context does
// nothing.

func testRejectedPut(t *testing.T, s store.Store) {
	ok := event("ok", `{}`)
	for _, tc := range []struct {
		name   string
		cp     store.Checkpoint
		events []store.Event
	}{
		{"bad third event", checkpoint("t", 1, 0), []store.Event{ok, ok, event("bad", `{"n":`)}},
		{"duplicate seq", checkpoint("t", 1, 0), []store.Event{{Seq: 1, Type: "a"}, {Seq: 2, Type: "b"}, {Seq: 1, Type: "c"}}},
		{"missing parent", checkpoint("t", 1, 5), []store.Event{ok, ok}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := s.PutCheckpoint(t.Context(), tc.cp, tc.events); err == nil {
				t.Fatal("PutCheckpoint succeeded, want an error")
			}
			if th, err := s.Threads(t.Context()); err != nil || len(th) != 0 {
				t.Errorf("Threads after a rejected put = %v, %v; want none", th, err)
			}
			wantEvents(t, s, "t", 0, nil)
		})
	}
	// Nothing of the rejected puts remains: id 1 is neither stale nor taken.
	put(t, s, checkpoint("t", 1, 0), ok)
	wantEvents(t, s, "t", 1, []store.Event{ok})
}

func testNoAliasing(t *testing.T, s store.Store) {
	ctx := t.Context()
	cp := checkpoint("t", 1, 0)
	ev := event("e", `{"a":"b"}`)
	w := writes("t", 1, "task")
	orig, origEv, origW := bytes.Clone(cp.State), bytes.Clone(ev.Payload), bytes.Clone(w.Writes)
	put(t, s, cp, ev)
	putWrites(t, s, w)
	scribble := func(b []byte) {
		for i := range b {
			b[i] = ' '
		}
	}
	scribble(cp.State)
	scribble(ev.Payload)
	scribble(w.Writes)
	for range 2 {
		got, _ := s.Get(ctx, "t", 1)
		latest, _ := s.Latest(ctx, "t")
		history, _ := s.History(ctx, "t", 0, 0)
		evs, _ := s.Events(ctx, "t", 1)
		ws, _ := s.Writes(ctx, "t", 1)
		if len(history) != 1 || len(evs) != 1 || len(ws) != 1 {
			t.Fatalf("History, Events, Writes = %d, %d, %d entries; want 1 each", len(history), len(evs), len(ws))
		}
		for _, b := range []struct{ got, want []byte }{
			{got.State, orig}, {latest.State, orig}, {history[0].State, orig}, {evs[0].Payload, origEv}, {ws[0].Writes, origW},
		} {
			if !sameJSON(b.got, b.want) {
				t.Fatalf("stored bytes changed with the caller's buffer: %q, want %q", clip(string(b.got)), b.want)
			}
			scribble(b.got) // must not reach the store either
		}
	}
}

func testCancelled(t *testing.T, s store.Store) {
	put(t, s, checkpoint("t", 1, 0))
	putWrites(t, s, writes("t", 1, "a"))
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	expired, cancel2 := context.WithDeadline(t.Context(), time.Now().Add(-time.Second))
	defer cancel2()
	calls := []struct {
		name string
		call func(ctx context.Context) error
	}{
		{"PutCheckpoint", func(ctx context.Context) error {
			return s.PutCheckpoint(ctx, checkpoint("t", 2, 1), []store.Event{event("e", `{}`)})
		}},
		{"PutCheckpoint new thread", func(ctx context.Context) error { return s.PutCheckpoint(ctx, checkpoint("new", 1, 0), nil) }},
		{"PutWrites", func(ctx context.Context) error { return s.PutWrites(ctx, writes("t", 1, "b")) }},
		{"Get", func(ctx context.Context) error { _, err := s.Get(ctx, "t", 1); return err }},
		{"Latest", func(ctx context.Context) error { _, err := s.Latest(ctx, "t"); return err }},
		{"History", func(ctx context.Context) error { _, err := s.History(ctx, "t", 0, 0); return err }},
		{"Writes", func(ctx context.Context) error { _, err := s.Writes(ctx, "t", 1); return err }},
		{"Events", func(ctx context.Context) error { _, err := s.Events(ctx, "t", 0); return err }},
		{"Threads", func(ctx context.Context) error { _, err := s.Threads(ctx); return err }},
		{"Bodies", func(ctx context.Context) error {
			_, _, err := s.Bodies(ctx, "t", []string{strings.Repeat("0", store.HashLen)}, []string{strings.Repeat("1", store.HashLen)})
			return err
		}},
		{"DeleteThread", func(ctx context.Context) error { return s.DeleteThread(ctx, "t") }},
		{"Prune", func(ctx context.Context) error { _, err := s.Prune(ctx, "t", []int64{1}, nil); return err }},
		{"Lock", func(ctx context.Context) error {
			release, err := s.Lock(ctx, "t")
			if err == nil {
				release()
			}
			return err
		}},
	}
	for _, c := range []struct {
		ctx  context.Context
		want error
	}{{cancelled, context.Canceled}, {expired, context.DeadlineExceeded}} {
		for _, tc := range calls {
			t.Run(fmt.Sprintf("%s/%v", tc.name, c.want), func(t *testing.T) {
				done := make(chan error, 1)
				go func() { done <- tc.call(c.ctx) }()
				select {
				case err := <-done:
					wantIs(t, err, c.want)
				case <-time.After(10 * time.Second):
					t.Fatal("call hangs on a cancelled context")
				}
			})
		}
	}
	// Nothing happened.
	if got, err := s.Latest(t.Context(), "t"); err != nil || got.ID != 1 {
		t.Errorf("Latest after cancelled calls = %d, %v; want 1", got.ID, err)
	}
	wantTasks(t, s, "t", 1, "a")
	wantEvents(t, s, "t", 0, nil)
	if th, err := s.Threads(t.Context()); err != nil || len(th) != 1 {
		t.Errorf("Threads after cancelled calls = %+v, %v; want only t", th, err)
	}
	release, err := s.Lock(t.Context(), "t")
	if err != nil {
		t.Fatalf("Lock after a cancelled Lock: %v", err)
	}
	release()
}
