package postgres

import (
	"context"
	"sync/atomic"
	"testing"

	"rewind/store"
)

// A command's reads cost one round trip each at their first run (pgx's
// statement cache spent two: prepare, then run), and a read run again
// still comes from the cache: a server far away charges its latency per
// round trip, and `rewind show` on PostgreSQL went from 24 writes to 13.
func TestAReadsFirstRunIsOneRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	writer, dbURL := openFresh(t)
	body := []byte(`{"role":"user","content":"hello"}`)
	cp := store.Checkpoint{ThreadID: "t", ID: 1, State: []byte(`{}`),
		Messages: []store.Message{{Hash: store.ContentHash(body), Index: 0, Body: body}}}
	if err := writer.PutCheckpoint(ctx, cp, nil); err != nil {
		t.Fatal(err)
	}
	writes, dials := new(atomic.Int64), new(atomic.Int64)
	s, err := open(ctx, dbURL, counting(writes, dials))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	reads := []struct {
		name string
		read func() error
	}{
		{"latest", func() error { _, err := s.Latest(ctx, "t"); return err }},
		{"chain", func() error { _, err := s.Chain(ctx, "t", 1); return err }},
		{"messages", func() error { _, err := s.Messages(ctx, "t", []string{cp.Messages[0].Hash}); return err }},
		{"size", func() error { _, err := s.Size(ctx, "t"); return err }},
		{"writes", func() error { _, err := s.Writes(ctx, "t", 1); return err }},
		{"owner", func() error { _, err := s.ThreadTenant(ctx, "t"); return err }},
	}
	// The first run: unprepared; the second prepares it; the third runs
	// the prepared statement.
	for run, want := range []int64{1, 2, 1} {
		for _, r := range reads {
			before := writes.Load()
			if err := r.read(); err != nil {
				t.Fatalf("%s, run %d: %v", r.name, run+1, err)
			}
			if rt := writes.Load() - before; rt != want {
				t.Errorf("%s, run %d: %d round trips, want %d", r.name, run+1, rt, want)
			}
		}
	}
	if n := dials.Load(); n != 1 {
		t.Errorf("the reads made %d connections, want the one Open made", n)
	}
}
