package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"rewind/cli/rewindbin"
)

func TestMain(m *testing.M) { rewindbin.Exit(Run(m)) }

// endingTB is a test whose end (its cleanups) the test below runs, and
// whose failure it sets.
type endingTB struct {
	testing.TB
	failed   bool
	cleanups []func()
}

func (e *endingTB) Cleanup(f func()) { e.cleanups = append(e.cleanups, f) }
func (e *endingTB) Failed() bool     { return e.failed }
func (e *endingTB) end() {
	for i := len(e.cleanups) - 1; i >= 0; i-- {
		e.cleanups[i]()
	}
}

func one(t *testing.T, dbURL, sql string) string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var s string
	if err := conn.QueryRow(ctx, sql).Scan(&s); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return s
}

func exists(t *testing.T, dbURL string) bool {
	t.Helper()
	return one(t, Admin(t), "select count(*)::text from pg_database where datname = '"+Name(dbURL)+"'") == "1"
}

// A copy goes back to the pool only as a fresh copy is: its rows gone,
// its sequences restarted, its migration records kept. A copy whose
// test changed its schema, grants, row security, functions, triggers,
// comments or kept rows, left a session in it, or failed, is dropped and
// never handed out again.
func TestDirtiedCopyIsNeverReused(t *testing.T) {
	role := func() string {
		var b [4]byte
		_, _ = rand.Read(b[:])
		return "pgtest_role_" + hex.EncodeToString(b[:])
	}()
	tmpl := Template(t, "pgtest_pool", func(ctx context.Context, dbURL string) error {
		conn, err := pgx.Connect(ctx, dbURL)
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, `create table data (id bigserial primary key, v text);
create table records (version int primary key);
insert into records values (1), (2);
create function f() returns int language sql as 'select 1'`)
		return err
	})
	Exec(t, Admin(t), "create role "+role)
	t.Cleanup(func() { Exec(t, Admin(t), "drop role if exists "+role) })

	// use hands out a copy, runs dirty in it, ends its test (failed as
	// told), and says whether the copy went back to the pool.
	use := func(t *testing.T, failed bool, dirty ...string) (dbURL string, pooled bool) {
		t.Helper()
		tb := &endingTB{TB: t}
		dbURL = FreshFrom(tb, "pgtest_pool", tmpl)
		for _, sql := range dirty {
			Exec(t, dbURL, sql)
		}
		tb.failed = failed
		tb.end()
		templates.Lock()
		pooled = slices.Contains(templates.byName[tmpl].idle, dbURL)
		templates.Unlock()
		if exists(t, dbURL) != pooled {
			t.Fatalf("%s: pooled %v but exists %v", Name(dbURL), pooled, !pooled)
		}
		return dbURL, pooled
	}

	first, pooled := use(t, false, "insert into data (v) values ('a'), ('b')")
	if !pooled {
		t.Fatal("a copy whose test only wrote rows was dropped, not pooled")
	}
	oid := dbOID(t, first)
	again := FreshFrom(&endingTB{TB: t}, "pgtest_pool", tmpl)
	if got := dbOID(t, again); got != oid {
		t.Fatalf("the next copy is database %s, not the pooled %s", got, oid)
	}
	if got := one(t, again, "select count(*)::text from data"); got != "0" {
		t.Errorf("a reused copy holds %s rows of its last test", got)
	}
	if got := one(t, again, "select string_agg(version::text, ',' order by version) from records"); got != "1,2" {
		t.Errorf("a reused copy's kept rows: %s, want 1,2", got)
	}
	if got := one(t, again, "insert into data (v) values ('c') returning id::text"); got != "1" {
		t.Errorf("a reused copy's sequence gave id %s, want 1 (restarted)", got)
	}
	putBack(t, tmpl, again, "data")

	for _, c := range []struct {
		name   string
		failed bool
		dirty  []string
	}{
		{"failed test", true, []string{"select 1"}},
		{"added column", false, []string{"alter table data add column w int"}},
		{"dropped column", false, []string{"alter table data drop column v"}},
		{"new table", false, []string{"create table extra (x int)"}},
		{"new schema", false, []string{"create schema other"}},
		{"new index", false, []string{"create index on data (v)"}},
		{"grant", false, []string{"grant select on data to " + role}},
		{"column grant", false, []string{"grant update (v) on data to " + role}},
		{"schema grant", false, []string{"grant usage on schema public to " + role}},
		{"database grant", false, []string{"grant connect on database current_database_placeholder to " + role}},
		{"row security", false, []string{"alter table data enable row level security"}},
		{"policy", false, []string{"create policy p on data using (true)"}},
		{"function body", false, []string{"create or replace function f() returns int language sql as 'select 2'"}},
		{"trigger", false, []string{"create function g() returns trigger language plpgsql as 'begin return new; end'",
			"create trigger tg before insert on data for each row execute function g()"}},
		{"comment", false, []string{"comment on table data is 'x'"}},
		{"kept rows", false, []string{"insert into records values (3)"}},
		{"kept rows changed", false, []string{"update records set version = 9 where version = 2"}},
		{"standalone sequence", false, []string{"create sequence s", "select nextval('s')"}},
		{"owner", false, []string{"alter table data owner to " + role}},
		{"default privileges", false, []string{"alter default privileges grant select on tables to " + role}},
		{"setting", false, []string{"alter role " + role + " in database current_database_placeholder set work_mem = '8MB'"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tb := &endingTB{TB: t}
			dbURL := FreshFrom(tb, "pgtest_pool", tmpl)
			for _, sql := range c.dirty {
				Exec(t, dbURL, replaceDB(sql, Name(dbURL)))
			}
			tb.failed = c.failed
			tb.end()
			if exists(t, dbURL) {
				t.Errorf("%s survived its test", Name(dbURL))
			}
			templates.Lock()
			defer templates.Unlock()
			if slices.Contains(templates.byName[tmpl].idle, dbURL) {
				t.Errorf("%s went back to the pool", Name(dbURL))
			}
		})
	}

	t.Run("session left in it", func(t *testing.T) {
		t.Parallel()
		tb := &endingTB{TB: t}
		dbURL := FreshFrom(tb, "pgtest_pool", tmpl)
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, dbURL)
		if err != nil {
			t.Fatal(err)
		}
		tb.end()
		conn.Close(ctx)
		if exists(t, dbURL) {
			t.Errorf("%s, with a session still in it, survived its test", Name(dbURL))
		}
	})
}

func replaceDB(sql, name string) string {
	return strings.ReplaceAll(sql, "current_database_placeholder", pgx.Identifier{name}.Sanitize())
}

// A copy waiting in the pool takes no session: a writer that connects
// after its test ended (a goroutine the test left behind, a subprocess)
// would otherwise pass the check its test's end made, and the next test
// would get its rows.
func TestAnIdleCopyTakesNoSession(t *testing.T) {
	_, next := handedOutTwice(t, "pgtest_idle", lateWrite)
	if got := one(t, next, "select count(*)::text from data"); got != "0" {
		t.Errorf("the next test's copy holds %s row(s) written after the last test ended", got)
	}
}

// A copy handed out again is under a name of its own: a writer its last
// test left behind, holding that test's URL, cannot reach the next test's
// copy once that test has it (it finds no such database).
func TestALeftBehindWriterCannotReachTheNextTestsCopy(t *testing.T) {
	first, next := handedOutTwice(t, "pgtest_renamed", func(*testing.T, string) {})
	lateWrite(t, first)
	if got := one(t, next, "select count(*)::text from data"); got != "0" {
		t.Errorf("the next test's copy holds %s row(s) its last test's writer put there", got)
	}
}

// handedOutTwice is a copy of a one-table template handed to a test that
// ends clean, then between(first), then the copy handed to the next test
// (failing unless it is the same database, back from the pool).
func handedOutTwice(t *testing.T, prefix string, between func(t *testing.T, first string)) (first, next string) {
	t.Helper()
	tmpl := Template(t, prefix, func(ctx context.Context, dbURL string) error {
		return exec(ctx, dbURL, "create table data (id bigserial primary key, v text)")
	})
	tb := &endingTB{TB: t}
	first = FreshFrom(tb, prefix, tmpl)
	oid := dbOID(t, first)
	tb.end()
	between(t, first)
	ntb := &endingTB{TB: t}
	next = FreshFrom(ntb, prefix, tmpl)
	t.Cleanup(ntb.end)
	if got := dbOID(t, next); got != oid {
		t.Fatalf("the next copy is database %s, not the pooled %s", got, oid)
	}
	return first, next
}

// lateWrite writes a row through the URL a test that ended was given, if
// the database still lets it in.
func lateWrite(t *testing.T, dbURL string) {
	t.Helper()
	ctx := context.Background()
	if late, err := pgx.Connect(ctx, dbURL); err == nil {
		_, err = late.Exec(ctx, "insert into data (v) values ('late')")
		late.Close(ctx)
		if err != nil {
			t.Fatal(err)
		}
	}
}

// dbOID is the oid of the database dbURL names: a copy's identity, which
// a new name for it keeps.
func dbOID(t *testing.T, dbURL string) string {
	t.Helper()
	return one(t, Admin(t), "select coalesce((select oid::text from pg_database where datname = '"+Name(dbURL)+"'), 'none')")
}

// A copy goes back empty whichever way its rows go: a few by delete, many
// (more than fewRows in a table) or ones a foreign key keeps (the parent
// listed before its child) by truncate; its sequences restart either way,
// one that only a rolled-back insert moved too.
func TestACopyIsEmptiedHoweverItsRowsGo(t *testing.T) {
	tmpl := Template(t, "pgtest_empty", func(ctx context.Context, dbURL string) error {
		return exec(ctx, dbURL, `create table a_parent (id bigserial primary key);
create table b_child (id bigserial primary key, parent bigint references a_parent);
create table c_log (id bigint generated always as identity, v text)`)
	})
	for _, c := range []struct {
		name  string
		dirty []string
	}{
		{"a few rows", []string{"insert into c_log (v) values ('x'), ('y')"}},
		{"many rows", []string{fmt.Sprintf("insert into c_log (v) select 'r' from generate_series(1, %d)", fewRows+1)}},
		{"rows a foreign key keeps", []string{"insert into a_parent default values", "insert into b_child (parent) values (1)"}},
		{"a rolled-back insert", []string{"begin; insert into c_log (v) values ('gone'); rollback"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			first, pooled := useOnce(t, tmpl, "pgtest_empty", c.dirty...)
			if !pooled {
				t.Fatalf("%s: dropped, not pooled", Name(first))
			}
			oid := dbOID(t, first)
			next := FreshFrom(&endingTB{TB: t}, "pgtest_empty", tmpl)
			if dbOID(t, next) != oid {
				t.Fatal("the next copy is not the pooled one")
			}
			for _, tbl := range []string{"a_parent", "b_child", "c_log"} {
				if got := one(t, next, "select count(*)::text from "+tbl); got != "0" {
					t.Errorf("%s holds %s rows of the last test", tbl, got)
				}
			}
			if got := one(t, next, "insert into c_log (v) values ('n') returning id::text"); got != "1" {
				t.Errorf("c_log's identity gave %s, want 1 (restarted)", got)
			}
			putBack(t, tmpl, next, "a_parent, b_child, c_log")
		})
	}
}

// putBack empties tables of a copy whose endingTB never ends and puts it
// back in tmpl's pool, fresh, for the next test.
func putBack(t *testing.T, tmpl, dbURL, tables string) {
	t.Helper()
	Exec(t, dbURL, "truncate "+tables+" restart identity")
	templates.Lock()
	templates.byName[tmpl].idle = append(templates.byName[tmpl].idle, dbURL)
	templates.Unlock()
}

// useOnce hands out a copy of tmpl, runs dirty in it, ends its test
// clean, and says whether the copy went back to the pool.
func useOnce(t *testing.T, tmpl, prefix string, dirty ...string) (dbURL string, pooled bool) {
	t.Helper()
	tb := &endingTB{TB: t}
	dbURL = FreshFrom(tb, prefix, tmpl)
	for _, sql := range dirty {
		Exec(t, dbURL, sql)
	}
	tb.end()
	templates.Lock()
	pooled = slices.Contains(templates.byName[tmpl].idle, dbURL)
	templates.Unlock()
	return dbURL, pooled
}
