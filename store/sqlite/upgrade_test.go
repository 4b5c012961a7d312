package sqlite_test

import (
	"bytes"
	"compress/gzip"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"rewind/store"
	"rewind/store/memory"
	"rewind/store/sqlite"
	"rewind/store/storetest"
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
	t.Parallel()
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
	wantCounted(t, threads, want)
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
	wantSizesCounted(t, s, want, "after the upgrade")

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
	wantSizesCounted(t, s, want, "after a put, a prune, a delete and a fence")
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

// wantSizesCounted: the running total of each thread's size (counted by
// the migration, then kept by the triggers) is what its rows count.
func wantSizesCounted(t *testing.T, s *sqlite.Store, threads map[string][]rawCheckpoint, when string) {
	t.Helper()
	for thread := range threads {
		storetest.WantSizeCounted(t, s, thread, when)
	}
}

// wantCounted: the migration counted the threads (graph_threads), with
// the newest checkpoint of each and its time.
func wantCounted(t *testing.T, threads []store.Thread, want map[string][]rawCheckpoint) {
	t.Helper()
	for _, th := range threads {
		rows := want[th.ID]
		if len(rows) == 0 || th.Checkpoints != len(rows) || th.LatestID != rows[0].id || th.UpdatedAt.UnixMicro() != rows[0].created {
			t.Errorf("Threads row of %s = %d checkpoints, latest %d at %d; want %d, the newest of its rows", th.ID, th.Checkpoints, th.LatestID, th.UpdatedAt.UnixMicro(), len(rows))
			continue
		}
		// The migration copied the newest listing into the row: a row
		// without meta lists with its state.
		l, r := th.Latest, rows[0]
		if l.ID != r.id || l.ParentID != r.parent || l.RerootedFrom != r.rerootedFrom || !l.Base || l.Meta != nil || !bytes.Equal(l.State, r.state) {
			t.Errorf("Threads' Latest of %s = @%d parent %d rerooted from %d base %v meta %q, %d state bytes; want @%d parent %d rerooted from %d, a base without meta, its %d state bytes",
				th.ID, l.ID, l.ParentID, l.RerootedFrom, l.Base, l.Meta, len(l.State), r.id, r.parent, r.rerootedFrom, len(r.state))
		}
	}
}

// TestStateLastInRecord pins the layout the listing relies on: SQLite
// reaches a column past a large value only by reading the value's
// overflow pages, so every small column comes before state and rebased.
func TestStateLastInRecord(t *testing.T) {
	t.Parallel()
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

// TestUpgradeKeepsMessages opens files of every schema that held messages
// (5 to 8 in graph_messages, 9 in graph_message_bodies), written as those
// stores wrote them: after the upgrade to their rows clustered by index
// (schema 9) and indexed for search (schema 10) every read of them,
// Search included, gives what the memory store gives for the same puts,
// and so do new puts on top (a hash stored already keeps its first row)
// and a thread deleted and written again.
func TestUpgradeKeepsMessages(t *testing.T) {
	t.Parallel()
	type put struct {
		cp   store.Checkpoint
		msgs []store.Message
	}
	message := func(n, idx int) store.Message {
		body := fmt.Appendf(nil, `{"role":"user","content":"message %d"}`, n)
		return store.Message{Hash: store.ContentHash(body), Index: int64(idx), Body: body}
	}
	var puts []put
	for _, thread := range []string{"t", "u"} {
		for id := int64(1); id <= 3; id++ {
			p := put{cp: store.Checkpoint{ThreadID: thread, ID: id, ParentID: id - 1, Base: true, State: fmt.Appendf(nil, `{"step":%d}`, id),
				CreatedAt: time.UnixMicro(1_700_000_000_000_000 + id).UTC()}}
			for i := range 6 {
				// Hashes again at other indexes, several messages an index,
				// and "u" sharing some of "t"'s.
				p.msgs = append(p.msgs, message((int(id)*5+i)%9, int(id)*2+i%3))
			}
			puts = append(puts, p)
		}
	}
	for from := 5; from < sqlite.SchemaVersion; from++ {
		t.Run(fmt.Sprint("from ", from), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "old.db")
			var old strings.Builder
			fmt.Fprintf(&old, "CREATE TABLE rewind_store_schema (version INTEGER NOT NULL); %s; INSERT INTO rewind_store_schema (version) VALUES (%d);\n",
				strings.Join(sqlite.Migrations[:from], "\n"), from)
			ctx := t.Context()
			ref := memory.New()
			for _, p := range puts {
				cp := p.cp
				cp.Messages = p.msgs
				if err := ref.PutCheckpoint(ctx, cp, nil); err != nil {
					t.Fatal(err)
				}
				fmt.Fprintf(&old, "INSERT INTO graph_checkpoints (thread_id, checkpoint_id, parent_id, state, created_at) VALUES ('%s', %d, %s, '%s', %d);\n",
					cp.ThreadID, cp.ID, map[bool]string{true: "NULL", false: fmt.Sprint(cp.ParentID)}[cp.ParentID == 0], cp.State, cp.CreatedAt.UnixMicro())
				for _, m := range p.msgs { // as the old stores put them: the first row of a hash stays
					fmt.Fprintf(&old, "INSERT OR IGNORE INTO %s (thread_id, checkpoint_id, created_at, hash, idx, body) VALUES ('%s', %d, %d, '%s', %d, '%s');\n",
						map[bool]string{true: "graph_messages", false: "graph_message_bodies"}[from < 9], cp.ThreadID, cp.ID, cp.CreatedAt.UnixMicro(), m.Hash, m.Index, m.Body)
				}
			}
			exec1(t, path, old.String())
			s := open(t, path)
			agree := func(when string) {
				t.Helper()
				for _, thread := range []string{"t", "u"} {
					var hashes []string
					for i := range 9 {
						hashes = append(hashes, message(i, 0).Hash)
					}
					hashes = append(hashes, "0123456789abcdef0123", hashes[0]) // unknown, and again
					sortMsgs := func(ms []store.Message) []store.Message {
						slices.SortFunc(ms, func(a, b store.Message) int { return strings.Compare(a.Hash, b.Hash) })
						return ms
					}
					got, err1 := s.Messages(ctx, thread, hashes)
					want, err2 := ref.Messages(ctx, thread, hashes)
					if err := errors.Join(err1, err2); err != nil || !reflect.DeepEqual(sortMsgs(got), sortMsgs(want)) {
						t.Errorf("%s: Messages(%s): %v\n got %v\nwant %v", when, thread, err, got, want)
					}
					got, _, err1 = s.Bodies(ctx, thread, hashes, nil)
					if err1 != nil || !reflect.DeepEqual(sortMsgs(got), want) {
						t.Errorf("%s: Bodies(%s): %v\n got %v\nwant %v", when, thread, err1, got, want)
					}
					for idx := int64(0); idx <= 12; idx++ {
						got, err1 := s.MessagesAt(ctx, thread, idx)
						want, err2 := ref.MessagesAt(ctx, thread, idx)
						if err := errors.Join(err1, err2); err != nil || !reflect.DeepEqual(got, want) {
							t.Errorf("%s: MessagesAt(%s, %d): %v\n got %v\nwant %v", when, thread, idx, err, got, want)
						}
					}
					got, err1 = s.MessagesIn(ctx, thread, 3, 9)
					want, err2 = ref.MessagesIn(ctx, thread, 3, 9)
					if err := errors.Join(err1, err2); err != nil || !reflect.DeepEqual(got, want) || len(want) == 0 {
						t.Errorf("%s: MessagesIn(%s, 3, 9): %v\n got %v\nwant %v", when, thread, err, got, want)
					}
					for _, q := range []string{"message", "4", "mess 7", "user 2", "content"} {
						got, err1 := s.Search(ctx, thread, q, 0)
						want, err2 := ref.Search(ctx, thread, q, 0)
						if err := errors.Join(err1, err2); err != nil || !reflect.DeepEqual(got, want) || len(want) == 0 && q == "message" {
							t.Errorf("%s: Search(%s, %q): %v\n got %v\nwant %v", when, thread, q, err, got, want)
						}
					}
					n1, err1 := s.Size(ctx, thread)
					n2, err2 := ref.Size(ctx, thread)
					if err := errors.Join(err1, err2); err != nil || n1 != n2 {
						t.Errorf("%s: Size(%s) = %d, %v; want %d", when, thread, n1, err, n2)
					}
				}
			}
			agree("after the upgrade")
			// On top: hashes stored already, at new indexes, and new ones.
			next := store.Checkpoint{ThreadID: "t", ID: 4, ParentID: 3, Base: true, State: []byte(`{}`), CreatedAt: time.UnixMicro(1_800_000_000_000_000).UTC(),
				Messages: []store.Message{message(0, 11), message(4, 12), message(20, 12), message(21, 3)}}
			for _, st := range []store.Store{s, ref} {
				if err := st.PutCheckpoint(ctx, next, nil); err != nil {
					t.Fatal(err)
				}
			}
			agree("after a put on top")
			// Deleted, and written again: the old rows' hashes are forgotten.
			again := store.Checkpoint{ThreadID: "u", ID: 1, Base: true, State: []byte(`{}`), CreatedAt: time.UnixMicro(1_800_000_000_000_001).UTC(),
				Messages: []store.Message{message(1, 7), message(5, 8)}}
			for _, st := range []store.Store{s, ref} {
				if err := st.DeleteThread(ctx, "u"); err != nil {
					t.Fatal(err)
				}
				if err := st.PutCheckpoint(ctx, again, nil); err != nil {
					t.Fatal(err)
				}
			}
			agree("after a delete and a new put")
		})
	}
}
