// Package costs is a thread's model-token accounting: what its calls
// cost by role, by turn and on one branch (At), and the running totals a
// turn's first checkpoint stores so that the next reading needs only the
// newest listings (SumsBefore, Memo). It reads a thread through Source,
// a narrow view of the engine: listings, the calls stored with a
// checkpoint whose listing holds no tokens, and the unsettled task
// writes. It never reads a state but those.
package costs

import (
	"context"
	"slices"
	"sort"

	"rewind/engine/chainformat"
	"rewind/engine/model"
	"rewind/store"
)

type (
	// Checkpoint is a listing (its state is never read here).
	Checkpoint = chainformat.Checkpoint
	// RoleUsage is the model calls of one role and their tokens.
	RoleUsage = chainformat.RoleUsage
	// Sums are the running totals a turn's first checkpoint keeps.
	Sums = chainformat.Sums
)

// Source is what the accounting reads of a thread (the engine gives it).
type Source interface {
	// History lists checkpoints newest first, older than before (0: from
	// the newest), at most limit (0: all).
	History(ctx context.Context, thread string, before int64, limit int) ([]Checkpoint, error)
	// StoredCalls are the model calls stored with checkpoint id's row:
	// for a listing stored before listings held tokens.
	StoredCalls(ctx context.Context, thread string, id int64) ([]chainformat.Call, error)
	// PendingWrites are the thread's unsettled task writes, grouped by
	// checkpoint.
	PendingWrites(ctx context.Context, thread string) ([]store.TaskWrites, error)
	// WriteCalls are the model calls recorded in checkpoint id's task
	// writes (rows, from PendingWrites).
	WriteCalls(thread string, id int64, rows []store.TaskWrites) ([]chainformat.Call, error)
	// NotFound is the error for a thread (id 0) or a checkpoint of it
	// that is not there.
	NotFound(thread string, id int64) error
}

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
	// Turns are the newest turns (at most Turns), oldest first;
	// EarlierTurns counts the others. Checkpoints before the first input
	// (an update that created the thread) count in Roles and Total only.
	Turns        []TurnUsage `json:"turns"`
	EarlierTurns int         `json:"earlierTurns,omitempty"`
	Total        model.Usage `json:"total"`
	Branch       BranchUsage `json:"branch"`
	LastTurn     *TurnUsage  `json:"lastTurn,omitempty"`
}

// Turns is how many of the newest turns Costs lists one by one.
const Turns = 8

// At sums the thread's stored model calls by role and by turn, with
// checkpoint head's branch (0: the latest). It reads listings and the
// thread's unsettled writes, never a state (but the state of a checkpoint
// stored before listings held tokens): from the newest turns' first
// checkpoints' running totals (Sums), the listings of the newest Turns
// turns and of head's chain back to its turn's first checkpoint; for a
// thread whose newest turns were stored without them, every listing.
func At(ctx context.Context, src Source, thread string, head int64) (Costs, error) {
	l := newListings(src, thread)
	c, ok, err := l.costs(ctx, head)
	if err != nil || ok {
		return c, err
	}
	return ByScan(ctx, src, thread, head)
}

// turnStart says whether cp begins a turn.
func turnStart(cp Checkpoint) bool {
	return cp.Source == chainformat.SourceInput || cp.Source == chainformat.SourceFork
}

// tally adds up calls into a Costs: the thread's, head's branch's, the
// turn head is in (last) and the newest turns'.
type tally struct {
	out      Costs
	onBranch map[int64]bool
	last     *TurnUsage
	// inLast says whether a checkpoint on the branch is in last.
	inLast func(id int64) bool
	turns  map[int64]*TurnUsage
	// startOf is the first checkpoint of a checkpoint's turn (0: none
	// counted one by one).
	startOf func(id int64) int64
}

func newTally(head int64, startOf func(int64) int64) *tally {
	return &tally{
		out:      Costs{Roles: map[string]RoleUsage{}, Branch: BranchUsage{Head: head, Roles: map[string]RoleUsage{}}},
		onBranch: map[int64]bool{},
		turns:    map[int64]*TurnUsage{},
		startOf:  startOf,
	}
}

// add counts one call (or a sum of them) of checkpoint id: in the
// thread's totals when thread, and wherever id belongs.
func (t *tally) add(id int64, thread bool, role string, r RoleUsage) {
	if thread {
		addTo(t.out.Roles, &t.out.Total, role, r)
	}
	if t.onBranch[id] {
		addTo(t.out.Branch.Roles, &t.out.Branch.Total, role, r)
		if t.last != nil && t.inLast(id) {
			addTo(t.last.Roles, &t.last.Total, role, r)
		}
	}
	if tu := t.turns[t.startOf(id)]; tu != nil {
		addTo(tu.Roles, &tu.Total, role, r)
	}
}

// result is the tally, its turns oldest first.
func (t *tally) result() Costs {
	for _, tu := range t.turns {
		t.out.Turns = append(t.out.Turns, *tu)
	}
	sort.Slice(t.out.Turns, func(i, j int) bool { return t.out.Turns[i].Start < t.out.Turns[j].Start })
	t.out.LastTurn = t.last
	return t.out
}

// turnStarts is startOf over the listings byID: a checkpoint's turn
// starts at itself when it is an input or fork, else where its parent's
// does; 0 for one not listed or older than floor.
func turnStarts(byID map[int64]Checkpoint, floor int64) func(int64) int64 {
	turnOf := map[int64]int64{}
	var startOf func(id int64) int64
	startOf = func(id int64) int64 {
		if t, ok := turnOf[id]; ok {
			return t
		}
		cp, ok := byID[id]
		t := int64(0)
		switch {
		case !ok || cp.ID < floor:
		case turnStart(cp):
			t = id
		case cp.ParentID > 0 && cp.ParentID < id:
			t = startOf(cp.ParentID)
		}
		turnOf[id] = t
		return t
	}
	return startOf
}

// calls adds each call to m by role.
func calls(m map[string]RoleUsage, cs []chainformat.Call) map[string]RoleUsage {
	for _, c := range cs {
		addRole(m, c.Role, oneCall(c))
	}
	return m
}

func oneCall(c chainformat.Call) RoleUsage {
	return RoleUsage{Calls: 1, Usage: model.Usage{PromptTokens: c.Prompt, CompletionTokens: c.Completion}}
}

func addRole(m map[string]RoleUsage, role string, r RoleUsage) {
	cur := m[role]
	cur.Calls += r.Calls
	cur.Usage.Add(r.Usage)
	m[role] = cur
}

func addTo(m map[string]RoleUsage, total *model.Usage, role string, r RoleUsage) {
	addRole(m, role, r)
	total.Add(r.Usage)
}

// ByScan is At from every listing of the thread: At's path for listings
// stored before turns kept running totals, and the reference its path
// through the totals is tested against.
func ByScan(ctx context.Context, src Source, thread string, head int64) (Costs, error) {
	listed, err := src.History(ctx, thread, 0, 0)
	if err != nil {
		return Costs{}, err
	}
	if len(listed) == 0 {
		return Costs{}, src.NotFound(thread, 0)
	}
	byID := make(map[int64]Checkpoint, len(listed))
	for _, cp := range listed {
		byID[cp.ID] = cp
	}
	if head == 0 {
		head = listed[0].ID
	}
	if _, ok := byID[head]; !ok {
		return Costs{}, src.NotFound(thread, head)
	}
	t := newTally(head, turnStarts(byID, 0))
	t.onBranch = branchOf(byID, head)
	if s := t.startOf(head); s != 0 {
		t.last = &TurnUsage{Start: s, Roles: map[string]RoleUsage{}}
		t.inLast = func(id int64) bool { return t.startOf(id) == s }
	}
	// Tasks that finished before a crash or a stop: their calls were made,
	// though no checkpoint holds them yet. One query for the thread.
	pending, err := src.PendingWrites(ctx, thread)
	if err != nil {
		return Costs{}, err
	}
	pendingOf := map[int64][]store.TaskWrites{}
	for _, w := range pending {
		pendingOf[w.CheckpointID] = append(pendingOf[w.CheckpointID], w)
	}
	for _, cp := range listed {
		if err := t.scan(ctx, src, thread, cp, pendingOf[cp.ID]); err != nil {
			return Costs{}, err
		}
	}
	out := t.result()
	if n := len(out.Turns); n > Turns {
		out.EarlierTurns, out.Turns = n-Turns, out.Turns[n-Turns:]
	}
	return out, nil
}

// scan counts listing cp's calls, and those of its pending writes.
func (t *tally) scan(ctx context.Context, src Source, thread string, cp Checkpoint, pending []store.TaskWrites) error {
	start := t.startOf(cp.ID)
	if start != 0 && t.turns[start] == nil {
		t.turns[start] = &TurnUsage{Start: start, Roles: map[string]RoleUsage{}}
	}
	if cp.TokensUnlisted() {
		cs, err := src.StoredCalls(ctx, thread, cp.ID)
		if err != nil {
			return err
		}
		for _, c := range cs {
			t.add(cp.ID, true, c.Role, oneCall(c))
		}
	}
	for role, r := range cp.Metadata.Tokens {
		t.add(cp.ID, true, role, r)
	}
	if len(cp.Tasks) == 0 {
		return nil
	}
	cs, err := src.WriteCalls(thread, cp.ID, pending)
	if err != nil {
		return err
	}
	for _, c := range cs {
		t.add(cp.ID, true, c.Role, oneCall(c))
	}
	return nil
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

// uniq is the listings of top and chain, each once, in that order.
func uniq(top, chain []Checkpoint) []Checkpoint {
	seen := map[int64]bool{}
	var out []Checkpoint
	for _, cp := range append(slices.Clone(top), chain...) {
		if !seen[cp.ID] {
			seen[cp.ID] = true
			out = append(out, cp)
		}
	}
	return out
}
