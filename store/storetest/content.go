package storetest

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"rewind/store"
)

// Long conversations: metadata-only listings, delta chains read back to
// their base in one call, messages and blobs stored once by hash, task
// writes settled by the checkpoint that folds them in, prune rebasing and
// freeing blobs, and a thread's size.

func delta(thread string, id, parent int64) store.Checkpoint {
	cp := checkpoint(thread, id, parent)
	cp.Base = false
	cp.State = fmt.Appendf(nil, `{"v":2,"delta":%d}`, id)
	return cp
}

func withMeta(cp store.Checkpoint) store.Checkpoint {
	cp.Meta = fmt.Appendf(nil, `{"step":%d,"next":["executor"]}`, cp.ID)
	return cp
}

func message(index int64, text string) store.Message {
	body := fmt.Appendf(nil, `{"index":%d,"role":"user","content":%s}`, index, jsonString(text))
	return store.Message{Hash: store.ContentHash(body), Index: index, Body: body}
}

func blob(text string) store.Blob {
	body := []byte(jsonString(text))
	return store.Blob{Hash: store.ContentHash(body), Body: body}
}

func chainIDs(t *testing.T, s store.Store, thread string, id int64) []int64 {
	t.Helper()
	rows, err := s.Chain(t.Context(), thread, id)
	if err != nil {
		t.Fatalf("Chain(%s, %d): %v", clip(thread), id, err)
	}
	return idsOf(rows)
}

func testHistoryMetaOnly(t *testing.T, s store.Store) {
	ctx := t.Context()
	legacy := put(t, s, checkpoint("t", 1, 0))
	put(t, s, withMeta(checkpoint("t", 2, 1)))
	put(t, s, withMeta(delta("t", 3, 2)))
	h, err := s.History(ctx, "t", 0, 0)
	if err != nil {
		t.Fatalf("History: %v", err)
	}
	if len(h) != 3 {
		t.Fatalf("History has %d rows, want 3", len(h))
	}
	for _, cp := range h[:2] {
		if len(cp.State) != 0 || len(cp.Rebased) != 0 {
			t.Errorf("History row %d carries a state of %d bytes: a listing must read metadata only", cp.ID, len(cp.State))
		}
		if !sameJSON(cp.Meta, withMeta(checkpoint("t", cp.ID, 0)).Meta) {
			t.Errorf("History row %d meta = %s", cp.ID, cp.Meta)
		}
	}
	if h[0].Base || !h[1].Base {
		t.Errorf("History Base flags = %v, %v; want false for the delta, true for the base", h[0].Base, h[1].Base)
	}
	// A row without metadata (written before it existed) lists with its state.
	if !sameJSON(h[2].State, legacy.State) || len(h[2].Meta) != 0 {
		t.Errorf("History of a row without meta = meta %q state %q; want its state", h[2].Meta, h[2].State)
	}
	got, err := s.Get(ctx, "t", 3)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if !sameJSON(got.State, delta("t", 3, 2).State) || !sameJSON(got.Meta, withMeta(delta("t", 3, 2)).Meta) || got.Base {
		t.Errorf("Get(3) = state %s meta %s base %v", got.State, got.Meta, got.Base)
	}
	// Meta is part of the content: a different one is a conflict.
	other := withMeta(delta("t", 3, 2))
	other.Meta = []byte(`{"step":99}`)
	wantIs(t, s.PutCheckpoint(ctx, other, nil), store.ErrConflict)
	flipped := withMeta(delta("t", 3, 2))
	flipped.Base = true
	wantIs(t, s.PutCheckpoint(ctx, flipped, nil), store.ErrConflict)
	put(t, s, withMeta(delta("t", 3, 2))) // the same: a no-op
}

func testChain(t *testing.T, s store.Store) {
	ctx := t.Context()
	put(t, s, checkpoint("t", 1, 0))
	for id := int64(2); id <= 4; id++ {
		put(t, s, delta("t", id, id-1))
	}
	put(t, s, checkpoint("t", 5, 4))
	put(t, s, delta("t", 6, 5))
	put(t, s, delta("t", 7, 3)) // a fork from a delta
	put(t, s, delta("t", 8, 0)) // a delta without a parent stops the chain
	for _, tc := range []struct {
		id   int64
		want []int64
	}{{1, []int64{1}}, {4, []int64{4, 3, 2, 1}}, {5, []int64{5}}, {6, []int64{6, 5}}, {7, []int64{7, 3, 2, 1}}, {8, []int64{8}}} {
		if got := chainIDs(t, s, "t", tc.id); !slices.Equal(got, tc.want) {
			t.Errorf("Chain(%d) = %v, want %v", tc.id, got, tc.want)
		}
	}
	rows, err := s.Chain(ctx, "t", 7)
	if err != nil {
		t.Fatal(err)
	}
	for _, cp := range rows {
		want := delta("t", cp.ID, 0).State
		if cp.ID == 1 {
			want = checkpoint("t", 1, 0).State
		}
		if !sameJSON(cp.State, want) || cp.CreatedAt.IsZero() {
			t.Errorf("Chain row %d state = %s (created %v), want %s", cp.ID, cp.State, cp.CreatedAt, want)
		}
	}
	for _, id := range []int64{0, 9} {
		_, err := s.Chain(ctx, "t", id)
		wantIs(t, err, store.ErrNotFound)
	}
	_, err = s.Chain(ctx, "nope", 1)
	wantIs(t, err, store.ErrNotFound)
}

func testMessagesOnce(t *testing.T, s store.Store) {
	ctx := t.Context()
	m1, m2 := message(1, "where is SO20260901?"), message(2, "it shipped")
	cp1 := checkpoint("t", 1, 0)
	cp1.Messages = []store.Message{m1}
	put(t, s, cp1)
	cp2 := delta("t", 2, 1)
	cp2.Messages = []store.Message{m1, m2} // m1 again: already stored
	put(t, s, cp2)
	// A fork writes a different #2.
	f2 := message(2, "it was cancelled")
	cp3 := delta("t", 3, 1)
	cp3.Messages = []store.Message{f2}
	put(t, s, cp3)

	got, err := s.Messages(ctx, "t", []string{m2.Hash, m1.Hash, m1.Hash, strings.Repeat("0", store.HashLen)})
	if err != nil {
		t.Fatalf("Messages: %v", err)
	}
	slices.SortFunc(got, func(a, b store.Message) int { return int(a.Index - b.Index) })
	if len(got) != 2 || string(got[0].Body) != string(m1.Body) || string(got[1].Body) != string(m2.Body) {
		t.Fatalf("Messages = %d messages %v, want #1 and #2 byte for byte", len(got), got)
	}
	if got[0].CheckpointID != 1 || got[1].CheckpointID != 2 || got[0].Hash != m1.Hash || got[0].CreatedAt.IsZero() {
		t.Errorf("Messages first stored by checkpoints %d and %d (hash %s), want 1 and 2", got[0].CheckpointID, got[1].CheckpointID, got[0].Hash)
	}
	at, err := s.MessagesAt(ctx, "t", 2)
	if err != nil {
		t.Fatalf("MessagesAt: %v", err)
	}
	if len(at) != 2 || at[0].Hash != m2.Hash || at[1].Hash != f2.Hash || at[1].CheckpointID != 3 {
		t.Errorf("MessagesAt(2) = %v, want the main branch's #2 then the fork's", at)
	}
	if none, err := s.MessagesAt(ctx, "t", 7); err != nil || len(none) != 0 {
		t.Errorf("MessagesAt(7) = %v, %v; want none", none, err)
	}
	if none, err := s.Messages(ctx, "nope", []string{m1.Hash}); err != nil || len(none) != 0 {
		t.Errorf("Messages of an unknown thread = %v, %v; want none", none, err)
	}
	// Messages go with their checkpoint or not at all.
	bad := delta("t", 3, 1)
	lost := message(3, "never stored")
	bad.Messages = []store.Message{lost}
	bad.State = []byte(`{"different":true}`)
	wantIs(t, s.PutCheckpoint(ctx, bad, nil), store.ErrConflict)
	if got, _ := s.Messages(ctx, "t", []string{lost.Hash}); len(got) != 0 {
		t.Errorf("a refused put stored its message")
	}
	forged := delta("t", 4, 3)
	forged.Messages = []store.Message{{Hash: m1.Hash, Index: 3, Body: []byte(`{"index":3}`)}}
	wantRefused(t, s.PutCheckpoint(ctx, forged, nil), "hashes to")
	forged.Messages = []store.Message{{Hash: "x", Index: 3, Body: []byte(`not json`)}}
	wantRefused(t, s.PutCheckpoint(ctx, forged, nil), "not valid JSON")
	if _, err := s.Get(ctx, "t", 4); err == nil {
		t.Errorf("a refused put stored its checkpoint")
	}
}

func testBlobsOnce(t *testing.T, s store.Store) {
	ctx := t.Context()
	big := blob(strings.Repeat("inline attachment ", 300))
	cp1 := checkpoint("t", 1, 0)
	cp1.Blobs, cp1.BlobRefs = []store.Blob{big}, []string{big.Hash}
	put(t, s, cp1)
	before, err := s.Size(ctx, "t")
	if err != nil {
		t.Fatalf("Size: %v", err)
	}
	for id := int64(2); id <= 5; id++ {
		cp := delta("t", id, id-1)
		cp.Blobs, cp.BlobRefs = []store.Blob{big}, []string{big.Hash}
		put(t, s, cp)
	}
	after, err := s.Size(ctx, "t")
	if err != nil {
		t.Fatalf("Size: %v", err)
	}
	if grew := after - before; grew >= int64(len(big.Body)) {
		t.Errorf("4 more checkpoints holding the same %d-byte blob grew the thread by %d bytes: a blob is stored once", len(big.Body), grew)
	}
	got, err := s.Blobs(ctx, "t", []string{big.Hash, big.Hash, strings.Repeat("a", store.HashLen)})
	if err != nil || len(got) != 1 || string(got[0].Body) != string(big.Body) || got[0].Hash != big.Hash {
		t.Fatalf("Blobs = %d blobs, %v; want the one, byte for byte", len(got), err)
	}
	bad := delta("t", 6, 5)
	bad.BlobRefs = []string{"not-a-hash"}
	wantRefused(t, s.PutCheckpoint(ctx, bad, nil), "not a content hash")
	bad.BlobRefs, bad.Blobs = nil, []store.Blob{{Hash: big.Hash, Body: []byte(`"other"`)}}
	wantRefused(t, s.PutCheckpoint(ctx, bad, nil), "hashes to")
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

func testPruneRebase(t *testing.T, s store.Store) {
	ctx := t.Context()
	old, kept := blob(strings.Repeat("old ", 500)), blob(strings.Repeat("kept ", 500))
	m := message(1, "the original")
	cp1 := checkpoint("t", 1, 0)
	cp1.Blobs, cp1.BlobRefs, cp1.Messages = []store.Blob{old}, []string{old.Hash}, []store.Message{m}
	put(t, s, cp1)
	put(t, s, delta("t", 2, 1))
	cp3 := delta("t", 3, 2)
	cp3.Blobs, cp3.BlobRefs = []store.Blob{kept}, []string{kept.Hash}
	put(t, s, cp3)
	put(t, s, delta("t", 4, 3))
	put(t, s, checkpoint("t", 5, 2)) // a fork that is a base

	// Pruning 1-2 re-roots 3 (a delta) and 5 (a base): 3 needs a rebase.
	_, err := s.Prune(ctx, "t", []int64{1, 2}, nil)
	wantRefused(t, err, "leave checkpoint 3 unreadable")
	_, err = s.Prune(ctx, "t", []int64{1, 2}, []store.Rebase{{ID: 3, State: []byte(`{"whole":3}`)}, {ID: 4, State: []byte(`{}`)}})
	wantRefused(t, err, "does not re-root")
	_, err = s.Prune(ctx, "t", []int64{1, 2}, []store.Rebase{{ID: 3, State: []byte(`{"whole":3}`)}, {ID: 5, State: []byte(`{}`)}})
	wantRefused(t, err, "already reads on its own")
	if ids := chainIDs(t, s, "t", 4); !slices.Equal(ids, []int64{4, 3, 2, 1}) {
		t.Fatalf("a refused prune changed the chain of 4 to %v", ids)
	}

	res, err := s.Prune(ctx, "t", []int64{1, 2}, []store.Rebase{{ID: 3, State: []byte(`{"whole":3}`), BlobRefs: []string{kept.Hash}}})
	if err != nil {
		t.Fatalf("Prune: %v", err)
	}
	if !slices.Equal(res.Rerooted, []store.Reroot{{ID: 3, From: 2}, {ID: 5, From: 2}}) || res.Blobs != 1 {
		t.Errorf("Prune = %+v, want 3 and 5 re-rooted and the old blob freed", res)
	}
	rows, err := s.Chain(ctx, "t", 4)
	if err != nil {
		t.Fatalf("Chain: %v", err)
	}
	if ids := idsOf(rows); !slices.Equal(ids, []int64{4, 3}) {
		t.Fatalf("Chain(4) after prune = %v, want [4 3]: a rebased checkpoint reads on its own", ids)
	}
	if !sameJSON(rows[1].Rebased, []byte(`{"whole":3}`)) || !sameJSON(rows[1].State, cp3.State) {
		t.Errorf("rebased row: state %s, rebased %s; want the state as put and the rebase", rows[1].State, rows[1].Rebased)
	}
	if got, err := s.Get(ctx, "t", 3); err != nil || !sameJSON(got.Rebased, []byte(`{"whole":3}`)) {
		t.Errorf("Get(3).Rebased = %s, %v", got.Rebased, err)
	}
	if h, _ := s.History(ctx, "t", 0, 0); len(h) > 0 && len(h[0].Rebased) != 0 {
		t.Errorf("History carries Rebased: a listing reads metadata only")
	}
	// A redelivered put of the delta as first written is still a no-op.
	put(t, s, cp3)
	if got, _ := s.Blobs(ctx, "t", []string{old.Hash, kept.Hash}); len(got) != 1 || got[0].Hash != kept.Hash {
		t.Errorf("blobs after prune = %v, want only the one a kept checkpoint refers to", got)
	}
	// The raw transcript survives prune.
	if got, _ := s.Messages(ctx, "t", []string{m.Hash}); len(got) != 1 {
		t.Errorf("prune deleted a message: messages stay until the thread is deleted")
	}
	// Pruning the rebased checkpoint re-roots its delta child, which needs
	// a rebase of its own.
	if _, err := s.Prune(ctx, "t", []int64{3}, []store.Rebase{{ID: 4, State: []byte(`{"whole":4}`)}}); err != nil {
		t.Fatalf("Prune(3): %v", err)
	}
	if ids := chainIDs(t, s, "t", 4); !slices.Equal(ids, []int64{4}) {
		t.Errorf("Chain(4) = %v, want [4]", ids)
	}
	if got, _ := s.Blobs(ctx, "t", []string{kept.Hash}); len(got) != 0 {
		t.Errorf("the blob only pruned checkpoint 3 referred to survived")
	}
}

func testSize(t *testing.T, s store.Store) {
	ctx := t.Context()
	if n, err := s.Size(ctx, "t"); err != nil || n != 0 {
		t.Fatalf("Size of an unknown thread = %d, %v; want 0", n, err)
	}
	cp := withMeta(checkpoint("t", 1, 0))
	m := message(1, strings.Repeat("x", 1000))
	b := blob("a blob")
	cp.Messages, cp.Blobs, cp.BlobRefs = []store.Message{m}, []store.Blob{b}, []string{b.Hash}
	put(t, s, cp, event("e", `{"n":1}`))
	n1, err := s.Size(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	min1 := int64(len(cp.State) + len(cp.Meta) + len(m.Body) + len(b.Body))
	if n1 < min1 || n1 > 2*min1+500 {
		t.Errorf("Size after one checkpoint = %d, want about %d (its documents and the message)", n1, min1)
	}
	cp2 := delta("t", 2, 1)
	cp2.Messages = []store.Message{m} // already stored
	put(t, s, cp2)
	n2, _ := s.Size(ctx, "t")
	if grew := n2 - n1; grew < int64(len(cp2.State)) || grew >= int64(len(m.Body)) {
		t.Errorf("a delta repeating a stored message grew the thread by %d bytes, want its own %d plus row overhead", grew, len(cp2.State))
	}
	putWrites(t, s, writes("t", 2, "a"))
	if n3, _ := s.Size(ctx, "t"); n3-n2 < int64(len(writes("t", 2, "a").Writes)) {
		t.Errorf("task writes grew the thread by %d bytes", n3-n2)
	}
	put(t, s, checkpoint("u", 1, 0))
	if err := s.DeleteThread(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.Size(ctx, "t"); n != 0 {
		t.Errorf("Size after DeleteThread = %d, want 0", n)
	}
	if got, _ := s.Messages(ctx, "t", []string{m.Hash}); len(got) != 0 {
		t.Errorf("DeleteThread left a message")
	}
	if got, _ := s.Blobs(ctx, "t", []string{b.Hash}); len(got) != 0 {
		t.Errorf("DeleteThread left a blob")
	}
	if n, _ := s.Size(ctx, "u"); n == 0 {
		t.Errorf("DeleteThread emptied another thread")
	}
}
