package bench

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"

	"rewind/engine"
	"rewind/engine/ticket"
	"rewind/store"
	"rewind/store/backend/backendtest"
	"rewind/store/memory"
)

// BenchmarkTurnSlope runs a long conversation on each store and reports
// what a turn costs early (turns 91-110) and late (the last 20), in CPU
// time and in bytes the process wrote: a turn should cost the same at any
// length (issue 31 item 4). One iteration is one whole conversation of
// REWIND_BENCH_TURNS turns (default 125; 2,000 to see a slope):
//
//	REWIND_BENCH_TURNS=2000 go test ./engine/bench -run x -bench TurnSlope -benchtime 1x
func BenchmarkTurnSlope(b *testing.B) {
	backendtest.Each(b, func(b *testing.B, be backendtest.Backend) {
		turns := max(coldTurns(b), 200)
		var rep Report
		for b.Loop() {
			var err error
			if rep, err = Run(context.Background(), be.Open(b, "slope"), be.Name, Options{Turns: turns, TurnsOnly: true}, nil); err != nil {
				b.Fatal(err)
			}
		}
		s := rep.Slope
		b.ReportMetric(s.Early.CPUMs*1e6, "early-cpu-ns/turn")
		b.ReportMetric(s.Late.CPUMs*1e6, "late-cpu-ns/turn")
		b.ReportMetric(s.CPU, "late/early-cpu")
		b.ReportMetric(s.Early.Ms*1e6, "early-ns/turn")
		b.ReportMetric(s.Late.Ms*1e6, "late-ns/turn")
		b.ReportMetric(s.Early.Written, "early-written-B/turn")
		b.ReportMetric(s.Late.Written, "late-written-B/turn")
	})
}

// workCounter counts what the engine asks of its store: rows read and
// bytes handed to it (tasks write in parallel).
type workCounter struct {
	store.Store
	rows, bytes atomic.Int64
}

func (w *workCounter) PutCheckpoint(ctx context.Context, cp store.Checkpoint, events []store.Event) error {
	w.bytes.Add(int64(len(cp.Meta) + len(cp.State) + len(cp.Head)))
	for _, m := range cp.Messages {
		w.bytes.Add(int64(len(m.Body)))
	}
	for _, bl := range cp.Blobs {
		w.bytes.Add(int64(len(bl.Body)))
	}
	for _, ev := range events {
		w.bytes.Add(int64(len(ev.Payload)))
	}
	return w.Store.PutCheckpoint(ctx, cp, events)
}

func (w *workCounter) PutWrites(ctx context.Context, tw store.TaskWrites) error {
	w.bytes.Add(int64(len(tw.Writes)))
	return w.Store.PutWrites(ctx, tw)
}

func (w *workCounter) Get(ctx context.Context, thread string, id int64) (store.Checkpoint, error) {
	w.rows.Add(1)
	return w.Store.Get(ctx, thread, id)
}

func (w *workCounter) Latest(ctx context.Context, thread string) (store.Checkpoint, error) {
	w.rows.Add(1)
	return w.Store.Latest(ctx, thread)
}

func (w *workCounter) History(ctx context.Context, thread string, before int64, limit int) ([]store.Checkpoint, error) {
	rows, err := w.Store.History(ctx, thread, before, limit)
	w.rows.Add(int64(len(rows)))
	return rows, err
}

func (w *workCounter) Chain(ctx context.Context, thread string, id int64) ([]store.Checkpoint, error) {
	rows, err := w.Store.Chain(ctx, thread, id)
	w.rows.Add(int64(len(rows)))
	return rows, err
}

func (w *workCounter) Messages(ctx context.Context, thread string, hashes []string) ([]store.Message, error) {
	rows, err := w.Store.Messages(ctx, thread, hashes)
	w.rows.Add(int64(len(rows)))
	return rows, err
}

func (w *workCounter) MessagesIn(ctx context.Context, thread string, from, to int64) ([]store.Message, error) {
	rows, err := w.Store.MessagesIn(ctx, thread, from, to)
	w.rows.Add(int64(len(rows)))
	return rows, err
}

func (w *workCounter) Events(ctx context.Context, thread string, id int64) ([]store.Event, error) {
	rows, err := w.Store.Events(ctx, thread, id)
	w.rows.Add(int64(len(rows)))
	return rows, err
}

func (w *workCounter) MessagesAt(ctx context.Context, thread string, index int64) ([]store.Message, error) {
	rows, err := w.Store.MessagesAt(ctx, thread, index)
	w.rows.Add(int64(len(rows)))
	return rows, err
}

func (w *workCounter) Writes(ctx context.Context, thread string, id int64) ([]store.TaskWrites, error) {
	rows, err := w.Store.Writes(ctx, thread, id)
	w.rows.Add(int64(len(rows)))
	return rows, err
}

func (w *workCounter) Blobs(ctx context.Context, thread string, hashes []string) ([]store.Blob, error) {
	rows, err := w.Store.Blobs(ctx, thread, hashes)
	w.rows.Add(int64(len(rows)))
	return rows, err
}

func (w *workCounter) Bodies(ctx context.Context, thread string, messages, blobs []string) ([]store.Message, []store.Blob, error) {
	ms, bs, err := w.Store.Bodies(ctx, thread, messages, blobs)
	w.rows.Add(int64(len(ms) + len(bs)))
	return ms, bs, err
}

// work is what one span of turns cost, a turn: store rows read, bytes
// handed to the store, heap allocations.
type work struct{ rows, bytes, allocs float64 }

// A turn's work does not grow with the thread (issue 31 item 4): the rows
// it reads, the bytes it stores and its allocations at turns 241-260 and
// 481-500 are the same within 10%. A commit that walked the whole
// history, or a head snapshot that grew with the thread, fails it.
// Counts, not time: this cannot be flaky. (Before turn 240 a turn grows
// on purpose: the facts ledger fills up to the 4 pages it keeps.)
// Not parallel: it counts the process's allocations (runtime.MemStats).
func TestTurnWorkStaysFlat(t *testing.T) {
	ctx := context.Background()
	counter := &workCounter{Store: memory.New()}
	e, err := ticket.NewEngine(counter, ticket.NewMock())
	if err != nil {
		t.Fatal(err)
	}
	span := func(from, to int) work {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		rows, bytes, allocs := counter.rows.Load(), counter.bytes.Load(), ms.Mallocs
		for n := from; n <= to; n++ {
			if _, err := e.Run(ctx, "long", turnInput(n), engine.RunConfig{}); err != nil {
				t.Fatal(err)
			}
		}
		runtime.ReadMemStats(&ms)
		k := float64(to - from + 1)
		return work{float64(counter.rows.Load()-rows) / k, float64(counter.bytes.Load()-bytes) / k, float64(ms.Mallocs-allocs) / k}
	}
	span(1, 240)
	early := span(241, 260)
	span(261, 480)
	late := span(481, 500)
	t.Logf("a turn at 241-260: %.0f rows read, %.0f bytes stored, %.0f allocations; at 481-500: %.0f, %.0f, %.0f", early.rows, early.bytes, early.allocs, late.rows, late.bytes, late.allocs)
	for _, c := range []struct {
		what        string
		early, late float64
	}{{"store rows read", early.rows, late.rows}, {"bytes stored", early.bytes, late.bytes}, {"allocations", early.allocs, late.allocs}} {
		if c.late > 1.1*c.early {
			t.Errorf("a turn's %s grow with the thread: %.0f a turn at turns 241-260, %.0f at 481-500", c.what, c.early, c.late)
		}
	}
}
