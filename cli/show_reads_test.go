package cli

import (
	"context"
	"io"
	"sync/atomic"
	"testing"

	"rewind/engine"
	"rewind/engine/bench"
	"rewind/engine/ticket"
	"rewind/store"
	"rewind/store/memory"
)

// rowCounter counts the checkpoint, write and event rows a command reads.
type rowCounter struct {
	store.Store
	rows atomic.Int64
}

func (s *rowCounter) History(ctx context.Context, thread string, before int64, limit int) ([]store.Checkpoint, error) {
	out, err := s.Store.History(ctx, thread, before, limit)
	s.rows.Add(int64(len(out)))
	return out, err
}

func (s *rowCounter) Chain(ctx context.Context, thread string, id int64) ([]store.Checkpoint, error) {
	out, err := s.Store.Chain(ctx, thread, id)
	s.rows.Add(int64(len(out)))
	return out, err
}

func (s *rowCounter) Writes(ctx context.Context, thread string, id int64) ([]store.TaskWrites, error) {
	out, err := s.Store.Writes(ctx, thread, id)
	s.rows.Add(int64(len(out)))
	return out, err
}

func (s *rowCounter) Events(ctx context.Context, thread string, id int64) ([]store.Event, error) {
	out, err := s.Store.Events(ctx, thread, id)
	s.rows.Add(int64(len(out)))
	return out, err
}

// showRows runs turns turns on a new thread and says how many rows show
// read for the newest checkpoint and for one in the middle of the thread.
func showRows(t *testing.T, turns int) (newest, middle, checkpoints int64) {
	t.Helper()
	ctx := t.Context()
	st := &rowCounter{Store: memory.New()}
	src := ticket.NewMemorySources()
	e, err := ticket.NewEngine(st, ticket.NewMock(), ticket.WithSources(src))
	if err != nil {
		t.Fatal(err)
	}
	for i := range turns {
		if _, err := e.Run(ctx, "r", ticket.Input(bench.Sentences[i%len(bench.Sentences)]), engine.RunConfig{}); err != nil {
			t.Fatal(err)
		}
	}
	latest, err := e.Latest(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	read := func(id int64) int64 {
		st.rows.Store(0)
		if err := printShow(ctx, e, src, "r", id, false, io.Discard); err != nil {
			t.Fatal(err)
		}
		return st.rows.Load()
	}
	return read(0), read(latest.ID / 2), latest.ID
}

// show reads the one checkpoint it prints, a page of its ancestors and
// the newest turns' listings: as many rows on a thread ten times as long,
// never every listing (issue 31: show grew with the thread). The middle
// checkpoint's chain to the nearest stored base is bounded, not by the
// thread: it may differ by a chain's length between the two.
func TestShowReadsDoNotGrowWithTheThread(t *testing.T) {
	t.Parallel()
	// Both longer than the newest CostTurns turns, which show sums.
	n1, m1, short := showRows(t, 2*engine.CostTurns)
	n2, m2, long := showRows(t, 6*engine.CostTurns)
	if long < 3*short-8 {
		t.Fatalf("threads of %d and %d checkpoints: want one three times the other", short, long)
	}
	t.Logf("rows read: newest %d / %d, middle %d / %d, at %d / %d checkpoints", n1, n2, m1, m2, short, long)
	if n2 > n1+8 || n2 >= long/3 {
		t.Errorf("show of the newest read %d rows at %d checkpoints, %d at %d: it grows with the thread", n2, long, n1, short)
	}
	if m2 > m1+40 || m2 >= long/3 {
		t.Errorf("show of a middle checkpoint read %d rows at %d checkpoints, %d at %d: it grows with the thread", m2, long, m1, short)
	}
}
