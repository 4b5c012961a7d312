package langgraph_test

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"rewind/store/langgraph"
	"rewind/store/langgraph/lgtest"
	"rewind/store/postgres"
	"rewind/store/postgres/pgtest"
	"rewind/store/sqlite"
)

func TestDetectSQLite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	write := func(name, ddl string) string {
		path := filepath.Join(dir, name)
		db, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.Exec(ddl); err != nil {
			t.Fatal(err)
		}
		return path
	}
	rewindStore := filepath.Join(dir, "rewind.db")
	st, err := sqlite.Open(ctx, rewindStore)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	text := filepath.Join(dir, "notes.db")
	if err := os.WriteFile(text, []byte("these are notes, not a database, but long enough to look like one......................................................."), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, spec string
		kind       string
		err        string // "" for none; ErrNeither is checked when it says "neither"
	}{
		{"a Python SqliteSaver file", "sqlite:" + lgtest.Copy(t, "sqlite-python.db"), langgraph.KindLangGraph, ""},
		{"a LangGraph.js file named .db", lgtest.Copy(t, "sqlite-js.db"), langgraph.KindLangGraph, ""},
		{"a rewind store", "sqlite:" + rewindStore, langgraph.KindRewind, ""},
		{"a missing file (rewind makes a store)", "sqlite:" + filepath.Join(dir, "new.db"), langgraph.KindRewind, ""},
		{"an empty file", "sqlite:" + empty, langgraph.KindRewind, ""},
		{"an empty database", "sqlite:" + write("blank.db", "PRAGMA user_version = 1"), langgraph.KindRewind, ""},
		{"another app's database", "sqlite:" + write("other.db", "CREATE TABLE users (id INTEGER); CREATE TABLE orders (id INTEGER)"), "", "neither: it has orders, users"},
		{"LangGraph before 0.2", "sqlite:" + write("old.db", "CREATE TABLE checkpoints (thread_id TEXT, thread_ts TEXT, parent_ts TEXT, checkpoint BLOB, metadata BLOB); CREATE TABLE writes (thread_id TEXT, thread_ts TEXT, task_id TEXT, idx INTEGER, channel TEXT, value BLOB)"), "", "before 0.2"},
		{"not a database", "sqlite:" + text, "", "not a SQLite database"},
		{"a directory", "sqlite:" + dir, "", "not a regular file"},
		{"memory", "memory:", langgraph.KindRewind, ""},
		{"nonsense", "mysql://x", "", "unknown store"},
		{"no file", "sqlite:", "", "names no file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, err := langgraph.Detect(ctx, c.spec)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(c.err, "neither: ")) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("Detect(%s) = %+v, %v; want one line containing %q", c.spec, d, err, c.err)
				}
				if strings.HasPrefix(c.err, "neither") && !errors.Is(err, langgraph.ErrNeither) {
					t.Errorf("%v does not match ErrNeither", err)
				}
				return
			}
			if err != nil || d.Kind != c.kind {
				t.Fatalf("Detect(%s) = %+v, %v; want kind %s", c.spec, d, err, c.kind)
			}
			if c.kind == langgraph.KindLangGraph && (d.Backend != "sqlite" || !strings.Contains(d.Schema, "checkpoints and writes")) {
				t.Errorf("detected %+v", d)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "new.db")); !os.IsNotExist(err) {
		t.Errorf("Detect made the missing file: %v", err)
	}
	for spec, why := range map[string]string{"sqlite:" + rewindStore: "is a rewind store", "sqlite:" + filepath.Join(dir, "new.db"): "does not exist",
		"sqlite:" + empty: "is an empty file", "memory:": "in-memory"} {
		if _, err := langgraph.Open(ctx, spec); err == nil || !strings.Contains(err.Error(), why+", not a LangGraph database") && !strings.Contains(err.Error(), why) {
			t.Errorf("Open(%s): %v, want it refused: %s", spec, err, why)
		}
	}
}

func TestDetectPostgres(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	admin := lgtest.Admin(t)
	exec := func(dbURL, sql string) {
		t.Helper()
		conn, err := pgx.Connect(ctx, dbURL)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	rewindDB := lgtest.NewDatabase(t, admin)
	st, err := postgres.Open(ctx, rewindDB)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	partial := lgtest.NewDatabase(t, admin)
	exec(partial, `CREATE TABLE checkpoints (thread_id text, checkpoint_ns text, checkpoint_id text, parent_checkpoint_id text, checkpoint jsonb, metadata jsonb)`)
	// PostgresSaver.setup() run up to its migration 1, then stopped.
	halfway := lgtest.NewDatabase(t, admin)
	exec(halfway, lgtest.HalfSetUp)
	started := lgtest.NewDatabase(t, admin)
	exec(started, `CREATE TABLE checkpoint_migrations (v INTEGER PRIMARY KEY)`)
	shallowHalf := lgtest.NewDatabase(t, admin)
	exec(shallowHalf, lgtest.ShallowDDL[0]+lgtest.ShallowDDL[1]+`INSERT INTO checkpoint_migrations VALUES (0), (1)`)
	shallow := lgtest.NewDatabase(t, admin)
	exec(shallow, strings.Join(lgtest.ShallowDDL, ""))
	other := lgtest.NewDatabase(t, admin)
	exec(other, `CREATE TABLE checkpoints (id serial, body text); CREATE TABLE checkpoint_blobs (id int); CREATE TABLE checkpoint_writes (id int)`)
	cases := []struct {
		name, spec, kind, schema, err string
	}{
		{"Python's PostgresSaver", lgtest.Dump(t, "postgres-python.sql"), langgraph.KindLangGraph, "migrations 0–9, writes with task_path", ""},
		{"LangGraph.js's PostgresSaver", lgtest.Dump(t, "postgres-js.sql"), langgraph.KindLangGraph, "migrations 0–4", ""},
		{"a rewind store", rewindDB, langgraph.KindRewind, "", ""},
		{"an empty database", lgtest.NewDatabase(t, admin), langgraph.KindRewind, "", ""},
		{"some of LangGraph's tables", partial, "", "", "whose setup() stopped half way: it has checkpoints but not checkpoint_blobs, checkpoint_writes"},
		{"setup() stopped at migration 1", halfway, "", "", "PostgresSaver database whose setup() stopped half way: it has checkpoints, checkpoint_migrations (migrations 0–1) but not checkpoint_blobs, checkpoint_writes; run the saver's setup()"},
		{"setup() stopped after migration 0", started, "", "", "it has checkpoint_migrations (no migration recorded) but not checkpoints, checkpoint_blobs, checkpoint_writes"},
		{"ShallowPostgresSaver's setup() stopped", shallowHalf, "", "", "ShallowPostgresSaver database whose setup() stopped half way"},
		{"ShallowPostgresSaver", shallow, langgraph.KindLangGraph, "LangGraph ShallowPostgresSaver tables, migrations 0–7, writes with task_path", ""},
		{"tables of LangGraph's names, other columns", other, "", "", "neither a rewind store nor a LangGraph database: its table checkpoints is named like LangGraph's but lacks thread_id"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, err := langgraph.Detect(ctx, c.spec)
			if c.err != "" {
				if !errors.Is(err, langgraph.ErrNeither) || !strings.Contains(err.Error(), c.err) || strings.Contains(err.Error(), langgraph.ErrNeither.Error()) {
					t.Fatalf("Detect = %+v, %v; want ErrNeither saying %q", d, err, c.err)
				}
				return
			}
			if err != nil || d.Kind != c.kind || d.Backend != "postgres" || !strings.Contains(d.Schema, c.schema) || d.Shallow != strings.Contains(c.schema, "Shallow") {
				t.Fatalf("Detect = %+v, %v; want kind %s, schema with %q", d, err, c.kind, c.schema)
			}
			if c.kind == langgraph.KindLangGraph && strings.Contains(c.schema, "0–4") && strings.Contains(d.Schema, "task_path") {
				t.Errorf("LangGraph.js's writes have no task_path: %+v", d)
			}
		})
	}
	// A password never shows, not even in the error of a failed connect.
	u, _ := url.Parse(admin)
	u.User = url.UserPassword(u.User.Username(), "s3cret-pw")
	u.Host = "127.0.0.1:1"
	_, err = langgraph.Detect(ctx, u.String())
	if err == nil || strings.Contains(err.Error(), "s3cret-pw") || !strings.Contains(err.Error(), "xxxxx") {
		t.Errorf("a failed connect says %v: want the URL with its password masked", err)
	}
}

// Every command on PostgreSQL first tells a rewind store from a LangGraph
// database: on a rewind store that is two round trips on the connection
// the store then opens on (which tables it has, its schema version), and
// a remote server's latency times them (it was eight: a statement a table
// name, each prepared before its first run, and the version's).
func TestDetectingARewindStoreIsTwoRoundTrips(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	admin := lgtest.Admin(t)
	dbURL := lgtest.NewDatabase(t, admin)
	st, err := postgres.Open(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	cfg, err := pgxpool.ParseConfig(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	var writes, dials atomic.Int64
	pgtest.Counting(&writes, &dials)(cfg)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	c, err := pool.Acquire(ctx) // the connection, made as the store makes it
	if err != nil {
		t.Fatal(err)
	}
	c.Release()
	before := writes.Load()
	det, err := langgraph.DetectPostgres(ctx, dbURL, pool)
	if err != nil || det.Kind != langgraph.KindRewind || det.Rewind <= 0 {
		t.Fatalf("DetectPostgres = %+v, %v; want a rewind store with its schema version", det, err)
	}
	if rt := writes.Load() - before; rt != 2 {
		t.Errorf("telling a rewind store took %d round trips, want 2", rt)
	}
}
