package sqlite_test

import (
	"fmt"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"rewind/store"
	"rewind/store/sqlite"
	"rewind/store/sqlite/sqlitetest"
)

// Processes that open a new store file at the same moment (`rewind run`
// and `rewind tui` started together, a class's terminals) all get it:
// each switches the new file to WAL, and SQLite refused one of two such
// switches at once with SQLITE_BUSY ("database is locked"), without a
// busy wait, about one time in a hundred. Goroutines with their own
// handles race as processes do: SQLite locks the file per connection.
func TestANewFileOpensFromManyAtOnce(t *testing.T) {
	t.Parallel()
	const rounds, openers = 60, 3
	for round := range rounds {
		path := filepath.Join(t.TempDir(), fmt.Sprintf("r%d.db", round))
		errs := make(chan error, openers)
		var wg sync.WaitGroup
		for range openers {
			wg.Go(func() {
				s, err := sqlite.Open(t.Context(), path)
				if err == nil {
					err = s.Close()
				}
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("round %d of %d openers at once on a new file: %v", round, openers, err)
			}
		}
	}
}

// BenchmarkOpenNewFile opens and closes a store on a new file, as every
// first run (and hundreds of tests) does: the schema is created once.
func BenchmarkOpenNewFile(b *testing.B) {
	dir := b.TempDir()
	ctx := b.Context()
	i := 0
	cpu := cpuTime(b)
	for b.Loop() {
		i++
		s, err := sqlite.Open(ctx, filepath.Join(dir, fmt.Sprintf("n%d.db", i)))
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}
	// The file's fsyncs make the wall time the disk's; the CPU is what a
	// new file costs every test and first run.
	b.ReportMetric(float64(cpuTime(b)-cpu)/float64(b.N), "cpu-ns/op")
}

// cpuTime is the process's user and system CPU so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkOpenGet opens a store on a file that holds a short thread,
// reads its newest checkpoint and closes it: what a read command's new
// process does (`rewind show`), and an existing file's share of the
// tests' opens.
func BenchmarkOpenGet(b *testing.B) {
	path := filepath.Join(b.TempDir(), "rewind.db")
	ctx := b.Context()
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	for id := int64(1); id <= 20; id++ {
		cp := store.Checkpoint{ThreadID: "t", ID: id, ParentID: id - 1, Base: true, State: fmt.Appendf(nil, `{"step":%d}`, id)}
		if err := s.PutCheckpoint(ctx, cp, nil); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	cpu := cpuTime(b)
	for b.Loop() {
		s, err := sqlite.Open(ctx, path)
		if err != nil {
			b.Fatal(err)
		}
		if cp, err := s.Latest(ctx, "t"); err != nil || cp.ID != 20 {
			b.Fatalf("Latest: checkpoint %d, %v", cp.ID, err)
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuTime(b)-cpu)/float64(b.N), "cpu-ns/op")
}

// A store opens on one connection: a file that is a store already reads
// its schema version and its checkpoints on the readers' first one (a
// connection of its own for that parsed the schema once more, and its
// close emptied the WAL index the reader opened again), and a new file's
// reader waits for a first read (the schema's creation is the writer's).
func TestOpenTakesOneConnection(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "rewind.db")
	opened := sqlitetest.CountConnections(t, path)
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if n := opened(); n != 1 {
		t.Errorf("opening a new file took %d connections, want 1 (the writer's, which creates the schema)", n)
	}
	if err := s.PutCheckpoint(ctx, store.Checkpoint{ThreadID: "t", ID: 1, Base: true, State: []byte(`{}`)}, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	before := opened()
	s, err = sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if cp, err := s.Latest(ctx, "t"); err != nil || cp.ID != 1 {
		t.Fatalf("Latest: checkpoint %d, %v", cp.ID, err)
	}
	if n := opened() - before; n != 1 {
		t.Errorf("opening a store and reading its newest checkpoint took %d connections, want 1 (a reader's)", n)
	}
}
