package app

import (
	"context"
	"path/filepath"
	"testing"

	"rewind/store"
	"rewind/store/langgraph/lgtest"
	"rewind/store/sqlite/sqlitetest"
)

// A command on a SQLite store parses the file's schema on one
// connection, the store's reader: the detection (is it rewind's or a
// LangGraph file?) reads the file's bytes, not a connection of its own
// that parsed the whole schema (FTS5 tables, triggers) once more, 7.6%
// of a new process's CPU loading a checkpoint. For a command that reads
// (Detected, OpenLangGraph, OpenRead) and one that writes (Open).
func TestASQLiteCommandParsesTheSchemaOnce(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "r.db")
	s := Store{Spec: "sqlite:" + path}
	st, err := s.Open(ctx) // a new store: the writer's connection creates it
	if err != nil {
		t.Fatal(err)
	}
	if err := st.PutCheckpoint(ctx, store.Checkpoint{ThreadID: "t", ID: 1, Base: true, State: []byte(`{}`)}, nil); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	opened := sqlitetest.CountConnections(t, path)

	before := opened()
	st, _, release := readCommand(ctx, t, s)
	if cp, err := st.Latest(ctx, "t"); err != nil || cp.ID != 1 {
		t.Fatalf("Latest: checkpoint %d, %v", cp.ID, err)
	}
	st.Close()
	release()
	if n := opened() - before; n != 1 {
		t.Errorf("a read command (Detected, OpenLangGraph, OpenRead, Latest) opened %d connections on the file, want 1 (the store's reader)", n)
	}

	before = opened()
	st, err = s.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if cp, err := st.Latest(ctx, "t"); err != nil || cp.ID != 1 {
		t.Fatalf("Latest: checkpoint %d, %v", cp.ID, err)
	}
	st.Close()
	if n := opened() - before; n != 1 {
		t.Errorf("a command that writes, opening and reading, opened %d connections on the file, want 1 (the store's reader)", n)
	}

	lg := lgtest.Copy(t, "sqlite-python.db")
	lgStore := Store{Spec: "sqlite:" + lg}
	opened = sqlitetest.CountConnections(t, lg)
	before = opened()
	dctx, release, err := lgStore.Detected(ctx)
	if err != nil {
		t.Fatal(err)
	}
	src, err := lgStore.OpenLangGraph(dctx)
	if err != nil || src == nil {
		t.Fatalf("OpenLangGraph of a LangGraph file: %v, %v", src, err)
	}
	if ts, err := src.Threads(ctx); err != nil || len(ts) == 0 {
		t.Fatalf("the LangGraph file read on the detection's connection: %d threads, %v", len(ts), err)
	}
	src.Close()
	release()
	if n := opened() - before; n != 1 {
		t.Errorf("a read command on a LangGraph file (Detected, OpenLangGraph, Threads) opened %d connections on the file, want 1 (the detection's, which the reader reads on)", n)
	}
}
