package storetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"rewind/store"
)

// testRecentThreads: RecentThreads lists the most recently updated
// first (ties by ID descending bytewise), a page after a thread,
// counts the rest, reaches every thread once when paged, and refuses a
// thread it does not hold.
func testRecentThreads(t *testing.T, s store.Store) {
	ctx := t.Context()
	if page, rest, err := s.RecentThreads(ctx, store.ThreadCursor{}, 5); err != nil || len(page) != 0 || rest != 0 {
		t.Fatalf("RecentThreads of an empty store = %v, %d, %v; want none", page, rest, err)
	}
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	stamped := func(cp store.Checkpoint, minutes int) store.Checkpoint {
		cp.CreatedAt = at.Add(time.Duration(minutes) * time.Minute)
		return cp
	}
	// "old" is written first and updated last, "B" and "a" and "b" tie
	// (bytewise: b > a > B), "z" is the oldest.
	put(t, s, stamped(checkpoint("old", 1, 0), 0))
	put(t, s, stamped(checkpoint("z", 1, 0), 1))
	for _, th := range []string{"a", "B", "b"} {
		put(t, s, stamped(checkpoint(th, 1, 0), 5))
	}
	put(t, s, stamped(checkpoint("m", 1, 0), 7))
	put(t, s, stamped(checkpoint("old", 2, 1), 9))
	want := []string{"old", "m", "b", "a", "B", "z"}
	ids := func(ts []store.Thread) []string {
		var out []string
		for _, th := range ts {
			out = append(out, th.ID)
		}
		return out
	}
	all, rest, err := s.RecentThreads(ctx, store.ThreadCursor{}, 0)
	if err != nil || !slices.Equal(ids(all), want) || rest != 0 {
		t.Fatalf("RecentThreads(all) = %q, %d, %v; want %q, 0", ids(all), rest, err, want)
	}
	if all[0].Checkpoints != 2 || all[0].LatestID != 2 || !all[0].UpdatedAt.Equal(at.Add(9*time.Minute)) || all[0].Latest.ID != 2 {
		t.Errorf("RecentThreads' first = %+v; want old with 2 checkpoints, the newest 2 at %v with its listing", all[0], at.Add(9*time.Minute))
	}
	// Pages of 2, each after the last one listed, reach every thread once.
	var paged []string
	var rests []int
	before := ""
	for range len(want) {
		page, rest, err := s.RecentThreads(ctx, store.ThreadCursor{ID: before}, 2)
		if err != nil {
			t.Fatalf("RecentThreads(%q, 2): %v", before, err)
		}
		if len(page) == 0 {
			break
		}
		paged, rests = append(paged, ids(page)...), append(rests, rest)
		before = page[len(page)-1].ID
	}
	if !slices.Equal(paged, want) || !slices.Equal(rests, []int{4, 2, 0}) {
		t.Errorf("paged by 2: %q with rests %v; want %q with [4 2 0]", paged, rests, want)
	}
	if page, rest, err := s.RecentThreads(ctx, store.ThreadCursor{ID: "a"}, 10); err != nil || !slices.Equal(ids(page), []string{"B", "z"}) || rest != 0 {
		t.Errorf("RecentThreads(a, 10) = %q, %d, %v; want [B z], 0", ids(page), rest, err)
	}
	if page, rest, err := s.RecentThreads(ctx, store.ThreadCursor{ID: "z"}, 10); err != nil || len(page) != 0 || rest != 0 {
		t.Errorf("RecentThreads after the oldest = %q, %d, %v; want none", ids(page), rest, err)
	}
	_, _, err = s.RecentThreads(ctx, store.ThreadCursor{ID: "never"}, 2)
	wantIs(t, err, store.ErrNotFound)
	if err := s.DeleteThread(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	if page, rest, err := s.RecentThreads(ctx, store.ThreadCursor{ID: "m"}, 1); err != nil || !slices.Equal(ids(page), []string{"a"}) || rest != 2 {
		t.Errorf("after deleting b, RecentThreads(m, 1) = %q, %d, %v; want [a], 2", ids(page), rest, err)
	}
	_, _, err = s.RecentThreads(ctx, store.ThreadCursor{ID: "b"}, 1)
	wantIs(t, err, store.ErrNotFound)
}

// testRecentThreadsCursor: a page after a cursor (store.CursorAt, the
// last thread listed where it was listed) goes on from that place, read
// without the thread: paging while the cursor's thread is written again
// (moved to the top) lists every thread once, where paging after its id
// started over from the top; a cursor whose thread was deleted since
// still pages; a time between two microseconds places every thread of
// the one below after it.
func testRecentThreadsCursor(t *testing.T, s store.Store) {
	ctx := t.Context()
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var want []string
	for i := range 7 {
		th := fmt.Sprintf("p%d", 6-i)
		cp := checkpoint(th, 1, 0)
		cp.CreatedAt = at.Add(time.Duration(6-i) * time.Minute)
		put(t, s, cp)
		want = append(want, th)
	}
	ids := func(ts []store.Thread) []string {
		var out []string
		for _, th := range ts {
			out = append(out, th.ID)
		}
		return out
	}
	// Pages of 2: after the first, its last thread (p5) is written again,
	// after the second, its last (p3) is deleted.
	var paged []string
	var rests []int
	var before store.ThreadCursor
	for n := 0; n < len(want); n++ {
		page, rest, err := s.RecentThreads(ctx, before, 2)
		if err != nil {
			t.Fatalf("RecentThreads(%+v, 2): %v", before, err)
		}
		if len(page) == 0 {
			break
		}
		paged, rests = append(paged, ids(page)...), append(rests, rest)
		last := page[len(page)-1]
		before = store.CursorAt(last)
		switch n {
		case 0:
			cp := checkpoint(last.ID, 2, 1)
			cp.CreatedAt = at.Add(time.Hour)
			put(t, s, cp)
		case 1:
			if err := s.DeleteThread(ctx, last.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	if !slices.Equal(paged, want) || !slices.Equal(rests, []int{5, 3, 1, 0}) {
		t.Errorf("paged by 2 with cursors, p5 written and p3 deleted between pages: %q with rests %v; want %q with [5 3 1 0]", paged, rests, want)
	}
	// A cursor names a place, whether a thread is there or not.
	for _, c := range []struct {
		before store.ThreadCursor
		want   []string
	}{
		{store.ThreadCursor{ID: "z-never", UpdatedAt: at.Add(2 * time.Minute)}, []string{"p2", "p1", "p0"}},
		{store.ThreadCursor{ID: "p2", UpdatedAt: at.Add(2 * time.Minute)}, []string{"p1", "p0"}},
		{store.ThreadCursor{ID: "p3", UpdatedAt: at.Add(2 * time.Minute)}, []string{"p2", "p1", "p0"}},
		{store.ThreadCursor{ID: "", UpdatedAt: at.Add(2 * time.Minute)}, []string{"p1", "p0"}},
		// Half a microsecond after p2's: p2 comes after it, whatever the id.
		{store.ThreadCursor{ID: "a", UpdatedAt: at.Add(2*time.Minute + 500*time.Nanosecond)}, []string{"p2", "p1", "p0"}},
		{store.ThreadCursor{ID: "p1", UpdatedAt: at.Add(-time.Minute)}, nil},
	} {
		page, rest, err := s.RecentThreads(ctx, c.before, 0)
		if err != nil || !slices.Equal(ids(page), c.want) || rest != 0 {
			t.Errorf("RecentThreads(%+v, 0) = %q, %d, %v; want %q, 0", c.before, ids(page), rest, err, c.want)
		}
	}
	// A bare id is that thread's place now: p5's, at the top.
	if page, rest, err := s.RecentThreads(ctx, store.ThreadCursor{ID: "p5"}, 1); err != nil || !slices.Equal(ids(page), []string{"p6"}) || rest != 4 {
		t.Errorf("RecentThreads(p5, 1) after p5 was written again = %q, %d, %v; want [p6], 4", ids(page), rest, err)
	}
	_, _, err := s.RecentThreads(ctx, store.ThreadCursor{ID: "p3"}, 1)
	wantIs(t, err, store.ErrNotFound)
}
