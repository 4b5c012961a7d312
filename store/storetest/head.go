package storetest

import (
	"fmt"
	"slices"
	"testing"

	"rewind/store"
)

// headDoc is a head snapshot's document for checkpoint id.
func headDoc(id int64) []byte {
	return fmt.Appendf(nil, `{"whole":%d,"head":true}`, id)
}

func withHead(cp store.Checkpoint) store.Checkpoint {
	cp.Head = headDoc(cp.ID)
	return cp
}

// testHeadSnapshot: the head snapshot is read with its checkpoint only,
// stops a chain like a base, is replaced by the next put that has one,
// is not content, never listed, counted by Size, and goes with a prune
// and with the thread.
func testHeadSnapshot(t *testing.T, s store.Store) {
	headStored(t, s)
	headNotContent(t, s)
	headReplaced(t, s)
	headPruned(t, s)
	headDeleted(t, s)
	headRefused(t, s)
}

// headStored: a put's snapshot is its row's alone, read by Get and Chain
// (which stops at it), never by History.
func headStored(t *testing.T, s store.Store) {
	ctx := t.Context()
	put(t, s, checkpoint("t", 1, 0))
	put(t, s, delta("t", 2, 1))
	put(t, s, withHead(delta("t", 3, 2)))
	put(t, s, delta("t", 4, 3)) // no snapshot: 3's stays
	put(t, s, delta("t", 5, 2)) // a fork below the snapshot

	wantHead(t, s, 3, headDoc(3))
	wantHead(t, s, 2, nil)
	wantHead(t, s, 4, nil)
	for _, tc := range []struct {
		id   int64
		want []int64
	}{{3, []int64{3}}, {4, []int64{4, 3}}, {5, []int64{5, 2, 1}}, {2, []int64{2, 1}}} {
		if got := chainIDs(t, s, "t", tc.id); !slices.Equal(got, tc.want) {
			t.Errorf("Chain(%d) with a snapshot at 3 = %v, want %v", tc.id, got, tc.want)
		}
	}
	rows, err := s.Chain(ctx, "t", 4)
	if err != nil || len(rows) != 2 || !sameJSON(rows[1].Head, headDoc(3)) || len(rows[0].Head) != 0 {
		t.Errorf("Chain(4) should carry 3's snapshot on row 3 only: %v", err)
	}
	if latest, err := s.Latest(ctx, "t"); err != nil || latest.ID != 5 || len(latest.Head) != 0 {
		t.Errorf("Latest = %d head %s, %v; want 5 without a snapshot", latest.ID, latest.Head, err)
	}
	h, err := s.History(ctx, "t", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, cp := range h {
		if len(cp.Head) != 0 {
			t.Errorf("History row %d carries the snapshot: a listing reads metadata only", cp.ID)
		}
	}
}

// headNotContent: a snapshot is not content: the same put without it, or with another, is a no-op
// that leaves the snapshot.
func headNotContent(t *testing.T, s store.Store) {
	put(t, s, delta("t", 3, 2))
	other := delta("t", 3, 2)
	other.Head = []byte(`{"other":1}`)
	put(t, s, other)
	wantHead(t, s, 3, headDoc(3))
}

// headReplaced: a newer snapshot replaces the older one, and Size counts it.
func headReplaced(t *testing.T, s store.Store) {
	ctx := t.Context()
	before, err := s.Size(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	big := delta("t", 6, 5)
	big.Head = []byte(`{"text":` + jsonString(hugeText(4000)) + `}`)
	put(t, s, big)
	after, err := s.Size(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	row := delta("t", 6, 5)
	if grew := after - before; grew < int64(len(row.State)+len(big.Head)-len(headDoc(3))) {
		t.Errorf("Size grew by %d for a row of %d bytes with a %d-byte snapshot replacing a %d-byte one: the snapshot is not counted",
			grew, len(row.State), len(big.Head), len(headDoc(3)))
	}
	wantHead(t, s, 3, nil) // replaced
	if got := chainIDs(t, s, "t", 4); !slices.Equal(got, []int64{4, 3, 2, 1}) {
		t.Errorf("Chain(4) once the snapshot moved on = %v, want [4 3 2 1]", got)
	}
	if latest, err := s.Latest(ctx, "t"); err != nil || !sameJSON(latest.Head, big.Head) {
		t.Errorf("Latest should carry its snapshot: %v", err)
	}
	if got := chainIDs(t, s, "t", 6); !slices.Equal(got, []int64{6}) {
		t.Errorf("Chain(6) = %v, want [6]", got)
	}
}

// headPruned: a prune drops it (its document may hold a blob the prune frees).
func headPruned(t *testing.T, s store.Store) {
	ctx := t.Context()
	if _, err := s.Prune(ctx, "t", []int64{4}, nil); err != nil {
		t.Fatalf("Prune: %v", err)
	}
	if cp, err := s.Get(ctx, "t", 6); err != nil || len(cp.Head) != 0 {
		t.Errorf("Get(6) after a prune: head %q, %v; want no snapshot", cp.Head, err)
	}
	if got := chainIDs(t, s, "t", 6); !slices.Equal(got, []int64{6, 5, 2, 1}) {
		t.Errorf("Chain(6) after the prune = %v, want [6 5 2 1]", got)
	}
}

// headDeleted: it goes with the thread: the same ids written again have none.
func headDeleted(t *testing.T, s store.Store) {
	ctx := t.Context()
	put(t, s, withHead(delta("t", 7, 6)))
	if err := s.DeleteThread(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	for id := int64(1); id <= 7; id++ {
		cp := delta("t", id, id-1)
		if id == 1 {
			cp = checkpoint("t", 1, 0)
		}
		put(t, s, cp)
	}
	if cp, err := s.Get(ctx, "t", 7); err != nil || len(cp.Head) != 0 {
		t.Errorf("Get(7) of the thread written again: head %q, %v; want none", cp.Head, err)
	}
	if n, err := s.Size(ctx, "t"); err != nil || n <= 0 {
		t.Fatalf("Size: %d, %v", n, err)
	}
	if got := chainIDs(t, s, "t", 7); len(got) != 7 {
		t.Errorf("Chain(7) of the thread written again = %v: an old snapshot survived DeleteThread", got)
	}
}

// headRefused: a snapshot that is not JSON is refused, and nothing is stored.
func headRefused(t *testing.T, s store.Store) {
	ctx := t.Context()
	bad := delta("t", 8, 7)
	bad.Head = []byte(`{"broken":`)
	wantIs(t, s.PutCheckpoint(ctx, bad, nil), store.ErrInvalid)
	if _, err := s.Get(ctx, "t", 8); err == nil {
		t.Errorf("a put with a broken snapshot stored its row")
	}
}

// wantHead checks the snapshot Get(id) of thread t reads, and that the
// state is as put.
func wantHead(t *testing.T, s store.Store, id int64, want []byte) {
	t.Helper()
	cp, err := s.Get(t.Context(), "t", id)
	if err != nil {
		t.Fatalf("Get(%d): %v", id, err)
	}
	if !sameJSON(cp.Head, want) || len(want) == 0 && len(cp.Head) != 0 {
		t.Errorf("Get(%d).Head = %s, want %s", id, cp.Head, want)
	}
	if !sameJSON(cp.State, delta("t", id, 0).State) && id != 1 {
		t.Errorf("Get(%d).State = %s: a snapshot does not change the state as put", id, cp.State)
	}
}
