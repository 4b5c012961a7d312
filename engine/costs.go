package engine

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"sort"
	"sync"

	"rewind/engine/chainformat"
	"rewind/engine/model"
	"rewind/store"
)

// TurnUsage is what one turn cost: the checkpoints from an input or fork
// checkpoint up to (not including) the next one on the same branch.
type TurnUsage struct {
	// Start is the turn's input or fork checkpoint.
	Start int64                `json:"start"`
	Roles map[string]RoleUsage `json:"roles"`
	Total model.Usage          `json:"total"`
}

// BranchUsage is what one branch cost: the checkpoints from the root to
// Head, the ancestors it shares with other branches included.
type BranchUsage struct {
	Head  int64                `json:"head"`
	Roles map[string]RoleUsage `json:"roles"`
	Total model.Usage          `json:"total"`
}

// Costs is a thread's model tokens, from the calls stored with its
// checkpoints (read from their listings) and with a half-finished
// superstep's stored writes.
//
// With forks: Roles, Total and Turns count every checkpoint of every
// branch once (a fork's checkpoints are its own, its shared ancestors are
// counted where they were made), so the thread's total never counts a call
// twice. Branch is one branch's own view: what its chain from the root
// cost, shared ancestors included, so two branches' figures overlap by
// design. LastTurn is the turn Branch.Head belongs to, from its input or
// fork checkpoint to Head on Head's branch.
//
// The totals count what the thread's calls cost, also those of
// checkpoints prune removed since a turn's first checkpoint summed them.
type Costs struct {
	Roles map[string]RoleUsage `json:"roles"`
	// Turns are the newest turns (at most CostTurns), oldest first;
	// EarlierTurns counts the others. Checkpoints before the first input
	// (an update that created the thread) count in Roles and Total only.
	Turns        []TurnUsage `json:"turns"`
	EarlierTurns int         `json:"earlierTurns,omitempty"`
	Total        model.Usage `json:"total"`
	Branch       BranchUsage `json:"branch"`
	LastTurn     *TurnUsage  `json:"lastTurn,omitempty"`
}

// CostTurns is how many of the newest turns Costs lists one by one.
const CostTurns = 8

// Costs sums the thread's stored model calls by role and by turn, with
// its latest checkpoint's branch.
func (e *Engine) Costs(ctx context.Context, thread string) (Costs, error) {
	return e.CostsAt(ctx, thread, 0)
}

// CostsAt is Costs with checkpoint head's branch (0: the latest). It reads
// listings and the thread's unsettled writes, never a state (but the
// state of a checkpoint stored before listings held tokens): from the
// newest turns' first checkpoints' running totals (Sums), the listings of
// the newest CostTurns turns and of head's chain back to its turn's
// first checkpoint; for a thread whose newest turns were stored without
// them, every listing.
func (e *Engine) CostsAt(ctx context.Context, thread string, head int64) (Costs, error) {
	l := &listings{e: e, thread: thread, byID: map[int64]Checkpoint{}}
	c, ok, err := l.costs(ctx, head)
	if err != nil || ok {
		return c, err
	}
	return e.costsByScan(ctx, thread, head)
}

// turnStart says whether cp begins a turn.
func turnStart(cp Checkpoint) bool { return cp.Source == SourceInput || cp.Source == SourceFork }

// listings reads a thread's listings a page at a time, and keeps them.
type listings struct {
	e      *Engine
	thread string
	byID   map[int64]Checkpoint
	// top are the newest listings read from the newest down, newest
	// first; bottom says that they reach the thread's oldest.
	top    []Checkpoint
	bottom bool
	// first is how many of the newest listings the first read takes (0:
	// firstCostPage).
	first int
	reads int // History reads, for tests
}

// costPage is how many listings a read of listings takes; the first of
// the newest, firstCostPage: a turn's first checkpoint reads back to the
// turn before (turnListings, as the ticket graph's turns go).
const (
	costPage      = 32
	firstCostPage = 16
	turnListings  = 8
)

func (l *listings) read(ctx context.Context, before int64, limit int) ([]Checkpoint, error) {
	l.reads++
	page, err := l.e.History(ctx, l.thread, before, limit)
	for _, cp := range page {
		l.byID[cp.ID] = cp
	}
	return page, err
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
	limit := costPage
	if before == 0 {
		limit = max(l.first, firstCostPage)
	}
	page, err := l.read(ctx, before, limit)
	if err != nil {
		return false, err
	}
	l.top = append(l.top, page...)
	l.bottom = len(page) < limit
	return len(page) > 0, nil
}

// get is listing id, read with the page below it when not read yet.
func (l *listings) get(ctx context.Context, id int64) (Checkpoint, bool, error) {
	if cp, ok := l.byID[id]; ok {
		return cp, true, nil
	}
	if _, err := l.read(ctx, id+1, firstCostPage); err != nil {
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
	calls, err := l.e.storedCalls(ctx, l.thread, cp.ID)
	if err != nil {
		return nil, err
	}
	out := map[string]RoleUsage{}
	for _, c := range calls {
		addRole(out, c.Role, RoleUsage{Calls: 1, Usage: model.Usage{PromptTokens: c.Prompt, CompletionTokens: c.Completion}})
	}
	return out, nil
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
	for next := id; next != 0; {
		cp, found, err := l.get(ctx, next)
		if err != nil {
			return nil, nil, false, err
		}
		if !found {
			if next == id {
				return nil, nil, false, checkpointNotFound(l.thread, id)
			}
			return nil, nil, false, fmt.Errorf("thread %q: checkpoint %d has parent %d, which is missing: %w", threadName(l.thread), chain[len(chain)-1].ID, next, ErrCorrupt)
		}
		chain = append(chain, cp)
		if turnStart(cp) {
			if cp.Metadata.Sums == nil {
				return nil, nil, false, nil
			}
			return chain, cp.Metadata.Sums.Branch, true, nil
		}
		if cp.ParentID >= cp.ID {
			return nil, nil, false, fmt.Errorf("thread %q: checkpoint %d has parent %d, which is not older: %w", threadName(l.thread), cp.ID, cp.ParentID, ErrCorrupt)
		}
		next = cp.ParentID
	}
	return chain, nil, true, nil // no turn began on it: the root's chain whole
}

// costs is CostsAt from running totals; ok is false when the thread's
// listings do not hold them (CostsAt then reads every listing).
func (l *listings) costs(ctx context.Context, head int64) (Costs, bool, error) {
	summed, err := l.newest(ctx, CostTurns)
	if err != nil || summed == nil {
		if err == nil && len(l.top) == 0 {
			err = threadNotFound(l.thread)
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
	out := Costs{Roles: map[string]RoleUsage{}, Branch: BranchUsage{Head: head, Roles: map[string]RoleUsage{}}}
	for role, r := range summed.Metadata.Sums.Thread {
		addRole(out.Roles, role, r)
		out.Total.Add(r.Usage)
	}
	for role, r := range before {
		addRole(out.Branch.Roles, role, r)
		out.Branch.Total.Add(r.Usage)
	}
	onBranch := make(map[int64]bool, len(chain))
	for _, cp := range chain {
		onBranch[cp.ID] = true
	}
	var last *TurnUsage
	if start := chain[len(chain)-1]; turnStart(start) {
		last = &TurnUsage{Start: start.ID, Roles: map[string]RoleUsage{}}
	}
	// The newest turns: each checkpoint of the newest listings belongs to
	// the turn its parents lead back to, if that turn is one of them.
	turnOf := map[int64]int64{}
	var startOf func(id int64) int64
	startOf = func(id int64) int64 {
		if t, ok := turnOf[id]; ok {
			return t
		}
		cp, ok := l.byID[id]
		t := int64(0)
		switch {
		case !ok || cp.ID < l.top[len(l.top)-1].ID:
		case turnStart(cp):
			t = id
		case cp.ParentID > 0 && cp.ParentID < id:
			t = startOf(cp.ParentID)
		}
		turnOf[id] = t
		return t
	}
	turns := map[int64]*TurnUsage{}
	count := summed.Metadata.Sums.Turns
	for _, cp := range l.top {
		if cp.ID >= summed.ID && turnStart(cp) {
			count++
		}
		if turnStart(cp) && len(turns) < CostTurns {
			turns[cp.ID] = &TurnUsage{Start: cp.ID, Roles: map[string]RoleUsage{}}
		}
	}
	add := func(cp Checkpoint, thread bool, role string, r RoleUsage) {
		if thread {
			addRole(out.Roles, role, r)
			out.Total.Add(r.Usage)
		}
		if onBranch[cp.ID] {
			addRole(out.Branch.Roles, role, r)
			out.Branch.Total.Add(r.Usage)
			if last != nil {
				addRole(last.Roles, role, r)
				last.Total.Add(r.Usage)
			}
		}
		if t := turns[startOf(cp.ID)]; t != nil {
			addRole(t.Roles, role, r)
			t.Total.Add(r.Usage)
		}
	}
	seen := map[int64]bool{}
	for _, cp := range append(slices.Clone(l.top), chain...) {
		if seen[cp.ID] {
			continue
		}
		seen[cp.ID] = true
		own, err := l.own(ctx, cp)
		if err != nil {
			return Costs{}, false, err
		}
		for role, r := range own {
			add(cp, cp.ID >= summed.ID, role, r)
		}
	}
	if err := l.pendingCalls(ctx, add); err != nil {
		return Costs{}, false, err
	}
	for _, t := range turns {
		out.Turns = append(out.Turns, *t)
	}
	sort.Slice(out.Turns, func(i, j int) bool { return out.Turns[i].Start < out.Turns[j].Start })
	out.EarlierTurns = count - len(out.Turns)
	out.LastTurn = last
	return out, true, nil
}

// pendingCalls hands add the model calls of tasks that finished before a
// crash or a stop: their calls were made, though no checkpoint holds them
// yet. One query for the thread.
func (l *listings) pendingCalls(ctx context.Context, add func(cp Checkpoint, thread bool, role string, r RoleUsage)) error {
	pending, err := l.e.store.Writes(ctx, l.thread, 0)
	if err != nil {
		return fmt.Errorf("read pending writes of thread %q: %w", threadName(l.thread), err)
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
		writes, err := decodeWrites(l.thread, at, group)
		if err != nil {
			return err
		}
		for role, r := range callsIn(writes) {
			add(cp, true, role, r)
		}
	}
	return nil
}

// sumsBefore are the running totals of a new turn's first checkpoint id,
// made from parent (0: none): from the newest turn's Sums and the
// listings since, and parent's turn's Sums and its chain; from every
// listing, once, for a thread whose newest turn has none.
func (e *Engine) sumsBefore(ctx context.Context, thread string, parent, id int64) (*Sums, error) {
	sums := &Sums{Thread: map[string]RoleUsage{}, Branch: map[string]RoleUsage{}}
	l := &listings{e: e, thread: thread, byID: map[int64]Checkpoint{}}
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
		return e.sumsByScan(ctx, thread, parent, id)
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
	seen := map[int64]bool{}
	for _, cp := range append(slices.Clone(l.top), chain...) {
		if seen[cp.ID] || cp.ID >= id {
			continue
		}
		seen[cp.ID] = true
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

// sumsMemo keeps, for each thread this engine wrote, the running totals
// through its last commit: what every checkpoint up to it cost, how many
// turns began, and the last commit's chain from the root (nil: not
// known). They hold while the thread's newest checkpoint is that commit,
// written with the epoch the engine still holds: the condition of a
// trusted turn (epochs.trusted), whose put is refused otherwise.
type sumsMemo struct {
	mu sync.Mutex
	m  map[string]memoSums
}

type memoSums struct {
	epoch, id      int64
	turns          int
	thread, branch map[string]RoleUsage
}

// maxMemoSums bounds the threads sumsMemo keeps.
const maxMemoSums = 256

// before are the Sums of a new turn's first checkpoint made from parent
// by a writer holding epoch, when the thread's newest is newest; ok is
// false when the memo does not know them.
func (m *sumsMemo) before(thread string, epoch, newest, parent int64) (*Sums, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cur, ok := m.m[thread]
	if !ok || epoch == 0 || cur.epoch != epoch || cur.id != newest || cur.id != parent || cur.branch == nil {
		return nil, false
	}
	return &Sums{Turns: cur.turns, Thread: maps.Clone(cur.thread), Branch: maps.Clone(cur.branch)}, true
}

// committed notes cp, committed with epoch when the thread's newest was
// prev.
func (m *sumsMemo) committed(thread string, epoch, prev int64, cp Checkpoint) {
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

// forget drops what the memo knows of thread.
func (m *sumsMemo) forget(thread string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.m, thread)
}

// sumsByScan is sumsBefore from every listing of the thread.
func (e *Engine) sumsByScan(ctx context.Context, thread string, parent, id int64) (*Sums, error) {
	listed, err := e.History(ctx, thread, id, 0)
	if err != nil {
		return nil, err
	}
	l := &listings{e: e, thread: thread, byID: make(map[int64]Checkpoint, len(listed))}
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

// costsByScan is CostsAt from every listing of the thread: for listings
// stored before turns kept running totals.
func (e *Engine) costsByScan(ctx context.Context, thread string, head int64) (Costs, error) {
	listed, err := e.History(ctx, thread, 0, 0)
	if err != nil {
		return Costs{}, err
	}
	if len(listed) == 0 {
		return Costs{}, threadNotFound(thread)
	}
	byID := make(map[int64]Checkpoint, len(listed))
	for _, cp := range listed {
		byID[cp.ID] = cp
	}
	if head == 0 {
		head = listed[0].ID
	}
	if _, ok := byID[head]; !ok {
		return Costs{}, checkpointNotFound(thread, head)
	}
	onBranch := branchOf(byID, head)
	// turnOf is the turn's start for a checkpoint: itself when it is an
	// input or fork, else its parent's (0: before any input).
	turnOf := map[int64]int64{}
	var startOf func(id int64) int64
	startOf = func(id int64) int64 {
		if t, ok := turnOf[id]; ok {
			return t
		}
		cp, ok := byID[id]
		t := int64(0)
		switch {
		case !ok:
		case cp.Source == SourceInput || cp.Source == SourceFork:
			t = id
		case cp.ParentID > 0 && cp.ParentID < id:
			t = startOf(cp.ParentID)
		}
		turnOf[id] = t
		return t
	}
	out := Costs{Roles: map[string]RoleUsage{}, Branch: BranchUsage{Head: head, Roles: map[string]RoleUsage{}}}
	turns := map[int64]*TurnUsage{}
	var last *TurnUsage
	if s := startOf(head); s != 0 {
		last = &TurnUsage{Start: s, Roles: map[string]RoleUsage{}}
	}
	add := func(id int64, role string, r RoleUsage) {
		addRole(out.Roles, role, r)
		out.Total.Add(r.Usage)
		if onBranch[id] {
			addRole(out.Branch.Roles, role, r)
			out.Branch.Total.Add(r.Usage)
			if last != nil && startOf(id) == last.Start {
				addRole(last.Roles, role, r)
				last.Total.Add(r.Usage)
			}
		}
		start := startOf(id)
		if start == 0 {
			return
		}
		t := turns[start]
		addRole(t.Roles, role, r)
		t.Total.Add(r.Usage)
	}
	// Tasks that finished before a crash or a stop: their calls were made,
	// though no checkpoint holds them yet. One query for the thread.
	pending, err := e.store.Writes(ctx, thread, 0)
	if err != nil {
		return Costs{}, fmt.Errorf("read pending writes of thread %q: %w", threadName(thread), err)
	}
	pendingOf := map[int64][]store.TaskWrites{}
	for _, w := range pending {
		pendingOf[w.CheckpointID] = append(pendingOf[w.CheckpointID], w)
	}
	for _, cp := range listed {
		start := startOf(cp.ID)
		if start != 0 && turns[start] == nil {
			turns[start] = &TurnUsage{Start: start, Roles: map[string]RoleUsage{}}
		}
		if cp.TokensUnlisted() {
			calls, err := e.storedCalls(ctx, thread, cp.ID)
			if err != nil {
				return Costs{}, err
			}
			for _, c := range calls {
				add(cp.ID, c.Role, RoleUsage{Calls: 1, Usage: model.Usage{PromptTokens: c.Prompt, CompletionTokens: c.Completion}})
			}
		}
		for role, r := range cp.Metadata.Tokens {
			add(cp.ID, role, r)
		}
		if len(cp.Tasks) == 0 {
			continue
		}
		writes, err := decodeWrites(thread, cp.ID, pendingOf[cp.ID])
		if err != nil {
			return Costs{}, err
		}
		for role, r := range callsIn(writes) {
			add(cp.ID, role, r)
		}
	}
	for _, t := range turns {
		out.Turns = append(out.Turns, *t)
	}
	sort.Slice(out.Turns, func(i, j int) bool { return out.Turns[i].Start < out.Turns[j].Start })
	if n := len(out.Turns); n > CostTurns {
		out.EarlierTurns, out.Turns = n-CostTurns, out.Turns[n-CostTurns:]
	}
	out.LastTurn = last
	return out, nil
}

// branchOf is the ids on head's branch: head and its parents, as far as
// they are listed.
func branchOf(byID map[int64]Checkpoint, head int64) map[int64]bool {
	on := map[int64]bool{}
	for id := head; id != 0 && !on[id]; {
		on[id] = true
		cp, ok := byID[id]
		if !ok || cp.ParentID >= id {
			break
		}
		id = cp.ParentID
	}
	return on
}

// callsIn yields the model calls the tasks' events record, one at a time
// (role, one call and its tokens), in order.
func callsIn(writes []TaskWrites) iter.Seq2[string, RoleUsage] {
	return func(yield func(string, RoleUsage) bool) {
		for _, tw := range writes {
			for _, ev := range tw.Events {
				if ev.Type != EventModelCalled {
					continue
				}
				c := chainformat.CallOf(ev)
				if !yield(c.Role, RoleUsage{Calls: 1, Usage: model.Usage{PromptTokens: c.Prompt, CompletionTokens: c.Completion}}) {
					return
				}
			}
		}
	}
}

func addRole(m map[string]RoleUsage, role string, r RoleUsage) {
	cur := m[role]
	cur.Calls += r.Calls
	cur.Usage.Add(r.Usage)
	m[role] = cur
}

// storedCalls are the model calls stored with checkpoint id's writes.
func (e *Engine) storedCalls(ctx context.Context, thread string, id int64) ([]chainformat.Call, error) {
	row, err := e.store.Get(ctx, thread, id)
	if errors.Is(err, store.ErrNotFound) || err == nil && len(row.Meta) == 0 {
		return nil, nil // no such checkpoint, or stored before calls moved
	}
	if err != nil {
		return nil, fmt.Errorf("read checkpoint %d of thread %q: %w", id, threadName(thread), err)
	}
	calls, err := chainformat.Calls(row.State)
	if err != nil {
		return nil, fmt.Errorf("checkpoint %d of thread %q: %w (%v)", id, threadName(thread), ErrCorrupt, err)
	}
	return calls, nil
}

// ErrTokenBudget is matched by errors.Is for a *BudgetError.
var ErrTokenBudget = errors.New("the turn's token budget is used up")

// BudgetError stops a run whose turn has used its token budget
// (RunConfig.MaxTokensPerTurn). It is raised between supersteps, so every
// finished superstep is stored and a resume carries on from the checkpoint.
type BudgetError struct {
	Thread     string
	Checkpoint int64
	// Used is the turn's tokens (prompt and completion) so far; Budget
	// the limit.
	Used, Budget int
	Pending      []Task
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("thread %q: the turn used %d tokens, at or over its budget of %d (--max-tokens-per-turn): stopped at checkpoint %d before %s, all of it stored; a resume carries on (with a larger --max-tokens-per-turn, or without it)",
		threadName(e.Thread), e.Used, e.Budget, e.Checkpoint, describeTasks(e.Pending))
}

// Fixes: resume the thread.
func (e *BudgetError) Fixes() []Fix { return []Fix{ResumeFix(e.Thread)} }

// Is makes errors.Is(err, ErrTokenBudget) work.
func (e *BudgetError) Is(target error) bool { return target == ErrTokenBudget }

// SetMaxTokensPerTurn is the token budget of every turn this engine runs
// whose RunConfig names none (0: no budget). The app sets it from its flag,
// so a TUI's runs obey it too.
func (e *Engine) SetMaxTokensPerTurn(n int) { e.maxTurnTokens = n }

// tokenBudget is the run's budget: its own, else the engine's.
func (r *runner) tokenBudget() int {
	if r.cfg.MaxTokensPerTurn > 0 {
		return r.cfg.MaxTokensPerTurn
	}
	return r.e.maxTurnTokens
}

// turnUsed is what the turn cp belongs to has used up to cp: the tokens of
// the checkpoints after its input or fork checkpoint. A resumed turn
// counts what it used before.
func (r *runner) turnUsed(ctx context.Context, cp Checkpoint) (int, error) {
	if cp.ID == 0 || cp.Source == SourceInput || cp.Source == SourceFork {
		return 0, nil
	}
	chain, err := r.e.Ancestors(ctx, r.thread, cp.ID)
	if err != nil {
		return 0, err
	}
	used := 0
	for i := len(chain) - 1; i >= 0 && chain[i].Source != SourceInput && chain[i].Source != SourceFork; i-- {
		if chain[i].TokensUnlisted() {
			calls, err := r.e.storedCalls(ctx, r.thread, chain[i].ID)
			if err != nil {
				return 0, err
			}
			for _, c := range calls {
				used += c.Prompt + c.Completion
			}
		}
		for _, u := range chain[i].Metadata.Tokens {
			used += u.PromptTokens + u.CompletionTokens
		}
	}
	return used, nil
}
