package store

import (
	"slices"
	"strings"
	"time"
)

// NewerFirst orders threads as RecentThreads lists them: UpdatedAt
// descending, then ID descending bytewise.
func NewerFirst(a, b Thread) int {
	if c := b.UpdatedAt.Compare(a.UpdatedAt); c != 0 {
		return c
	}
	return strings.Compare(b.ID, a.ID)
}

// ThreadCursor is a place in RecentThreads' order, the threads after it
// being those updated before UpdatedAt and those updated at UpdatedAt
// whose ID is below ID bytewise. A place holds whether or not a thread
// ID is there still: a page after the last thread listed goes on from
// where that one was, also once it is written again (moved to the top)
// or deleted. With UpdatedAt zero it is thread ID's place as the store
// holds it now (ErrNotFound when it holds no thread ID); the zero cursor
// comes before every thread.
type ThreadCursor struct {
	ID        string
	UpdatedAt time.Time
}

// CursorAt is thread t's place as it was listed: the next page's cursor.
func CursorAt(t Thread) ThreadCursor { return ThreadCursor{ID: t.ID, UpdatedAt: t.UpdatedAt} }

// Placed says whether c holds its time (no thread's row is read for it).
func (c ThreadCursor) Placed() bool { return !c.UpdatedAt.IsZero() }

// Micros is a placed cursor as a store that keeps Unix microseconds
// compares it: the same threads come after (micros, id) there as after c.
// A time between two microseconds comes after every thread of the one
// below it, whatever its id.
func (c ThreadCursor) Micros() (micros int64, id string) {
	us := c.UpdatedAt.UnixMicro()
	if c.UpdatedAt.After(time.UnixMicro(us)) {
		return us + 1, ""
	}
	return us, c.ID
}

// RecentPage is RecentThreads over a whole list of threads (a store
// that holds them all at once): it sorts all (NewerFirst) and cuts the
// page after before.
func RecentPage(all []Thread, before ThreadCursor, limit int) ([]Thread, int, error) {
	slices.SortFunc(all, NewerFirst)
	switch {
	case before.Placed():
		at := Thread{ID: before.ID, UpdatedAt: before.UpdatedAt}
		i, _ := slices.BinarySearchFunc(all, at, NewerFirst)
		if i < len(all) && NewerFirst(all[i], at) == 0 {
			i++ // the cursor's own thread, not yet written since
		}
		all = all[i:]
	case before.ID != "":
		i := slices.IndexFunc(all, func(t Thread) bool { return t.ID == before.ID })
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
