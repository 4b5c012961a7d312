package postgres

import (
	"context"
	"fmt"
	"rewind/cli/rewindbin"
	"rewind/store/postgres/pgtest"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestMain says once, even without -v, which tests were skipped, and
// drops the migrated template openFresh copies, and its pooled copies.
// The parallel tests (the conformance clauses, the upgrades) mostly wait
// for the server: WaitMostly runs twice as many at once as cores.
func TestMain(m *testing.M) {
	rewindbin.WaitMostly()
	rewindbin.Exit(pgtest.Run(m))
}

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

// adminExec runs one statement on dbURL (on the test's helper
// connection to it: helperConn).
func adminExec(t testing.TB, dbURL, sql string, args ...any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h := helperConn(ctx, t, dbURL)
	defer h.mu.Unlock()
	if _, err := h.conn.Exec(ctx, sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// helper is a test's connection to one database for its helper
// statements (adminExec, query): a session costs the server more CPU
// (~30 ms) than the statements it runs.
type helper struct {
	mu   sync.Mutex
	conn *pgx.Conn
}

var helpers sync.Map // helperKey → *helper

type helperKey struct {
	t   testing.TB
	url string
}

// helperConn returns t's helper connection to dbURL, locked, connecting
// when t has none or its session ended (a test may terminate it, or set
// an idle timeout on its database); t's end closes it, before the
// database is dropped or pooled.
func helperConn(ctx context.Context, t testing.TB, dbURL string) *helper {
	t.Helper()
	v, loaded := helpers.LoadOrStore(helperKey{t, dbURL}, &helper{})
	h := v.(*helper)
	if !loaded {
		t.Cleanup(func() {
			helpers.Delete(helperKey{t, dbURL})
			h.mu.Lock()
			defer h.mu.Unlock()
			if h.conn != nil {
				h.conn.Close(context.Background())
			}
		})
	}
	h.mu.Lock()
	if h.conn != nil && h.conn.Ping(ctx) != nil {
		h.conn.Close(ctx)
		h.conn = nil
	}
	if h.conn == nil {
		conn, err := pgx.Connect(ctx, dbURL)
		if err != nil {
			h.mu.Unlock()
			t.Fatalf("connect to test cluster: %v", err)
		}
		h.conn = conn
	}
	return h
}

// migratedTemplate is a database Open migrated, once a test process and
// then left unconnected: openFresh copies it (pgtest.FreshFrom) rather
// than running every migration again on each store's database. The tests
// of Open on an empty database (migrate_test.go) start from freshDB.
func migratedTemplate(t testing.TB) string {
	t.Helper()
	return pgtest.Template(t, "rewind_test_template", func(ctx context.Context, dbURL string) error {
		s, err := Open(ctx, dbURL)
		if err != nil {
			return fmt.Errorf("migrate the template: %w", err)
		}
		s.Close()
		return nil
	})
}

// openFresh opens the store on a fresh database (a copy of the migrated
// template), closed when the test ends.
func openFresh(t testing.TB) (*Store, string) {
	t.Helper()
	dbURL := pgtest.FreshFrom(t, "rewind_test", migratedTemplate(t))
	s, err := Open(context.Background(), dbURL)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s, dbURL
}

// query returns the first column of every row of sql on dbURL, as text
// (on the test's helper connection: helperConn).
func query(t testing.TB, dbURL, sql string, args ...any) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h := helperConn(ctx, t, dbURL)
	defer h.mu.Unlock()
	rows, err := h.conn.Query(ctx, sql, args...)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return out
}
