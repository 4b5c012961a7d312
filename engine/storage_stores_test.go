package engine_test

import (
	"context"
	"path/filepath"
	"rewind/store/postgres/pgtest"
	"testing"

	"rewind/store"
	"rewind/store/postgres"
	"rewind/store/sqlite"
)

// The storage tests run on a real SQLite file and a real PostgreSQL
// database too, and read everything again through a new handle.
func init() {
	storeCases = append(storeCases,
		storeCase{
			name: "sqlite",
			open: func(t *testing.T) (store.Store, func() store.Store) {
				path := filepath.Join(t.TempDir(), "storage.db")
				open := func() store.Store {
					return openOrFail(t, func(ctx context.Context) (store.Store, error) { return sqlite.Open(ctx, path) })
				}
				return open(), open
			},
		},
		storeCase{
			name: "postgres",
			open: func(t *testing.T) (store.Store, func() store.Store) {
				dbURL := freshPostgres(t)
				open := func() store.Store {
					return openOrFail(t, func(ctx context.Context) (store.Store, error) { return postgres.Open(ctx, dbURL) })
				}
				return open(), open
			},
		})
}

func openOrFail[S store.Store](t *testing.T, open func(context.Context) (S, error)) store.Store {
	t.Helper()
	s, err := open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// freshPostgres is a new database on $REWIND_TEST_POSTGRES's server,
// dropped after the test. Without a server the test skips (in CI it fails).
func freshPostgres(t *testing.T) string {
	t.Helper()
	return pgtest.Fresh(t, "rewind_engine")
}
