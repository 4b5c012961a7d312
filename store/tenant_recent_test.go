package store_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"rewind/store"
	"rewind/store/memory"
)

// A tenant's RecentThreads lists and counts its own threads only, the
// default tenant's too once another tenant has threads, and paging after
// another tenant's thread is ErrNotFound (it does not say the thread is
// there).
func TestTenantRecentThreadsKeepsToTheTenant(t *testing.T) {
	ctx := t.Context()
	s := memory.New()
	if err := s.AddTenant(ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	def, err := store.ForTenant(ctx, s, "")
	if err != nil {
		t.Fatal(err)
	}
	acme, err := store.ForTenant(ctx, s, "acme")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	// Interleaved in time: d0 a0 d1 a1 d2 a2, the newest last.
	for i := range 6 {
		h, th := def, fmt.Sprintf("d%d", i/2)
		if i%2 == 1 {
			h, th = acme, fmt.Sprintf("a%d", i/2)
		}
		cp := store.Checkpoint{ThreadID: th, ID: 1, State: []byte(`{"v":2,"thread":"` + th + `","step":1,"messages":[]}`), Base: true, CreatedAt: at.Add(time.Duration(i) * time.Minute)}
		if err := h.PutCheckpoint(ctx, cp, nil); err != nil {
			t.Fatal(err)
		}
	}
	ids := func(ts []store.Thread) []string {
		var out []string
		for _, th := range ts {
			out = append(out, th.ID)
		}
		return out
	}
	for _, c := range []struct {
		h      store.Store
		before string
		want   []string
		rest   int
	}{
		{def, "", []string{"d2", "d1"}, 1},
		{def, "d2", []string{"d1", "d0"}, 0},
		{acme, "", []string{"a2", "a1"}, 1},
		{acme, "a1", []string{"a0"}, 0},
	} {
		page, rest, err := c.h.RecentThreads(ctx, store.ThreadCursor{ID: c.before}, 2)
		if err != nil || !slices.Equal(ids(page), c.want) || rest != c.rest {
			t.Errorf("%s: RecentThreads(%q, 2) = %q, %d, %v; want %q, %d", store.TenantOf(c.h), c.before, ids(page), rest, err, c.want, c.rest)
		}
	}
	for h, other := range map[store.Store]string{def: "a1", acme: "d1"} {
		if _, _, err := h.RecentThreads(ctx, store.ThreadCursor{ID: other}, 2); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s: RecentThreads after another tenant's thread %s: %v, want ErrNotFound", store.TenantOf(h), other, err)
		}
	}
}
