package sqlite_test

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"rewind/store/sqlite"
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
}
