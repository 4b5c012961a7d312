package store

import (
	"slices"
	"strings"
)

// NewerFirst orders threads as RecentThreads lists them: UpdatedAt
// descending, then ID descending bytewise.
func NewerFirst(a, b Thread) int {
	if c := b.UpdatedAt.Compare(a.UpdatedAt); c != 0 {
		return c
	}
	return strings.Compare(b.ID, a.ID)
}

// RecentPage is RecentThreads over a whole list of threads (a store
// that holds them all at once): it sorts all (NewerFirst) and cuts the
// page after before.
func RecentPage(all []Thread, before string, limit int) ([]Thread, int, error) {
	slices.SortFunc(all, NewerFirst)
	if before != "" {
		i := slices.IndexFunc(all, func(t Thread) bool { return t.ID == before })
		if i < 0 {
			return nil, 0, ErrNotFound
		}
		all = all[i+1:]
	}
	if limit <= 0 || limit >= len(all) {
		return all, 0, nil
	}
	return all[:limit], len(all) - limit, nil
}
