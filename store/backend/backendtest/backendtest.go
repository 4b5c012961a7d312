// Package backendtest is the one list of stores rewind's tests run on
// (All), so that a new backend gets every suite that runs "on every
// store" by being added once. Every such helper ranges over All (Each,
// EachShared); TestNoHelperListsItsOwnStores fails on a test that names
// the stores itself, and TestAllIsEveryKind on a backend store/backend
// opens that All lacks.
package backendtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"rewind/store"
	"rewind/store/backend"
	"rewind/store/memory"
	"rewind/store/postgres/pgtest"
	"rewind/store/sqlite"
)

// Backend is one store tests run on.
type Backend struct {
	// Name is its backend.Kind, and the subtest's name.
	Name string
	// Shared: other handles and processes reach its data (every store
	// but memory, which lives in its process).
	Shared  bool
	spec    func(tb testing.TB, prefix string) string
	lasting func(tb testing.TB, prefix string) (string, func() error, error)
}

// All is every backend store/backend opens, in the order tests run them.
var All = []Backend{
	{Name: "memory", spec: func(testing.TB, string) string { return "memory:" },
		lasting: func(testing.TB, string) (string, func() error, error) {
			return "memory:", func() error { return nil }, nil
		}},
	{Name: "sqlite", Shared: true, spec: func(tb testing.TB, prefix string) string {
		path := filepath.Join(tb.TempDir(), prefix+".db")
		if err := os.WriteFile(path, emptySQLite(tb), 0o600); err != nil {
			tb.Fatal(err)
		}
		return "sqlite:" + path
	}, lasting: func(_ testing.TB, prefix string) (string, func() error, error) {
		dir, err := os.MkdirTemp("", "rewind-"+prefix+"-")
		return "sqlite:" + filepath.Join(dir, prefix+".db"), func() error { return os.RemoveAll(dir) }, err
	}},
	{Name: "postgres", Shared: true, spec: func(tb testing.TB, prefix string) string {
		return pgtest.FreshFrom(tb, "rewind_"+prefix, migrated(tb))
	}, lasting: func(tb testing.TB, prefix string) (string, func() error, error) {
		return pgtest.Create(context.Background(), pgtest.Admin(tb), "rewind_"+prefix)
	}},
}

// migrated is a database the store's migrations made, once a test
// binary: a copy of it is a store with nothing in it, without running
// every migration again (pgtest.Template pools the copies).
func migrated(tb testing.TB) string {
	tb.Helper()
	return pgtest.Template(tb, "rewind_store_template", func(ctx context.Context, dbURL string) error {
		st, err := backend.Open(ctx, dbURL)
		if err != nil {
			return fmt.Errorf("migrate the template: %w", err)
		}
		return st.Close()
	})
}

// emptySQLite is the bytes of a new SQLite store, made by sqlite.Open
// once a test binary: a test's store starts as a copy of it. Creating
// the schema in every new file (its statements parsed and run) was ~3%
// of a store-heavy package's CPU under -race. store/sqlite's own tests
// create new files as a user's first Open does.
func emptySQLite(tb testing.TB) []byte {
	tb.Helper()
	sqliteTemplate.once.Do(func() {
		dir, err := os.MkdirTemp("", "rewind-template-")
		if err != nil {
			sqliteTemplate.err = err
			return
		}
		defer os.RemoveAll(dir)
		path := filepath.Join(dir, "empty.db")
		st, err := sqlite.Open(context.Background(), path)
		if err != nil {
			sqliteTemplate.err = err
			return
		}
		if err := st.Close(); err != nil {
			sqliteTemplate.err = err
			return
		}
		sqliteTemplate.bytes, sqliteTemplate.err = os.ReadFile(path)
	})
	if sqliteTemplate.err != nil {
		tb.Fatalf("an empty SQLite store to copy: %v", sqliteTemplate.err)
	}
	return sqliteTemplate.bytes
}

var sqliteTemplate struct {
	once  sync.Once
	bytes []byte
	err   error
}

// Spec makes an empty store for tb and returns its spec: memory: for
// memory (each Open a new store), a file in tb's temporary directory, a
// database of its own, migrated and empty, that no other test uses while
// tb runs (a pooled copy: pgtest.FreshFrom; PostgreSQL skips without
// REWIND_TEST_POSTGRES and fails in CI). prefix names the file or
// database.
func (b Backend) Spec(tb testing.TB, prefix string) string {
	tb.Helper()
	return b.spec(tb, prefix)
}

// Lasting makes an empty store that outlives tb (say, one a
// benchmark writes once and -count's runs share) and returns its spec
// and what removes it, for TestMain to call. memory: is every Open a
// new store, so the caller keeps the one it opens.
func (b Backend) Lasting(tb testing.TB, prefix string) (spec string, remove func() error) {
	tb.Helper()
	spec, remove, err := b.lasting(tb, prefix)
	if err != nil {
		tb.Fatal(err)
	}
	return spec, remove
}

// Open makes an empty store for tb, closed when tb ends.
func (b Backend) Open(tb testing.TB, prefix string) store.Store {
	tb.Helper()
	return b.Reopener(tb, prefix)()
}

// Reopener makes an empty store for tb and returns what opens a handle
// on it: each call a new handle on the same data (for memory, the same
// store). Every handle closes when tb ends.
func (b Backend) Reopener(tb testing.TB, prefix string) func() store.Store {
	tb.Helper()
	if !b.Shared {
		st := memory.New()
		tb.Cleanup(func() { _ = st.Close() })
		return func() store.Store { return st }
	}
	spec := b.Spec(tb, prefix)
	return func() store.Store {
		tb.Helper()
		st, err := backend.Open(context.Background(), spec)
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { _ = st.Close() })
		return st
	}
}

// runner is *testing.T or *testing.B.
type runner[T any] interface {
	testing.TB
	Run(name string, f func(T)) bool
}

// Each runs f on every backend in All, each as a subtest of its name.
func Each[T runner[T]](t T, f func(t T, b Backend)) {
	for _, b := range All {
		t.Run(b.Name, func(t T) { f(t, b) })
	}
}

// EachSharedAtOnce is EachShared with the backends' subtests running at
// once, for a test that mostly waits on its stores (fsyncs, locks): one
// after another, a race hunt's SQLite 32 s came before PostgreSQL's 40.
func EachSharedAtOnce(t *testing.T, f func(t *testing.T, b Backend)) {
	var wg sync.WaitGroup
	for _, b := range All {
		if b.Shared {
			wg.Go(func() { t.Run(b.Name, func(t *testing.T) { f(t, b) }) })
		}
	}
	wg.Wait()
}

// EachShared is Each on the backends other processes reach (Shared).
func EachShared[T runner[T]](t T, f func(t T, b Backend)) {
	for _, b := range All {
		if b.Shared {
			t.Run(b.Name, func(t T) { f(t, b) })
		}
	}
}

// SyncNormal is for the TestMain of a package whose tests are not about a
// commit surviving an OS crash: the SQLite stores the process and the
// processes it starts open through store/backend do not fsync each
// commit (a killed process still loses nothing: sqlite.SyncNormal),
// unless $REWIND_SQLITE_SYNC already says how. The fsyncs were ~7% of a
// store-heavy test binary's CPU and more of its wall time.
func SyncNormal() {
	if os.Getenv(backend.SyncEnv) == "" {
		os.Setenv(backend.SyncEnv, "normal")
	}
}
