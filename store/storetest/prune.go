package storetest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"rewind/store"
)

// Prune (retention): deletes checkpoints with their writes and events,
// re-roots what it orphans, rebases and frees blobs, keeps drafts and the
// head, and is atomic.

// link is one checkpoint's place in the chain: its parent, or the parent
// Prune deleted (from).
type link struct{ id, parent, from int64 }

// wantLinks checks the thread's whole chain, oldest first, through History
// and Get, and its head through Latest.
func wantLinks(t *testing.T, s store.Store, thread string, want ...link) {
	t.Helper()
	ctx := t.Context()
	h, err := s.History(ctx, thread, 0, 0)
	if err != nil {
		t.Fatalf("History(%s): %v", clip(thread), err)
	}
	got := make([]link, len(h))
	for i, cp := range h {
		got[len(h)-1-i] = link{cp.ID, cp.ParentID, cp.RerootedFrom}
	}
	if !slices.Equal(got, want) {
		t.Errorf("History(%s) as {id parent rerootedFrom} = %v, want %v", clip(thread), got, want)
	}
	for _, w := range want {
		cp, err := s.Get(ctx, thread, w.id)
		if err != nil {
			t.Errorf("Get(%s, %d): %v", clip(thread), w.id, err)
			continue
		}
		wantCheckpoint(t, cp, store.Checkpoint{ThreadID: thread, ID: w.id, ParentID: w.parent, RerootedFrom: w.from,
			State: checkpoint(thread, w.id, 0).State})
	}
	if len(want) > 0 {
		head := want[len(want)-1]
		if cp, err := s.Latest(ctx, thread); err != nil || (link{cp.ID, cp.ParentID, cp.RerootedFrom}) != head {
			t.Errorf("Latest(%s) = {%d %d %d}, %v; want %v", clip(thread), cp.ID, cp.ParentID, cp.RerootedFrom, err, head)
		}
	}
}

func prune(t *testing.T, s store.Store, thread string, ids ...int64) store.PruneResult {
	t.Helper()
	res, err := s.Prune(t.Context(), thread, ids, nil)
	if err != nil {
		t.Fatalf("Prune(%s, %v): %v", clip(thread), ids, err)
	}
	return res
}

func wantPruned(t *testing.T, got, want store.PruneResult) {
	t.Helper()
	if !slices.Equal(got.Deleted, want.Deleted) || got.Writes != want.Writes || got.Events != want.Events ||
		!slices.Equal(got.Rerooted, want.Rerooted) {
		t.Errorf("Prune = %+v, want %+v", got, want)
	}
}

// chain puts checkpoints 1..n of thread, each the child of the one before,
// with two events and one task's writes each.
func chain(t *testing.T, s store.Store, thread string, n int64) {
	t.Helper()
	for id := int64(1); id <= n; id++ {
		put(t, s, checkpoint(thread, id, id-1), event("a", fmt.Sprintf(`{"n":%d}`, id)), event("b", `{}`))
		putWrites(t, s, writes(thread, id, "task"))
	}
}

func testPruneDeletes(t *testing.T, s store.Store) {
	ctx := t.Context()
	const other = `u'; delete from graph_checkpoints;--`
	chain(t, s, "t", 6)
	chain(t, s, other, 6)
	putWrites(t, s, writes("t", 2, "second"))
	ds, hasDrafts := s.(store.Drafts) // a backend without Drafts has none to keep
	if hasDrafts {
		createDraft(t, ds, draft("t", "op-1", `{"to":"customer"}`), true)
	}
	epoch := fence(t, s, "t")

	res := prune(t, s, "t", 3, 1, 2, 1)
	wantPruned(t, res, store.PruneResult{Deleted: []int64{1, 2, 3}, Writes: 4, Events: 6, Rerooted: []store.Reroot{{ID: 4, From: 3}}})
	for id := int64(1); id <= 3; id++ {
		_, err := s.Get(ctx, "t", id)
		wantIs(t, err, store.ErrNotFound)
		wantTasks(t, s, "t", id)
		wantEvents(t, s, "t", id, nil)
	}
	wantLinks(t, s, "t", link{4, 0, 3}, link{5, 4, 0}, link{6, 5, 0})
	for id := int64(4); id <= 6; id++ {
		wantTasks(t, s, "t", id, "task")
		wantEvents(t, s, "t", id, []store.Event{event("a", fmt.Sprintf(`{"n":%d}`, id)), event("b", `{}`)})
	}
	if evs, err := s.Events(ctx, "t", 0); err != nil || len(evs) != 6 || evs[0].CheckpointID != 4 {
		t.Errorf("Events of the pruned thread = %d events, %v; want the 6 of checkpoints 4-6", len(evs), err)
	}
	// Side effects are records of what happened: they stay.
	if hasDrafts {
		wantDrafts(t, ds, "t", "op-1")
	}
	// So does the writer epoch: a fenced writer stays fenced.
	if got := fence(t, s, "t"); got != epoch+1 {
		t.Errorf("Fence after Prune = %d, want %d: Prune must keep the writer epoch", got, epoch+1)
	}
	// Writes for a pruned checkpoint have nowhere to go.
	wantIs(t, s.PutWrites(ctx, writes("t", 2, "late")), store.ErrNotFound)
	wantTasks(t, s, "t", 2)

	threads, err := s.Threads(ctx)
	if err != nil {
		t.Fatalf("Threads: %v", err)
	}
	var counts []string
	for _, th := range threads {
		counts = append(counts, fmt.Sprintf("%s:%d/%d", clip(th.ID), th.Checkpoints, th.LatestID))
	}
	if want := []string{"t:3/6", other + ":6/6"}; !slices.Equal(counts, want) {
		t.Errorf("Threads as id:checkpoints/latest = %q, want %q", counts, want)
	}

	// The other thread (with SQL in its id) is untouched, and prunes alike.
	wantLinks(t, s, other, link{1, 0, 0}, link{2, 1, 0}, link{3, 2, 0}, link{4, 3, 0}, link{5, 4, 0}, link{6, 5, 0})
	if evs, err := s.Events(ctx, other, 0); err != nil || len(evs) != 12 {
		t.Errorf("Events of the other thread = %d, %v; want 12", len(evs), err)
	}
	wantPruned(t, prune(t, s, other, 2), store.PruneResult{Deleted: []int64{2}, Writes: 1, Events: 2, Rerooted: []store.Reroot{{ID: 3, From: 2}}})
	wantLinks(t, s, other, link{1, 0, 0}, link{3, 0, 2}, link{4, 3, 0}, link{5, 4, 0}, link{6, 5, 0})
	wantLinks(t, s, "t", link{4, 0, 3}, link{5, 4, 0}, link{6, 5, 0})

	// Nothing to do is not an error; the thread must exist all the same.
	wantPruned(t, prune(t, s, "t"), store.PruneResult{})
	_, err = s.Prune(ctx, "never", nil, nil)
	wantIs(t, err, store.ErrNotFound)
}

// Re-rooting happens once per orphan: a checkpoint re-rooted earlier keeps
// its record, and a later prune re-roots the next orphan.
func testPruneReroots(t *testing.T, s store.Store) {
	chain(t, s, "t", 5)
	wantPruned(t, prune(t, s, "t", 2), store.PruneResult{Deleted: []int64{2}, Writes: 1, Events: 2, Rerooted: []store.Reroot{{ID: 3, From: 2}}})
	wantLinks(t, s, "t", link{1, 0, 0}, link{3, 0, 2}, link{4, 3, 0}, link{5, 4, 0})
	// Pruning the old root orphans nobody now.
	wantPruned(t, prune(t, s, "t", 1), store.PruneResult{Deleted: []int64{1}, Writes: 1, Events: 2})
	wantPruned(t, prune(t, s, "t", 3), store.PruneResult{Deleted: []int64{3}, Writes: 1, Events: 2, Rerooted: []store.Reroot{{ID: 4, From: 3}}})
	wantLinks(t, s, "t", link{4, 0, 3}, link{5, 4, 0})
	// A new checkpoint on the pruned chain is an ordinary child.
	put(t, s, checkpoint("t", 6, 4))
	wantLinks(t, s, "t", link{4, 0, 3}, link{5, 4, 0}, link{6, 4, 0})
}

// A fork whose branch point is pruned: both branches are re-rooted, each
// recording the same old parent; a branch whose parent stays is left alone.
func testPruneRerootsFork(t *testing.T, s store.Store) {
	//   1 ─ 2 ─ 3 ─ 4 ─ 8
	//        ╲
	//         5 ─ 6     7 (child of 1)
	chain(t, s, "t", 4)
	put(t, s, checkpoint("t", 5, 2), event("fork", `{}`))
	put(t, s, checkpoint("t", 6, 5))
	put(t, s, checkpoint("t", 7, 1))
	put(t, s, checkpoint("t", 8, 4))
	res := prune(t, s, "t", 2, 6)
	wantPruned(t, res, store.PruneResult{Deleted: []int64{2, 6}, Writes: 1, Events: 2,
		Rerooted: []store.Reroot{{ID: 3, From: 2}, {ID: 5, From: 2}}})
	wantLinks(t, s, "t", link{1, 0, 0}, link{3, 0, 2}, link{4, 3, 0}, link{5, 0, 2}, link{7, 1, 0}, link{8, 4, 0})
	wantEvents(t, s, "t", 5, []store.Event{event("fork", `{}`)})
	// Pruning a whole branch but its tip and the old root.
	wantPruned(t, prune(t, s, "t", 1, 3, 4), store.PruneResult{Deleted: []int64{1, 3, 4}, Writes: 3, Events: 6,
		Rerooted: []store.Reroot{{ID: 7, From: 1}, {ID: 8, From: 4}}})
	wantLinks(t, s, "t", link{5, 0, 2}, link{7, 0, 1}, link{8, 0, 4})
}

// One bad id and nothing is deleted or re-rooted.
func testPruneAtomic(t *testing.T, s store.Store) {
	ctx := t.Context()
	chain(t, s, "t", 4)
	chain(t, s, "u", 9)
	before := []link{{1, 0, 0}, {2, 1, 0}, {3, 2, 0}, {4, 3, 0}}
	for _, tc := range []struct {
		name string
		ids  []int64
		want error
	}{
		{"unknown id", []int64{1, 2, 99}, store.ErrNotFound},
		{"id of another thread", []int64{1, 7}, store.ErrNotFound},
		{"id zero", []int64{0, 1}, store.ErrNotFound},
		{"negative id", []int64{1, -2}, store.ErrNotFound},
		{"the head among them", []int64{1, 2, 4}, store.ErrInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := s.Prune(ctx, "t", tc.ids, nil)
			wantIs(t, err, tc.want)
			if len(res.Deleted) != 0 || len(res.Rerooted) != 0 {
				t.Errorf("a refused Prune reported %+v", res)
			}
			wantLinks(t, s, "t", before...)
			for id := int64(1); id <= 4; id++ {
				wantTasks(t, s, "t", id, "task")
			}
			if evs, err := s.Events(ctx, "t", 0); err != nil || len(evs) != 8 {
				t.Errorf("Events after a refused Prune = %d, %v; want all 8", len(evs), err)
			}
		})
	}
	_, err := s.Prune(ctx, "", []int64{1}, nil)
	wantIs(t, err, store.ErrNotFound)
	if h, err := s.History(ctx, "u", 0, 0); err != nil || len(h) != 9 {
		t.Errorf("History of the other thread = %v, %v; want 9 checkpoints", idsOf(h), err)
	}
}

// Prune never removes the newest checkpoint, even alone, so ids keep
// growing; a fork tip that is not the newest is fair game.
func testPruneHead(t *testing.T, s store.Store) {
	ctx := t.Context()
	chain(t, s, "t", 3)
	put(t, s, checkpoint("t", 4, 1))
	for _, ids := range [][]int64{{4}, {2, 4}, {4, 4}} {
		_, err := s.Prune(ctx, "t", ids, nil)
		wantIs(t, err, store.ErrInvalid)
		if errors.Is(err, store.ErrNotFound) {
			t.Errorf("Prune of the head matches ErrNotFound too: %v", err)
		}
	}
	wantLinks(t, s, "t", link{1, 0, 0}, link{2, 1, 0}, link{3, 2, 0}, link{4, 1, 0})
	wantPruned(t, prune(t, s, "t", 3), store.PruneResult{Deleted: []int64{3}, Writes: 1, Events: 2})
	wantLinks(t, s, "t", link{1, 0, 0}, link{2, 1, 0}, link{4, 1, 0})
}

// A pruned id is never free again: puts below the head stay stale, and a
// pruned checkpoint is no parent.
func testPrunedIDsStale(t *testing.T, s store.Store) {
	ctx := t.Context()
	chain(t, s, "t", 5)
	prune(t, s, "t", 1, 2, 3)
	for _, cp := range []store.Checkpoint{checkpoint("t", 2, 1), checkpoint("t", 2, 0), checkpoint("t", 3, 2)} {
		wantIs(t, s.PutCheckpoint(ctx, cp, nil), store.ErrStale)
		if _, err := s.Get(ctx, "t", cp.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("pruned id %d was stored again (Get: %v)", cp.ID, err)
		}
	}
	wantIs(t, s.PutCheckpoint(ctx, checkpoint("t", 6, 2), nil), store.ErrNotFound)
	wantLinks(t, s, "t", link{4, 0, 3}, link{5, 4, 0})
	put(t, s, checkpoint("t", 6, 4))
	wantLinks(t, s, "t", link{4, 0, 3}, link{5, 4, 0}, link{6, 4, 0})
}

// Re-rooting is not a change of content: the put that wrote a checkpoint
// and a put of it as read back are both no-ops; another parent conflicts.
// RerootedFrom is the store's to set, never the caller's.
func testPruneSameContent(t *testing.T, s store.Store) {
	ctx := t.Context()
	chain(t, s, "t", 4)
	prune(t, s, "t", 2)
	events := []store.Event{event("a", `{"n":3}`), event("b", `{}`)}
	if err := s.PutCheckpoint(ctx, checkpoint("t", 3, 2), events); err != nil {
		t.Errorf("redelivered put of a re-rooted checkpoint (its old parent) = %v, want a no-op", err)
	}
	readBack, err := s.Get(ctx, "t", 3)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if err := s.PutCheckpoint(ctx, readBack, events); err != nil {
		t.Errorf("put of a re-rooted checkpoint as read back (parent 0) = %v, want a no-op", err)
	}
	wantIs(t, s.PutCheckpoint(ctx, checkpoint("t", 3, 1), events), store.ErrConflict)
	wantIs(t, s.PutCheckpoint(ctx, checkpoint("t", 4, 0), []store.Event{event("a", `{"n":4}`), event("b", `{}`)}), store.ErrConflict)
	wantLinks(t, s, "t", link{1, 0, 0}, link{3, 0, 2}, link{4, 3, 0})

	cp := checkpoint("t", 5, 4)
	cp.RerootedFrom = 2
	put(t, s, cp)
	wantLinks(t, s, "t", link{1, 0, 0}, link{3, 0, 2}, link{4, 3, 0}, link{5, 4, 0})
}

// A put of a child of a checkpoint being pruned, and writes for it, race
// the Prune: whichever commits first, no kept checkpoint points at a
// missing parent, the loser gets ErrNotFound (never a raw error), and no
// writes are left for a pruned checkpoint.
func testPruneRaces(t *testing.T, s store.Store) {
	ctx := t.Context()
	for round := range 10 {
		thread := fmt.Sprint("race-", round)
		chain(t, s, thread, 3)
		var wg sync.WaitGroup
		var res store.PruneResult
		var pruneErr, putErr, writesErr error
		start := make(chan struct{})
		wg.Add(3)
		go func() { defer wg.Done(); <-start; res, pruneErr = s.Prune(ctx, thread, []int64{1, 2}, nil) }()
		go func() { defer wg.Done(); <-start; putErr = s.PutCheckpoint(ctx, checkpoint(thread, 4, 2), nil) }()
		go func() { defer wg.Done(); <-start; writesErr = s.PutWrites(ctx, writes(thread, 2, "late")) }()
		close(start)
		wg.Wait()
		if pruneErr != nil {
			t.Fatalf("round %d: Prune racing writers = %v, want success", round, pruneErr)
		}
		if putErr != nil && !errors.Is(putErr, store.ErrNotFound) {
			t.Errorf("round %d: put of a child of a pruned checkpoint = %v, want nil or ErrNotFound", round, putErr)
		}
		if writesErr != nil && !errors.Is(writesErr, store.ErrNotFound) {
			t.Errorf("round %d: writes for a pruned checkpoint = %v, want nil or ErrNotFound", round, writesErr)
		}
		want := []link{{3, 0, 2}}
		if putErr == nil {
			want = append(want, link{4, 0, 2})
		}
		wantLinks(t, s, thread, want...)
		if !slices.Equal(res.Rerooted, []store.Reroot{{ID: 3, From: 2}}) && !slices.Equal(res.Rerooted, []store.Reroot{{ID: 3, From: 2}, {ID: 4, From: 2}}) {
			t.Errorf("round %d: Prune re-rooted %v", round, res.Rerooted)
		}
		if (len(res.Rerooted) == 2) != (putErr == nil) {
			t.Errorf("round %d: the put %v, yet Prune re-rooted %v", round, putErr, res.Rerooted)
		}
		wantTasks(t, s, thread, 2)
	}
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
