package statewalk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"testing"

	"rewind/engine/chainformat"
	"rewind/store"
)

// fakeRows is a thread of rows whose "state" is the sum of the ids on the
// way from its base: a checkpoint replayed from the wrong parent sums
// wrong. head stops a Chain read as the head snapshot does.
type fakeRows struct {
	rows   map[int64]store.Checkpoint
	head   int64
	chains []int64
}

func (f *fakeRows) History(_ context.Context, _ string, before int64, limit int) ([]store.Checkpoint, error) {
	var ids []int64
	for id := range f.rows {
		if before <= 0 || id < before {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	slices.Reverse(ids)
	if limit > 0 && len(ids) > limit {
		ids = ids[:limit]
	}
	out := make([]store.Checkpoint, len(ids))
	for i, id := range ids {
		out[i] = f.rows[id]
	}
	return out, nil
}

func (f *fakeRows) Chain(_ context.Context, _ string, id int64) ([]store.Checkpoint, error) {
	f.chains = append(f.chains, id)
	var out []store.Checkpoint
	for {
		r, ok := f.rows[id]
		if !ok {
			return nil, store.ErrNotFound
		}
		out = append(out, r)
		if alone(r) || id == f.head {
			return out, nil
		}
		id = r.ParentID
	}
}

func alone(r store.Checkpoint) bool { return r.Base || r.ParentID == 0 }

// sum is what a checkpoint's state must be.
func (f *fakeRows) sum(id int64) int64 {
	r := f.rows[id]
	if alone(r) {
		return id
	}
	return id + f.sum(r.ParentID)
}

// check says whether cp holds the sum its place in the thread makes.
func (f *fakeRows) check(cp chainformat.Checkpoint) error {
	var s int64
	_ = json.Unmarshal(cp.Values["sum"], &s)
	if want := f.sum(cp.ID); s != want {
		return fmt.Errorf("checkpoint %d sums %d, want %d", cp.ID, s, want)
	}
	return nil
}

func (f *fakeRows) walk(gets *[]int64) Walk {
	return Walk{
		Rows:       f,
		ReadsAlone: func(r store.Checkpoint) bool { return alone(r) || r.ID == f.head },
		Rebuild: func(_ context.Context, chain []store.Checkpoint, cached func(store.Checkpoint) (chainformat.Checkpoint, bool)) (chainformat.Checkpoint, error) {
			row := chain[0]
			s := f.sum(row.ID) // a head or base reads on its own
			if len(chain) > 1 {
				p, ok := cached(chain[1])
				if !ok {
					return chainformat.Checkpoint{}, errors.New("a delta without its parent")
				}
				var ps int64
				_ = json.Unmarshal(p.Values["sum"], &ps)
				s = row.ID + ps
			}
			return chainformat.Checkpoint{ID: row.ID, ParentID: row.ParentID, Values: chainformat.Values{"sum": json.RawMessage(strconv.FormatInt(s, 10))}}, nil
		},
		Get: func(_ context.Context, id int64) (chainformat.Checkpoint, error) {
			*gets = append(*gets, id)
			if _, ok := f.rows[id]; !ok {
				return chainformat.Checkpoint{}, store.ErrNotFound
			}
			return chainformat.Checkpoint{ID: id, Values: chainformat.Values{"sum": json.RawMessage(strconv.FormatInt(f.sum(id), 10))}}, nil
		},
	}
}

// A thread of 100 checkpoints with a base every 32nd, a fork at 40 from
// 70 on, and the head snapshot at 60, in the middle of a window: every
// checkpoint comes once, oldest first, replayed from its own parent; one
// Chain read a window; only the rows below the head snapshot's stop are
// read alone.
func TestEachReplaysEveryCheckpointFromItsParent(t *testing.T) {
	f := &fakeRows{rows: map[int64]store.Checkpoint{}, head: 60}
	for id := int64(1); id <= 100; id++ {
		r := store.Checkpoint{ID: id, ParentID: id - 1, Meta: []byte("{}"), Base: id%32 == 1}
		if id == 70 {
			r.ParentID = 40 // a fork
		}
		f.rows[id] = r
	}
	var gets []int64
	var got []int64
	n, err := f.walk(&gets).Each(t.Context(), "t", 0, 0, func(cp chainformat.Checkpoint) error {
		got = append(got, cp.ID)
		return f.check(cp)
	})
	if err != nil || n != 100 {
		t.Fatalf("Each: %d, %v", n, err)
	}
	if len(got) != 100 || !slices.IsSorted(got) || got[0] != 1 {
		t.Fatalf("Each streamed %v", got)
	}
	// Windows end before each base (33, 65, 97) and at the fork (70).
	if want := []int64{32, 64, 69, 96, 100}; !slices.Equal(f.chains, want) {
		t.Fatalf("Chain read at %v, want %v", f.chains, want)
	}
	// The window 33…64 stops at the head snapshot (60): 33…59 read alone.
	if len(gets) != 27 || gets[0] != 33 || gets[26] != 59 {
		t.Fatalf("read alone: %v, want 33…59", gets)
	}
}

// A page of the walk: the newest limit below before, oldest first.
func TestEachPagesAsHistory(t *testing.T) {
	f := &fakeRows{rows: map[int64]store.Checkpoint{}}
	for id := int64(1); id <= 5000; id++ {
		f.rows[id] = store.Checkpoint{ID: id, ParentID: id - 1, Meta: []byte("{}"), Base: id%32 == 1}
	}
	var gets, got []int64
	n, err := f.walk(&gets).Each(t.Context(), "t", 4500, 2500, func(cp chainformat.Checkpoint) error {
		got = append(got, cp.ID)
		return nil
	})
	if err != nil || n != 2500 || len(got) != 2500 || got[0] != 2000 || got[2499] != 4499 || len(gets) != 0 {
		t.Fatalf("Each(before 4500, limit 2500): %d, %v, %d streamed (%v…), %d read alone", n, err, len(got), got[:min(3, len(got))], len(gets))
	}
}

// Checkpoints pruned while the walk runs (after their listing) are left
// out, the rest streamed: a window whose newest row is gone is read a
// checkpoint at a time, and a row re-rooted by the prune reads alone.
func TestEachLeavesOutWhatAPruneTookMeanwhile(t *testing.T) {
	f := &fakeRows{rows: map[int64]store.Checkpoint{}}
	for id := int64(1); id <= 100; id++ {
		f.rows[id] = store.Checkpoint{ID: id, ParentID: id - 1, Meta: []byte("{}"), Base: id%32 == 1}
	}
	var gets, got []int64
	_, err := f.walk(&gets).Each(t.Context(), "t", 0, 0, func(cp chainformat.Checkpoint) error {
		if cp.ID == 10 { // a prune, as the walk reads the first window
			for id := int64(60); id <= 64; id++ {
				delete(f.rows, id)
			}
			r := f.rows[65]
			r.ParentID = 0
			f.rows[65] = r
		}
		got = append(got, cp.ID)
		return f.check(cp)
	})
	if err != nil {
		t.Fatal(err)
	}
	var want []int64
	for id := int64(1); id <= 100; id++ {
		if id < 60 || id > 64 {
			want = append(want, id)
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("Each streamed %v\nwant all but 60…64", got)
	}
	if len(gets) != 32 || gets[0] != 33 || gets[31] != 64 {
		t.Fatalf("read alone: %v, want the window whose newest went, 33…64", gets)
	}
}
