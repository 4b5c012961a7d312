package ticket_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"

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
	admin := os.Getenv("REWIND_TEST_POSTGRES")
	if admin == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("CI must provide PostgreSQL: REWIND_TEST_POSTGRES is unset")
		}
		t.Skip("REWIND_TEST_POSTGRES is unset: SKIPPING the PostgreSQL case")
	}
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatalf("REWIND_TEST_POSTGRES: %v", err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "rewind_ticket_" + hex.EncodeToString(b[:])
	exec := func(sql string) {
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, admin)
		if err != nil {
			t.Fatalf("connect to %s: %v", u.Host, err)
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	exec("create database " + pgx.Identifier{name}.Sanitize())
	t.Cleanup(func() { exec("drop database if exists " + pgx.Identifier{name}.Sanitize() + " with (force)") })
	u.Path = "/" + name
	return u.String()
}
