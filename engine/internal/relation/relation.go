// Package relation words how two checkpoints of a thread stand, from
// their ancestors: the engine reads the chains, this says what they mean.
package relation

import "fmt"

// Of says how checkpoints a and b stand: the same one, one an ancestor of
// the other, or on branches that part after a common ancestor. ca and cb
// are a's and b's ancestors, root first, each ending at itself; id is a
// checkpoint's id.
func Of[C any](a, b int64, ca, cb []C, id func(C) int64) string {
	if a == b {
		return "the same checkpoint"
	}
	onA := map[int64]bool{}
	for _, c := range ca {
		onA[id(c)] = true
	}
	var common int64
	for _, c := range cb {
		if onA[id(c)] {
			common = id(c)
		}
	}
	switch {
	case common == a:
		return fmt.Sprintf("@%d is an ancestor of @%d", a, b)
	case common == b:
		return fmt.Sprintf("@%d is an ancestor of @%d", b, a)
	case common != 0:
		return fmt.Sprintf("different branches, parting after @%d", common)
	}
	return "different branches with no common checkpoint left (pruned)"
}
