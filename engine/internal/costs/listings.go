package costs

import (
	"context"
	"fmt"

	"rewind/engine/chainformat"
	"rewind/store"
)

// listings reads a thread's listings a page at a time, and keeps them.
type listings struct {
	src    Source
	thread string
	byID   map[int64]Checkpoint
	// top are the newest listings read from the newest down, newest
	// first; bottom says that they reach the thread's oldest.
	top    []Checkpoint
	bottom bool
	// first is how many of the newest listings the first read takes (0:
	// firstPage).
	first int
}

func newListings(src Source, thread string) *listings {
	return &listings{src: src, thread: thread, byID: map[int64]Checkpoint{}}
}

// page is how many listings a read of listings takes; the first of the
// newest, firstPage: a turn's first checkpoint reads back to the turn
// before (turnListings, as the ticket graph's turns go).
const (
	page         = 32
	firstPage    = 16
	turnListings = 8
)

func (l *listings) read(ctx context.Context, before int64, limit int) ([]Checkpoint, error) {
	got, err := l.src.History(ctx, l.thread, before, limit)
	for _, cp := range got {
		l.byID[cp.ID] = cp
	}
	return got, err
}

// more reads the next page of the newest listings; false at the oldest.
func (l *listings) more(ctx context.Context) (bool, error) {
	if l.bottom {
		return false, nil
	}
	before := int64(0)
	if len(l.top) > 0 {
		before = l.top[len(l.top)-1].ID
	}
	limit := page
	if before == 0 {
		limit = max(l.first, firstPage)
	}
	got, err := l.read(ctx, before, limit)
	if err != nil {
		return false, err
	}
	l.top = append(l.top, got...)
	l.bottom = len(got) < limit
	return len(got) > 0, nil
}

// get is listing id, read with the page below it when not read yet.
func (l *listings) get(ctx context.Context, id int64) (Checkpoint, bool, error) {
	if cp, ok := l.byID[id]; ok {
		return cp, true, nil
	}
	if _, err := l.read(ctx, id+1, firstPage); err != nil {
		return Checkpoint{}, false, err
	}
	cp, ok := l.byID[id]
	return cp, ok, nil
}

// own is what checkpoint cp's stored calls cost, by role.
func (l *listings) own(ctx context.Context, cp Checkpoint) (map[string]RoleUsage, error) {
	if !cp.TokensUnlisted() {
		return cp.Metadata.Tokens, nil
	}
	cs, err := l.src.StoredCalls(ctx, l.thread, cp.ID)
	if err != nil {
		return nil, err
	}
	return calls(map[string]RoleUsage{}, cs), nil
}

// newest reads the newest listings down to the first checkpoint of the
// newest turn that has running totals (nil when none has), and on to
// the newest n turns' first checkpoints, at least.
func (l *listings) newest(ctx context.Context, n int) (*Checkpoint, error) {
	// The n turns, and the one under way, in one read when their turns go
	// as the ticket graph's do: each read of a new process costs about as
	// much as its rows.
	l.first = (n + 1) * turnListings
	var summed *Checkpoint
	starts := 0
	for i := 0; ; i++ {
		if i == len(l.top) {
			more, err := l.more(ctx)
			if err != nil {
				return nil, err
			}
			if !more {
				return summed, nil
			}
		}
		cp := l.top[i]
		if !turnStart(cp) {
			continue
		}
		starts++
		if summed == nil {
			if cp.Metadata.Sums == nil {
				return nil, nil // stored before turns kept them
			}
			summed = &l.top[i]
		}
		if starts >= n {
			return summed, nil
		}
	}
}

// branch walks from id back to its turn's first checkpoint and sums the
// chain: the checkpoints on it (id first), and what the root's chain to
// the turn's parent cost (the turn's Sums). ok is false when the turn's
// first checkpoint has no Sums.
func (l *listings) branch(ctx context.Context, id int64) (chain []Checkpoint, before map[string]RoleUsage, ok bool, err error) {
	name := store.Name(l.thread)
	for next := id; next != 0; {
		cp, found, err := l.get(ctx, next)
		if err != nil {
			return nil, nil, false, err
		}
		if !found {
			if next == id {
				return nil, nil, false, l.src.NotFound(l.thread, id)
			}
			return nil, nil, false, fmt.Errorf("thread %q: checkpoint %d has parent %d, which is missing: %w", name, chain[len(chain)-1].ID, next, chainformat.ErrCorrupt)
		}
		chain = append(chain, cp)
		if turnStart(cp) {
			if cp.Metadata.Sums == nil {
				return nil, nil, false, nil
			}
			return chain, cp.Metadata.Sums.Branch, true, nil
		}
		if cp.ParentID >= cp.ID {
			return nil, nil, false, fmt.Errorf("thread %q: checkpoint %d has parent %d, which is not older: %w", name, cp.ID, cp.ParentID, chainformat.ErrCorrupt)
		}
		next = cp.ParentID
	}
	return chain, nil, true, nil // no turn began on it: the root's chain whole
}

// costs is At from running totals; ok is false when the thread's
// listings do not hold them (At then reads every listing).
func (l *listings) costs(ctx context.Context, head int64) (Costs, bool, error) {
	summed, err := l.newest(ctx, Turns)
	if err != nil || summed == nil {
		if err == nil && len(l.top) == 0 {
			err = l.src.NotFound(l.thread, 0)
		}
		return Costs{}, false, err
	}
	if head == 0 {
		head = l.top[0].ID
	}
	chain, before, ok, err := l.branch(ctx, head)
	if err != nil || !ok {
		return Costs{}, false, err
	}
	// The newest turns: each checkpoint of the newest listings belongs to
	// the turn its parents lead back to, if that turn is one of them.
	t := newTally(head, turnStarts(l.byID, l.top[len(l.top)-1].ID))
	for role, r := range summed.Metadata.Sums.Thread {
		addTo(t.out.Roles, &t.out.Total, role, r)
	}
	for role, r := range before {
		addTo(t.out.Branch.Roles, &t.out.Branch.Total, role, r)
	}
	for _, cp := range chain {
		t.onBranch[cp.ID] = true
	}
	if start := chain[len(chain)-1]; turnStart(start) {
		t.last = &TurnUsage{Start: start.ID, Roles: map[string]RoleUsage{}}
		t.inLast = func(int64) bool { return true } // the chain is the turn's
	}
	count := summed.Metadata.Sums.Turns
	for _, cp := range l.top {
		if cp.ID >= summed.ID && turnStart(cp) {
			count++
		}
		if turnStart(cp) && len(t.turns) < Turns {
			t.turns[cp.ID] = &TurnUsage{Start: cp.ID, Roles: map[string]RoleUsage{}}
		}
	}
	for _, cp := range uniq(l.top, chain) {
		own, err := l.own(ctx, cp)
		if err != nil {
			return Costs{}, false, err
		}
		for role, r := range own {
			t.add(cp.ID, cp.ID >= summed.ID, role, r)
		}
	}
	if err := l.pendingCalls(ctx, t); err != nil {
		return Costs{}, false, err
	}
	out := t.result()
	out.EarlierTurns = count - len(out.Turns)
	return out, true, nil
}

// pendingCalls adds the model calls of tasks that finished before a crash
// or a stop: their calls were made, though no checkpoint holds them yet.
// One query for the thread.
func (l *listings) pendingCalls(ctx context.Context, t *tally) error {
	pending, err := l.src.PendingWrites(ctx, l.thread)
	if err != nil {
		return err
	}
	for i := 0; i < len(pending); {
		at := pending[i].CheckpointID
		j := i
		for j < len(pending) && pending[j].CheckpointID == at {
			j++
		}
		group := pending[i:j]
		i = j
		cp, found, err := l.get(ctx, at)
		if err != nil {
			return err
		}
		if !found || len(cp.Tasks) == 0 {
			continue
		}
		cs, err := l.src.WriteCalls(l.thread, at, group)
		if err != nil {
			return err
		}
		for _, c := range cs {
			t.add(cp.ID, true, c.Role, oneCall(c))
		}
	}
	return nil
}
