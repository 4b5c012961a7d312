package engine

import (
	"context"
	"fmt"
)

// Relation says how two checkpoints of a thread stand: the same one, one an
// ancestor of the other, or on branches that part after a common ancestor
// ("different branches, parting after @N"). `rewind diff` and the TUI's
// compare show it.
func (e *Engine) Relation(ctx context.Context, thread string, a, b int64) (string, error) {
	if a == b {
		return "the same checkpoint", nil
	}
	ca, err := e.Ancestors(ctx, thread, a)
	if err != nil {
		return "", err
	}
	cb, err := e.Ancestors(ctx, thread, b)
	if err != nil {
		return "", err
	}
	onA := map[int64]bool{}
	for _, c := range ca {
		onA[c.ID] = true
	}
	var common int64
	for _, c := range cb {
		if onA[c.ID] {
			common = c.ID
		}
	}
	switch {
	case common == a:
		return fmt.Sprintf("@%d is an ancestor of @%d", a, b), nil
	case common == b:
		return fmt.Sprintf("@%d is an ancestor of @%d", b, a), nil
	case common != 0:
		return fmt.Sprintf("different branches, parting after @%d", common), nil
	}
	return "different branches with no common checkpoint left (pruned)", nil
}
