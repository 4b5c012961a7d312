package langgraph_test

import (
	"github.com/jackc/pgx/v5/pgxpool"

	"context"
	"crypto/sha256"
	"database/sql"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"rewind/store/langgraph"
	"rewind/store/langgraph/lgtest"
)

// files lists a directory with each file's digest.
func files(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][32]byte{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = sha256.Sum256(b)
	}
	return out
}

// toWAL switches a file to WAL mode, as a LangGraph app that set it
// leaves it once closed: no -wal, no -shm.
func toWAL(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`PRAGMA journal_mode=WAL`); err != nil {
		t.Fatal(err)
	}
}

func TestSQLiteCannotBeWritten(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, c := range []struct {
		name string
		wal  bool
	}{{"sqlite-python.db", false}, {"sqlite-js.db", false}, {"sqlite-python.db", true}} {
		name := c.name
		t.Run(fmt.Sprintf("%s wal %t", name, c.wal), func(t *testing.T) {
			path := lgtest.Copy(t, name)
			if c.wal {
				toWAL(t, path)
			}
			before := files(t, filepath.Dir(path))
			src, err := langgraph.Open(ctx, "sqlite:"+path)
			if err != nil {
				t.Fatal(err)
			}
			if a := src.About(); !a.ReadOnly || a.Status() != "LangGraph database, read-only" || a.Backend != "sqlite" {
				t.Errorf("about %+v, status %q", a, a.Status())
			}
			// Read everything once.
			ts, err := src.Threads(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, th := range ts {
				for _, ns := range th.Namespaces {
					c := langgraph.Chain{Thread: th.ID, NS: ns.NS}
					h, err := src.History(ctx, c, "", 0)
					if err != nil {
						t.Fatal(err)
					}
					for _, l := range h {
						if _, err := src.Checkpoint(ctx, c, l.ID); err != nil {
							t.Fatal(err)
						}
						if _, err := src.Writes(ctx, c, l.ID); err != nil {
							t.Fatal(err)
						}
					}
				}
			}
			db, _ := langgraph.Handles(src)
			for _, stmt := range []string{
				`INSERT INTO writes VALUES ('t-main', '', 'x', 'x', 0, 'c', 'null', NULL)`,
				`DELETE FROM checkpoints`,
				`UPDATE checkpoints SET metadata = '{}'`,
				`CREATE TABLE rewind_store_schema (version INTEGER)`,
				`PRAGMA user_version = 7`,
			} {
				if _, err := db.ExecContext(ctx, stmt); err == nil {
					t.Errorf("%s went through the read-only handle", stmt)
				}
			}
			if err := src.Close(); err != nil {
				t.Fatal(err)
			}
			after := files(t, filepath.Dir(path))
			if len(after) != len(before) || after[name] != before[name] {
				t.Errorf("the directory changed: %v before, %v after, the database's bytes the same: %t", keys(before), keys(after), after[name] == before[name])
			}
		})
	}
}

func keys(m map[string][32]byte) []string {
	return slices.Sorted(maps.Keys(m))
}

// A LangGraph app writing while rewind reads: its newest commits are in
// the WAL, which the read-only connection reads (a follow mode polls).
func TestSQLiteReadsCommitsStillInTheWAL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newLGFile(t)
	if _, err := f.db.Exec(`PRAGMA journal_mode=WAL`); err != nil {
		t.Fatal(err)
	}
	if _, err := f.db.Exec(`PRAGMA wal_autocheckpoint=0`); err != nil {
		t.Fatal(err)
	}
	add := func(n int) {
		parent := ""
		if n > 1 {
			parent = id(n - 1)
		}
		f.checkpoint("live", "", id(n), parent, "msgpack",
			cp4(t, id(n), map[string]any{"count": n}, map[string]any{"count": n}, map[string]any{}), meta("loop", n))
	}
	add(1)
	add(2)
	src := open(t, "sqlite:"+f.path)
	if h := history(t, src, langgraph.Chain{Thread: "live"}); len(h) != 2 {
		t.Fatalf("%d checkpoints, want 2", len(h))
	}
	add(3) // committed by the writer, not yet checkpointed into the file
	if fi, err := os.Stat(f.path + "-wal"); err != nil || fi.Size() == 0 {
		t.Fatalf("the commits should wait in the WAL: %v", err)
	}
	h := history(t, src, langgraph.Chain{Thread: "live"})
	if len(h) != 3 || h[0].ID != id(3) || h[0].Parent != id(2) {
		t.Fatalf("history %+v, want the third checkpoint, read from the WAL", h)
	}
	cp, err := src.Checkpoint(ctx, langgraph.Chain{Thread: "live"}, "")
	if v, _ := cp.Value("count"); err != nil || v != int64(3) {
		t.Errorf("latest count %v (%v), want 3", v, err)
	}

	// The app stops (its WAL folded in and gone), rewind opens the file
	// alone, then the app starts again and writes.
	if err := src.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.db.Close(); err != nil {
		t.Fatal(err)
	}
	if exists(f.path + "-wal") {
		t.Fatal("the writer left its WAL")
	}
	src = open(t, "sqlite:"+f.path)
	if h := history(t, src, langgraph.Chain{Thread: "live"}); len(h) != 3 {
		t.Fatalf("%d checkpoints, want 3", len(h))
	}
	f = reopen(t, f.path)
	add(4)
	if h := history(t, src, langgraph.Chain{Thread: "live"}); len(h) != 4 || h[0].ID != id(4) {
		t.Fatalf("history %+v, want the fourth checkpoint the restarted app wrote", h)
	}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func TestPostgresCannotBeWritten(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbURL := lgtest.Dump(t, "postgres-python.sql")
	src := open(t, dbURL)
	if a := src.About(); !a.ReadOnly || a.Status() != "LangGraph database, read-only" || a.Backend != "postgres" || !strings.Contains(a.Schema, "0–9") {
		t.Errorf("about %+v", a)
	}
	count := func() (n int) {
		_, pool := langgraph.Handles(src)
		if err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM checkpoints) + (SELECT count(*) FROM checkpoint_writes) + (SELECT count(*) FROM checkpoint_blobs)`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := count()
	_, pool := langgraph.Handles(src)
	for _, stmt := range []string{
		`INSERT INTO checkpoint_writes VALUES ('t-main', '', 'x', 'x', 0, 'c', 'null', '\x', '')`,
		`DELETE FROM checkpoints`,
		`DROP TABLE checkpoint_blobs`,
		`CREATE TABLE rewind_schema_migrations (v int)`,
	} {
		_, err := pool.Exec(ctx, stmt)
		if err == nil || !strings.Contains(err.Error(), "read-only transaction") {
			t.Errorf("%s through the reader's pool: %v, want refused in a read-only transaction", stmt, err)
		}
	}
	if after := count(); after != before {
		t.Errorf("%d rows before, %d after", before, after)
	}
	if h := history(t, src, tMain); !slices.ContainsFunc(h, func(l langgraph.Listing) bool { return l.Source == "update" }) {
		t.Errorf("the history lost its update")
	}
}

// A snapshot is read only with JIT off whether the reader has a pool of
// its own or reads on the one rewind's store opened for the detection
// (a read command's one session).
func TestPostgresSnapshotsAreReadOnlyWithoutJIT(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbURL := lgtest.Dump(t, "postgres-python.sql")
	pool, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	d, err := langgraph.DetectPostgres(ctx, dbURL, pool)
	if err != nil {
		pool.Close()
		t.Fatal(err)
	}
	on, err := langgraph.OpenPostgresOn(ctx, d, pool)
	if err != nil {
		t.Fatal(err)
	}
	defer on.Close()
	for name, src := range map[string]langgraph.Source{"own pool": open(t, dbURL), "store's pool": on} {
		for setting, want := range map[string]string{"transaction_read_only": "on", "jit": "off", "plan_cache_mode": "auto"} {
			if got, err := langgraph.SnapshotSetting(ctx, src, setting); err != nil || got != want {
				t.Errorf("%s: a snapshot's %s is %q (%v), want %s", name, setting, got, err, want)
			}
		}
	}
}
