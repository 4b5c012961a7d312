// Package lgtest gives tests outside store/langgraph the LangGraph
// fixtures (store/langgraph/testdata): copies of the SQLite files, and the
// PostgreSQL dumps loaded into databases of their own on the test server.
// Tests open copies, never the fixtures.
package lgtest

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"rewind/store/postgres/pgtest"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// Dir is store/langgraph/testdata.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "testdata")
}

// Copy copies the fixture name (sqlite-python.db, sqlite-js.db) into a
// temp dir of t's and returns its path.
func Copy(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(Dir(), name))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// Sum is the SHA-256 of the file at path: a test compares it before and
// after a read, which must not change a byte of the file.
func Sum(t testing.TB, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// Connect connects to the database at db, failing t when it cannot;
// done closes the connection. A helper called after every command closes
// it as it returns (defer done()), not at the test's end, so a long run
// does not hold one connection a call on the shared server.
func Connect(t testing.TB, db string) (c *pgx.Conn, done func()) {
	t.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	return c, func() { c.Close(ctx) }
}

// Admin is the admin URL of the test server; without it the test skips
// loudly, and fails under CI.
func Admin(t testing.TB) string {
	t.Helper()
	return pgtest.Admin(t)
}

// NewDatabase creates a database of its own on the test server, dropped
// when the test ends, and returns its URL.
func NewDatabase(t testing.TB, admin string) string {
	t.Helper()
	return pgtest.Fresh(t, "rewind_langgraph")
}

// Dump restores testdata/name, a plain pg_dump, into a new database of
// the test server (see Admin) and returns its URL. psql's backslash commands are not SQL; a COPY's
// rows (up to "\.") go through the COPY protocol.
func Dump(t testing.TB, name string) string {
	t.Helper()
	dump, err := os.ReadFile(filepath.Join(Dir(), name))
	if err != nil {
		t.Fatal(err)
	}
	return Load(t, name, dump)
}

// Load restores dump, a plain pg_dump, into a new database of the test
// server and returns its URL (see Dump); name names it in errors. The
// dump is restored once a test binary, into a template (pgtest.Template)
// that each test gets a copy of.
func Load(t testing.TB, name string, dump []byte) string {
	t.Helper()
	sum := sha256.Sum256(dump)
	tmpl := pgtest.Template(t, fmt.Sprintf("rewind_lg_%x", sum[:6]), func(ctx context.Context, dbURL string) error {
		return restore(ctx, dbURL, name, dump)
	})
	return pgtest.FreshFrom(t, "rewind_langgraph", tmpl)
}

// restore replays dump into the database at dbURL.
func restore(ctx context.Context, dbURL, name string, dump []byte) error {
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return fmt.Errorf("restore %s: %w", name, err)
	}
	defer conn.Close(ctx)
	var stmt, rows strings.Builder
	copying := ""
	sc := bufio.NewScanner(bytes.NewReader(dump))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case copying != "" && line == `\.`:
			if _, err := conn.PgConn().CopyFrom(ctx, strings.NewReader(rows.String()), copying); err != nil {
				return fmt.Errorf("restore %s: %s: %w", name, copying, err)
			}
			copying = ""
			rows.Reset()
		case copying != "":
			rows.WriteString(line + "\n")
		case strings.HasPrefix(line, `\`), strings.HasPrefix(line, "--"), stmt.Len() == 0 && strings.TrimSpace(line) == "":
		default:
			stmt.WriteString(line + "\n")
			if !strings.HasSuffix(strings.TrimSpace(line), ";") {
				continue
			}
			s := stmt.String()
			stmt.Reset()
			if strings.HasPrefix(s, "COPY ") && strings.Contains(s, "FROM stdin;") {
				copying = strings.TrimSuffix(strings.TrimSpace(s), ";")
				continue
			}
			if _, err := conn.Exec(ctx, s, pgx.QueryExecModeSimpleProtocol); err != nil {
				return fmt.Errorf("restore %s: %.200s: %w", name, s, err)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("restore %s: %w", name, err)
	}
	return nil
}

// ShallowDDL is LangGraph's ShallowPostgresSaver.setup() (langgraph-
// checkpoint-postgres, shallow.py's MIGRATIONS 0–7, the migrations it
// records at the end): one checkpoint per thread and namespace, its id
// inside the document; one blob per channel.
var ShallowDDL = []string{
	`CREATE TABLE IF NOT EXISTS checkpoint_migrations (v INTEGER PRIMARY KEY);`,
	`CREATE TABLE IF NOT EXISTS checkpoints (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '', type TEXT,
		checkpoint JSONB NOT NULL, metadata JSONB NOT NULL DEFAULT '{}', PRIMARY KEY (thread_id, checkpoint_ns));`,
	`CREATE TABLE IF NOT EXISTS checkpoint_blobs (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '', channel TEXT NOT NULL,
		type TEXT NOT NULL, blob BYTEA, PRIMARY KEY (thread_id, checkpoint_ns, channel));`,
	`CREATE TABLE IF NOT EXISTS checkpoint_writes (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '', checkpoint_id TEXT NOT NULL,
		task_id TEXT NOT NULL, idx INTEGER NOT NULL, channel TEXT NOT NULL, type TEXT, blob BYTEA NOT NULL,
		PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx));`,
	`CREATE INDEX IF NOT EXISTS checkpoints_thread_id_idx ON checkpoints(thread_id);`,
	`CREATE INDEX IF NOT EXISTS checkpoint_blobs_thread_id_idx ON checkpoint_blobs(thread_id);`,
	`CREATE INDEX IF NOT EXISTS checkpoint_writes_thread_id_idx ON checkpoint_writes(thread_id);`,
	`ALTER TABLE checkpoint_writes ADD COLUMN IF NOT EXISTS task_path TEXT NOT NULL DEFAULT '';
	INSERT INTO checkpoint_migrations SELECT generate_series(0, 7);`,
}

// HalfSetUp is what PostgresSaver.setup() leaves when it stops after its
// migration 1: the migrations table and checkpoints, no blobs, no writes.
const HalfSetUp = `CREATE TABLE checkpoint_migrations (v INTEGER PRIMARY KEY);
CREATE TABLE checkpoints (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '', checkpoint_id TEXT NOT NULL,
	parent_checkpoint_id TEXT, type TEXT, checkpoint JSONB NOT NULL, metadata JSONB NOT NULL DEFAULT '{}',
	PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id));
INSERT INTO checkpoint_migrations VALUES (0), (1);`

// Shallow makes the tables ShallowPostgresSaver would hold for the threads
// of dbURL, a PostgresSaver database (see Dump), in a schema "shallow" of
// the same database, and returns the URL that reads them (search_path
// shallow). As ShallowPostgresSaver stores them: each thread and
// namespace's newest checkpoint without its values (every value is a
// blob, one per channel: the one at the checkpoint's version; the values
// PostgresSaver keeps inline become "json" blobs), and the writes of that
// checkpoint and its parent.
func Shallow(t testing.TB, dbURL string) string {
	t.Helper()
	ctx := context.Background()
	conn, done := Connect(t, dbURL)
	defer done()
	stmts := append([]string{`CREATE SCHEMA shallow; SET search_path = shallow;`}, ShallowDDL...)
	stmts = append(stmts, `
CREATE TEMP TABLE newest AS SELECT DISTINCT ON (thread_id, checkpoint_ns) *
	FROM public.checkpoints ORDER BY thread_id, checkpoint_ns, checkpoint_id DESC;
INSERT INTO checkpoints (thread_id, checkpoint_ns, type, checkpoint, metadata)
	SELECT thread_id, checkpoint_ns, type, checkpoint - 'channel_values', metadata FROM newest;
INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, type, blob)
	SELECT bl.thread_id, bl.checkpoint_ns, bl.channel, bl.type, bl.blob
	FROM public.checkpoint_blobs bl JOIN newest n ON bl.thread_id = n.thread_id AND bl.checkpoint_ns = n.checkpoint_ns
		AND bl.version = n.checkpoint -> 'channel_versions' ->> bl.channel;
INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, type, blob)
	SELECT n.thread_id, n.checkpoint_ns, v.key, 'json', convert_to(v.value::text, 'UTF8')
	FROM newest n, jsonb_each(coalesce(n.checkpoint -> 'channel_values', '{}')) v;
INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob)
	SELECT w.thread_id, w.checkpoint_ns, w.checkpoint_id, w.task_id, w.task_path, w.idx, w.channel, w.type, w.blob
	FROM public.checkpoint_writes w JOIN newest n ON w.thread_id = n.thread_id AND w.checkpoint_ns = n.checkpoint_ns
		AND w.checkpoint_id IN (n.checkpoint_id, n.parent_checkpoint_id);`)
	for _, s := range stmts {
		if _, err := conn.Exec(ctx, s); err != nil {
			t.Fatalf("make the shallow tables: %.200s: %v", s, err)
		}
	}
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", "shallow")
	u.RawQuery = q.Encode()
	return u.String()
}

// Tables lists a database's tables (every schema but the system's) with
// their row counts and a digest of their rows: equal before and after a
// command that must not write.
func Tables(t testing.TB, db string) string {
	t.Helper()
	c, done := Connect(t, db)
	defer done()
	return tablesOn(t, c)
}

// Watched is one connection to a database that a test reads after every
// command it runs (Watch): one server session a test, not one a command.
type Watched struct{ c *pgx.Conn }

// Watch connects to db for the rest of t (closed as t ends, before the
// database's own clean-up), for a test that compares Tables after every
// command: the server's CPU in the suite is mostly sessions.
func Watch(t testing.TB, db string) *Watched {
	t.Helper()
	c, done := Connect(t, db)
	t.Cleanup(done)
	return &Watched{c}
}

// Tables is Tables of the watched database, on its connection.
func (w *Watched) Tables(t testing.TB) string {
	t.Helper()
	return tablesOn(t, w.c)
}

func tablesOn(t testing.TB, c *pgx.Conn) string {
	t.Helper()
	ctx := context.Background()
	rows, err := c.Query(ctx, `select table_schema, table_name from information_schema.tables
where table_schema not in ('pg_catalog', 'information_schema') order by 1, 2`)
	if err != nil {
		t.Fatal(err)
	}
	type table struct{ Schema, Name string }
	tables, err := pgx.CollectRows(rows, pgx.RowToStructByPos[table])
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tb := range tables {
		var n int
		var sum string
		q := fmt.Sprintf(`select count(*), md5(coalesce(string_agg(t::text, '|' order by t::text), '')) from %s t`, pgx.Identifier{tb.Schema, tb.Name}.Sanitize())
		if err := c.QueryRow(ctx, q).Scan(&n, &sum); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s.%s (%d rows, %s)", tb.Schema, tb.Name, n, sum))
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

// Counts lists a database's tables (every schema but the system's) with
// their row counts, in one query: cheap enough to ask after every command
// of a long run (Tables also compares the rows).
func Counts(t testing.TB, db string) string {
	t.Helper()
	c, done := Connect(t, db)
	defer done()
	return countsOn(t, c)
}

// Counts is Counts of the watched database, on its connection.
func (w *Watched) Counts(t testing.TB) string {
	t.Helper()
	return countsOn(t, w.c)
}

func countsOn(t testing.TB, c *pgx.Conn) string {
	t.Helper()
	ctx := context.Background()
	var out string
	if err := c.QueryRow(ctx, `select coalesce(string_agg(format('%s.%s (%s rows)', table_schema, table_name,
  (xpath('/row/n/text()', query_to_xml(format('select count(*) as n from %I.%I', table_schema, table_name), false, true, '')))[1]::text), ', ' order by table_schema, table_name), '')
from information_schema.tables where table_schema not in ('pg_catalog', 'information_schema')`).Scan(&out); err != nil {
		t.Fatal(err)
	}
	return out
}
