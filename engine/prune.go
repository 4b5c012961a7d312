package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"rewind/store"
)

// PrunePolicy says which checkpoints of a thread Prune keeps; the others
// are deleted with their pending writes and events. A checkpoint is kept
// when any rule keeps it, so KeepLast 100 with OlderThan 720h deletes only
// what is both outside the newest 100 and more than 30 days old. Whatever
// the rules say, Prune keeps the head, every branch tip with pending tasks
// (it stays resumable) and the newest listing naming the thread's graph.
type PrunePolicy struct {
	// KeepLast keeps the N newest checkpoints by id (0: no such rule).
	KeepLast int
	// OlderThan keeps the checkpoints created within this long of now
	// (0: no such rule).
	OlderThan time.Duration
	// DryRun works out what would be pruned and changes nothing.
	DryRun bool
}

// PruneResult is what Prune did, or for a dry run would do.
type PruneResult struct {
	Thread string `json:"thread"`
	DryRun bool   `json:"dryRun"`
	// Pruned are the checkpoint ids deleted, ascending.
	Pruned []int64 `json:"pruned"`
	// Kept is how many checkpoints the thread has left.
	Kept int `json:"kept"`
	// KeptTips are branch tips the rules would have pruned but that were
	// kept because they have pending tasks (or could not be read to tell).
	KeptTips []int64 `json:"keptTips,omitempty"`
	// Rerooted are the kept checkpoints whose parent was pruned: they now
	// start the chain (ParentID 0, RerootedFrom the old parent).
	Rerooted []Reroot `json:"rerooted"`
	// Writes and Events are the rows deleted with the pruned checkpoints;
	// a dry run does not count them (they stay 0 and out of the JSON).
	Writes int `json:"writes,omitempty"`
	Events int `json:"events,omitempty"`
	// Blobs are the large values nothing refers to any more, freed.
	Blobs int `json:"blobs,omitempty"`
	// deltas are the kept checkpoints that do not read on their own.
	deltas map[int64]bool
}

// rebases makes the re-rooted checkpoints that hold only a delta read on
// their own: their whole values, read before their parent goes, stored
// inline (so they need no blob or message a prune could free).
func (e *Engine) rebases(ctx context.Context, thread string, rerooted []Reroot, deltas map[int64]bool) ([]store.Rebase, error) {
	var out []store.Rebase
	for _, r := range rerooted {
		if !deltas[r.ID] {
			continue
		}
		cp, err := e.Get(ctx, thread, r.ID)
		if err != nil {
			return nil, fmt.Errorf("read checkpoint %d to rebase it: %w", r.ID, err)
		}
		row, err := e.store.Get(ctx, thread, r.ID)
		if err != nil {
			return nil, fmt.Errorf("read checkpoint %d to rebase it: %w", r.ID, err)
		}
		doc, err := e.graph.schema.Rebase(&cp, row)
		if err != nil {
			return nil, fmt.Errorf("encode the rebase of checkpoint %d: %w", r.ID, err)
		}
		out = append(out, store.Rebase{ID: r.ID, State: doc})
	}
	return out, nil
}

// Reroot is a kept checkpoint whose parent was pruned.
type Reroot struct {
	ID   int64 `json:"id"`
	From int64 `json:"from"`
}

// ErrPrunePolicy: a prune policy that keeps nothing in particular.
var ErrPrunePolicy = errors.New("invalid prune policy")

// Validate refuses a policy without a rule, or with a negative one.
func (p PrunePolicy) Validate() error {
	switch {
	case p.KeepLast < 0:
		return fmt.Errorf("%w: keep-last %d: keep at least 1 checkpoint", ErrPrunePolicy, p.KeepLast)
	case p.OlderThan < 0:
		return fmt.Errorf("%w: older-than %v is negative: give a positive duration such as 720h", ErrPrunePolicy, p.OlderThan)
	case p.KeepLast == 0 && p.OlderThan == 0:
		return fmt.Errorf("%w: say what to keep: the newest N checkpoints (keep-last), those younger than a duration (older-than), or both", ErrPrunePolicy)
	}
	return nil
}

// prunePage is how many checkpoints Prune reads at a time: states are
// whole conversations, and only branch tips are decoded.
const prunePage = 500

// Prune deletes the checkpoints of thread that policy does not keep, in
// one store transaction, as the thread's writer (it takes the writer lock
// and fences earlier writers, like a run). Kept checkpoints whose parent
// goes are re-rooted. Drafts are never deleted. A dry run takes no lock and
// changes nothing.
func (e *Engine) Prune(ctx context.Context, thread string, policy PrunePolicy) (_ PruneResult, err error) {
	if err := policy.Validate(); err != nil {
		return PruneResult{}, fmt.Errorf("prune thread %q: %w", threadName(thread), err)
	}
	// Before locking: fencing an unknown thread would leave an epoch
	// behind. The row is not decoded: a head this rewind cannot read is
	// kept like any head, and the rest can still be trimmed.
	if _, err := e.store.Latest(ctx, thread); errors.Is(err, store.ErrNotFound) {
		return PruneResult{}, threadNotFound(thread)
	} else if err != nil {
		return PruneResult{}, fmt.Errorf("prune thread %q: %w", threadName(thread), err)
	}
	if !policy.DryRun {
		var release func() error
		release, _, err = e.lock(ctx, thread, false)
		if errors.Is(err, store.ErrLocked) {
			// Not e.lock's advice: prune has no --take-over, on purpose.
			return PruneResult{}, fmt.Errorf("prune thread %q: wait for the run to finish (or kill it), then prune again: %w", threadName(thread), store.ErrLocked)
		}
		if err != nil {
			return PruneResult{}, err
		}
		defer func() { err = released(err, release) }()
	}
	res, err := e.planPrune(ctx, thread, policy)
	if err != nil || policy.DryRun || len(res.Pruned) == 0 {
		return res, err
	}
	rebase, err := e.rebases(ctx, thread, res.Rerooted, res.deltas)
	if err != nil {
		return PruneResult{}, fmt.Errorf("prune thread %q: %w", threadName(thread), err)
	}
	done, err := e.store.Prune(ctx, thread, res.Pruned, rebase)
	if err != nil {
		return PruneResult{}, fmt.Errorf("prune %d checkpoint(s) of thread %q: %w", len(res.Pruned), threadName(thread), err)
	}
	res.Pruned, res.Writes, res.Events, res.Blobs = done.Deleted, done.Writes, done.Events, done.Blobs
	res.Rerooted = make([]Reroot, len(done.Rerooted))
	for i, r := range done.Rerooted {
		res.Rerooted[i] = Reroot(r)
	}
	return res, nil
}

// planPrune reads the thread newest first, a page at a time. A checkpoint's
// children have larger ids, so by the time it is read, whether it is a
// branch tip is known.
func (e *Engine) planPrune(ctx context.Context, thread string, p PrunePolicy) (PruneResult, error) {
	res := PruneResult{Thread: thread, DryRun: p.DryRun, Pruned: []int64{}, Rerooted: []Reroot{}, deltas: map[int64]bool{}}
	now := e.now()
	named := false // the newest listing naming the graph (or a run's first) is kept: recorded.Graph reads it
	hasChild := map[int64]bool{}
	parentOf := map[int64]int64{} // of the kept checkpoints
	rank := 0
	for before := int64(0); ; {
		rows, err := e.store.History(ctx, thread, before, prunePage)
		if err != nil {
			return PruneResult{}, fmt.Errorf("prune thread %q: read its checkpoints: %w", threadName(thread), err)
		}
		for _, row := range rows {
			rank++
			keep := rank == 1 || // the head
				rank <= p.KeepLast ||
				p.OlderThan > 0 && now.Sub(row.CreatedAt) < p.OlderThan
			if leaf := !keep && !hasChild[row.ID]; leaf || !named {
				cp, err := e.graph.listed(row)
				names := !named && err == nil && (cp.Metadata.Graph != "" || cp.Metadata.Run != nil)
				if leaf && (err != nil || len(cp.Tasks) > 0) { // a paused tip, also when it names the graph
					res.KeptTips = append(res.KeptTips, row.ID)
					keep = true
				}
				named, keep = named || names, keep || names
			}
			if row.ParentID != 0 {
				hasChild[row.ParentID] = true
			}
			if keep {
				parentOf[row.ID], res.deltas[row.ID] = row.ParentID, !row.Base
			} else {
				res.Pruned = append(res.Pruned, row.ID)
			}
		}
		if len(rows) < prunePage {
			break
		}
		before = rows[len(rows)-1].ID
	}
	slices.Sort(res.Pruned)
	slices.Sort(res.KeptTips)
	res.Kept = len(parentOf)
	for id, parent := range parentOf {
		if _, pruned := slices.BinarySearch(res.Pruned, parent); pruned && parent != 0 {
			res.Rerooted = append(res.Rerooted, Reroot{ID: id, From: parent})
		}
	}
	slices.SortFunc(res.Rerooted, func(a, b Reroot) int { return cmp.Compare(a.ID, b.ID) })
	return res, nil
}
