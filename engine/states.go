package engine

import (
	"context"
	"errors"
	"fmt"

	"rewind/engine/internal/statewalk"
	"rewind/store"
)

// EachState calls f with every checkpoint of thread, oldest first, each
// with its values and tasks as Get gives it: the newest limit (all when
// limit ≤ 0) of those with an id below before (all when before ≤ 0), of
// every branch. Each is replayed from its parent, the rows between two
// bases read at once (statewalk): a 1,000-turn thread's 8,000 states in
// under a second. A checkpoint pruned while the walk runs is left out.
// f's error stops the walk and is returned.
func (e *Engine) EachState(ctx context.Context, thread string, before int64, limit int, f func(Checkpoint) error) error {
	w := statewalk.Walk{
		Rows: e.store,
		Rebuild: func(ctx context.Context, chain []store.Checkpoint, cached func(store.Checkpoint) (Checkpoint, bool)) (Checkpoint, error) {
			cp, err := e.graph.schema.Rebuild(ctx, e.store, chain, cached)
			return cp, corruptFixes(chain[0].ThreadID, chain[0].ID, err)
		},
		ReadsAlone: readsAlone,
		Get:        func(ctx context.Context, id int64) (Checkpoint, error) { return e.Get(ctx, thread, id) },
	}
	n, err := w.Each(ctx, thread, before, limit, f)
	if err != nil || n > 0 || before > 0 {
		return err
	}
	if _, err := e.store.Latest(ctx, thread); errors.Is(err, store.ErrNotFound) {
		return threadNotFound(thread)
	} else if err != nil {
		return fmt.Errorf("read thread %q: %w", threadName(thread), err)
	}
	return nil
}
