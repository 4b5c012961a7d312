package langgraph_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"rewind/store/langgraph"
	"rewind/store/langgraph/lgtest"
	"rewind/store/sqlite"
)

// sqliteFile makes a database file of the statements, closed in WAL mode
// (no -wal or -shm left) unless rollback.
func sqliteFile(t *testing.T, path string, rollback bool, stmts ...string) string {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if !rollback {
		stmts = append([]string{`PRAGMA journal_mode=WAL`}, stmts...)
	}
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// The detection reads a closed rewind store's version from its file's
// bytes, and what it reads is what SQLite reads; whatever it does not
// follow (a file open in another process, not in WAL mode, no version, no
// rewind table) it leaves to SQLite, which tells it as before.
func TestRawDetectionReadsWhatSQLiteReads(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	store := filepath.Join(dir, "rewind.db")
	st, err := sqlite.Open(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	// Small pages, a schema over many of them (interior pages, long
	// rows), and the version the largest of several rows.
	var many []string
	for i := range 300 {
		many = append(many, fmt.Sprintf("CREATE TABLE t%03d_%s (a INTEGER, b TEXT DEFAULT '%s')", i, strings.Repeat("x", i%40), strings.Repeat("y", i*3)))
	}
	big := sqliteFile(t, filepath.Join(dir, "big.db"), false, append([]string{`PRAGMA page_size=512`, `VACUUM`},
		append(many, `CREATE TABLE rewind_store_schema (version INTEGER NOT NULL)`,
			`INSERT INTO rewind_store_schema VALUES (3), (70000), (12)`)...)...)
	negative := sqliteFile(t, filepath.Join(dir, "negative.db"), false,
		`CREATE TABLE rewind_store_schema (version INTEGER NOT NULL)`, `INSERT INTO rewind_store_schema VALUES (-4)`)
	rollback := sqliteFile(t, filepath.Join(dir, "rollback.db"), true,
		`CREATE TABLE rewind_store_schema (version INTEGER NOT NULL)`, `INSERT INTO rewind_store_schema VALUES (5)`)
	open := sqliteFile(t, filepath.Join(dir, "open.db"), false,
		`CREATE TABLE rewind_store_schema (version INTEGER NOT NULL)`, `INSERT INTO rewind_store_schema VALUES (5)`)
	if err := os.WriteFile(open+"-wal", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, path string
		raw        int // 0: left to SQLite
	}{
		{"a rewind store", store, sqlite.SchemaVersion},
		{"a schema over many small pages", big, 70000},
		{"a version below 1", negative, 0},
		{"a file in rollback mode", rollback, 0},
		{"a file with a -wal beside it", open, 0},
		{"a LangGraph file", lgtest.Copy(t, "sqlite-python.db"), 0},
		{"a LangGraph file in WAL mode", func() string { p := lgtest.Copy(t, "sqlite-js.db"); toWAL(t, p); return p }(), 0},
	} {
		v, ok := langgraph.RawRewindVersion(c.path)
		if ok != (c.raw != 0) || v != c.raw {
			t.Errorf("%s: read %d, %t from the file; want %d, %t", c.name, v, ok, c.raw, c.raw != 0)
		}
		if !ok {
			continue
		}
		// What SQLite reads, on a copy the raw reader cannot read (a -wal beside it).
		cp := filepath.Join(t.TempDir(), "copy.db")
		b, err := os.ReadFile(c.path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(cp, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(cp+"-wal", nil, 0o600); err != nil {
			t.Fatal(err)
		}
		d, err := langgraph.Detect(ctx, "sqlite:"+cp)
		if err != nil || d.Rewind != v || d.Kind != langgraph.KindRewind || d.Reason() != "is a rewind store" {
			t.Errorf("%s: SQLite reads version %d (%s, %q), %v; the file's bytes %d", c.name, d.Rewind, d.Kind, d.Reason(), err, v)
		}
		d, err = langgraph.Detect(ctx, "sqlite:"+c.path)
		if err != nil || d.Rewind != v || d.Kind != langgraph.KindRewind || d.Reason() != "is a rewind store" {
			t.Errorf("%s: detected version %d (%s, %q), %v; want %d, a rewind store", c.name, d.Rewind, d.Kind, d.Reason(), err, v)
		}
	}
}

// A damaged file never panics the raw reader (a test binary's panic is
// this test's failure): any bytes changed, it reads a version or leaves
// the file to SQLite.
func TestRawDetectionSurvivesDamage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var many []string
	for i := range 60 {
		many = append(many, fmt.Sprintf("CREATE TABLE t%02d (a TEXT DEFAULT '%s')", i, strings.Repeat("z", i*7)))
	}
	good := sqliteFile(t, filepath.Join(dir, "good.db"), false, append([]string{`PRAGMA page_size=512`, `VACUUM`},
		append(many, `CREATE TABLE rewind_store_schema (version INTEGER NOT NULL)`, `INSERT INTO rewind_store_schema VALUES (9)`)...)...)
	orig, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := langgraph.RawRewindVersion(good); !ok || v != 9 {
		t.Fatalf("the undamaged file reads %d, %t; want 9", v, ok)
	}
	bad := filepath.Join(dir, "bad.db")
	r := rand.New(rand.NewPCG(1, 2))
	for range 1500 {
		b := append([]byte(nil), orig...)
		for range 1 + r.IntN(3) {
			b[r.IntN(len(b))] = byte(r.IntN(256))
		}
		if err := os.WriteFile(bad, b, 0o600); err != nil {
			t.Fatal(err)
		}
		langgraph.RawRewindVersion(bad)
	}
}
