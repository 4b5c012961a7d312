package storetest

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"rewind/store"
)

// Get, Latest, History and Chain: one checkpoint, the newest, the listing
// (metadata only), and a delta's chain back to its base.

func testLatest(t *testing.T, s store.Store) {
	put(t, s, checkpoint("t", 1, 0))
	put(t, s, checkpoint("t", 2, 1))
	put(t, s, checkpoint("t", 5, 1)) // a fork with a gap in the ids
	put(t, s, checkpoint("u", 9, 0))
	got, err := s.Latest(t.Context(), "t")
	if err != nil {
		t.Fatalf("Latest: %v", err)
	}
	wantCheckpoint(t, got, checkpoint("t", 5, 1))
	put(t, s, checkpoint("t", 7, 2))
	if got, err := s.Latest(t.Context(), "t"); err != nil || got.ID != 7 || got.ParentID != 2 {
		t.Errorf("Latest after a fork from 2 = %d (parent %d), %v; want 7 (parent 2)", got.ID, got.ParentID, err)
	}
}

func testNotFound(t *testing.T, s store.Store) {
	put(t, s, checkpoint("a", 1, 0))
	put(t, s, checkpoint("a", 2, 1))
	put(t, s, checkpoint("b", 1, 0))
	ctx := t.Context()
	for _, tc := range []struct {
		name string
		call func() error
	}{
		{"unknown thread", func() error { _, err := s.Get(ctx, "nope", 1); return err }},
		{"unknown id", func() error { _, err := s.Get(ctx, "a", 3); return err }},
		{"id of another thread", func() error { _, err := s.Get(ctx, "b", 2); return err }},
		{"id zero", func() error { _, err := s.Get(ctx, "a", 0); return err }},
		{"negative id", func() error { _, err := s.Get(ctx, "a", -1); return err }},
		{"empty thread", func() error { _, err := s.Get(ctx, "", 1); return err }},
		{"latest of unknown thread", func() error { _, err := s.Latest(ctx, "nope"); return err }},
		{"latest of empty thread id", func() error { _, err := s.Latest(ctx, ""); return err }},
	} {
		t.Run(tc.name, func(t *testing.T) { wantIs(t, tc.call(), store.ErrNotFound) })
	}
}

func testHistory(t *testing.T, s store.Store) {
	for id := int64(1); id <= 10; id++ {
		put(t, s, checkpoint("t", id, id-1))
	}
	for id := int64(1); id <= 3; id++ {
		put(t, s, checkpoint("other", id, id-1))
	}
	for _, tc := range []struct {
		before int64
		limit  int
		want   []int64
	}{
		{0, 0, ids(10, 1)},
		{-1, -1, ids(10, 1)},
		{5, 0, ids(4, 1)},
		{0, 3, ids(10, 8)},
		{5, 2, ids(4, 3)},
		{11, 0, ids(10, 1)},
		{100, 1, ids(10, 10)},
		{1, 0, nil},
		{0, 100, ids(10, 1)},
	} {
		t.Run(fmt.Sprintf("before=%d,limit=%d", tc.before, tc.limit), func(t *testing.T) {
			got, err := s.History(t.Context(), "t", tc.before, tc.limit)
			if err != nil {
				t.Fatalf("History: %v", err)
			}
			if !slices.Equal(idsOf(got), tc.want) {
				t.Fatalf("History ids = %v, want %v", idsOf(got), tc.want)
			}
			for _, cp := range got {
				wantCheckpoint(t, cp, checkpoint("t", cp.ID, cp.ID-1))
			}
		})
	}
	t.Run("unknown thread", func(t *testing.T) {
		got, err := s.History(t.Context(), "nope", 0, 0)
		if err != nil || len(got) != 0 {
			t.Errorf("History of an unknown thread = %v, %v; want an empty list and no error", idsOf(got), err)
		}
	})
}

func testForks(t *testing.T, s store.Store) {
	// 1 ← 2 ← 3, and 2 has three more children: 4, 5 and 6 (← 7).
	parents := map[int64]int64{1: 0, 2: 1, 3: 2, 4: 2, 5: 2, 6: 2, 7: 6}
	for id := int64(1); id <= 7; id++ {
		put(t, s, checkpoint("t", id, parents[id]))
	}
	for id, parent := range parents {
		got, err := s.Get(t.Context(), "t", id)
		if err != nil {
			t.Fatalf("Get %d: %v", id, err)
		}
		wantCheckpoint(t, got, checkpoint("t", id, parent))
	}
	history, err := s.History(t.Context(), "t", 0, 0)
	if err != nil || !slices.Equal(idsOf(history), ids(7, 1)) {
		t.Errorf("History = %v, %v; want %v", idsOf(history), err, ids(7, 1))
	}

	// The parent must exist in the same thread; a failed put leaves no trace,
	// so the next id is still free afterwards.
	put(t, s, checkpoint("u", 1, 0))
	for _, cp := range []store.Checkpoint{
		checkpoint("t", 8, 99),
		checkpoint("t", 8, 8),
		checkpoint("u", 2, 7), // 7 exists, but in thread t
		checkpoint("new", 1, 1),
	} {
		err := s.PutCheckpoint(t.Context(), cp, []store.Event{event("x", `{}`)})
		wantIs(t, err, store.ErrNotFound)
		if _, err := s.Get(t.Context(), cp.ThreadID, cp.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("checkpoint %d of %s with a missing parent was stored (Get: %v)", cp.ID, cp.ThreadID, err)
		}
	}
	put(t, s, checkpoint("t", 8, 3))
	put(t, s, checkpoint("u", 2, 1))
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

func chainIDs(t *testing.T, s store.Store, thread string, id int64) []int64 {
	t.Helper()
	rows, err := s.Chain(t.Context(), thread, id)
	if err != nil {
		t.Fatalf("Chain(%s, %d): %v", clip(thread), id, err)
	}
	return idsOf(rows)
}

// testChainAcrossBranches: two branches whose ids interleave, a base on
// one of them, a rebased row: Chain follows the parents, never the ids.
func testChainAcrossBranches(t *testing.T, s store.Store) {
	ctx := t.Context()
	put(t, s, checkpoint("t", 1, 0))
	put(t, s, delta("t", 2, 1))
	for id := int64(3); id <= 10; id++ { // odd ids fork from 2, even ones go on from it
		parent := id - 2
		if id == 3 {
			parent = 2
		}
		put(t, s, delta("t", id, parent))
	}
	put(t, s, checkpoint("t", 11, 9)) // a base on the odd branch
	put(t, s, delta("t", 12, 10))     // the even branch goes on past it
	put(t, s, delta("t", 13, 11))
	for _, tc := range []struct {
		id   int64
		want []int64
	}{
		{10, []int64{10, 8, 6, 4, 2, 1}},
		{9, []int64{9, 7, 5, 3, 2, 1}},
		{11, []int64{11}},
		{12, []int64{12, 10, 8, 6, 4, 2, 1}},
		{13, []int64{13, 11}},
	} {
		if got := chainIDs(t, s, "t", tc.id); !slices.Equal(got, tc.want) {
			t.Errorf("Chain(%d) = %v, want %v", tc.id, got, tc.want)
		}
	}
	// A rebased row stops the chain, the newest first.
	if _, err := s.Prune(ctx, "t", []int64{3}, []store.Rebase{{ID: 5, State: checkpoint("t", 5, 0).State}}); err != nil {
		t.Fatalf("Prune: %v", err)
	}
	if got := chainIDs(t, s, "t", 9); !slices.Equal(got, []int64{9, 7, 5}) {
		t.Errorf("Chain(9) after 5 was rebased = %v, want [9 7 5]", got)
	}
	if got := chainIDs(t, s, "t", 12); !slices.Equal(got, []int64{12, 10, 8, 6, 4, 2, 1}) {
		t.Errorf("Chain(12) after a prune of the other branch = %v, want [12 10 8 6 4 2 1]", got)
	}
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
