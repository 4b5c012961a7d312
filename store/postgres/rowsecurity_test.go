package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"rewind/store"
)

// With rowsecurity.sql applied, a role named after a tenant reads and
// writes its tenant's rows only, even with SQL written by hand: before,
// the same SELECTs read every tenant's rows.
func TestRowSecurityKeepsTenantRolesApart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, dbURL := openFresh(t)
	a, asA := role(t, dbURL)
	b, asB := role(t, dbURL)
	seedTenants(t, s, a, b)
	for _, r := range []string{a, b} {
		adminExec(t, dbURL, `grant usage on schema public to `+r)
		adminExec(t, dbURL, `grant select, insert, update, delete on all tables in schema public to `+r)
	}
	// Without row security, the grant lets a tenant's role read them all.
	if got := threadsSeen(t, asA(dbURL)); !slices.Contains(got["graph_messages"], "t-b") {
		t.Fatalf("before rowsecurity.sql, role %s reads messages of %q; want every thread's (the test proves nothing else)", a, got["graph_messages"])
	}
	adminExec(t, dbURL, RowSecuritySQL)
	adminExec(t, dbURL, RowSecuritySQL) // again: harmless
	for role, mine := range map[string]string{asA(dbURL): "t-a", asB(dbURL): "t-b"} {
		for table, ids := range threadsSeen(t, role) {
			if !slices.Equal(ids, []string{mine}) {
				t.Errorf("a tenant's role reads threads %q of %s, want only %s", ids, table, mine)
			}
		}
	}
	wantHandWrittenSQLKeptOut(t, asA(dbURL), a)
	// The owner, rewind itself, still reads every thread, untouched.
	threads, err := s.Threads(ctx)
	if err != nil || len(threads) != 3 {
		t.Errorf("the owner's Threads = %d, %v; want 3", len(threads), err)
	}
	for _, th := range []string{"t-b", "t-default"} {
		if evs, err := s.Events(ctx, th, 1); err != nil || len(evs) != 1 {
			t.Errorf("events of %s after role %s's writes = %d, %v; want its 1, untouched", th, a, len(evs), err)
		}
		if ds, err := s.ListDrafts(ctx, th); err != nil || len(ds) != 1 {
			t.Errorf("drafts of %s after role %s's writes = %d, %v; want its 1", th, a, len(ds), err)
		}
	}
	if owner, err := s.ThreadTenant(ctx, "t-default"); err != nil || owner != store.DefaultTenant {
		t.Errorf("t-default's tenant = %q, %v; want default", owner, err)
	}
	wantRewindAsRole(t, s, asA(dbURL), a)
}

// seedTenants adds tenants a and b and puts a thread for each, and one
// for the default tenant, each with a message, an event and a draft.
func seedTenants(t *testing.T, s *Store, a, b string) {
	t.Helper()
	ctx := context.Background()
	msg := []byte(`{"role":"user","text":"secret of b"}`)
	for _, th := range []struct{ tenant, id string }{{a, "t-a"}, {b, "t-b"}, {"", "t-default"}} {
		if th.tenant != "" {
			if err := s.AddTenant(ctx, th.tenant); err != nil {
				t.Fatal(err)
			}
		}
		h, err := store.ForTenant(ctx, s, th.tenant)
		if err != nil {
			t.Fatal(err)
		}
		cp := store.Checkpoint{ThreadID: th.id, ID: 1, State: []byte(`{"v":1}`), Base: true,
			Messages: []store.Message{{Hash: store.ContentHash(msg), Index: 0, Body: msg}}}
		if err := h.PutCheckpoint(ctx, cp, []store.Event{{Type: "node", Payload: []byte(`{}`)}}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := h.(store.Drafts).CreateDraft(ctx, store.Draft{ThreadID: th.id, OperationID: "op", Body: []byte(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
}

// threadsSeen is, by table, the threads whose rows url's role reads.
func threadsSeen(t *testing.T, url string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, table := range []string{"graph_checkpoints", "graph_events", "graph_messages", "graph_drafts", "graph_threads", "graph_sizes", "graph_thread_tenants"} {
		out[table] = query(t, url, `select distinct thread_id from `+table+` order by 1`)
	}
	return out
}

// wantHandWrittenSQLKeptOut: as role (tenant a, owner of t-a), no read,
// change, claim or insert reaches another thread; a claim of a free id
// is the role's own.
func wantHandWrittenSQLKeptOut(t *testing.T, url, a string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, `select count(*) from graph_messages where body like '%secret of b%' and thread_id <> 't-a'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("role %s finds %d messages of other threads by their text (%v), want 0", a, n, err)
	}
	for _, stmt := range []string{
		`update graph_checkpoints set state = '{"v":2}' where thread_id = 't-b'`,
		`delete from graph_drafts where thread_id in ('t-b', 't-default')`,
		`update graph_thread_tenants set tenant = current_user where thread_id = 't-b'`,
	} {
		tag, err := conn.Exec(ctx, stmt)
		if err != nil || tag.RowsAffected() != 0 {
			t.Errorf("%s as %s: %d rows, %v; want none", stmt, a, tag.RowsAffected(), err)
		}
	}
	for _, stmt := range []string{
		`insert into graph_thread_tenants (thread_id, tenant) values ('t-default', current_user)`, // take the default's
		`insert into graph_events (thread_id, checkpoint_id, seq, type, payload, created_at) values ('t-b', 1, 2, 'x', '{}', now())`,
		`insert into graph_drafts (thread_id, operation_id, body, created_at) values ('t-new', 'op', '{}', now())`, // unclaimed: the default's
	} {
		if _, err := conn.Exec(ctx, stmt); err == nil {
			t.Errorf("%s as %s: accepted, want refused by row security", stmt, a)
		}
	}
	if _, err := conn.Exec(ctx, fmt.Sprintf(`insert into graph_thread_tenants (thread_id, tenant) values ('t-a2', '%s')`, a)); err != nil {
		t.Errorf("role %s claims a free thread id: %v", a, err)
	}
}

// wantRewindAsRole: rewind's store opened as tenant a's role reads a's
// thread alone, even without --tenant's checks, and makes a's threads.
func wantRewindAsRole(t *testing.T, owner *Store, url, a string) {
	t.Helper()
	ctx := context.Background()
	sa, err := Open(ctx, url)
	if err != nil {
		t.Fatalf("Open as role %s: %v", a, err)
	}
	defer sa.Close()
	if threads, err := sa.Threads(ctx); err != nil || len(threads) != 1 || threads[0].ID != "t-a" {
		t.Errorf("Threads as role %s = %+v, %v; want t-a alone", a, threads, err)
	}
	if _, err := sa.Get(ctx, "t-b", 1); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get of t-b as role %s = %v, want ErrNotFound", a, err)
	}
	ha, err := store.ForTenant(ctx, sa, a)
	if err != nil {
		t.Fatal(err)
	}
	if err := ha.PutCheckpoint(ctx, store.Checkpoint{ThreadID: "t-a3", ID: 1, State: []byte(`{}`), Base: true}, nil); err != nil {
		t.Errorf("a new thread as role %s: %v", a, err)
	}
	if got, err := owner.ThreadTenant(ctx, "t-a3"); err != nil || got != a {
		t.Errorf("t-a3's tenant = %q, %v; want %s", got, err, a)
	}
}

// A store whose tenants' roles were granted "all tables" and bound by
// rowsecurity.sql at schema 12 keeps them working through migration 13,
// which adds graph_sizes (written by every put): its grants and policy
// are graph_checkpoints'. Without them a role's next put was refused.
func TestUpgradeKeepsTenantRolesWorking(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbURL := freshDB(t)
	applyUpTo(t, dbURL, 12)
	a, asA := role(t, dbURL)
	b, asB := role(t, dbURL)
	for _, r := range []string{a, b} {
		adminExec(t, dbURL, `grant usage on schema public to `+r)
		adminExec(t, dbURL, `grant select, insert, update, delete on all tables in schema public to `+r)
	}
	at12, _, found := strings.Cut(RowSecuritySQL, "alter table graph_sizes")
	if !found {
		t.Fatal("rowsecurity.sql no longer names graph_sizes: the script of schema 12 is not its head")
	}
	adminExec(t, dbURL, at12)
	s, err := Open(ctx, dbURL)
	if err != nil {
		t.Fatalf("Open of a schema 12 store with tenant roles: %v", err)
	}
	defer s.Close()
	seedTenants(t, s, a, b)
	for role, mine := range map[string]string{asA(dbURL): "t-a", asB(dbURL): "t-b"} {
		for table, ids := range threadsSeen(t, role) {
			if !slices.Equal(ids, []string{mine}) {
				t.Errorf("after the upgrade, a tenant's role reads threads %q of %s, want only %s", ids, table, mine)
			}
		}
	}
	wantRewindAsRole(t, s, asA(dbURL), a)
}
