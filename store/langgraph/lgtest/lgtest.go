// Package lgtest gives tests outside store/langgraph the LangGraph
// fixtures (store/langgraph/testdata): copies of the SQLite files, and the
// PostgreSQL dumps loaded into databases of their own on the test server.
// Tests open copies, never the fixtures.
package lgtest

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"rewind/store/postgres/pgtest"
	"runtime"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// Dir is store/langgraph/testdata.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "testdata")
}

// Copy copies the fixture name (sqlite-python.db, sqlite-js.db) into a
// temp dir of t's and returns its path.
func Copy(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(Dir(), name))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// Admin is the admin URL of the test server; without it the test skips
// loudly, and fails under CI.
func Admin(t testing.TB) string {
	t.Helper()
	return pgtest.Admin(t)
}

// NewDatabase creates a database of its own on the test server, dropped
// when the test ends, and returns its URL.
func NewDatabase(t testing.TB, admin string) string {
	t.Helper()
	return pgtest.Fresh(t, "rewind_langgraph")
}

// Dump restores testdata/name, a plain pg_dump, into a new database of
// the test server (see Admin) and returns its URL. psql's backslash commands are not SQL; a COPY's
// rows (up to "\.") go through the COPY protocol.
func Dump(t testing.TB, name string) string {
	t.Helper()
	admin := Admin(t)
	ctx := context.Background()
	dump, err := os.ReadFile(filepath.Join(Dir(), name))
	if err != nil {
		t.Fatal(err)
	}
	dbURL := NewDatabase(t, admin)
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var stmt, rows strings.Builder
	copying := ""
	sc := bufio.NewScanner(bytes.NewReader(dump))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case copying != "" && line == `\.`:
			if _, err := conn.PgConn().CopyFrom(ctx, strings.NewReader(rows.String()), copying); err != nil {
				t.Fatalf("restore %s: %s: %v", name, copying, err)
			}
			copying = ""
			rows.Reset()
		case copying != "":
			rows.WriteString(line + "\n")
		case strings.HasPrefix(line, `\`), strings.HasPrefix(line, "--"), stmt.Len() == 0 && strings.TrimSpace(line) == "":
		default:
			stmt.WriteString(line + "\n")
			if !strings.HasSuffix(strings.TrimSpace(line), ";") {
				continue
			}
			s := stmt.String()
			stmt.Reset()
			if strings.HasPrefix(s, "COPY ") && strings.Contains(s, "FROM stdin;") {
				copying = strings.TrimSuffix(strings.TrimSpace(s), ";")
				continue
			}
			if _, err := conn.Exec(ctx, s, pgx.QueryExecModeSimpleProtocol); err != nil {
				t.Fatalf("restore %s: %.200s: %v", name, s, err)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return dbURL
}
