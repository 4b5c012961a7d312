package storetest

import (
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
	if page, rest, err := s.RecentThreads(ctx, "", 5); err != nil || len(page) != 0 || rest != 0 {
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
	all, rest, err := s.RecentThreads(ctx, "", 0)
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
		page, rest, err := s.RecentThreads(ctx, before, 2)
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
	if page, rest, err := s.RecentThreads(ctx, "a", 10); err != nil || !slices.Equal(ids(page), []string{"B", "z"}) || rest != 0 {
		t.Errorf("RecentThreads(a, 10) = %q, %d, %v; want [B z], 0", ids(page), rest, err)
	}
	if page, rest, err := s.RecentThreads(ctx, "z", 10); err != nil || len(page) != 0 || rest != 0 {
		t.Errorf("RecentThreads after the oldest = %q, %d, %v; want none", ids(page), rest, err)
	}
	_, _, err = s.RecentThreads(ctx, "never", 2)
	wantIs(t, err, store.ErrNotFound)
	if err := s.DeleteThread(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	if page, rest, err := s.RecentThreads(ctx, "m", 1); err != nil || !slices.Equal(ids(page), []string{"a"}) || rest != 2 {
		t.Errorf("after deleting b, RecentThreads(m, 1) = %q, %d, %v; want [a], 2", ids(page), rest, err)
	}
	_, _, err = s.RecentThreads(ctx, "b", 1)
	wantIs(t, err, store.ErrNotFound)
}
