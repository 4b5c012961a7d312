package langgraph_test

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"rewind/store/langgraph/lgtest"
	"testing"

	_ "modernc.org/sqlite"
)

// LangGraph's SqliteSaver schema, as lgtest writes it.
const langgraphDDL = lgtest.DDL

// lgFile is a LangGraph SQLite file a test writes, as LangGraph would.
type lgFile struct {
	t    testing.TB
	path string
	db   *sql.DB
}

func newLGFile(t testing.TB) *lgFile {
	t.Helper()
	path := filepath.Join(t.TempDir(), "langgraph.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { _ = db.Close() })
	if _, err := db.Exec(langgraphDDL); err != nil {
		t.Fatal(err)
	}
	return &lgFile{t: t, path: path, db: db}
}

// reopen opens an existing file to write, as a restarted app would
// (WAL kept, no checkpointing into the file).
func reopen(t testing.TB, path string) *lgFile {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { _ = db.Close() })
	if _, err := db.Exec(`PRAGMA wal_autocheckpoint=0`); err != nil {
		t.Fatal(err)
	}
	return &lgFile{t: t, path: path, db: db}
}

// id is the nth checkpoint id: UUIDv6-shaped and sorting as n does.
func id(n int) string {
	return fmt.Sprintf("1f1ed296-%04x-6%03x-8000-%012x", n>>12&0xffff, n&0xfff, n)
}

func (f *lgFile) checkpoint(thread, ns, id, parent, typ string, cp, meta []byte) {
	f.t.Helper()
	var p any
	if parent != "" {
		p = parent
	}
	if _, err := f.db.Exec(`INSERT INTO checkpoints VALUES (?, ?, ?, ?, ?, ?, ?)`, thread, ns, id, p, typ, cp, meta); err != nil {
		f.t.Fatal(err)
	}
}

func (f *lgFile) write(thread, ns, id, task string, idx int, channel, typ string, value []byte) {
	f.t.Helper()
	if _, err := f.db.Exec(`INSERT INTO writes VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, thread, ns, id, task, idx, channel, typ, value); err != nil {
		f.t.Fatal(err)
	}
}

// cp4 is a format-4 checkpoint as Python's serializer stores it.
func cp4(t testing.TB, id string, values, versions map[string]any, seen map[string]any) []byte {
	return mp(t, map[string]any{"v": 4, "id": id, "ts": "2026-01-02T03:04:05.000001+00:00",
		"channel_values": values, "channel_versions": versions, "versions_seen": seen, "updated_channels": []any{}})
}

func meta(source string, step int) []byte {
	return []byte(fmt.Sprintf(`{"source": %q, "step": %d, "parents": {}}`, source, step))
}
