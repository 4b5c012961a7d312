package engine_test

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
	name := "rewind_engine_" + hex.EncodeToString(b[:])
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
