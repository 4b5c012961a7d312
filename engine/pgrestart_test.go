package engine_test

import (
	"context"
	"strings"
	"testing"

	"rewind/engine"
	"rewind/engine/ticket"
	"rewind/store/postgres"
	"rewind/store/postgres/pgtest"
)

// Issue 38: a long-lived engine on PostgreSQL failed its next one or two
// turns after a server restart ("terminating connection due to
// administrator command", then "unexpected EOF"): each pooled connection
// was found closed by the statement that used it. The server closing
// every session of the engine's database between turns (as a restart
// does; pg_terminate_backend from another connection, so the shared
// server keeps running) now costs no turn: the turn's first statement
// (the lock) is tried once more on a new connection, and the pool's
// other connections, closed too, are dropped. A read after it carries on
// as well.
func TestTurnsCarryOnAfterTheServerClosedTheirConnections(t *testing.T) {
	t.Parallel()
	url := pgtest.Fresh(t, "rewind_restart")
	ctx := context.Background()
	st, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	e, err := ticket.NewEngine(st, ticket.NewMock())
	if err != nil {
		t.Fatal(err)
	}
	terminate := func() {
		t.Helper()
		pgtest.Exec(t, url, `select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`)
	}
	inputs := []string{"Where is my parcel SO20260901?", "And the refund for SO20260901?", "Can I change the address?", "Thanks."}
	for i, in := range inputs {
		if i > 0 {
			terminate()
		}
		res, err := e.Run(ctx, "t", ticket.Input(in), engine.RunConfig{})
		if err != nil {
			t.Fatalf("turn %d after the server closed the engine's connections: %v", i+1, err)
		}
		if res.Status != engine.RunDone {
			t.Fatalf("turn %d ended %s", i+1, res.Status)
		}
	}
	terminate()
	cps, err := e.History(ctx, "t", 0, 0)
	if err != nil {
		t.Fatalf("a read after the server closed the engine's connections: %v", err)
	}
	turns := 0
	for _, cp := range cps {
		if cp.Source == "input" {
			turns++
		}
	}
	if turns != len(inputs) {
		t.Fatalf("%d turns stored, want %d", turns, len(inputs))
	}
	if _, err := e.Latest(ctx, "t"); err != nil && strings.Contains(err.Error(), "57P01") {
		t.Fatal(err)
	}
}
