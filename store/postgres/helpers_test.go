package postgres

import (
	"context"
	"os"
	"rewind/store/postgres/pgtest"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestMain says once, even without -v, which tests were skipped.
func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }

// adminURL is the test cluster's URL. Without one the tests skip, except
// in CI, where skipping would hide the backend from the run.
func adminURL(t testing.TB) string {
	t.Helper()
	return pgtest.Admin(t)
}

// freshDB creates an empty database, dropped when the test ends, and
// returns its URL.
func freshDB(t testing.TB) string {
	t.Helper()
	return pgtest.Fresh(t, "rewind_test")
}

// adminExec runs one statement on its own connection to dbURL.
func adminExec(t testing.TB, dbURL, sql string, args ...any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatalf("connect to test cluster: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// openFresh opens the store on a fresh database, closed when the test ends.
func openFresh(t testing.TB) (*Store, string) {
	t.Helper()
	dbURL := freshDB(t)
	s, err := Open(context.Background(), dbURL)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s, dbURL
}

// query returns the first column of every row of sql on dbURL, as text.
func query(t testing.TB, dbURL, sql string, args ...any) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, sql, args...)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return out
}
