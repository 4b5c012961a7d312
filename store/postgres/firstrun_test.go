package postgres

import (
	"context"
	"sync/atomic"
	"testing"

	"rewind/store"
	"rewind/store/postgres/pgtest"
)

// A command's reads, puts and task writes cost one round trip each at
// their first two runs (pgx's statement cache spent two on the first:
// prepare, then run), and a statement run more often comes from the cache
// from its third: a server far away charges its latency per round trip,
// and `rewind show` on PostgreSQL went from 24 writes to 13, then 12.
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
	s, err := open(ctx, dbURL, pgtest.Counting(writes, dials))
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
	// The first two runs: unprepared; the third prepares it; the fourth
	// runs the prepared statement.
	for run, want := range []int64{1, 1, 2, 1} {
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
	// A put's statement and a task's writes' go the same way.
	for run, want := range []int64{1, 1, 2, 1} {
		id := int64(run + 2)
		before := writes.Load()
		if err := s.PutCheckpoint(ctx, store.Checkpoint{ThreadID: "t", ID: id, ParentID: id - 1, State: []byte(`{"n":1}`)}, nil); err != nil {
			t.Fatalf("put %d: %v", id, err)
		}
		if rt := writes.Load() - before; rt != want {
			t.Errorf("put, run %d: %d round trips, want %d", run+1, rt, want)
		}
		before = writes.Load()
		if err := s.PutWrites(ctx, store.TaskWrites{ThreadID: "t", CheckpointID: id, TaskID: "task", Writes: []byte(`[["messages",{"a":1}]]`)}); err != nil {
			t.Fatalf("writes at %d: %v", id, err)
		}
		if rt := writes.Load() - before; rt != want {
			t.Errorf("task writes, run %d: %d round trips, want %d", run+1, rt, want)
		}
	}
	got, err := s.Writes(ctx, "t", 5)
	if err != nil || len(got) != 1 || string(got[0].Writes) != `[["messages",{"a":1}]]` {
		t.Errorf("the writes put unprepared read back as %+v, %v", got, err)
	}
	cp5, err := s.Get(ctx, "t", 5)
	if err != nil || string(cp5.State) != `{"n":1}` {
		t.Errorf("checkpoint 5 put read back as %s, %v", cp5.State, err)
	}
	if n := dials.Load(); n != 1 {
		t.Errorf("the reads made %d connections, want the one Open made", n)
	}
}
