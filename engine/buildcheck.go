package engine

// Recovery checks before a fork or a new turn builds on a checkpoint
// (issue 36): what a resume checks of the history it carries on (the
// stored events follow on from the checkpoints, the graph's check of
// them: compactions, their strategy and model), without the pending
// work a fork drops and a new turn has none of. A fork checks its
// checkpoint's whole branch, as a resume does. A new turn checks the
// turn it follows (its base back to that turn's input or fork): the turn
// before that was checked by this turn's predecessor, so the history is
// checked once, turn by turn, and a turn reads a bounded part of it. A
// trusted turn (lockTurn: this engine wrote the head) checks nothing: it
// made what it would check. A refusal names the fix; nothing is written.

import (
	"context"
	"fmt"

	"rewind/engine/chainformat"
	"rewind/engine/internal/userpanic"
	"rewind/store"
)

// BuildCheck is a graph's check of the history a fork or a new turn
// builds on (see OnBuild): in.Events are the stored events of the
// checkpoint's branch (a new turn's: of the turn it follows, with
// in.Rerooted set), already found continuous. An error refuses; it must
// say what to do.
type BuildCheck func(ctx context.Context, in ResumeInfo) error

// OnBuild registers the graph's check before a fork or a new turn builds
// on a checkpoint (see BuildCheck).
func (g *Graph) OnBuild(fn BuildCheck) *Graph { g.buildCheck = fn; return g }

// checkFork runs the recovery checks on the branch a fork from cp builds
// on.
func (e *Engine) checkFork(ctx context.Context, thread string, cp Checkpoint) error {
	br, err := e.branchEvents(ctx, thread, cp.ID)
	if err != nil {
		return err
	}
	return e.build(ctx, "fork thread %q from @%d: %w", ResumeInfo{Checkpoint: cp, Events: br.events, Rerooted: br.rerooted})
}

// checkTurn runs the recovery checks on the turn a new turn on head (the
// thread's newest checkpoint) follows.
func (e *Engine) checkTurn(ctx context.Context, thread string, head Checkpoint) error {
	if head.ID == 0 {
		return nil // a new thread
	}
	evs, err := e.turnEvents(ctx, thread, head.ID)
	if err != nil {
		return err
	}
	return e.build(ctx, "new turn on thread %q at @%d: %w", ResumeInfo{Checkpoint: head, Events: evs, Rerooted: true})
}

func (e *Engine) build(ctx context.Context, what string, in ResumeInfo) error {
	if e.graph.buildCheck == nil {
		return nil
	}
	in.ModelName = e.modelName
	if err := userpanic.Do("OnBuild check", func() error { return e.graph.buildCheck(ctx, in) }); err != nil {
		return fmt.Errorf(what, threadName(in.Checkpoint.Thread), in.Checkpoint.ID, err)
	}
	return nil
}

// turnPage is how many listings a new turn's check reads at a time: a
// turn's checkpoints, usually in one read.
const turnPage = 16

// ancestors calls visit with checkpoint id of thread, then its parent and
// so on up to the root, until visit says stop. It reads the listings a
// page (turnPage) at a time, each page from the checkpoint it needs down,
// so a short walk reads one page however long the thread. It returns the
// id it could not find (pruned, or a broken chain), 0 when none was
// missing.
func (e *Engine) ancestors(ctx context.Context, thread string, id int64, visit func(store.Checkpoint) (stop bool, err error)) (missing int64, err error) {
	byID := map[int64]store.Checkpoint{}
	for at := id; at != 0; {
		row, ok := byID[at]
		if !ok {
			rows, err := e.store.History(ctx, thread, at+1, turnPage)
			if err != nil {
				return 0, fmt.Errorf("read history of thread %q: %w", threadName(thread), err)
			}
			for _, r := range rows {
				byID[r.ID] = r
			}
			if row, ok = byID[at]; !ok {
				return at, nil
			}
		}
		stop, err := visit(row)
		if err != nil || stop {
			return 0, err
		}
		at = row.ParentID
	}
	return 0, nil
}

// turnEvents reads the stored events of the turn head belongs to (head
// back to the newest input or fork checkpoint on its chain, or its root),
// oldest first, checking they are continuous: each checkpoint's numbered
// 1, 2, … without a gap, up to the count its listing recorded.
func (e *Engine) turnEvents(ctx context.Context, thread string, head int64) ([]Event, error) {
	var chain []store.Checkpoint // head first
	missing, err := e.ancestors(ctx, thread, head, func(row store.Checkpoint) (bool, error) {
		chain = append(chain, row)
		src, _ := chainformat.SourceAndEvents(row.Meta)
		return src == SourceInput || src == SourceFork, nil
	})
	if err != nil {
		return nil, err
	}
	if missing != 0 {
		return nil, fmt.Errorf("thread %q: checkpoint @%d's chain is broken at @%d: %w", threadName(thread), head, missing, ErrCorrupt)
	}
	fix := func(err error) error { return Fixable(thread, 0, err, ForkFix(thread, 0), RemoveFix(thread)) }
	var out []Event
	for i := len(chain) - 1; i >= 0; i-- {
		row := chain[i]
		rows, err := e.store.Events(ctx, thread, row.ID)
		if err != nil {
			return nil, fmt.Errorf("read events of thread %q: %w", threadName(thread), err)
		}
		for k, ev := range rows {
			if ev.Seq != k+1 {
				return nil, fix(fmt.Errorf("thread %q: the events of @%d jump from #%d to #%d (%s): %w", threadName(thread), row.ID, k, ev.Seq, ev.Type, ErrDiscontinuous))
			}
			read, err := chainformat.ReadEvent(thread, ev)
			if err != nil {
				return nil, fix(fmt.Errorf("event #%d of @%d on thread %q is corrupt (%v): %w", ev.Seq, row.ID, threadName(thread), err, ErrCorrupt))
			}
			out = append(out, read)
		}
		if _, n := chainformat.SourceAndEvents(row.Meta); n > len(rows) {
			return nil, fix(fmt.Errorf("thread %q: @%d was stored with %d event(s) but %d are left (#%d is missing): %w",
				threadName(thread), row.ID, n, len(rows), len(rows)+1, ErrDiscontinuous))
		}
	}
	return out, nil
}
