package ticket_test

import (
	"context"
	"path/filepath"
	"rewind/store/postgres/pgtest"
	"testing"

	"rewind/store"
	"rewind/store/memory"
	"rewind/store/postgres"
	"rewind/store/sqlite"
)

// eachStore runs f on a memory store, a real SQLite file and a real
// PostgreSQL database (skipped without REWIND_TEST_POSTGRES, failed in CI).
// reopen gives a new handle on the same data.
func eachStore(t *testing.T, f func(t *testing.T, st store.Store, reopen func() store.Store)) {
	t.Run("memory", func(t *testing.T) {
		st := memory.New()
		f(t, st, func() store.Store { return st })
	})
	t.Run("sqlite", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "ticket.db")
		open := func() store.Store {
			st, err := sqlite.Open(context.Background(), path)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		}
		f(t, open(), open)
	})
	t.Run("postgres", func(t *testing.T) {
		dbURL := freshPostgres(t)
		open := func() store.Store {
			st, err := postgres.Open(context.Background(), dbURL)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		}
		f(t, open(), open)
	})
}

// freshPostgres is a new database on $REWIND_TEST_POSTGRES's server,
// dropped after the test.
func freshPostgres(t *testing.T) string {
	t.Helper()
	return pgtest.Fresh(t, "rewind_ticket")
}
