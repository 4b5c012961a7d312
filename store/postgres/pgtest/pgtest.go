// Package pgtest gives tests a PostgreSQL database of their own on the
// server $REWIND_TEST_POSTGRES names (`source .ci/pg.sh; pg_start` starts a
// throwaway one). Without it a test skips loudly; with CI set it fails.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
)

// Admin is the test server's URL.
func Admin(t testing.TB) string {
	t.Helper()
	admin := os.Getenv("REWIND_TEST_POSTGRES")
	if admin == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("CI must provide PostgreSQL: REWIND_TEST_POSTGRES is unset")
		}
		t.Skip("!!! SKIPPING a PostgreSQL test: REWIND_TEST_POSTGRES is unset. " +
			"For a throwaway cluster: source .ci/pg.sh; pg_start  (then pg_stop) !!!")
	}
	return admin
}

// Fresh creates an empty database named prefix_<random> on the test
// server, dropped (with force) when the test ends, and returns its URL.
func Fresh(t testing.TB, prefix string) string {
	t.Helper()
	admin := Admin(t)
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatalf("REWIND_TEST_POSTGRES must be a postgres:// URL: %v", err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := pgx.Identifier{prefix + "_" + hex.EncodeToString(b[:])}.Sanitize()
	Exec(t, admin, "create database "+name)
	t.Cleanup(func() { Exec(t, admin, "drop database if exists "+name+" with (force)") })
	u.Path = "/" + prefix + "_" + hex.EncodeToString(b[:])
	return u.String()
}

// Exec runs sql on the database dbURL names, failing the test on an error.
func Exec(t testing.TB, dbURL, sql string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatalf("connect to the test server: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		t.Fatalf("%.200s: %v", sql, err)
	}
}
