package app

import (
	"context"
	"testing"

	"rewind/store"
	"rewind/store/backend"
	"rewind/store/postgres/pgtest"
)

// A read command on PostgreSQL connects once: the detection reads what
// the database holds on the connection the store then opens on (two
// connections took 0.47 s where one takes 0.25). A command that writes
// does too, and a second opener in the same detection connects anew.
func TestAReadCommandConnectsToPostgreSQLOnce(t *testing.T) {
	if !pgtest.Available(t) {
		return
	}
	url := pgtest.Fresh(t, "app_connect")
	ctx := context.Background()
	connects := 0
	connectPostgres = func(ctx context.Context, spec string) (*backend.Conn, error) {
		connects++
		return backend.Connect(ctx, spec)
	}
	openDetected = func(ctx context.Context, spec string, schema int) (store.Store, error) {
		connects++
		return backend.OpenDetected(ctx, spec, schema)
	}
	t.Cleanup(func() { connectPostgres, openDetected = backend.Connect, backend.OpenDetected })
	s := Store{Spec: url}
	st, err := s.Open(ctx) // migrates the empty database: a rewind store now
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	if connects != 1 {
		t.Errorf("a command that writes connected %d times, want once", connects)
	}

	connects = 0
	st, dctx, release := readCommand(ctx, t, s)
	if _, err := st.Threads(ctx); err != nil {
		t.Fatalf("the store opened on the detection's connection does not read: %v", err)
	}
	st.Close()
	if connects != 1 {
		t.Errorf("a read command (Detected, OpenLangGraph, OpenRead) connected %d times, want once", connects)
	}
	again, err := s.OpenRead(dctx) // the detection's connection is taken: a new one
	if err != nil {
		t.Fatal(err)
	}
	again.Close()
	release()
	if connects != 2 {
		t.Errorf("a second OpenRead in the same detection connected %d times in all, want 2", connects)
	}
}

// readCommand does on s what a read command does: detects what it is,
// is refused as a LangGraph source (a rewind store), and opens the store
// to read on the detection (dctx; release when done).
func readCommand(ctx context.Context, t *testing.T, s Store) (st store.Store, dctx context.Context, release func()) {
	t.Helper()
	dctx, release, err := s.Detected(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if src, err := s.OpenLangGraph(dctx); src != nil || err != nil {
		t.Fatalf("OpenLangGraph of a rewind store: %v, %v", src, err)
	}
	if st, err = s.OpenRead(dctx); err != nil {
		t.Fatal(err)
	}
	return st, dctx, release
}
