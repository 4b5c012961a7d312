package postgres

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"rewind/store"
	"rewind/store/memory"
)

// v4Dump is a pg_dump --inserts of a store written by the release before
// schema 5 (store/backend/testdata/upgrade/make.sh).
const v4Dump = "../backend/testdata/upgrade/store-pg-v4.sql.gz"

// loadDump runs a plain pg_dump file on dbURL, without psql's backslash
// commands (\restrict). The simple protocol takes the many statements at
// once, as psql would send them.
func loadDump(t *testing.T, dbURL, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var sql strings.Builder
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		if line := sc.Text(); !strings.HasPrefix(line, `\`) {
			sql.WriteString(line)
			sql.WriteByte('\n')
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.PgConn().Exec(ctx, sql.String()).ReadAll(); err != nil {
		t.Fatalf("load %s: %v", path, err)
	}
}

// A store written at schema 4 by the previous release upgrades in place:
// every checkpoint still reads, as a base without meta.
func TestUpgradeV4Dump(t *testing.T) {
	t.Parallel()
	dbURL := freshDB(t)
	loadDump(t, dbURL, v4Dump)
	if got := query(t, dbURL, `select max(version)::text from rewind_schema_migrations`); got[0] != "4" {
		t.Fatalf("the dump is at schema %s, want 4", got[0])
	}
	type row struct {
		thread string
		id     int64
		state  string
	}
	var want []row
	for _, line := range query(t, dbURL, `select json_build_array(thread_id, checkpoint_id, state::text)::text
from graph_checkpoints order by thread_id, checkpoint_id`) {
		var r row
		var cols []any
		if err := json.Unmarshal([]byte(line), &cols); err != nil {
			t.Fatal(err)
		}
		r.thread, r.id, r.state = cols[0].(string), int64(cols[1].(float64)), cols[2].(string)
		want = append(want, r)
	}
	if len(want) < 100 {
		t.Fatalf("the dump holds %d checkpoints, want the fixture's 108", len(want))
	}

	ctx := context.Background()
	s, err := Open(ctx, dbURL)
	if err != nil {
		t.Fatalf("Open of the v4 store: %v", err)
	}
	defer s.Close()
	if got := query(t, dbURL, `select max(version)::text from rewind_schema_migrations`); got[0] != fmt.Sprint(len(migrations())) {
		t.Fatalf("after Open the store is at schema %s, want %d", got[0], len(migrations()))
	}
	history := map[string]map[int64]store.Checkpoint{}
	for _, r := range want {
		if history[r.thread] == nil {
			h, err := s.History(ctx, r.thread, 0, 0)
			if err != nil {
				t.Fatalf("History(%s): %v", r.thread, err)
			}
			history[r.thread] = map[int64]store.Checkpoint{}
			for _, cp := range h {
				history[r.thread][cp.ID] = cp
			}
		}
		got, err := s.Get(ctx, r.thread, r.id)
		if err != nil {
			t.Fatalf("Get(%s, %d): %v", r.thread, r.id, err)
		}
		if !got.Base || len(got.Meta) != 0 || len(got.Rebased) != 0 || len(got.BlobRefs) != 0 || string(got.State) != r.state {
			t.Errorf("Get(%s, %d) = base %v, meta %q, rebased %q, refs %v, same state %v; want a base without meta holding its old state",
				r.thread, r.id, got.Base, got.Meta, got.Rebased, got.BlobRefs, string(got.State) == r.state)
		}
		h, ok := history[r.thread][r.id]
		if !ok || !h.Base || len(h.Meta) != 0 || string(h.State) != r.state || h.ParentID != got.ParentID || h.RerootedFrom != got.RerootedFrom {
			t.Errorf("History(%s) row %d = %+v (listed %v); want Get's row, with its state (it has no meta)", r.thread, r.id, h, ok)
		}
		chain, err := s.Chain(ctx, r.thread, r.id)
		if err != nil || len(chain) != 1 || chain[0].ID != r.id || string(chain[0].State) != r.state {
			t.Errorf("Chain(%s, %d) = %d rows, %v; want the one base", r.thread, r.id, len(chain), err)
		}
	}
	// And the upgraded store takes the new rows.
	th := want[len(want)-1]
	cp := store.Checkpoint{ThreadID: th.thread, ID: th.id + 1, ParentID: th.id, State: []byte(`{"delta":1}`), Meta: []byte(`{"step":1}`)}
	if err := s.PutCheckpoint(ctx, cp, nil); err != nil {
		t.Fatalf("PutCheckpoint of a delta after the upgrade: %v", err)
	}
	if chain, err := s.Chain(ctx, th.thread, cp.ID); err != nil || len(chain) != 2 || chain[1].ID != th.id {
		t.Errorf("Chain of the new delta = %d rows, %v; want it and its old base", len(chain), err)
	}
}

// PutCheckpoint's new parts in one statement: messages repeated within a
// put, bodies with \u0000 kept byte for byte, meta and rebased through the
// jsonb escapes.
func TestLongThreadDocuments(t *testing.T) {
	t.Parallel()
	s, _ := openFresh(t)
	ctx := context.Background()
	body := []byte(`{"index":1,  "text":"a\u0000b \ud800","n":1.50}`)
	m := store.Message{Hash: store.ContentHash(body), Index: 1, Body: body}
	blobBody := []byte(`"x\u0000y"`)
	b := store.Blob{Hash: store.ContentHash(blobBody), Body: blobBody}
	meta := []byte(`{"step":1,"why":"\u0000"}`)
	cp := store.Checkpoint{ThreadID: "t", ID: 1, State: []byte(`{}`), Base: true, Meta: meta,
		Messages: []store.Message{m, m}, Blobs: []store.Blob{b, b}, BlobRefs: []string{b.Hash, b.Hash}}
	if err := s.PutCheckpoint(ctx, cp, nil); err != nil {
		t.Fatalf("PutCheckpoint: %v", err)
	}
	if err := s.PutCheckpoint(ctx, cp, nil); err != nil {
		t.Fatalf("the same put again: %v", err)
	}
	got, err := s.Messages(ctx, "t", []string{m.Hash})
	if err != nil || len(got) != 1 || string(got[0].Body) != string(body) || got[0].Index != 1 || got[0].ThreadID != "t" {
		t.Fatalf("Messages = %+v, %v; want the body byte for byte", got, err)
	}
	blobs, err := s.Blobs(ctx, "t", []string{b.Hash})
	if err != nil || len(blobs) != 1 || string(blobs[0].Body) != string(blobBody) {
		t.Fatalf("Blobs = %+v, %v; want the body byte for byte", blobs, err)
	}
	g, err := s.Get(ctx, "t", 1)
	if err != nil || !decodesSame(t, g.Meta, meta) || !strings.Contains(string(g.Meta), `\u0000`) || !slices.Equal(g.BlobRefs, cp.BlobRefs) {
		t.Fatalf("Get = meta %s refs %v, %v", g.Meta, g.BlobRefs, err)
	}
	// A put without meta, and one with meta {}, differ from each other.
	put := func(id int64, meta string) error {
		c := store.Checkpoint{ThreadID: "t", ID: id, ParentID: 1, State: []byte(`{}`), Meta: []byte(meta)}
		return s.PutCheckpoint(ctx, c, nil)
	}
	if err := put(2, ""); err != nil {
		t.Fatal(err)
	}
	if err := put(2, "{}"); !errors.Is(err, store.ErrConflict) {
		t.Errorf("meta {} over none = %v, want ErrConflict", err)
	}
	if err := put(3, "{}"); err != nil {
		t.Fatal(err)
	}
	if err := put(3, ""); !errors.Is(err, store.ErrConflict) {
		t.Errorf("no meta over {} = %v, want ErrConflict", err)
	}
	res, err := s.Prune(ctx, "t", []int64{1}, []store.Rebase{
		{ID: 2, State: []byte(`{"r":"\u0000"}`), BlobRefs: []string{b.Hash}},
		{ID: 3, State: []byte(`{"r":3}`)},
	})
	if err != nil || res.Blobs != 0 {
		t.Fatalf("Prune = %+v, %v; want the blob kept by the rebase's refs", res, err)
	}
	g, err = s.Get(ctx, "t", 2)
	if err != nil || !strings.Contains(string(g.Rebased), `\u0000`) || !slices.Equal(g.BlobRefs, []string{b.Hash}) {
		t.Errorf("Get(2) after the rebase = rebased %s refs %v, %v", g.Rebased, g.BlobRefs, err)
	}
	if g, err := s.Get(ctx, "t", 3); err != nil || g.BlobRefs != nil {
		t.Errorf("Get(3) refs = %#v, %v; want none (a rebase without refs adds none)", g.BlobRefs, err)
	}
}

// Size follows memory.Store.Size's rule: documents already in the form
// jsonb prints give the same count in both stores.
func TestSizeMatchesMemory(t *testing.T) {
	t.Parallel()
	s, _ := openFresh(t)
	mem := memory.New()
	ctx := context.Background()
	body := []byte(`{"index": 1, "text": "hello"}`)
	blobBody := []byte(`"a blob"`)
	cp := store.Checkpoint{ThreadID: "th", ID: 1, State: []byte(`{"a": [1, 2]}`), Base: true, Meta: []byte(`{"step": 1}`),
		Messages: []store.Message{{Hash: store.ContentHash(body), Index: 1, Body: body}},
		Blobs:    []store.Blob{{Hash: store.ContentHash(blobBody), Body: blobBody}}, BlobRefs: []string{store.ContentHash(blobBody)}}
	cp2 := store.Checkpoint{ThreadID: "th", ID: 2, ParentID: 1, State: []byte(`{"d": 2}`)}
	events := []store.Event{{Type: "node.started", Payload: []byte(`{"node": "x"}`)}, {Type: "e"}}
	for _, st := range []store.Store{s, mem} {
		if err := st.PutCheckpoint(ctx, cp, events); err != nil {
			t.Fatal(err)
		}
		if err := st.PutCheckpoint(ctx, cp2, nil); err != nil {
			t.Fatal(err)
		}
		if err := st.PutWrites(ctx, store.TaskWrites{ThreadID: "th", CheckpointID: 2, TaskID: "task", Writes: []byte(`{"w": 1}`)}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Fence(ctx, "th"); err != nil {
			t.Fatal(err)
		}
		if _, _, err := st.(store.Drafts).CreateDraft(ctx, store.Draft{ThreadID: "th", OperationID: "op", Body: []byte(`{"to": "x"}`)}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Prune(ctx, "th", []int64{1}, []store.Rebase{{ID: 2, State: []byte(`{"whole": 2}`), BlobRefs: cp.BlobRefs}}); err != nil {
			t.Fatal(err)
		}
	}
	want, err := mem.Size(ctx, "th")
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Size(ctx, "th")
	if err != nil || got != want {
		t.Errorf("Size = %d, %v; the memory store counts %d", got, err, want)
	}
}

// Chain follows the primary key; History never reads a state that has
// meta: 300 states of 64 KB would take thousands of TOAST pages.
func TestPlans(t *testing.T) {
	t.Parallel()
	s, dbURL := openFresh(t)
	ctx := context.Background()
	big := fmt.Sprintf(`{"pad":%q}`, randomText(64<<10))
	for id := int64(1); id <= 300; id++ {
		cp := store.Checkpoint{ThreadID: "t", ID: id, ParentID: id - 1, State: []byte(big), Base: id%100 == 1, Meta: []byte(`{"step":1}`)}
		if err := s.PutCheckpoint(ctx, cp, nil); err != nil {
			t.Fatal(err)
		}
	}
	adminExec(t, dbURL, `analyze`)
	plan := strings.Join(query(t, dbURL, `explain `+chainSQL, "t", int64(250)), "\n")
	if !strings.Contains(plan, "graph_checkpoints_pkey") || strings.Contains(plan, "Seq Scan on graph_checkpoints") {
		t.Errorf("Chain does not follow the primary key:\n%s", plan)
	}
	// The transaction's own block counts are visible at once.
	toastPages := func(sql string) int64 {
		t.Helper()
		conn, err := pgx.Connect(ctx, dbURL)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		tx, err := conn.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(ctx)
		rows, err := tx.Query(ctx, sql, "t")
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for rows.Next() {
			n++
		}
		if rows.Close(); rows.Err() != nil || n != 300 {
			t.Fatalf("%d rows, %v", n, rows.Err())
		}
		var pages int64
		if err := tx.QueryRow(ctx, `select pg_stat_get_xact_blocks_fetched(reltoastrelid) from pg_class where oid = 'graph_checkpoints'::regclass`).Scan(&pages); err != nil {
			t.Fatal(err)
		}
		return pages
	}
	if all := toastPages(`select ` + checkpointCols + ` from graph_checkpoints g where thread_id = $1`); all < 1000 {
		t.Errorf("reading 300 states of 64 KB fetched %d TOAST pages: the test does not see TOAST reads", all)
	}
	if listed := toastPages(`select ` + listedCols + ` from graph_checkpoints where thread_id = $1`); listed != 0 {
		t.Errorf("History's columns fetched %d TOAST pages: a listing must not read states", listed)
	}
	start := time.Now()
	h, err := s.History(ctx, "t", 0, 0)
	if err != nil || len(h) != 300 {
		t.Fatal(len(h), err)
	}
	t.Logf("History of 300 checkpoints with 64 KB states: %v", time.Since(start))
}

func randomText(n int) string {
	const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := make([]byte, n)
	x := uint64(88172645463325252)
	for i := range b {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		b[i] = letters[x%uint64(len(letters))]
	}
	return string(b)
}

// BenchmarkLongThread: listing a thread whose rows have meta (the TUI's
// scrubber) and reading a delta chain back to its base.
func BenchmarkLongThread(b *testing.B) {
	s, _ := openFresh(b)
	ctx := context.Background()
	state := []byte(fmt.Sprintf(`{"pad":%q}`, randomText(8<<10)))
	meta := []byte(`{"step":7,"source":"loop","next":["executor","critic"],"writes":{"executor":["messages","subtasks"]},"tokens":412}`)
	for id := int64(1); id <= 1000; id++ {
		cp := store.Checkpoint{ThreadID: "t", ID: id, ParentID: id - 1, State: state, Meta: meta, Base: id%50 == 1}
		if err := s.PutCheckpoint(ctx, cp, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("History1k", func(b *testing.B) {
		for b.Loop() {
			if h, err := s.History(ctx, "t", 0, 0); err != nil || len(h) != 1000 {
				b.Fatal(len(h), err)
			}
		}
	})
	b.Run("Chain50", func(b *testing.B) {
		for b.Loop() {
			if c, err := s.Chain(ctx, "t", 1000); err != nil || len(c) != 50 {
				b.Fatal(len(c), err)
			}
		}
	})
	b.Run("Size", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.Size(ctx, "t"); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// A page of RecentThreads reads the index of (updated_at, thread_id)
// backward (migration 12) and stops at its limit: without it the server
// read every graph_threads row and sorted them, at every page.
func TestRecentThreadsPlan(t *testing.T) {
	t.Parallel()
	_, dbURL := openFresh(t)
	adminExec(t, dbURL, `insert into graph_threads (thread_id, checkpoints, latest_id, updated_at)
select 't' || i, 1, 1, timestamptz '2026-03-01 12:00:00Z' + i * interval '1 second' from generate_series(1, 5000) i`)
	adminExec(t, dbURL, `vacuum analyze graph_threads`)
	at := time.Date(2026, 3, 1, 12, 30, 0, 0, time.UTC)
	plan := strings.Join(query(t, dbURL, `explain `+recentThreadsSQL, at, "t1800", 40), "\n")
	if !regexp.MustCompile(`Limit[^\n]*\n[^\n]*Index (Only )?Scan Backward using graph_threads_updated`).MatchString(plan) || strings.Contains(plan, "Seq Scan on graph_threads") {
		t.Errorf("RecentThreads' page does not read graph_threads_updated backward to its limit (a Seq Scan reads every thread):\n%s", plan)
	}
}
