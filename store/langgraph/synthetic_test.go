package langgraph_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"rewind/store/langgraph"
	"rewind/store/langgraph/lgtest"

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

// SqliteSaver writes metadata with json.dumps, which writes NaN and the
// infinities as bare words: the listing reads whole, the values marked.
func TestMetadataWithNaN(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newLGFile(t)
	f.checkpoint("nan", "", id(1), "", "msgpack", cp4(t, id(1), map[string]any{"n": 1}, map[string]any{"n": 1}, map[string]any{}),
		[]byte(`{"source": "loop", "step": 3, "parents": {}, "score": NaN, "range": [-Infinity, Infinity]}`))
	src := open(t, "sqlite:"+f.path)
	h := history(t, src, langgraph.Chain{Thread: "nan"})
	if len(h) != 1 || h[0].Step != 3 || h[0].Source != "loop" || h[0].Damaged != "" {
		t.Fatalf("listing %+v, want step 3 from the loop", h)
	}
	cp, err := src.Checkpoint(ctx, langgraph.Chain{Thread: "nan"}, "")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(cp.Metadata)
	if !strings.Contains(string(got), `"score":{"$type":"builtins.float","$value":"nan"}`) || !strings.Contains(string(got), `"range":[{"$type":"builtins.float","$value":"-inf"}`) {
		t.Errorf("metadata %s", got)
	}
}
