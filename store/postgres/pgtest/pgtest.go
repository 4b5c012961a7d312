// Package pgtest gives tests a PostgreSQL database of their own on the
// server $REWIND_TEST_POSTGRES names (`source .ci/pg.sh; pg_start` starts a
// throwaway one). Without it a test skips, and Run (the package's TestMain)
// names it in one line; with CI set it fails.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
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
		noteSkipped(t.Name())
		t.Skip("!!! SKIPPING a PostgreSQL test: REWIND_TEST_POSTGRES is unset. " +
			"For a throwaway cluster: source .ci/pg.sh; pg_start  (then pg_stop) !!!")
	}
	return admin
}

// Fresh creates an empty database named prefix_<random> on the test
// server, dropped (with force) when the test ends, and returns its URL.
func Fresh(t testing.TB, prefix string) string {
	t.Helper()
	return FreshFrom(t, prefix, "")
}

// Create is Fresh for a database that outlives one test (say, one that
// several benchmarks share, dropped by TestMain): the caller drops it.
func Create(ctx context.Context, admin, prefix string) (dbURL string, drop func() error, err error) {
	return create(ctx, admin, prefix, "")
}

// FreshFrom is Fresh for a copy of the database template names ("": an
// empty one). A template is a database made once, by Template (or
// Create), and left unconnected: PostgreSQL copies it only while no
// session is in it. A copy costs what an empty database costs, where
// preparing one again (a store's migrations) costs more. A copy of a
// Template's is one a test before this one may have used: its test ended
// passing, no session stayed in it, and, its tables emptied, its catalog
// and rows were as a fresh copy's (see reset); else it was dropped. It
// comes under a new name of prefix's: its last test's URL reaches nothing.
func FreshFrom(t testing.TB, prefix, template string) string {
	t.Helper()
	adminURL := Admin(t)
	if template != "" && running.Load() {
		templates.Lock()
		tp := templates.byName[template]
		templates.Unlock()
		if tp != nil {
			return freshCopy(t, adminURL, prefix, tp)
		}
	}
	dbURL, drop, err := create(context.Background(), adminURL, prefix, template)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := drop(); err != nil {
			t.Error(err)
		}
	})
	return dbURL
}

// Name is the database dbURL names.
func Name(dbURL string) string {
	u, err := url.Parse(dbURL)
	if err != nil {
		return ""
	}
	return strings.TrimPrefix(u.Path, "/")
}

func create(ctx context.Context, admin, prefix, template string) (dbURL string, drop func() error, err error) {
	u, err := url.Parse(admin)
	if err != nil {
		return "", nil, fmt.Errorf("REWIND_TEST_POSTGRES must be a postgres:// URL: %w", err)
	}
	raw := newName(prefix)
	name := pgx.Identifier{raw}.Sanitize()
	stmt := "create database " + name
	if template != "" {
		stmt += " template " + pgx.Identifier{template}.Sanitize()
	}
	mark, err := own(ctx, admin)
	if err != nil {
		return "", nil, err
	}
	if err := adminExec(ctx, admin, stmt); err != nil {
		return "", nil, err
	}
	if err := adminExec(ctx, admin, "comment on database "+name+" is '"+strings.ReplaceAll(mark, "'", "''")+"'"); err != nil {
		return "", nil, errors.Join(err, dropDB(ctx, admin, raw))
	}
	u.Path = "/" + raw
	return u.String(), func() error { return dropDB(context.Background(), admin, raw) }, nil
}

// newName is a database name of prefix's no other has: prefix_<random>.
func newName(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return prefix + "_" + hex.EncodeToString(b[:])
}

// Exec runs sql on the database dbURL names, failing the test on an error.
func Exec(t testing.TB, dbURL, sql string) {
	t.Helper()
	if err := exec(context.Background(), dbURL, sql); err != nil {
		t.Fatal(err)
	}
}

func exec(ctx context.Context, dbURL, sql string) error {
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return fmt.Errorf("connect to the test server: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		return fmt.Errorf("%.200s: %w", sql, err)
	}
	return nil
}
