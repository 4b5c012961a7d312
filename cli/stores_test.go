package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"
)

// eachStore runs fn on a fresh sqlite file and a fresh PostgreSQL database
// (skipped without REWIND_TEST_POSTGRES, failed in CI).
func eachStore(t *testing.T, fn func(t *testing.T, spec string)) {
	t.Run("sqlite", func(t *testing.T) { fn(t, "sqlite:"+filepath.Join(t.TempDir(), "r.db")) })
	t.Run("postgres", func(t *testing.T) { fn(t, freshPostgres(t)) })
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
	name := "rewind_cli_" + hex.EncodeToString(b[:])
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
