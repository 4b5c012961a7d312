package storetest

import (
	"context"
	"fmt"
	"slices"
	"strings"
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

// testDeleteForgetsBodies: a deleted thread's messages and blobs are gone
// with it, also as hashes the store knows: the thread started again
// stores the same messages and blobs anew (first stored by its own
// checkpoints), and reads them back, while another thread's copies of
// the same bodies stay.
func testDeleteForgetsBodies(t *testing.T, s store.Store) {
	ctx := t.Context()
	m1, m2, b := message(1, "where is SO20260901?"), message(2, "it shipped"), blob(strings.Repeat("a long tool result ", 80))
	for _, th := range []string{"x", "y"} {
		cp1 := checkpoint(th, 1, 0)
		cp1.Messages, cp1.Blobs, cp1.BlobRefs = []store.Message{m1}, []store.Blob{b}, []string{b.Hash}
		put(t, s, cp1)
		cp2 := delta(th, 2, 1)
		cp2.Messages = []store.Message{m1, m2}
		put(t, s, cp2)
	}
	if err := s.DeleteThread(ctx, "x"); err != nil {
		t.Fatalf("DeleteThread: %v", err)
	}
	if got, err := s.Messages(ctx, "x", []string{m1.Hash, m2.Hash}); err != nil || len(got) != 0 {
		t.Errorf("Messages of the deleted thread = %v, %v; want none", got, err)
	}
	if got, err := s.MessagesAt(ctx, "x", 1); err != nil || len(got) != 0 {
		t.Errorf("MessagesAt(1) of the deleted thread = %v, %v; want none", got, err)
	}
	if got, err := s.Blobs(ctx, "x", []string{b.Hash}); err != nil || len(got) != 0 {
		t.Errorf("Blobs of the deleted thread = %d, %v; want none", len(got), err)
	}
	// Its next life stores them again: #2 first, then #1 and the blob.
	again := checkpoint("x", 1, 0)
	again.Messages = []store.Message{m2}
	put(t, s, again)
	next := delta("x", 2, 1)
	next.Messages, next.Blobs, next.BlobRefs = []store.Message{m1, m2}, []store.Blob{b}, []string{b.Hash}
	put(t, s, next)
	got, err := s.Messages(ctx, "x", []string{m1.Hash, m2.Hash})
	if err != nil {
		t.Fatalf("Messages: %v", err)
	}
	slices.SortFunc(got, func(a, b store.Message) int { return int(a.Index - b.Index) })
	if len(got) != 2 || string(got[0].Body) != string(m1.Body) || got[0].CheckpointID != 2 || got[1].CheckpointID != 1 {
		t.Errorf("Messages of the thread started again = %v, want #1 first stored by checkpoint 2 and #2 by 1", got)
	}
	if at, err := s.MessagesAt(ctx, "x", 1); err != nil || len(at) != 1 || at[0].Hash != m1.Hash {
		t.Errorf("MessagesAt(1) of the thread started again = %v, %v; want #1", at, err)
	}
	msgs, blobs, err := s.Bodies(ctx, "x", []string{m1.Hash}, []string{b.Hash})
	if err != nil || len(msgs) != 1 || len(blobs) != 1 || string(blobs[0].Body) != string(b.Body) {
		t.Errorf("Bodies of the thread started again = %d messages, %d blobs, %v; want one of each", len(msgs), len(blobs), err)
	}
	// The other thread kept its own copies throughout.
	if got, err := s.Messages(ctx, "y", []string{m1.Hash, m2.Hash}); err != nil || len(got) != 2 {
		t.Errorf("Messages of the other thread = %d, %v; want both", len(got), err)
	}
	if got, err := s.Blobs(ctx, "y", []string{b.Hash}); err != nil || len(got) != 1 {
		t.Errorf("Blobs of the other thread = %d, %v; want its blob", len(got), err)
	}
}

// secretThread writes a thread whose every row holds text: checkpoints
// (one whose state is large), events, task writes, messages, a blob, and
// a draft when the store keeps drafts; its id holds it too.
func secretThread(t *testing.T, s store.Store, text string) string {
	t.Helper()
	thread := "secret " + text
	body := func(n int) []byte { return fmt.Appendf(nil, `{"text":%s}`, jsonString(strings.Repeat(text+" ", n))) }
	m := store.Message{Hash: store.ContentHash(body(3)), Index: 0, Body: body(3)}
	b := store.Blob{Hash: store.ContentHash(body(2000)), Body: body(2000)}
	cps := []store.Checkpoint{
		{ThreadID: thread, ID: 1, State: body(1), Meta: body(1), Base: true, Messages: []store.Message{m}},
		{ThreadID: thread, ID: 2, ParentID: 1, State: body(5000), Meta: body(1), BlobRefs: []string{b.Hash}, Blobs: []store.Blob{b}},
	}
	for _, cp := range cps {
		put(t, s, cp, store.Event{Type: "said " + text, Payload: body(1)})
		putWrites(t, s, store.TaskWrites{ThreadID: thread, CheckpointID: cp.ID, TaskID: "task " + text, Writes: body(50)})
	}
	if d, ok := s.(store.Drafts); ok {
		if _, _, err := d.CreateDraft(t.Context(), store.Draft{ThreadID: thread, OperationID: "op " + text, Body: body(1)}); err != nil {
			t.Fatalf("CreateDraft: %v", err)
		}
	}
	return thread
}

// testDeleteErases: with no reader, a deleted thread's text is erased at
// once: Unerased is "" before and after the delete, on the deleting
// handle. A cancelled context fails it.
func testDeleteErases(t *testing.T, s store.Store) {
	e, ok := s.(store.Erasing)
	if !ok {
		t.Fatalf("the backend declares %s, but %T is no store.Erasing", Erasure, s)
	}
	ctx := t.Context()
	if u, err := e.Unerased(ctx); u != "" || err != nil {
		t.Errorf("Unerased of a new store = %q, %v; want \"\"", u, err)
	}
	put(t, s, checkpoint("kept", 1, 0))
	thread := secretThread(t, s, "SENTINEL-erased")
	if err := s.DeleteThread(ctx, thread); err != nil {
		t.Fatalf("DeleteThread: %v", err)
	}
	if u, err := e.Unerased(ctx); u != "" || err != nil {
		t.Errorf("Unerased after a delete nothing else reads = %q, %v; want \"\": nothing keeps the text", u, err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err := e.Unerased(cancelled)
	wantIs(t, err, context.Canceled)
}
