package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"rewind/store"
	"rewind/store/postgres/pgtest"
	"rewind/store/storetest"
)

func TestMigrationsIdempotent(t *testing.T) {
	t.Parallel()
	s, dbURL := openFresh(t)
	ctx := context.Background()
	if err := s.PutCheckpoint(ctx, store.Checkpoint{ThreadID: "t", ID: 1, State: []byte(`{"a":1}`)}, nil); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		s2, err := Open(ctx, dbURL)
		if err != nil {
			t.Fatalf("reopen %d: %v", i, err)
		}
		if _, err := s2.Get(ctx, "t", 1); err != nil {
			t.Fatalf("reopen %d lost data: %v", i, err)
		}
		s2.Close()
	}
	got := query(t, dbURL, `select version::text || ' ' || name from rewind_schema_migrations order by version`)
	if len(got) != len(migrations()) || got[0] != "1 0001_init.sql" {
		t.Fatalf("versions = %q, want one row per migration (%d)", got, len(migrations()))
	}
}

// Opening a store whose schema is current, the common open of every
// command, is one round trip on the connection made (was twelve: the
// privileges, a transaction with the migration lock, the version, the
// columns), and no other connection: a new session costs the server more
// than the statements.
func TestOpenOfACurrentSchemaIsOneRoundTrip(t *testing.T) {
	t.Parallel()
	_, dbURL := openFresh(t)
	ctx := context.Background()
	writes, dials := new(atomic.Int64), new(atomic.Int64)
	connected, err := dial(ctx, dbURL, pgtest.Counting(writes, dials))
	if err != nil {
		t.Fatal(err)
	}
	w, d := writes.Load(), dials.Load()
	s, err := (&Conn{connected}).Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if rt, conns := writes.Load()-w, dials.Load()-d; rt != 1 || conns != 0 {
		t.Errorf("Open of a current schema took %d round trips and %d new connections, want 1 and 0", rt, conns)
	}
}

// Connecting sends no statement of its own (it sent a ping): the
// connection's startup (and authentication) only.
func TestConnectSendsNoStatement(t *testing.T) {
	t.Parallel()
	dbURL := freshDB(t)
	var statements atomic.Int64
	c, err := dial(context.Background(), dbURL, func(cfg *pgxpool.Config) {
		var d net.Dialer
		cfg.ConnConfig.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return statementConn{Conn: c, statements: &statements}, nil
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.pool.Close()
	if n := statements.Load(); n != 0 {
		t.Errorf("connecting sent %d statements, want none", n)
	}
}

// statementConn counts the writes that carry a statement: a simple query
// ('Q') or an extended one (it starts with Parse or Bind).
type statementConn struct {
	net.Conn
	statements *atomic.Int64
}

func (c statementConn) Write(b []byte) (int, error) {
	if len(b) > 0 && (b[0] == 'Q' || b[0] == 'P' || b[0] == 'B') {
		c.statements.Add(1)
	}
	return c.Conn.Write(b)
}

// A fast open reads no privileges: a refusal afterwards reads them then,
// on another connection (the refused one may be in an aborted
// transaction), and names the tables' owner and their schema, as a
// refusal did when Open read them.
func TestDeniedAfterAFastOpenNamesOwnerAndSchema(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbURL := freshDB(t)
	adminExec(t, dbURL, `create schema rw`)
	s, err := Open(ctx, withSearchPath(t, dbURL, "rw"))
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	owner := query(t, dbURL, `select current_user::text`)[0]
	name, as := role(t, dbURL)
	adminExec(t, dbURL, `grant usage on schema rw to `+name+`; grant select on all tables in schema rw to `+name)
	r, err := Open(ctx, as(withSearchPath(t, dbURL, "rw")))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	err = r.PutCheckpoint(ctx, store.Checkpoint{ThreadID: "t", ID: 1, State: []byte(`{}`)}, nil)
	want := "run as " + owner + " (the owner of rewind's tables): GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA rw TO " + name
	if wantDenied(t, err, "table graph_"); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("PutCheckpoint without INSERT = %v, want it to say %q", err, want)
	}
}

func TestMigrationsConcurrent(t *testing.T) {
	t.Parallel()
	dbURL := freshDB(t)
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			s, err := Open(context.Background(), dbURL)
			if err == nil {
				err = s.PutCheckpoint(context.Background(), store.Checkpoint{ThreadID: fmt.Sprint("t", i), ID: 1, State: []byte(`{}`)}, nil)
				s.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("opener %d: %v", i, err)
		}
	}
	if got := query(t, dbURL, `select count(*)::text from rewind_schema_migrations`); got[0] != fmt.Sprint(len(migrations())) {
		t.Fatalf("%s migration rows, want %d", got[0], len(migrations()))
	}
	if got := query(t, dbURL, `select count(*)::text from graph_checkpoints`); got[0] != fmt.Sprint(n) {
		t.Fatalf("%s checkpoints, want %d", got[0], n)
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	t.Parallel()
	s, dbURL := openFresh(t)
	s.Close()
	next := len(migrations()) + 1
	adminExec(t, dbURL, `insert into rewind_schema_migrations (version, name) values ($1, 'from the future')`, next)
	_, err := Open(context.Background(), dbURL)
	if !errors.Is(err, ErrSchemaTooNew) {
		t.Fatalf("Open = %v, want ErrSchemaTooNew", err)
	}
	for _, want := range []string{fmt.Sprintf("version %d", next), fmt.Sprintf("up to %d", len(migrations())), "upgrade rewind"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
}

func TestForeignTableRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("seed table without version table", func(t *testing.T) {
		dbURL := freshDB(t)
		// The seed's own table: text ids, made by someone else.
		adminExec(t, dbURL, `create table graph_checkpoints (
  thread_id text not null, checkpoint_id text not null, parent_id text,
  state jsonb not null, created_at timestamptz not null default now(),
  primary key (thread_id, checkpoint_id))`)
		adminExec(t, dbURL, `insert into graph_checkpoints (thread_id, checkpoint_id, state) values ('x', 'abc', '{"keep":true}')`)
		before := query(t, dbURL, `select thread_id||'/'||checkpoint_id||'/'||state::text from graph_checkpoints`)

		_, err := Open(ctx, dbURL)
		if !errors.Is(err, ErrForeignSchema) {
			t.Fatalf("Open = %v, want ErrForeignSchema", err)
		}
		for _, want := range []string{"graph_checkpoints", "rewind did not create", "refusing"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("message %q lacks %q", err, want)
			}
		}
		after := query(t, dbURL, `select thread_id||'/'||checkpoint_id||'/'||state::text from graph_checkpoints`)
		if fmt.Sprint(before) != fmt.Sprint(after) {
			t.Errorf("foreign table changed: %q -> %q", before, after)
		}
		cols := query(t, dbURL, `select column_name::text from information_schema.columns where table_name = 'graph_checkpoints' order by ordinal_position`)
		if fmt.Sprint(cols) != "[thread_id checkpoint_id parent_id state created_at]" {
			t.Errorf("foreign table columns changed: %v", cols)
		}
		if got := query(t, dbURL, `select coalesce(to_regclass('rewind_schema_migrations')::text, 'none')`); got[0] != "none" {
			t.Errorf("Open created %s in a database it refused", got[0])
		}
		if got := query(t, dbURL, `select coalesce(to_regclass('graph_events')::text, 'none')`); got[0] != "none" {
			t.Errorf("Open created %s in a database it refused", got[0])
		}
	})
	t.Run("foreign column", func(t *testing.T) {
		s, dbURL := openFresh(t)
		s.Close()
		adminExec(t, dbURL, `alter table graph_events add column owner text`)
		_, err := Open(ctx, dbURL)
		if !errors.Is(err, ErrForeignSchema) || !strings.Contains(err.Error(), "graph_events") {
			t.Fatalf("Open = %v, want ErrForeignSchema naming graph_events", err)
		}
	})
	t.Run("own table dropped", func(t *testing.T) {
		s, dbURL := openFresh(t)
		s.Close()
		adminExec(t, dbURL, `drop table graph_writes`)
		_, err := Open(ctx, dbURL)
		if !errors.Is(err, ErrForeignSchema) || !strings.Contains(err.Error(), "lacks table graph_writes") {
			t.Fatalf("Open = %v, want ErrForeignSchema saying graph_writes is missing", err)
		}
	})
	t.Run("foreign version table", func(t *testing.T) {
		dbURL := freshDB(t)
		adminExec(t, dbURL, `create table rewind_schema_migrations (id text primary key)`)
		_, err := Open(ctx, dbURL)
		if !errors.Is(err, ErrForeignSchema) || !strings.Contains(err.Error(), "rewind_schema_migrations") {
			t.Fatalf("Open = %v, want ErrForeignSchema naming rewind_schema_migrations", err)
		}
	})
}

func TestSplitSQL(t *testing.T) {
	t.Parallel()
	got := splitSQL("-- c\ncreate table a (\n  x int -- y\n);\n\n-- d\ncreate index i on a (x);\n")
	want := []string{"create table a (\n  x int -- y\n);", "create index i on a (x);"}
	if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
		t.Fatalf("splitSQL = %q, want %q", got, want)
	}
	if len(migrations()) == 0 || len(migrations()[0].statements) != 3 {
		t.Fatalf("0001_init.sql should hold 3 statements, got %d", len(migrations()[0].statements))
	}
}

// applyUpTo makes dbURL a store at schema version v, as an older rewind
// left it.
func applyUpTo(t *testing.T, dbURL string, v int) {
	t.Helper()
	adminExec(t, dbURL, `create table `+versionTable+` (
  version    integer     primary key,
  name       text        not null,
  applied_at timestamptz not null default now()
)`)
	for _, m := range migrations()[:v] {
		for _, stmt := range m.statements {
			adminExec(t, dbURL, stmt)
		}
		adminExec(t, dbURL, `insert into `+versionTable+` (version, name) values ($1, $2)`, m.version, m.name)
	}
}

// seedOld puts a checkpoint and its event in a store of schema from, as
// that schema's put would.
func seedOld(t *testing.T, dbURL string, from int) {
	t.Helper()
	adminExec(t, dbURL, `insert into graph_checkpoints (thread_id, checkpoint_id, state) values ('t', 1, '{"old":true}')`)
	adminExec(t, dbURL, `insert into graph_events (thread_id, checkpoint_id, seq, type, payload) values ('t', 1, 1, 'a', '{}')`)
	if from >= 10 { // the thread's listing row
		adminExec(t, dbURL, `insert into graph_threads (thread_id, checkpoints, latest_id, updated_at) values ('t', 1, 1, now())`)
	}
}

// wantDefaultTenants checks that an upgraded store's old rows are the
// default tenant's, and no other tenant's.
func wantDefaultTenants(t *testing.T, s *Store, thread string, id int64) {
	t.Helper()
	ctx := context.Background()
	if err := s.AddTenant(ctx, "acme"); err != nil {
		t.Fatalf("AddTenant after the upgrade: %v", err)
	}
	def, _ := store.ForTenant(ctx, s, "")
	acme, _ := store.ForTenant(ctx, s, "acme")
	if _, err := def.Get(ctx, thread, id); err != nil {
		t.Errorf("after the upgrade, the default tenant's Get = %v; want the row", err)
	}
	if _, err := acme.Get(ctx, thread, id); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("after the upgrade, another tenant's Get = %v; want ErrNotFound", err)
	}
}

func TestUpgradeFromEveryVersion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for from := 1; from < len(migrations()); from++ {
		t.Run(fmt.Sprint("from ", from), func(t *testing.T) {
			t.Parallel() // a database each: the waits for the server overlap
			dbURL := freshDB(t)
			applyUpTo(t, dbURL, from)
			seedOld(t, dbURL, from)
			s, err := Open(ctx, dbURL)
			if err != nil {
				t.Fatalf("Open of a schema %d store: %v", from, err)
			}
			defer s.Close()
			// Schemas before 7 spell it as jsonb printed it.
			if got, err := s.Get(ctx, "t", 1); err != nil || string(got.State) != `{"old": true}` && string(got.State) != `{"old":true}` {
				t.Errorf("Get after the upgrade = %s, %v; want the old row", got.State, err)
			}
			if evs, err := s.Events(ctx, "t", 1); err != nil || len(evs) != 1 {
				t.Errorf("Events after the upgrade = %v, %v", evs, err)
			}
			wantSizeCounted(t, s, "t", "after the upgrade")
			if _, created, err := s.CreateDraft(ctx, store.Draft{ThreadID: "t", OperationID: "op", Body: []byte(`{}`)}); err != nil || !created {
				t.Errorf("CreateDraft after the upgrade = %v, %v; want created", created, err)
			}
			// Old rows gain rerooted_from (null), and prune works on them.
			for id := int64(2); id <= 3; id++ {
				if err := s.PutCheckpoint(ctx, store.Checkpoint{ThreadID: "t", ID: id, ParentID: id - 1, State: []byte(`{}`), Base: true}, nil); err != nil {
					t.Fatalf("PutCheckpoint after the upgrade: %v", err)
				}
			}
			if res, err := s.Prune(ctx, "t", []int64{1}, nil); err != nil || len(res.Rerooted) != 1 || res.Rerooted[0] != (store.Reroot{ID: 2, From: 1}) || res.Events != 1 {
				t.Errorf("Prune after the upgrade = %+v, %v; want 1 deleted with its event, 2 re-rooted from 1", res, err)
			}
			if got := query(t, dbURL, `select checkpoint_id || ':' || coalesce(parent_id::text, 'null') || ':' || coalesce(rerooted_from::text, 'null')
from graph_checkpoints order by checkpoint_id`); fmt.Sprint(got) != "[2:null:1 3:2:null]" {
				t.Errorf("graph_checkpoints after Prune as id:parent:rerooted_from = %q, want [2:null:1 3:2:null]", got)
			}
			wantThreads(t, s, "after the upgrade, two puts and a prune", "t:2/3")
			wantSizeCounted(t, s, "t", "after a draft, two puts and a prune")
			wantDefaultTenants(t, s, "t", 2)
			got := query(t, dbURL, `select version::text from rewind_schema_migrations order by version`)
			if len(got) != len(migrations()) {
				t.Errorf("versions after the upgrade = %q, want 1..%d", got, len(migrations()))
			}
		})
	}
}

// wantSizeCounted: the thread's running size (graph_sizes: counted by
// the migration, then kept by the writes) is what its rows count, and
// not nothing.
func wantSizeCounted(t *testing.T, s *Store, thread, when string) {
	t.Helper()
	if storetest.WantSizeCounted(t, s, thread, when) == 0 {
		t.Errorf("%s: Size(%s) = 0, want the bytes of its rows", when, thread)
	}
}

// A store from before the epoch counter (schema 5) gets one that starts
// above every epoch handed out: a thread deleted after the upgrade and
// started again never hands its old writers' epoch to the new one.
func TestUpgradeSeedsEpochCounter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbURL := freshDB(t)
	applyUpTo(t, dbURL, 5)
	adminExec(t, dbURL, `insert into graph_epochs (thread_id, epoch) values ('a', 3), ('b', 7)`)
	adminExec(t, dbURL, `insert into graph_checkpoints (thread_id, checkpoint_id, state) values ('b', 1, '{}')`)
	s, err := Open(ctx, dbURL)
	if err != nil {
		t.Fatalf("Open of a schema 5 store: %v", err)
	}
	defer s.Close()
	if err := s.DeleteThread(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	if e, err := s.Fence(ctx, "b"); err != nil || e != 8 {
		t.Errorf("Fence of a deleted thread after the upgrade = %d, %v; want 8, above every old epoch", e, err)
	}
	if e, err := s.Fence(ctx, "a"); err != nil || e != 9 {
		t.Errorf("Fence = %d, %v; want 9", e, err)
	}
	err = s.PutCheckpoint(ctx, store.Checkpoint{ThreadID: "b", ID: 1, State: []byte(`{}`), Epoch: 7}, nil)
	if !errors.Is(err, store.ErrFenced) {
		t.Errorf("a write with the deleted thread's old epoch = %v, want ErrFenced", err)
	}
}

// A table by a newer migration's name, made by someone else in an older
// store, is refused, not adopted.
func TestUpgradeRefusesForeignNewTable(t *testing.T) {
	t.Parallel()
	dbURL := freshDB(t)
	applyUpTo(t, dbURL, 1)
	adminExec(t, dbURL, `create table graph_drafts (id text primary key)`)
	_, err := Open(context.Background(), dbURL)
	if !errors.Is(err, ErrForeignSchema) || !strings.Contains(err.Error(), "graph_drafts") {
		t.Fatalf("Open = %v, want ErrForeignSchema naming graph_drafts", err)
	}
	if got := query(t, dbURL, `select count(*)::text from rewind_schema_migrations`); got[0] != "1" {
		t.Errorf("a refused upgrade recorded %s versions, want 1", got[0])
	}
}

// Epochs and drafts live in the database, not in a process.
func TestEpochsAndDraftsSurviveReopen(t *testing.T) {
	t.Parallel()
	s, dbURL := openFresh(t)
	ctx := context.Background()
	if e, err := s.Fence(ctx, "t"); err != nil || e != 1 {
		t.Fatalf("Fence = %d, %v", e, err)
	}
	if _, _, err := s.CreateDraft(ctx, store.Draft{ThreadID: "t", OperationID: "op", Body: []byte(`{"n":1}`)}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s2, err := Open(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if e, err := s2.Fence(ctx, "t"); err != nil || e != 2 {
		t.Errorf("Fence after reopening = %d, %v; want 2", e, err)
	}
	if d, created, err := s2.CreateDraft(ctx, store.Draft{ThreadID: "t", OperationID: "op", Body: []byte(`{"n":2}`)}); err != nil || created || string(d.Body) != `{"n":1}` {
		t.Errorf("CreateDraft after reopening = %s, created %v, %v; want the first draft", d.Body, created, err)
	}
	// Legible in psql during an incident.
	if got := query(t, dbURL, `select thread_id || ' ' || epoch from graph_epochs`); len(got) != 1 || got[0] != "t 2" {
		t.Errorf("graph_epochs = %q, want [t 2]", got)
	}
	// The epoch counter outlives the thread and the process.
	if err := s2.DeleteThread(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	s2.Close()
	s3, err := Open(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer s3.Close()
	if e, err := s3.Fence(ctx, "t"); err != nil || e != 3 {
		t.Errorf("Fence of a deleted thread after reopening = %d, %v; want 3", e, err)
	}
}

// A store from before search (schema 8) has its messages indexed by the
// migration, over more than a page of indexMessages, every thread's.
func TestUpgradeIndexesMessages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbURL := freshDB(t)
	applyUpTo(t, dbURL, 8)
	adminExec(t, dbURL, `insert into graph_messages (thread_id, hash, idx, body, checkpoint_id)
select th, md5(th || n)::text, n, '{"role":"user","content":"message ' || n || ' about parcels"}', 1
from generate_series(1, 1203) n, unnest(array['t', 'u']) th`)
	s, err := Open(ctx, dbURL)
	if err != nil {
		t.Fatalf("Open of a schema 8 store: %v", err)
	}
	defer s.Close()
	for _, c := range []struct {
		thread, query string
		want          int
	}{{"t", "parcels", 1203}, {"u", "message parcel", 1203}, {"u", "1000", 1}, {"t", "12", 1 + 10 + 4}, {"t", "content", 0}} {
		got, err := s.Search(ctx, c.thread, c.query, 0)
		if err != nil || len(got) != c.want {
			t.Errorf("Search(%s, %q) after the upgrade = %d messages, %v; want %d", c.thread, c.query, len(got), err, c.want)
		}
	}
}

// A store from before graph_threads (schema 9) gets a row a thread from
// the migration: its checkpoints, its newest and that one's created_at
// (not the latest time: a writer's clock may have gone back).
func TestUpgradeCountsThreads(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbURL := freshDB(t)
	applyUpTo(t, dbURL, 9)
	adminExec(t, dbURL, `insert into graph_checkpoints (thread_id, checkpoint_id, parent_id, state, created_at) values
  ('a', 1, null, '{}', '2026-03-01 12:00:00+00'), ('a', 2, 1, '{}', '2026-03-01 15:00:00+00'), ('a', 3, 2, '{}', '2026-03-01 14:00:00+00'),
  ('b', 1, null, '{}', '2026-03-02 09:00:00+00')`)
	s, err := Open(ctx, dbURL)
	if err != nil {
		t.Fatalf("Open of a schema 9 store: %v", err)
	}
	defer s.Close()
	wantThreads(t, s, "after the upgrade", "a:3/3@01 14:00", "b:1/1@02 09:00")
}

// wantThreads: Threads as id:checkpoints/latest, with @day hh:mm of
// UpdatedAt where a want has it.
func wantThreads(t *testing.T, s *Store, how string, want ...string) {
	t.Helper()
	ts, err := s.Threads(context.Background())
	if err != nil {
		t.Fatalf("Threads %s: %v", how, err)
	}
	var got []string
	for i, th := range ts {
		row := fmt.Sprintf("%s:%d/%d", th.ID, th.Checkpoints, th.LatestID)
		if i < len(want) && strings.Contains(want[i], "@") {
			row += "@" + th.UpdatedAt.UTC().Format("02 15:04")
		}
		got = append(got, row)
	}
	if !slices.Equal(got, want) {
		t.Errorf("Threads %s as id:checkpoints/latest@updated = %q, want %q", how, got, want)
	}
}

// BenchmarkOpenClose is a command's open of a current store: connect,
// Open, Close, a new server session each. With REWIND_BENCH_PGDATA set to
// the test server's data directory (on this machine) it also reports the
// server's CPU per open: the postmaster's, its reaped backends' and its
// live ones', from /proc.
func BenchmarkOpenClose(b *testing.B) {
	_, dbURL := openFresh(b)
	ctx := context.Background()
	dataDir := os.Getenv("REWIND_BENCH_PGDATA")
	var before float64
	if dataDir != "" {
		before = serverCPU(b, dataDir)
	}
	for b.Loop() {
		s, err := Open(ctx, dbURL)
		if err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
	if dataDir != "" {
		b.StopTimer()
		time.Sleep(300 * time.Millisecond) // the last backend's exit
		b.ReportMetric((serverCPU(b, dataDir)-before)*1000/float64(b.N), "server-ms/op")
	}
}

// serverCPU is the CPU seconds the PostgreSQL server of dataDir has used.
func serverCPU(b *testing.B, dataDir string) float64 {
	b.Helper()
	pidFile, err := os.ReadFile(filepath.Join(dataDir, "postmaster.pid"))
	if err != nil {
		b.Fatal(err)
	}
	pm, _, _ := strings.Cut(string(pidFile), "\n")
	ticks := func(pid string, fields int) (n int64) {
		stat, err := os.ReadFile("/proc/" + pid + "/stat")
		if err != nil {
			return 0 // a backend that just exited: counted in its parent's
		}
		f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:])) // f[0] is field 3
		for _, v := range f[11 : 11+fields] {                                // utime, stime[, cutime, cstime]
			x, _ := strconv.ParseInt(v, 10, 64)
			n += x
		}
		return n
	}
	total := ticks(pm, 4)
	children, _ := os.ReadFile("/proc/" + pm + "/task/" + pm + "/children")
	for _, c := range strings.Fields(string(children)) {
		total += ticks(c, 2)
	}
	return float64(total) / 100 // USER_HZ
}

// A crash of the server empties graph_heads (unlogged): Size, which
// reads the head as it is, still equals what the rows count, before and
// after the next put writes a head again.
func TestSizeAfterTheHeadsAreLost(t *testing.T) {
	t.Parallel()
	s, dbURL := openFresh(t)
	ctx := t.Context()
	for id := int64(1); id <= 3; id++ {
		cp := store.Checkpoint{ThreadID: "t", ID: id, ParentID: id - 1, State: []byte(`{}`), Base: true, Head: fmt.Appendf(nil, `{"head":%d}`, id)}
		if err := s.PutCheckpoint(ctx, cp, nil); err != nil {
			t.Fatal(err)
		}
		if id == 2 {
			wantSizeCounted(t, s, "t", "with a head")
			adminExec(t, dbURL, `truncate graph_heads`)
			wantSizeCounted(t, s, "t", "once a crash emptied graph_heads")
		}
	}
	wantSizeCounted(t, s, "t", "after a put wrote a head again")
}
