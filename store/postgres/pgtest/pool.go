package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The test server's CPU goes to starting sessions and making and dropping
// databases (a create and a drop ≈ 190 ms of server CPU, and each drop
// waits for a checkpoint), not to the tests' queries. So a test binary
// keeps one admin pool for its creates and drops, and a copy of a
// template made by Template goes back to a pool when its test ends clean,
// for the next test that asks for that template. Run drops what is left.

// running is set by Run: without it no one drops a pool at the end, and
// every copy is dropped as its test ends.
var running atomic.Bool

var admin struct {
	sync.Mutex
	url  string
	pool *pgxpool.Pool
}

// adminExec runs sql on one binary-wide pool of connections to the
// server adminURL names, so a create or drop does not start a session.
func adminExec(ctx context.Context, adminURL, sql string) error {
	admin.Lock()
	if admin.pool == nil || admin.url != adminURL {
		if admin.pool != nil {
			admin.pool.Close()
		}
		cfg, err := pgxpool.ParseConfig(adminURL)
		if err != nil {
			admin.Unlock()
			return fmt.Errorf("REWIND_TEST_POSTGRES must be a postgres:// URL: %w", err)
		}
		cfg.MaxConns = 2
		if admin.pool, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
			admin.Unlock()
			return fmt.Errorf("connect to the test server: %w", err)
		}
		admin.url = adminURL
	}
	p := admin.pool
	admin.Unlock()
	if _, err := p.Exec(ctx, sql); err != nil {
		return fmt.Errorf("%.200s: %w", sql, err)
	}
	return nil
}

// template is a database Template made: its catalog and data as a copy
// starts, and its copies that wait for a test.
type template struct {
	name  string
	print []string // fingerprint of a fresh copy
	kept  []string // tables that hold rows in it (migration records): never emptied
	idle  []string // URLs of copies reset to print, shut to sessions (reset)
	drop  func() error
}

var templates struct {
	sync.Mutex
	byPrefix map[string]*template
	byName   map[string]*template
	err      map[string]error
}

// Template makes, once a test binary, a database named prefix_<random>
// that prepare fills (say, a store's migrations), and returns its name for
// FreshFrom. Run drops it and its pooled copies at the end. prepare must
// close every session it opens: PostgreSQL copies a template only while
// no session is in it.
func Template(tb testing.TB, prefix string, prepare func(ctx context.Context, dbURL string) error) string {
	tb.Helper()
	adminURL := Admin(tb)
	if !running.Load() {
		tb.Fatal("pgtest.Template needs the package's TestMain to call pgtest.Run, which drops the template at the end")
	}
	templates.Lock()
	defer templates.Unlock()
	if t := templates.byPrefix[prefix]; t != nil {
		return t.name
	}
	if err := templates.err[prefix]; err != nil {
		tb.Fatal(err)
	}
	t, err := makeTemplate(context.Background(), adminURL, prefix, prepare)
	if err != nil {
		if templates.err == nil {
			templates.err = map[string]error{}
		}
		templates.err[prefix] = err
		tb.Fatal(err)
	}
	if templates.byPrefix == nil {
		templates.byPrefix, templates.byName = map[string]*template{}, map[string]*template{}
	}
	templates.byPrefix[prefix], templates.byName[t.name] = t, t
	return t.name
}

func makeTemplate(ctx context.Context, adminURL, prefix string, prepare func(context.Context, string) error) (*template, error) {
	dbURL, drop, err := create(ctx, adminURL, prefix, "")
	if err != nil {
		return nil, err
	}
	t := &template{name: Name(dbURL), drop: drop}
	err = prepare(ctx, dbURL)
	if err == nil {
		err = t.fingerprint(ctx, dbURL)
	}
	if err != nil {
		if derr := drop(); derr != nil {
			err = errors.Join(err, derr)
		}
		return nil, fmt.Errorf("prepare the template %s: %w", t.name, err)
	}
	return t, nil
}

// fingerprint records, on the template itself, what a fresh copy holds.
func (t *template) fingerprint(ctx context.Context, dbURL string) error {
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return fmt.Errorf("connect to the template: %w", err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, tablesSQL)
	if err != nil {
		return fmt.Errorf("list the template's tables: %w", err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("list the template's tables: %w", err)
	}
	for _, tbl := range tables {
		var some bool
		if err := conn.QueryRow(ctx, "select exists (select from "+tbl+")").Scan(&some); err != nil {
			return fmt.Errorf("read %s: %w", tbl, err)
		}
		if some {
			t.kept = append(t.kept, tbl)
		}
	}
	t.print, err = fingerprint(ctx, conn)
	return err
}

// take returns an idle copy's URL, or "" when there is none.
func (t *template) take() string {
	templates.Lock()
	defer templates.Unlock()
	if n := len(t.idle); n > 0 {
		u := t.idle[n-1]
		t.idle = t.idle[:n-1]
		return u
	}
	return ""
}

// freshCopy is FreshFrom for a template Template made: an idle copy
// when there is one, and back to the pool when the test ends, if reset
// proves it as a fresh copy is.
func freshCopy(tb testing.TB, adminURL, prefix string, t *template) string {
	dbURL := t.take()
	if dbURL != "" {
		u, err := reopen(context.Background(), adminURL, prefix, dbURL)
		if err != nil {
			if derr := dropDB(context.Background(), adminURL, Name(dbURL)); derr != nil {
				tb.Fatal(errors.Join(err, derr))
			}
		}
		dbURL = u
	}
	if dbURL == "" {
		u, _, err := create(context.Background(), adminURL, prefix, t.name)
		if err != nil {
			tb.Fatal(err)
		}
		dbURL = u
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if !tb.Failed() && reset(ctx, adminURL, dbURL, t) == nil {
			templates.Lock()
			t.idle = append(t.idle, dbURL)
			templates.Unlock()
			return
		}
		if err := dropDB(ctx, adminURL, Name(dbURL)); err != nil {
			tb.Error(err)
		}
	})
	return dbURL
}

// reopen gives an idle copy a new name of prefix's, and lets sessions in
// again, for its next test: a session its last test left behind, which
// holds the old name, cannot reach it (reset shut it to new ones). ""
// with the error when it cannot.
func reopen(ctx context.Context, adminURL, prefix, dbURL string) (string, error) {
	u, err := url.Parse(dbURL)
	if err != nil {
		return "", fmt.Errorf("a pooled copy's URL: %w", err)
	}
	raw := newName(prefix)
	name := pgx.Identifier{raw}.Sanitize()
	if err := adminExec(ctx, adminURL, "alter database "+pgx.Identifier{Name(dbURL)}.Sanitize()+" rename to "+name); err != nil {
		return "", fmt.Errorf("rename the pooled copy %s for its next test: %w", Name(dbURL), err)
	}
	if err := adminExec(ctx, adminURL, "alter database "+name+" allow_connections true"); err != nil {
		return "", errors.Join(fmt.Errorf("open the pooled copy %s to its next test: %w", raw, err), dropDB(ctx, adminURL, raw))
	}
	u.Path = "/" + raw
	return u.String(), nil
}

// errDirty: a copy is not as fresh from its template; it is dropped.
var errDirty = errors.New("not as a fresh copy of its template")

// reset empties the tables of a copy its test has ended with, and checks
// that its catalog and rows are its template's again. It lets no new
// session in; any other session still in it (a store a test left open, a
// subprocess) could write after the check: then it is dropped.
func reset(ctx context.Context, adminURL, dbURL string, t *template) error {
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	// From now until freshCopy hands it out again, no session comes in:
	// one that came after the wait below (a goroutine its test left, a
	// subprocess) could write after the check, into the next test's copy.
	// (PostgreSQL refuses it from a session in the database.)
	if err := adminExec(ctx, adminURL, "alter database "+pgx.Identifier{Name(dbURL)}.Sanitize()+" allow_connections false"); err != nil {
		return err
	}
	// A closed store's sessions end just after its Close returns; on a
	// loaded machine that can take a while (PostgreSQL's own DROP
	// DATABASE waits 5 s for them).
	for wait := 0; ; wait++ {
		var others int
		if err := conn.QueryRow(ctx, `select (select count(*) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid())
 + (select count(*) from pg_prepared_xacts where database = current_database())`).Scan(&others); err != nil {
			return err
		}
		if others == 0 {
			break
		}
		if wait == 250 {
			return fmt.Errorf("%d other session(s) in it: %w", others, errDirty)
		}
		time.Sleep(20 * time.Millisecond)
	}
	rows, err := conn.Query(ctx, tablesSQL)
	if err != nil {
		return err
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	var toEmpty []string
	for _, tbl := range tables {
		if !slices.Contains(t.kept, tbl) {
			toEmpty = append(toEmpty, tbl)
		}
	}
	if err := empty(ctx, conn, toEmpty); err != nil {
		return err
	}
	got, err := fingerprint(ctx, conn)
	if err != nil {
		return err
	}
	if !slices.Equal(got, t.print) {
		return errDirty
	}
	return nil
}

// fewRows is how many rows a table may hold for empty to delete them
// rather than truncate it.
const fewRows = 2000

// empty removes every row of tables and restarts the sequences they own,
// as `truncate ... restart identity` does. A truncate gives each table and
// index new files (~180 ms of the server's CPU for a store's dozen
// tables, and most of a test's tables hold nothing or a few rows), so the
// tables that hold rows, when none holds many, lose them to a delete, and
// the owned sequences are set back to their start. A delete a foreign key
// refuses (or a table of many rows) falls back to the truncate.
func empty(ctx context.Context, conn *pgx.Conn, tables []string) error {
	if len(tables) == 0 {
		return nil
	}
	q := make([]string, 0, len(tables))
	for i, tbl := range tables {
		q = append(q, fmt.Sprintf("select %d, exists (select from %s offset %d) where exists (select from %s)", i, tbl, fewRows, tbl))
	}
	rows, err := conn.Query(ctx, strings.Join(q, "\nunion all "))
	if err != nil {
		return fmt.Errorf("count the rows left: %w", err)
	}
	type held struct {
		I    int
		Many bool
	}
	got, err := pgx.CollectRows(rows, pgx.RowToStructByPos[held])
	if err != nil {
		return fmt.Errorf("count the rows left: %w", err)
	}
	truncate := "truncate " + strings.Join(tables, ", ") + " restart identity"
	var stmts []string
	for _, h := range got {
		if h.Many {
			stmts = nil
			break
		}
		stmts = append(stmts, "delete from "+tables[h.I])
	}
	if len(got) > 0 && len(stmts) == 0 {
		_, err := conn.Exec(ctx, truncate)
		return err
	}
	// The sequences the tables own (serial, identity), back to their start
	// as a fresh copy's are: a rolled-back insert moves one too.
	restart := `select setval(s.seqrelid, s.seqstart, false) from pg_sequence s
join pg_depend d on d.classid = 'pg_class'::regclass and d.objid = s.seqrelid and d.refclassid = 'pg_class'::regclass and d.deptype in ('a', 'i')
where d.refobjid::regclass::text = any($1)`
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if len(stmts) > 0 {
		if _, err := tx.Exec(ctx, strings.Join(stmts, "; ")); err != nil {
			_ = tx.Rollback(ctx)
			_, err := conn.Exec(ctx, truncate)
			return err
		}
	}
	if _, err := tx.Exec(ctx, restart, tables); err != nil {
		return fmt.Errorf("restart the sequences: %w", err)
	}
	return tx.Commit(ctx)
}

// dropDB drops the database name (with force) on the admin pool.
func dropDB(ctx context.Context, adminURL, name string) error {
	return adminExec(ctx, adminURL, "drop database if exists "+pgx.Identifier{name}.Sanitize()+" with (force)")
}

// dropPools drops every template and its idle copies, for Run.
func dropPools() {
	templates.Lock()
	defer templates.Unlock()
	ctx := context.Background()
	for _, t := range templates.byName {
		for _, u := range t.idle {
			if err := dropDB(ctx, admin.url, Name(u)); err != nil {
				fmt.Fprintln(os.Stderr, "pgtest: drop a pooled copy:", err)
			}
		}
		t.idle = nil
		if err := t.drop(); err != nil {
			fmt.Fprintln(os.Stderr, "pgtest: drop a template:", err)
		}
	}
	templates.byName, templates.byPrefix = nil, nil
	admin.Lock()
	if admin.pool != nil {
		admin.pool.Close()
		admin.pool = nil
	}
	admin.Unlock()
}

// userSchemas is the SQL condition on a pg_namespace n that it is the
// database's own: not the system's, not a session's temporary one.
const userSchemas = `n.nspname not in ('pg_catalog', 'information_schema', 'pg_toast') and n.nspname not like 'pg\_temp\_%' and n.nspname not like 'pg\_toast\_temp\_%'`

// tablesSQL lists the database's own tables as quoted names.
const tablesSQL = `select c.oid::regclass::text from pg_class c join pg_namespace n on n.oid = c.relnamespace
where c.relkind in ('r', 'p') and ` + userSchemas + ` order by 1`

// catalogSQL is what makes a database's schema: its schemas, relations,
// columns, indexes, constraints, policies, functions, triggers, rules,
// types, extensions, owners and grants (ACLs name the roles), the
// database's own grants and settings, and comments. Not whether it allows
// connections: the pool closes an idle copy and opens it to its test. Roles are the
// cluster's, the same for a copy and a fresh one; what a database grants
// them is here.
const catalogSQL = `
select 'schema ' || n.nspname || ' ' || pg_get_userbyid(n.nspowner) || ' ' || coalesce(n.nspacl::text, '')
from pg_namespace n where ` + userSchemas + `
union all
select 'rel ' || c.oid::regclass::text || ' ' || c.relkind::text || c.relpersistence::text || ' ' || pg_get_userbyid(c.relowner) || ' ' ||
  coalesce(c.relacl::text, '') || ' rls ' || c.relrowsecurity || c.relforcerowsecurity || ' ' || coalesce(c.reloptions::text, '') || ' ' || c.relreplident::text
from pg_class c join pg_namespace n on n.oid = c.relnamespace where ` + userSchemas + `
union all
select 'col ' || a.attrelid::regclass::text || ' ' || a.attnum || ' ' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod) ||
  ' ' || a.attnotnull || a.attisdropped || a.attidentity::text || a.attgenerated::text || ' ' || coalesce(pg_get_expr(d.adbin, d.adrelid), '') || ' ' || coalesce(a.attacl::text, '')
from pg_attribute a join pg_class c on c.oid = a.attrelid join pg_namespace n on n.oid = c.relnamespace
left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
where a.attnum > 0 and ` + userSchemas + `
union all
select 'index ' || pg_get_indexdef(i.indexrelid) || ' ' || i.indisvalid || i.indisready
from pg_index i join pg_class c on c.oid = i.indexrelid join pg_namespace n on n.oid = c.relnamespace where ` + userSchemas + `
union all
select 'constraint ' || co.conrelid::regclass::text || ' ' || co.contypid::regtype::text || ' ' || co.conname || ' ' || pg_get_constraintdef(co.oid) || ' ' || co.convalidated
from pg_constraint co join pg_namespace n on n.oid = co.connamespace where ` + userSchemas + `
union all
select 'policy ' || schemaname || '.' || tablename || ' ' || policyname || ' ' || permissive || ' ' || roles::text || ' ' || cmd || ' ' ||
  coalesce(qual, '') || ' ' || coalesce(with_check, '')
from pg_policies
union all
select 'function ' || p.oid::regprocedure::text || ' ' || pg_get_userbyid(p.proowner) || ' ' || coalesce(p.proacl::text, '') || ' ' ||
  p.prokind::text || p.prosecdef || p.provolatile::text || ' ' || coalesce(p.proconfig::text, '') || ' ' || p.prorettype::regtype::text || ' ' || md5(coalesce(p.prosrc, ''))
from pg_proc p join pg_namespace n on n.oid = p.pronamespace where ` + userSchemas + `
union all
select 'trigger ' || pg_get_triggerdef(tg.oid) || ' ' || tg.tgenabled::text
from pg_trigger tg join pg_class c on c.oid = tg.tgrelid join pg_namespace n on n.oid = c.relnamespace where not tg.tgisinternal and ` + userSchemas + `
union all
select 'rule ' || schemaname || '.' || tablename || ' ' || rulename || ' ' || definition from pg_rules
union all
select 'type ' || t.oid::regtype::text || ' ' || t.typtype::text || ' ' || pg_get_userbyid(t.typowner) || ' ' || coalesce(t.typacl::text, '') || ' ' ||
  coalesce((select string_agg(e.enumlabel, ',' order by e.enumsortorder) from pg_enum e where e.enumtypid = t.oid), '')
from pg_type t join pg_namespace n on n.oid = t.typnamespace where ` + userSchemas + `
union all
select 'extension ' || extname || ' ' || extversion from pg_extension
union all
select 'event trigger ' || evtname || ' ' || evtevent || ' ' || evtenabled::text from pg_event_trigger
union all
select 'publication ' || pubname from pg_publication
union all
select 'default acl ' || pg_get_userbyid(defaclrole) || ' ' || defaclobjtype::text || ' ' || defaclacl::text from pg_default_acl
union all
select 'database ' || pg_get_userbyid(datdba) || ' ' || coalesce(datacl::text, '') || ' ' || datconnlimit
from pg_database where datname = current_database()
union all
select 'setting ' || coalesce(pg_get_userbyid(setrole), '') || ' ' || setconfig::text
from pg_db_role_setting where setdatabase = (select oid from pg_database where datname = current_database())
union all
select 'comment ' || classoid::regclass::text || ' ' || objoid || ' ' || objsubid || ' ' || description from pg_description where objoid >= 16384
union all
select 'large objects ' || count(*) from pg_largeobject_metadata`

// fingerprint is the database's catalog (catalogSQL) and the rows of its
// tables and the state of its sequences, as sorted lines.
func fingerprint(ctx context.Context, conn *pgx.Conn) ([]string, error) {
	rows, err := conn.Query(ctx, `select c.oid::regclass::text, c.relkind = 'S' from pg_class c join pg_namespace n on n.oid = c.relnamespace
where c.relkind in ('r', 'p', 'S') and `+userSchemas+` order by 1`)
	if err != nil {
		return nil, fmt.Errorf("list relations: %w", err)
	}
	type rel struct {
		Name string
		Seq  bool
	}
	rels, err := pgx.CollectRows(rows, pgx.RowToStructByPos[rel])
	if err != nil {
		return nil, fmt.Errorf("list relations: %w", err)
	}
	q := catalogSQL
	for _, r := range rels {
		lit := "'" + strings.ReplaceAll(r.Name, "'", "''") + "'"
		if r.Seq {
			q += "\nunion all select 'sequence ' || " + lit + " || ' ' || last_value || ' ' || is_called from " + r.Name
		} else {
			q += "\nunion all select 'rows ' || " + lit + " || ' ' || count(*) || ' ' || coalesce(md5(string_agg(x::text, E'\\n' order by x::text)), '') from " + r.Name + " x"
		}
	}
	rows, err = conn.Query(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("fingerprint the database: %w", err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("fingerprint the database: %w", err)
	}
	slices.Sort(lines)
	return lines, nil
}
