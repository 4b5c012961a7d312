// Package statewalk streams every checkpoint of a thread with its state,
// oldest first (Engine.EachState, `rewind log --values`): what
// LangGraph's list() yields. It plans the reads from the listings: the
// rows between two rows that read on their own come in one Chain read,
// and each checkpoint is replayed from its parent, so a long thread costs
// one replay of each checkpoint's own writes, not a read of its chain.
package statewalk

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"rewind/engine/chainformat"
	"rewind/store"
)

// window caps the rows one Chain read brings. A window never crosses a
// row that reads on its own, so on a branch that forks nowhere in it it
// is at most a base interval.
const window = 64

// page is how many listings a History read brings.
const page = 2000

// Rows is what the walk reads of the store.
type Rows interface {
	History(ctx context.Context, thread string, before int64, limit int) ([]store.Checkpoint, error)
	Chain(ctx context.Context, thread string, id int64) ([]store.Checkpoint, error)
}

// Walk is one engine's walk: its store, how it rebuilds a chain (from a
// checkpoint cached offers, as Engine.read does), which rows read on
// their own, and its Get for a checkpoint the plan's read did not bring.
type Walk struct {
	Rows       Rows
	Rebuild    func(ctx context.Context, chain []store.Checkpoint, cached func(store.Checkpoint) (chainformat.Checkpoint, bool)) (chainformat.Checkpoint, error)
	ReadsAlone func(store.Checkpoint) bool
	Get        func(ctx context.Context, id int64) (chainformat.Checkpoint, error)
}

// listed is what the plan needs of a listing.
type listed struct {
	id, parent int64
	// alone: a row that reads on its own (a base, a whole legacy
	// document, a re-rooted row): a Chain read stops there.
	alone bool
}

// built is a rebuilt checkpoint with the row it was rebuilt from: the
// next row is replayed from it.
type built struct {
	row store.Checkpoint
	cp  chainformat.Checkpoint
}

// Each calls f with the newest limit (all when limit ≤ 0) of thread's
// checkpoints with an id below before (all when before ≤ 0), of every
// branch, oldest first, and returns how many it listed. A checkpoint
// pruned between its listing and its read is left out (the walk is not
// one snapshot: its windows are read one after another). f's error stops
// the walk and is returned.
func (w Walk) Each(ctx context.Context, thread string, before int64, limit int, f func(chainformat.Checkpoint) error) (int, error) {
	ls, err := w.ascending(ctx, thread, before, limit)
	if err != nil {
		return 0, err
	}
	var recent map[int64]built
	for i := 0; i < len(ls); {
		j := i
		for j+1 < len(ls) && j+1-i < window && !ls[j+1].alone && ls[j+1].parent == ls[j].id {
			j++
		}
		win := ls[i : j+1]
		last := win[len(win)-1].id
		rows, err := w.Rows.Chain(ctx, thread, last)
		if errors.Is(err, store.ErrNotFound) {
			rows = nil // pruned since its listing: the others are read alone
		} else if err != nil {
			return i, fmt.Errorf("read checkpoint %d of thread %q: %w", last, store.Name(thread), err)
		}
		next, err := w.replay(ctx, rows, recent)
		if err != nil {
			return i, err
		}
		for _, l := range win {
			b, ok := next[l.id]
			if !ok {
				// Not in the chain read (it stopped at the head snapshot
				// below it, or the row changed since its listing): read
				// it alone.
				b.cp, err = w.Get(ctx, l.id)
				if errors.Is(err, store.ErrNotFound) {
					continue // pruned since its listing: no longer the thread's
				}
				if err != nil {
					return i, err
				}
			}
			if err := f(b.cp); err != nil {
				return i, err
			}
		}
		recent = next
		i = j + 1
	}
	return len(ls), nil
}

// replay rebuilds the rows of one Chain read (newest first), oldest
// first, each from its parent: one this walk rebuilt already (recent),
// the row before it, or none where the row reads on its own.
func (w Walk) replay(ctx context.Context, rows []store.Checkpoint, recent map[int64]built) (map[int64]built, error) {
	out := make(map[int64]built, len(rows))
	for _, row := range slices.Backward(rows) {
		if b, ok := recent[row.ID]; ok && sameRow(b.row, row) {
			out[row.ID] = b
			continue
		}
		chain := []store.Checkpoint{row}
		var cached func(store.Checkpoint) (chainformat.Checkpoint, bool)
		alone := w.ReadsAlone(row)
		if p, ok := out[row.ParentID]; ok && row.ParentID != 0 && !alone {
			chain = append(chain, p.row)
			cached = func(r store.Checkpoint) (chainformat.Checkpoint, bool) { return p.cp, r.ID == p.row.ID }
		} else if !alone {
			continue // its parent is not in this read: nothing to replay from
		}
		cp, err := w.Rebuild(ctx, chain, cached)
		if err != nil {
			return nil, err
		}
		out[row.ID] = built{row: row, cp: cp}
	}
	return out, nil
}

// sameRow says two reads of a checkpoint's row are the same row (a
// thread deleted and written again between two windows has new rows
// under old ids).
func sameRow(a, b store.Checkpoint) bool {
	return a.ID == b.ID && a.ParentID == b.ParentID && a.CreatedAt.Equal(b.CreatedAt) && string(a.Meta) == string(b.Meta) && string(a.State) == string(b.State)
}

// ascending is the listings the walk reads, oldest first, read a page at
// a time (listings only: no state).
func (w Walk) ascending(ctx context.Context, thread string, before int64, limit int) ([]listed, error) {
	var out []listed
	for {
		n := page
		if limit > 0 {
			n = min(page, limit-len(out))
		}
		rows, err := w.Rows.History(ctx, thread, before, n)
		if err != nil {
			return nil, fmt.Errorf("read history of thread %q: %w", store.Name(thread), err)
		}
		for _, r := range rows {
			out = append(out, listed{id: r.ID, parent: r.ParentID, alone: r.Base || len(r.Meta) == 0 || r.ParentID == 0})
		}
		if len(rows) < n || (limit > 0 && len(out) >= limit) {
			break
		}
		before = rows[len(rows)-1].ID
	}
	slices.Reverse(out)
	return out, nil
}
