package sqlite_test

import (
	"bytes"
	"compress/gzip"
	"database/sql"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"rewind/store"
	"rewind/store/sqlite"
)

// The store the previous release (schema 4) wrote with the scenarios of
// store/backend/testdata/upgrade/make.sh: forks, a paused thread, a draft,
// a run killed mid-superstep, a pruned thread.
const fixtureV4 = "../backend/testdata/upgrade/store-v4.db.gz"

// rawCheckpoint is a graph_checkpoints row as the old binary wrote it.
type rawCheckpoint struct {
	id, parent, rerootedFrom, created int64
	state                             []byte
}

// rawRows reads a store file with a plain connection, as another program
// would: every checkpoint by thread, and how many rows each other table
// holds per thread.
func rawRows(t *testing.T, path string) (map[string][]rawCheckpoint, map[string][4]int) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT thread_id, checkpoint_id, coalesce(parent_id, 0), coalesce(rerooted_from, 0), created_at, state
		FROM graph_checkpoints ORDER BY thread_id, checkpoint_id DESC`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cps := map[string][]rawCheckpoint{}
	for rows.Next() {
		var thread string
		var r rawCheckpoint
		if err := rows.Scan(&thread, &r.id, &r.parent, &r.rerootedFrom, &r.created, &r.state); err != nil {
			t.Fatal(err)
		}
		cps[thread] = append(cps[thread], r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	counts := map[string][4]int{}
	for i, table := range []string{"graph_writes", "graph_events", "graph_drafts", "graph_epochs"} {
		rows, err := db.Query(`SELECT thread_id, count(*) FROM ` + table + ` GROUP BY thread_id`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var thread string
			var n int
			if err := rows.Scan(&thread, &n); err != nil {
				t.Fatal(err)
			}
			c := counts[thread]
			c[i] = n
			counts[thread] = c
		}
		if err := closeRows(rows); err != nil {
			t.Fatal(err)
		}
	}
	return cps, counts
}

// rawInt reads one number from a store file with a plain connection.
func rawInt(t *testing.T, path, query string) int64 {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int64
	if err := db.QueryRow(query).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

func closeRows(rows *sql.Rows) error {
	err := rows.Err()
	if cerr := rows.Close(); err == nil {
		err = cerr
	}
	return err
}

// schemaOf lists a file's tables and indexes with their SQL, and the
// columns of graph_checkpoints in record order.
func schemaOf(t *testing.T, path string) []string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT type || ' ' || name || ': ' || coalesce(sql, '') FROM sqlite_schema
		UNION ALL SELECT 'column ' || cid || ' ' || name || ' ' || type || ' ' || "notnull" || ' ' || coalesce(dflt_value, '')
			FROM pragma_table_info('graph_checkpoints')
		ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := closeRows(rows); err != nil {
		t.Fatal(err)
	}
	return out
}

func gunzip(t *testing.T, from, to string) {
	t.Helper()
	f, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, zr); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestUpgradeReleaseV4 opens a file the previous release wrote: it is
// upgraded in place, every checkpoint reads as it was (a base, no meta),
// nothing else is lost, and the file ends up with the schema a new file
// gets.
func TestUpgradeReleaseV4(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store-v4.db")
	gunzip(t, fixtureV4, path)
	want, counts := rawRows(t, path)
	if len(want) == 0 {
		t.Fatal("the fixture has no checkpoints")
	}
	maxEpoch := rawInt(t, path, `SELECT max(epoch) FROM graph_epochs`)
	if maxEpoch < 2 {
		t.Fatalf("the fixture's highest epoch is %d; want one above 1", maxEpoch)
	}

	s := open(t, path)
	ctx := t.Context()
	threads, err := s.Threads(ctx)
	if err != nil || len(threads) != len(want) {
		t.Fatalf("Threads = %d threads, %v; want %d", len(threads), err, len(want))
	}
	for thread, rows := range want {
		history, err := s.History(ctx, thread, 0, 0)
		if err != nil {
			t.Fatalf("History(%s): %v", thread, err)
		}
		if len(history) != len(rows) {
			t.Fatalf("History(%s) has %d rows, want %d", thread, len(history), len(rows))
		}
		for i, r := range rows {
			same := func(how string, cp store.Checkpoint, state []byte) {
				t.Helper()
				if cp.ID != r.id || cp.ParentID != r.parent || cp.RerootedFrom != r.rerootedFrom || cp.CreatedAt.UnixMicro() != r.created ||
					!bytes.Equal(state, r.state) || !cp.Base || cp.Meta != nil || cp.Rebased != nil || cp.BlobRefs != nil {
					t.Errorf("%s of %s@%d = id %d, parent %d, rerooted from %d, created %d, %d state bytes, base %v, meta %q, rebased %q, refs %q;"+
						" want parent %d, rerooted from %d, created %d, its %d state bytes, a base without meta",
						how, thread, r.id, cp.ID, cp.ParentID, cp.RerootedFrom, cp.CreatedAt.UnixMicro(), len(state), cp.Base, cp.Meta, cp.Rebased, cp.BlobRefs,
						r.parent, r.rerootedFrom, r.created, len(r.state))
				}
			}
			// A row without meta lists with its state.
			same("History", history[i], history[i].State)
			got, err := s.Get(ctx, thread, r.id)
			if err != nil {
				t.Fatalf("Get(%s, %d): %v", thread, r.id, err)
			}
			same("Get", got, got.State)
			chain, err := s.Chain(ctx, thread, r.id)
			if err != nil || len(chain) != 1 {
				t.Fatalf("Chain(%s, %d) = %v, %v; want the base alone", thread, r.id, idsOf(chain), err)
			}
			same("Chain", chain[0], chain[0].State)
		}
		ws, evs := 0, 0
		for _, r := range rows {
			w, err := s.Writes(ctx, thread, r.id)
			if err != nil {
				t.Fatal(err)
			}
			ws += len(w)
		}
		if all, err := s.Events(ctx, thread, 0); err != nil {
			t.Fatal(err)
		} else {
			evs = len(all)
		}
		drafts, err := s.ListDrafts(ctx, thread)
		if err != nil {
			t.Fatal(err)
		}
		if c := counts[thread]; ws != c[0] || evs != c[1] || len(drafts) != c[2] {
			t.Errorf("thread %s after the upgrade: %d writes, %d events, %d drafts; want %d, %d, %d", thread, ws, evs, len(drafts), c[0], c[1], c[2])
		}
		if n, err := s.Size(ctx, thread); err != nil || n <= int64(len(rows[0].state)) {
			t.Errorf("Size(%s) = %d, %v", thread, n, err)
		}
	}

	// New rows go on top of old ones: a delta with meta chains back to the
	// old base, and lists without its state.
	thread, rows := "forked", want["forked"]
	head := rows[0]
	delta := store.Checkpoint{ThreadID: thread, ID: head.id + 1, ParentID: head.id, State: []byte(`{"delta":1}`), Meta: []byte(`{"step":1}`)}
	if err := s.PutCheckpoint(ctx, delta, nil); err != nil {
		t.Fatalf("PutCheckpoint after the upgrade: %v", err)
	}
	chain, err := s.Chain(ctx, thread, delta.ID)
	if err != nil || !slices.Equal(idsOf(chain), []int64{delta.ID, head.id}) {
		t.Errorf("Chain of a new delta = %v, %v; want [%d %d]", idsOf(chain), err, delta.ID, head.id)
	}
	if h, err := s.History(ctx, thread, 0, 1); err != nil || len(h) != 1 || h[0].State != nil || string(h[0].Meta) != `{"step":1}` {
		t.Errorf("History of the new delta = %+v, %v; want its meta, no state", h, err)
	}
	if _, err := s.Prune(ctx, "pruned", []int64{want["pruned"][len(want["pruned"])-1].id}, nil); err != nil {
		t.Errorf("Prune of an old base: %v", err)
	}
	// The epoch counter starts above every epoch the old release handed
	// out: a thread deleted now and used again gets a higher one.
	if err := s.DeleteThread(ctx, "paused"); err != nil {
		t.Fatal(err)
	}
	if e, err := s.Fence(ctx, "paused"); err != nil || e != maxEpoch+1 {
		t.Errorf("Fence of a deleted old thread = %d, %v; want %d, above every old epoch", e, err, maxEpoch+1)
	}
	s.Close()

	fresh := filepath.Join(t.TempDir(), "fresh.db")
	open(t, fresh).Close()
	if got, want := schemaOf(t, path), schemaOf(t, fresh); !slices.Equal(got, want) {
		t.Errorf("the upgraded file's schema differs from a new file's:\n%q\nwant\n%q", got, want)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v int
	if err := db.QueryRow(`SELECT max(version) FROM rewind_store_schema`).Scan(&v); err != nil || v != sqlite.SchemaVersion {
		t.Errorf("schema version after the upgrade = %d, %v; want %d", v, err, sqlite.SchemaVersion)
	}
}

// TestStateLastInRecord pins the layout the listing relies on: SQLite
// reaches a column past a large value only by reading the value's
// overflow pages, so every small column comes before state and rebased.
func TestStateLastInRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rewind.db")
	open(t, path).Close()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT name FROM pragma_table_info('graph_checkpoints') ORDER BY cid`)
	if err != nil {
		t.Fatal(err)
	}
	var cols []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			t.Fatal(err)
		}
		cols = append(cols, c)
	}
	if err := closeRows(rows); err != nil {
		t.Fatal(err)
	}
	if n := len(cols); n < 2 || cols[n-2] != "state" || cols[n-1] != "rebased" || !slices.Contains(cols, "meta") {
		t.Errorf("graph_checkpoints columns = %v; want meta among the first, state and rebased last", cols)
	}
}
