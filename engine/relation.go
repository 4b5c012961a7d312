package engine

import (
	"context"

	"rewind/engine/internal/relation"
)

// Relation says how two checkpoints of a thread stand: the same one, one an
// ancestor of the other, or on branches that part after a common ancestor
// ("different branches, parting after @N"). `rewind diff` and the TUI's
// compare show it.
func (e *Engine) Relation(ctx context.Context, thread string, a, b int64) (string, error) {
	var ca, cb []Checkpoint
	var err error
	if a != b {
		if ca, err = e.Ancestors(ctx, thread, a); err == nil {
			cb, err = e.Ancestors(ctx, thread, b)
		}
	}
	if err != nil {
		return "", err
	}
	return relation.Of(a, b, ca, cb, func(c Checkpoint) int64 { return c.ID }), nil
}
