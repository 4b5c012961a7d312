package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"rewind/store"
)

// ErrForeignSchema: the database holds tables by rewind's names that rewind
// did not create, or that do not have rewind's columns. Open never touches
// them.
var ErrForeignSchema = errors.New("database has tables that are not rewind's")

// ErrSchemaTooNew: the database was migrated by a newer rewind.
var ErrSchemaTooNew = errors.New("database store schema is newer than this rewind")

//go:embed migrations/*.sql
var migrationFiles embed.FS

type migration struct {
	version    int
	name       string
	statements []string
}

// migrations are the embedded files NNNN_name.sql, numbered 1, 2, 3, ...
var migrations = sync.OnceValue(mustLoadMigrations) // read at the first migrate, not at every process's start

func mustLoadMigrations() []migration {
	names, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		panic(err)
	}
	slices.Sort(names)
	var out []migration
	for i, path := range names {
		base := strings.TrimPrefix(path, "migrations/")
		num, _, _ := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if err != nil || v != i+1 {
			panic(fmt.Sprintf("postgres store: migration %s: want number %04d", base, i+1))
		}
		body, err := migrationFiles.ReadFile(path)
		if err != nil {
			panic(err)
		}
		out = append(out, migration{version: v, name: base, statements: splitSQL(string(body))})
	}
	return out
}

// splitSQL cuts a migration into statements, each ending with ';' at the
// end of a line, dropping comment lines. The extended protocol takes one
// statement at a time.
func splitSQL(body string) []string {
	var out []string
	var cur strings.Builder
	for line := range strings.Lines(body) {
		trim := strings.TrimSpace(line)
		if trim == "" || strings.HasPrefix(trim, "--") {
			continue
		}
		cur.WriteString(line)
		if strings.HasSuffix(trim, ";") {
			out = append(out, strings.TrimSpace(cur.String()))
			cur.Reset()
		}
	}
	if strings.TrimSpace(cur.String()) != "" {
		panic("postgres store: migration ends without ';': " + cur.String())
	}
	return out
}

// ownTables are the tables the store creates, with the columns the newest
// migration leaves them with. Open refuses a database where they differ.
var ownTables = map[string][]string{
	"graph_checkpoints": {
		"thread_id text not null", "checkpoint_id bigint not null", "parent_id bigint",
		"state json not null", "created_at timestamp with time zone not null", "rerooted_from bigint",
		"meta json", "base boolean not null", "rebased json", "blob_refs text[]",
	},
	"graph_writes": {
		"thread_id text not null", "checkpoint_id bigint not null", "task_id text not null",
		"writes json not null", "created_at timestamp with time zone not null",
	},
	"graph_events": {
		"thread_id text not null", "checkpoint_id bigint not null", "seq integer not null",
		"type text not null", "payload json not null", "created_at timestamp with time zone not null",
	},
	"graph_drafts": {
		"thread_id text not null", "operation_id text not null", "body json not null",
		"created_at timestamp with time zone not null",
	},
	"graph_epochs": {
		"thread_id text not null", "epoch bigint not null", "fenced_at timestamp with time zone not null",
	},
	"graph_epoch_counter": {"issued bigint not null"},
	"graph_messages": {
		"thread_id text not null", "hash text not null", "idx bigint not null", "body text not null",
		"checkpoint_id bigint not null", "created_at timestamp with time zone not null", "words tsvector",
	},
	"graph_blobs": {
		"thread_id text not null", "hash text not null", "body text not null",
		"created_at timestamp with time zone not null",
	},
	"graph_heads": {"thread_id text not null", "checkpoint_id bigint not null", "doc json not null"},
	"graph_threads": {
		"thread_id text not null", "checkpoints bigint not null", "latest_id bigint not null",
		"updated_at timestamp with time zone not null",
	},
	"graph_sizes":          {"thread_id text not null", "bytes bigint not null"},
	"graph_tenants":        {"name text not null"},
	"graph_thread_tenants": {"thread_id text not null", "tenant text not null"},
}

const versionTable = "rewind_schema_migrations"

// afterMigration is what a migration does in Go after its statements, in
// its transaction.
var afterMigration = map[int]func(context.Context, *pgx.Conn) error{
	9:  indexMessages,
	13: likeCheckpoints("graph_sizes"),
}

// likeCheckpoints gives a table a migration made the privileges and the
// tenant policy graph_checkpoints has: every put writes graph_sizes, so a
// tenant's role granted "all tables" before it existed (rowsecurity.sql)
// would be refused at its next write, or, if it could write, unbound by
// a policy. Both are copied only where they are: a store without roles or
// row security is left as it is.
func likeCheckpoints(table string) func(context.Context, *pgx.Conn) error {
	return func(ctx context.Context, conn *pgx.Conn) error {
		rows, err := conn.Query(ctx, `select format('grant %s on `+table+` to %I', string_agg(g.privilege_type, ', '), g.grantee)
from information_schema.role_table_grants g join pg_class c on c.oid = 'graph_checkpoints'::regclass
where g.table_schema = (select nspname from pg_namespace where oid = c.relnamespace) and g.table_name = 'graph_checkpoints'
  and g.grantee <> pg_get_userbyid(c.relowner) and g.privilege_type in ('SELECT', 'INSERT', 'UPDATE', 'DELETE')
group by g.grantee order by g.grantee`)
		if err != nil {
			return fmt.Errorf("read who may use graph_checkpoints: %w", err)
		}
		grants, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return fmt.Errorf("read who may use graph_checkpoints: %w", err)
		}
		for _, g := range grants {
			if _, err := conn.Exec(ctx, g); err != nil {
				return fmt.Errorf("%s: %w", g, err)
			}
		}
		var secured bool
		if err := conn.QueryRow(ctx, `select relrowsecurity and exists (select from pg_policy where polrelid = c.oid and polname = 'rewind_tenant')
from pg_class c where c.oid = 'graph_checkpoints'::regclass`).Scan(&secured); err != nil {
			return fmt.Errorf("read graph_checkpoints' row security: %w", err)
		}
		if !secured {
			return nil
		}
		for _, stmt := range []string{
			"alter table " + table + " enable row level security",
			"create policy rewind_tenant on " + table + " using (rewind_thread_tenant(thread_id) = current_user) with check (rewind_thread_tenant(thread_id) = current_user)",
		} {
			if _, err := conn.Exec(ctx, stmt); err != nil {
				return fmt.Errorf("%s (as rowsecurity.sql does): %w", stmt, err)
			}
		}
		return nil
	}
}

// indexMessages fills graph_messages.words (migration 9, Store.Search) for
// the messages stored before it: their store.BodyWords, which no SQL
// function of the server computes. By the primary key, a page at a time.
func indexMessages(ctx context.Context, conn *pgx.Conn) error {
	const page = 500
	thread, hash := "", ""
	for {
		rows, err := conn.Query(ctx, `select thread_id, hash, body from graph_messages
where (thread_id, hash) > ($1, $2) order by thread_id, hash limit $3`, thread, hash, page)
		if err != nil {
			return err
		}
		var threads, hashes, words []string
		for rows.Next() {
			var body []byte
			if err := rows.Scan(&thread, &hash, &body); err != nil {
				rows.Close()
				return err
			}
			threads, hashes, words = append(threads, thread), append(hashes, hash), append(words, strings.Join(store.BodyWords(body), " "))
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if len(threads) == 0 {
			return nil
		}
		if _, err := conn.Exec(ctx, `update graph_messages m set words = array_to_tsvector(string_to_array(u.words, ' '))
from unnest($1::text[], $2::text[], $3::text[]) as u(thread_id, hash, words)
where m.thread_id = u.thread_id and m.hash = u.hash`, threads, hashes, words); err != nil {
			return err
		}
		if len(threads) < page {
			return nil
		}
	}
}

// The two-int advisory lock key that serialises migrations across
// processes: 'rwnd' and 1.
const migrateLockKey1, migrateLockKey2 = 0x72776e64, 1

// migrate applies the pending migrations, each in its own transaction
// under a transaction advisory lock, so that processes opening the same
// database at once apply each migration exactly once.
func (s *Store) migrate(ctx context.Context) error {
	pc, err := s.pool.Acquire(ctx)
	if err != nil {
		return s.target.connectError(ctx, err)
	}
	defer pc.Release()
	conn := pc.Conn()
	if s.current(ctx, conn) {
		return nil
	}
	if err := s.readPrivileges(ctx, conn); err != nil {
		return err
	}
	if p := s.who(ctx); !p.usage && p.owner != "" {
		return s.invisible(ctx)
	}
	for {
		more, err := s.migrateStep(ctx, conn)
		if err != nil {
			return err
		}
		if !more {
			break
		}
	}
	return s.checkColumns(ctx, conn)
}

// current says, in one round trip, whether the schema is visible, at the
// newest version and has rewind's columns: the common open, which then
// needs no transaction, lock or privileges. Anything else, an error
// included, is for the slow path to decide and word.
func (s *Store) current(ctx context.Context, conn *pgx.Conn) bool {
	// The version query comes last: on a database without the version
	// table it fails, and the server skips what follows it.
	var b pgconn.Batch
	b.ExecParams(columnsSQL(), nil, nil, nil, nil)
	b.ExecParams(`select coalesce(max(version), 0) from `+versionTable, nil, nil, nil, nil)
	res, err := conn.PgConn().ExecBatch(ctx, &b).ReadAll()
	if err != nil || len(res) != 2 || len(res[1].Rows) != 1 || string(res[1].Rows[0][0]) != strconv.Itoa(len(migrations())) {
		return false
	}
	got := map[string][]string{}
	for _, row := range res[0].Rows { // relname, relkind, attname, type, attnotnull
		if string(row[1]) != "r" {
			return false
		}
		col := string(row[2]) + " " + string(row[3])
		if string(row[4]) == "t" {
			col += " not null"
		}
		got[string(row[0])] = append(got[string(row[0])], col)
	}
	for name, want := range ownTables {
		if !slices.Equal(got[name], want) {
			return false
		}
	}
	return true
}

// columnsSQL reads the columns of rewind's tables, as checkColumns does.
// On a new session most of a catalog query's cost is planning it: this
// one has no concatenation, aggregate or subquery (~2 ms less than
// checkColumns' there).
var columnsSQL = sync.OnceValue(func() string {
	regs := make([]string, 0, len(ownTables))
	for _, name := range slices.Sorted(maps.Keys(ownTables)) {
		regs = append(regs, "to_regclass('"+name+"')")
	}
	return `select c.relname, c.relkind, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull
from pg_attribute a join pg_class c on c.oid = a.attrelid
where a.attrelid = any(array[` + strings.Join(regs, ", ") + `]) and a.attnum > 0 and not a.attisdropped
order by a.attrelid, a.attnum`
})

// execExt runs one statement without parameters on the extended protocol
// (pgx would switch to the simple protocol for a parameterless Exec).
func execExt(ctx context.Context, conn *pgx.Conn, sql string) error {
	return conn.PgConn().ExecParams(ctx, sql, nil, nil, nil, nil).Read().Err
}

// migrateStep applies the next pending migration, if any, in one
// transaction, and says whether it did.
func (s *Store) migrateStep(ctx context.Context, conn *pgx.Conn) (applied bool, err error) {
	if err := execExt(ctx, conn, "begin"); err != nil {
		return false, s.target.wrap(s.db(err), "cannot migrate the store schema")
	}
	defer func() {
		if !applied {
			// Also ends a transaction that is in error.
			_ = execExt(context.WithoutCancel(ctx), conn, "rollback")
		}
	}()
	if _, err := conn.Exec(ctx, `select pg_advisory_xact_lock($1, $2)`, migrateLockKey1, migrateLockKey2); err != nil {
		return false, s.target.wrap(s.db(err), "cannot migrate the store schema: waiting for other processes")
	}

	var hasVersions bool
	var present []string
	names := slices.Sorted(maps.Keys(ownTables))
	if err := conn.QueryRow(ctx, `
select to_regclass($1) is not null,
       coalesce(array(select t from unnest($2::text[]) t where to_regclass(t) is not null), '{}')`,
		versionTable, names).Scan(&hasVersions, &present); err != nil {
		return false, s.target.wrap(s.db(err), "cannot migrate the store schema")
	}

	current := 0
	if hasVersions {
		if err := conn.QueryRow(ctx, `select coalesce(max(version), 0) from `+versionTable).Scan(&current); err != nil {
			var pgErr *pgconn.PgError
			if errors.As(err, &pgErr) && pgErr.Code == "42501" { // a table of rewind's this user may not read
				return false, fmt.Errorf("postgres store: %s: cannot read the store schema version: %w", s.target, s.deniedError(ctx, pgErr))
			}
			if errors.As(err, &pgErr) && strings.HasPrefix(pgErr.Code, "42") { // wrong columns or types
				return false, fmt.Errorf("postgres store: %s has a table %s that rewind did not create (%s); refusing to touch it: point rewind at an empty database: %w",
					s.target, versionTable, pgErr.Message, ErrForeignSchema)
			}
			return false, s.target.wrap(s.db(err), "cannot read the store schema version")
		}
	}
	if current == 0 && len(present) > 0 {
		return false, fmt.Errorf("postgres store: %s already has table %s, which rewind did not create (no schema version recorded in %s); refusing to touch it: point rewind at an empty database or another schema: %w",
			s.target, strings.Join(present, ", "), versionTable, ErrForeignSchema)
	}
	if current > len(migrations()) {
		return false, fmt.Errorf("postgres store: %s has store schema version %d, but this rewind knows versions up to %d; upgrade rewind (a schema is never downgraded): %w",
			s.target, current, len(migrations()), ErrSchemaTooNew)
	}
	if current == len(migrations()) {
		return false, nil
	}

	if !hasVersions {
		if err := execExt(ctx, conn, `create table `+versionTable+` (
  version    integer     primary key,
  name       text        not null,
  applied_at timestamptz not null default now()
)`); err != nil {
			return false, s.migrationError(ctx, err, "create "+versionTable, current)
		}
	}
	m := migrations()[current]
	for _, stmt := range m.statements {
		if err := execExt(ctx, conn, stmt); err != nil {
			return false, s.migrationError(ctx, err, m.name, current)
		}
	}
	if then := afterMigration[m.version]; then != nil {
		if err := then(ctx, conn); err != nil {
			return false, s.migrationError(ctx, err, m.name, current)
		}
	}
	if _, err := conn.Exec(ctx, `insert into `+versionTable+` (version, name) values ($1, $2)`, m.version, m.name); err != nil {
		return false, s.migrationError(ctx, err, m.name, current)
	}
	if err := execExt(ctx, conn, "commit"); err != nil {
		return false, s.migrationError(ctx, err, m.name, current)
	}
	return true, nil
}

// migrationError explains why migration name failed on a store at schema
// version current (0: a new one).
func (s *Store) migrationError(ctx context.Context, err error, name string, current int) error {
	var pgErr *pgconn.PgError
	p := s.who(ctx)
	if errors.As(err, &pgErr) && (pgErr.Code == "42501" || pgErr.Code == "3F000") { // refused, or no schema to create in
		if current == 0 && pgErr.Code == "3F000" {
			// No schema of the search_path exists, or none the user may
			// use: naming public (or any one schema) would be wrong.
			return &denied{err: pgErr, msg: fmt.Sprintf("postgres store: cannot create the store's tables in %s (%s: %s): the search_path (%s) names no schema that exists and user %s may use: create one (CREATE SCHEMA … AUTHORIZATION %s), have its owner run GRANT USAGE, CREATE ON SCHEMA … TO %s, or set search_path in the URL to a schema the user may create in",
				s.target, name, pgErr.Message, p.path, ident(p.user), ident(p.user), ident(p.user))}
		}
		if current == 0 {
			return &denied{err: pgErr, msg: fmt.Sprintf("postgres store: cannot create the store's tables in %s (%s: %s): user %s may not create tables in schema %s: use a database the user owns, or have the schema's owner run GRANT USAGE, CREATE ON SCHEMA %s TO %s",
				s.target, name, pgErr.Message, ident(p.user), ident(p.schemaOr()), ident(p.schemaOr()), ident(p.user))}
		}
		return &denied{err: pgErr, msg: fmt.Sprintf("postgres store: cannot apply store migration %s to %s (%s): user %s may not change rewind's tables: run rewind once as %s (the owner of rewind's tables) to upgrade the store, then, as %s: %s",
			name, s.target, pgErr.Message, ident(p.user), ident(p.owner), ident(p.owner), p.grant())}
	}
	if errors.As(err, &pgErr) && pgErr.Code == "42P07" { // a table by a name a newer migration uses
		return fmt.Errorf("postgres store: %s already has a table that store migration %s would create (%s), which rewind did not create; refusing to touch it: rename or drop it: %w",
			s.target, name, pgErr.Message, ErrForeignSchema)
	}
	return s.target.wrap(s.db(err), "cannot apply store migration %s to %s", name, s.target)
}

// checkColumns refuses tables by rewind's names whose columns are not
// rewind's, e.g. made by hand with the version table copied over.
func (s *Store) checkColumns(ctx context.Context, conn *pgx.Conn) error {
	names := make([]string, 0, len(ownTables))
	for name := range ownTables {
		names = append(names, name)
	}
	rows, err := conn.Query(ctx, `
select c.relname, c.relkind::text,
       a.attname || ' ' || format_type(a.atttypid, a.atttypmod) || case when a.attnotnull then ' not null' else '' end
from pg_class c
join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
where c.oid in (select to_regclass(t) from unnest($1::text[]) t)
order by c.relname, a.attnum`, names)
	if err != nil {
		return s.target.wrap(s.db(err), "cannot check the store's tables")
	}
	got := map[string][]string{}
	for rows.Next() {
		var table, kind, col string
		if err := rows.Scan(&table, &kind, &col); err != nil {
			rows.Close()
			return s.target.wrap(s.db(err), "cannot check the store's tables")
		}
		if kind != "r" {
			col = "(not a table)"
		}
		got[table] = append(got[table], col)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return s.target.wrap(s.db(err), "cannot check the store's tables")
	}
	for _, name := range names {
		if len(got[name]) == 0 {
			return fmt.Errorf("postgres store: %s lacks table %s although %s says rewind created it; restore it from a backup or point rewind at an empty database: %w",
				s.target, name, versionTable, ErrForeignSchema)
		}
		if !slices.Equal(got[name], ownTables[name]) {
			return fmt.Errorf("postgres store: %s has a %s that is not rewind's: columns %q, want %q; refusing to use it: point rewind at an empty database: %w",
				s.target, name, got[name], ownTables[name], ErrForeignSchema)
		}
	}
	return nil
}
