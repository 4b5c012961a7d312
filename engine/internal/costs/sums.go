package costs

import (
	"context"
	"maps"
	"sync"
)

// SumsBefore are the running totals of a new turn's first checkpoint id,
// made from parent (0: none): from the newest turn's Sums and the
// listings since, and parent's turn's Sums and its chain; from every
// listing, once, for a thread whose newest turn has none.
func SumsBefore(ctx context.Context, src Source, thread string, parent, id int64) (*Sums, error) {
	sums := &Sums{Thread: map[string]RoleUsage{}, Branch: map[string]RoleUsage{}}
	l := newListings(src, thread)
	summed, err := l.newest(ctx, 1)
	if err != nil {
		return nil, err
	}
	var chain []Checkpoint
	var before map[string]RoleUsage
	ok := summed != nil || len(l.top) == 0
	if ok && parent != 0 {
		if chain, before, ok, err = l.branch(ctx, parent); err != nil {
			return nil, err
		}
	}
	if !ok {
		return sumsByScan(ctx, src, thread, parent, id)
	}
	if summed != nil {
		sums.Turns = summed.Metadata.Sums.Turns
		for role, r := range summed.Metadata.Sums.Thread {
			addRole(sums.Thread, role, r)
		}
	}
	for role, r := range before {
		addRole(sums.Branch, role, r)
	}
	onBranch := map[int64]bool{}
	for _, cp := range chain {
		onBranch[cp.ID] = true
	}
	for _, cp := range uniq(l.top, chain) {
		if cp.ID >= id {
			continue
		}
		own, err := l.own(ctx, cp)
		if err != nil {
			return nil, err
		}
		since := summed == nil || cp.ID >= summed.ID
		if since && turnStart(cp) {
			sums.Turns++
		}
		for role, r := range own {
			if since {
				addRole(sums.Thread, role, r)
			}
			if onBranch[cp.ID] {
				addRole(sums.Branch, role, r)
			}
		}
	}
	return sums, nil
}

// Memo keeps, for each thread an engine wrote, the running totals
// through its last commit: what every checkpoint up to it cost, how many
// turns began, and the last commit's chain from the root (nil: not
// known). They hold while the thread's newest checkpoint is that commit,
// written with the epoch the engine still holds: the condition of a
// trusted turn (the engine's epochs.trusted), whose put is refused otherwise.
type Memo struct {
	mu sync.Mutex
	m  map[string]memoSums
}

type memoSums struct {
	epoch, id      int64
	turns          int
	thread, branch map[string]RoleUsage
}

// maxMemoSums bounds the threads Memo keeps.
const maxMemoSums = 256

// Before are the Sums of a new turn's first checkpoint made from parent
// by a writer holding epoch, when the thread's newest is newest; ok is
// false when the memo does not know them.
func (m *Memo) Before(thread string, epoch, newest, parent int64) (*Sums, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cur, ok := m.m[thread]
	if !ok || epoch == 0 || cur.epoch != epoch || cur.id != newest || cur.id != parent || cur.branch == nil {
		return nil, false
	}
	return &Sums{Turns: cur.turns, Thread: maps.Clone(cur.thread), Branch: maps.Clone(cur.branch)}, true
}

// Committed notes cp, committed with epoch when the thread's newest was
// prev.
func (m *Memo) Committed(thread string, epoch, prev int64, cp Checkpoint) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cur, ok := m.m[thread]
	var next memoSums
	switch {
	case epoch == 0:
		delete(m.m, thread)
		return
	case cp.Metadata.Sums != nil:
		next = memoSums{turns: cp.Metadata.Sums.Turns + 1, thread: maps.Clone(cp.Metadata.Sums.Thread), branch: maps.Clone(cp.Metadata.Sums.Branch)}
		if next.branch == nil {
			next.branch = map[string]RoleUsage{}
		}
	case ok && cur.epoch == epoch && cur.id == prev:
		next = memoSums{turns: cur.turns, thread: maps.Clone(cur.thread)}
		if cur.branch != nil && cp.ParentID == cur.id {
			next.branch = maps.Clone(cur.branch)
		}
	default:
		delete(m.m, thread)
		return
	}
	if next.thread == nil {
		next.thread = map[string]RoleUsage{}
	}
	for role, r := range cp.Metadata.Tokens {
		addRole(next.thread, role, r)
		if next.branch != nil {
			addRole(next.branch, role, r)
		}
	}
	next.epoch, next.id = epoch, cp.ID
	if m.m == nil || len(m.m) >= maxMemoSums && !ok {
		m.m = map[string]memoSums{}
	}
	m.m[thread] = next
}

// Forget drops what the memo knows of thread.
func (m *Memo) Forget(thread string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.m, thread)
}

// sumsByScan is SumsBefore from every listing of the thread.
func sumsByScan(ctx context.Context, src Source, thread string, parent, id int64) (*Sums, error) {
	listed, err := src.History(ctx, thread, id, 0)
	if err != nil {
		return nil, err
	}
	l := newListings(src, thread)
	for _, cp := range listed {
		l.byID[cp.ID] = cp
	}
	onBranch := map[int64]bool{}
	for next := parent; next != 0 && !onBranch[next]; {
		onBranch[next] = true
		cp, ok := l.byID[next]
		if !ok || cp.ParentID >= next {
			break
		}
		next = cp.ParentID
	}
	sums := &Sums{Thread: map[string]RoleUsage{}, Branch: map[string]RoleUsage{}}
	for _, cp := range listed {
		if turnStart(cp) {
			sums.Turns++
		}
		own, err := l.own(ctx, cp)
		if err != nil {
			return nil, err
		}
		for role, r := range own {
			addRole(sums.Thread, role, r)
			if onBranch[cp.ID] {
				addRole(sums.Branch, role, r)
			}
		}
	}
	return sums, nil
}
