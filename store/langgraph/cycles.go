package langgraph

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"rewind/store"
)

// cutCycles breaks the parent cycles a damaged table can hold, so that a
// chain's listings always form a tree (a browser that walks parents from
// a root would miss every checkpoint of a cycle, and one through the root
// left nothing to start from). Of each cycle, the oldest checkpoint's
// parent link is not read: it shows as a root, its Damaged naming the
// cycle. LangGraph's ids sort as they were made (UUIDv6), so a parent is
// older than its child and a cycle holds a link to a parent not older,
// which the oldest has: only a row with such a link costs reading the
// chain's links.
func cutCycles(ctx context.Context, s snapshot, c Chain, rows []row) error {
	if !slices.ContainsFunc(rows, func(r row) bool { return r.parent != "" && r.parent >= r.id }) {
		return nil
	}
	parents, err := s.parents(ctx, c)
	if err != nil {
		return fmt.Errorf("read the parent links of %s: %w", c, err)
	}
	cut := cycles(parents)
	for i := range rows {
		if cyc, ok := cut[rows[i].id]; ok {
			rows[i].parent = ""
			rows[i].doc.bad = append(rows[i].doc.bad, describeCycle(cyc))
		}
	}
	return nil
}

// cycles finds the parent cycles of a chain (id → parent), each by its
// oldest checkpoint, listed from it, each the child of the next, its
// parent last.
func cycles(parents map[string]string) map[string][]string {
	// mark: 0 not reached yet, -1 done, i+1 at index i of the path
	// being walked.
	mark := make(map[string]int, len(parents))
	out := map[string][]string{}
	for _, start := range slices.Sorted(maps.Keys(parents)) {
		var path []string
		id := start
		for mark[id] == 0 {
			p, ok := parents[id]
			if !ok {
				break
			}
			path = append(path, id)
			mark[id] = len(path)
			id = p
		}
		if i := mark[id]; i > 0 { // back on the path: a cycle
			cyc := path[i-1:]
			low := slices.Index(cyc, slices.Min(cyc))
			cyc = append(slices.Clone(cyc[low:]), cyc[:low]...)
			out[cyc[0]] = cyc
		}
		for _, id := range path {
			mark[id] = -1
		}
	}
	return out
}

// describeCycle names a cycle, cut short past 6 checkpoints.
func describeCycle(cyc []string) string {
	ids := make([]string, 0, 7)
	for i, id := range cyc {
		if len(cyc) > 6 && i == 3 {
			ids = append(ids, fmt.Sprintf("…%d more…", len(cyc)-5))
			continue
		}
		if len(cyc) > 6 && i > 3 && i < len(cyc)-2 {
			continue
		}
		ids = append(ids, fmt.Sprintf("@%s", store.Name(id)))
	}
	ids = append(ids, fmt.Sprintf("@%s", store.Name(cyc[0])))
	what := "its parent is itself"
	if len(cyc) > 1 {
		what = fmt.Sprintf("its parent @%s leads back to it, a parent cycle of %d checkpoints (%s)", store.Name(cyc[1]), len(cyc), strings.Join(ids, " → "))
	}
	return what + ": the link is not read, the checkpoint shows as a root"
}
