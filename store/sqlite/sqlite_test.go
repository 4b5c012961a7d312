package sqlite_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"rewind/cli/rewindbin"
	"rewind/store"
	"rewind/store/memory"
	"rewind/store/sqlite"
	"rewind/store/storetest"
)

func TestConformance(t *testing.T) {
	t.Parallel()
	storetest.Run(t, storetest.Backend{
		Open: func(t *testing.T) store.Store { return open(t, filepath.Join(t.TempDir(), "rewind.db")) },
		Caps: storetest.Capabilities,
		Fresh: func(t *testing.T) (store.Store, string) {
			path := filepath.Join(t.TempDir(), "rewind.db")
			return open(t, path), path
		},
		Reopen: func(ctx context.Context, path string) (store.Store, error) { return sqlite.Open(ctx, path) },
		// The children, another program's read among them (HoldRead), are
		// a build of storechild, not raced: with raced copies of this
		// binary the process tests took twice the CPU (17.4 s, not 9.0).
		Child: rewindbin.Tool(t, "rewind/store/sqlite/internal/storechild"),
		Leaks: leaks,
		// After writers were killed mid-write the file is whole.
		AfterKills: func(t *testing.T, path string) {
			db, err := sql.Open("sqlite", path)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			var check string
			if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
				t.Errorf("integrity_check = %q, %v", check, err)
			}
			var broken int
			if err := db.QueryRow(`SELECT count(*) FROM pragma_foreign_key_check`).Scan(&broken); err != nil || broken != 0 {
				t.Errorf("foreign_key_check: %d broken references, %v", broken, err)
			}
		},
	})
}

func BenchmarkStore(b *testing.B) {
	storetest.Bench(b, func(b *testing.B) store.Store { return open(b, filepath.Join(b.TempDir(), "rewind.db")) })
}

func open(tb testing.TB, path string) *sqlite.Store {
	tb.Helper()
	s, err := sqlite.Open(context.Background(), path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Error(err)
		}
	})
	return s
}

// cp is a whole state: a base.
func cp(id, parent int64) store.Checkpoint {
	return store.Checkpoint{ThreadID: "t", ID: id, ParentID: parent, State: fmt.Appendf(nil, `{"step":%d}`, id), Base: true}
}

func TestOpenCreatesPrivateDirectoryAndFile(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "state", "rewind")
	path := filepath.Join(dir, "rewind.db")
	s := open(t, path)
	if err := s.PutCheckpoint(t.Context(), cp(1, 0), nil); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]os.FileMode{dir: 0o700 | os.ModeDir, path: 0o600} {
		if fi, err := os.Stat(p); err != nil || fi.Mode() != want {
			t.Errorf("%s: mode %v, %v; want %v", p, fi.Mode(), err, want)
		}
	}
}

func TestOddPath(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "a b?c#d%20e", "x?y.db")
	s := open(t, path)
	if err := s.PutCheckpoint(t.Context(), cp(1, 0), nil); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
		t.Fatalf("the database is not at the given path: %v", err)
	}
	if _, err := open(t, path).Get(t.Context(), "t", 1); err != nil {
		t.Errorf("reopened store lost its checkpoint: %v", err)
	}
}

func TestOpenUnusablePath(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{filepath.Join(file, "rewind.db"), t.TempDir()} {
		s, err := sqlite.Open(t.Context(), path)
		if err == nil {
			s.Close()
			t.Fatalf("Open(%s) succeeded", path)
		}
		if !strings.Contains(err.Error(), path) {
			t.Errorf("error %q does not name the path", err)
		}
	}
}

// Files that are not rewind stores are refused and left byte for byte alone.
func TestOpenRefusesForeignFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	text := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(text, bytes.Repeat([]byte("not a database\n"), 100), 0o644); err != nil {
		t.Fatal(err)
	}
	foreign := filepath.Join(dir, "other.db")
	exec1(t, foreign, `CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO customers (name) VALUES ('ada')`)
	newer := filepath.Join(dir, "newer.db")
	open(t, newer).Close()
	exec1(t, newer, `UPDATE rewind_store_schema SET version = 99`)

	for _, tc := range []struct{ path, want string }{
		{text, "not a SQLite database"},
		{foreign, "not a rewind store"},
		{newer, fmt.Sprintf("written by a newer rewind (store schema 99, this binary knows %d); upgrade rewind", sqlite.SchemaVersion)},
	} {
		t.Run(filepath.Base(tc.path), func(t *testing.T) {
			before := snapshot(t, tc.path)
			s, err := sqlite.Open(t.Context(), tc.path)
			if err == nil {
				s.Close()
				t.Fatal("Open succeeded")
			}
			if !strings.Contains(err.Error(), tc.path) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q should name the file and say %q", err, tc.want)
			}
			if after := snapshot(t, tc.path); after != before {
				t.Errorf("Open changed the refused files:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
}

// snapshot describes the database file and any journal beside it.
func snapshot(t *testing.T, path string) string {
	var out []string
	for _, p := range []string{path, path + "-wal", path + "-shm", path + "-journal", path + ".locks"} {
		if b, err := os.ReadFile(p); err == nil {
			out = append(out, fmt.Sprintf("%s:%x", filepath.Base(p), b))
		} else if !errors.Is(err, os.ErrNotExist) {
			out = append(out, fmt.Sprintf("%s:%v", filepath.Base(p), err))
		}
	}
	return strings.Join(out, " ")
}

// exec1 runs SQL on a file with a plain connection, as another program would.
func exec1(t *testing.T, path, query string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(query); err != nil {
		t.Fatal(err)
	}
}

// wantDefaultTenants checks that an upgraded store's old rows are the
// default tenant's, and no other tenant's.
func wantDefaultTenants(t *testing.T, s *sqlite.Store, thread string, id int64) {
	t.Helper()
	ctx := t.Context()
	if err := s.AddTenant(ctx, "acme"); err != nil {
		t.Fatalf("AddTenant after the upgrade: %v", err)
	}
	def, _ := store.ForTenant(ctx, s, "")
	acme, _ := store.ForTenant(ctx, s, "acme")
	if _, err := def.Get(ctx, thread, id); err != nil {
		t.Errorf("after the upgrade, the default tenant's Get = %v; want the old row", err)
	}
	if _, err := acme.Get(ctx, thread, id); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("after the upgrade, another tenant's Get = %v; want ErrNotFound", err)
	}
}

// TestUpgradeInPlace opens a file written by every older store schema: it
// is upgraded in place, keeps its rows, and gains the newer tables.
func TestUpgradeInPlace(t *testing.T) {
	t.Parallel()
	for from := 1; from < sqlite.SchemaVersion; from++ {
		t.Run(fmt.Sprint("from ", from), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "old.db")
			old := `CREATE TABLE rewind_store_schema (version INTEGER NOT NULL);` + strings.Join(sqlite.Migrations[:from], "\n") +
				fmt.Sprintf(`; INSERT INTO rewind_store_schema (version) VALUES (%d);
				INSERT INTO graph_checkpoints (thread_id, checkpoint_id, parent_id, state, created_at) VALUES ('t', 1, NULL, '{"step":1}', 1700000000000000);
				INSERT INTO graph_events VALUES ('t', 1, 1, 'a', '{}', 1700000000000000);
				INSERT INTO graph_writes VALUES ('t', 1, 'x', '{"w":1}', 1700000000000000);`, from)
			exec1(t, path, old)

			s := open(t, path)
			ctx := t.Context()
			got, err := s.Get(ctx, "t", 1)
			if err != nil || string(got.State) != `{"step":1}` || got.CreatedAt.Unix() != 1700000000 {
				t.Fatalf("after the upgrade, Get = %s at %v, %v; want the old row", got.State, got.CreatedAt, err)
			}
			wantDefaultTenants(t, s, "t", 1)
			if !got.Base || got.Meta != nil || got.Rebased != nil || got.BlobRefs != nil {
				t.Errorf("after the upgrade, Get = base %v, meta %q, rebased %q, blob refs %q; want an old row: a base without meta", got.Base, got.Meta, got.Rebased, got.BlobRefs)
			}
			if evs, err := s.Events(ctx, "t", 1); err != nil || len(evs) != 1 {
				t.Errorf("Events = %v, %v; want the old one", evs, err)
			}
			if ws, err := s.Writes(ctx, "t", 1); err != nil || len(ws) != 1 {
				t.Errorf("Writes = %v, %v; want the old one", ws, err)
			}
			if err := s.PutCheckpoint(ctx, cp(2, 1), nil); err != nil {
				t.Errorf("PutCheckpoint after the upgrade: %v", err)
			}
			if err := s.PutCheckpoint(ctx, cp(3, 2), nil); err != nil {
				t.Errorf("PutCheckpoint after the upgrade: %v", err)
			}
			// Old rows gain rerooted_from (NULL), and prune works on them.
			if res, err := s.Prune(ctx, "t", []int64{1}, nil); err != nil || len(res.Rerooted) != 1 || res.Rerooted[0] != (store.Reroot{ID: 2, From: 1}) ||
				res.Events != 1 || res.Writes != 1 {
				t.Errorf("Prune after the upgrade = %+v, %v; want 1 deleted with its event and writes, 2 re-rooted from 1", res, err)
			}
			if _, created, err := s.CreateDraft(ctx, store.Draft{ThreadID: "t", OperationID: "op", Body: []byte(`{}`)}); err != nil || !created {
				t.Errorf("CreateDraft after the upgrade = %v, %v; want created", created, err)
			}
			s.Close()

			db, err := sql.Open("sqlite", path)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			var v, n int
			if err := db.QueryRow(`SELECT max(version), count(*) FROM rewind_store_schema`).Scan(&v, &n); err != nil || v != sqlite.SchemaVersion || n != 1 {
				t.Errorf("schema version after the upgrade = %d (%d rows), %v; want %d in one row", v, n, err, sqlite.SchemaVersion)
			}
			// And it opens again without upgrading twice.
			if got, err := open(t, path).Get(ctx, "t", 2); err != nil || got.ParentID != 0 || got.RerootedFrom != 1 {
				t.Errorf("reopen after the upgrade: Get = parent %d, rerooted from %d, %v; want parent 0, rerooted from 1", got.ParentID, got.RerootedFrom, err)
			}
		})
	}
}

func TestReopenKeepsEverything(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "rewind.db")
	s := open(t, path)
	ctx := t.Context()
	if err := s.PutCheckpoint(ctx, cp(1, 0), []store.Event{{Type: "a"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutWrites(ctx, store.TaskWrites{ThreadID: "t", CheckpointID: 1, TaskID: "x", Writes: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.CreateDraft(ctx, store.Draft{ThreadID: "t", OperationID: "op", Body: []byte(`{"n":1}`)}); err != nil {
		t.Fatal(err)
	}
	if e, err := s.Fence(ctx, "t"); err != nil || e != 1 {
		t.Fatalf("Fence = %d, %v", e, err)
	}
	s.Close()
	s = open(t, path)
	if e, err := s.Fence(ctx, "t"); err != nil || e != 2 {
		t.Errorf("Fence after reopening = %d, %v; want 2: epochs survive restarts", e, err)
	}
	if d, created, err := s.CreateDraft(ctx, store.Draft{ThreadID: "t", OperationID: "op", Body: []byte(`{"n":2}`)}); err != nil || created || string(d.Body) != `{"n":1}` {
		t.Errorf("CreateDraft after reopening = %s, created %v, %v; want the first draft", d.Body, created, err)
	}
	if _, err := s.Get(ctx, "t", 1); err != nil {
		t.Error(err)
	}
	if evs, err := s.Events(ctx, "t", 1); err != nil || len(evs) != 1 {
		t.Errorf("Events = %v, %v", evs, err)
	}
	if ws, err := s.Writes(ctx, "t", 1); err != nil || len(ws) != 1 {
		t.Errorf("Writes = %v, %v", ws, err)
	}
	wantIs(t, s.PutCheckpoint(ctx, cp(1, 0), []store.Event{{Type: "b"}}), store.ErrConflict)

	// The epoch counter outlives the thread and the process: a deleted
	// thread's next writer gets a higher epoch after a restart too.
	if err := s.DeleteThread(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = open(t, path)
	if e, err := s.Fence(ctx, "t"); err != nil || e != 3 {
		t.Errorf("Fence of a deleted thread after reopening = %d, %v; want 3", e, err)
	}
}

func TestLockAcrossHandles(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "rewind.db")
	a, b := open(t, path), open(t, path)
	release, err := a.Lock(t.Context(), "t")
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Lock(t.Context(), "t")
	wantIs(t, err, store.ErrLocked)
	if err := release(); err != nil {
		t.Fatal(err)
	}
	release, err = b.Lock(t.Context(), "t")
	if err != nil {
		t.Fatalf("Lock after release: %v", err)
	}
	// b keeps its file open between runs: a's Lock is refused while b
	// holds it, and b's own second Lock too.
	_, err = a.Lock(t.Context(), "t")
	wantIs(t, err, store.ErrLocked)
	_, err = b.Lock(t.Context(), "t")
	wantIs(t, err, store.ErrLocked)
	if who, err := a.LockHolder(t.Context(), "t"); err != nil || who != fmt.Sprintf("pid %d", os.Getpid()) {
		t.Errorf("LockHolder while b holds it = %q, %v", who, err)
	}
	if err := release(); err != nil {
		t.Fatal(err)
	}
	if who, err := a.LockHolder(t.Context(), "t"); err != nil || who != "" {
		t.Errorf("LockHolder after the release = %q, %v; want nobody", who, err)
	}
	for i := 0; i < 3; i++ { // released and taken again, from either handle
		for _, s := range []*sqlite.Store{a, b} {
			release, err := s.Lock(t.Context(), "t")
			if err != nil {
				t.Fatalf("Lock %d after a release: %v", i, err)
			}
			if err := release(); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A lock file outlives its release, not the stores; past the files a
	// store keeps open, a release removes its own.
	if _, err := b.Lock(t.Context(), "u"); err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		release, err := a.Lock(t.Context(), fmt.Sprintf("many-%d", i))
		if err != nil {
			t.Fatal(err)
		}
		if err := release(); err != nil {
			t.Fatal(err)
		}
	}
	if entries, _ := os.ReadDir(path + ".locks"); len(entries) > 40 {
		t.Errorf("%d lock files for 42 threads: a store keeps at most 32 open, plus one held", len(entries))
	}
	a.Close()
	b.Close()
	if entries, _ := os.ReadDir(path + ".locks"); len(entries) != 0 {
		t.Errorf("the closed stores left %d lock files behind", len(entries))
	}
}

func idsOf(cps []store.Checkpoint) []int64 {
	var out []int64
	for _, cp := range cps {
		out = append(out, cp.ID)
	}
	return out
}

func wantIs(t *testing.T, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("error = %v, want %v", err, target)
	}
}

// TestManyRowsAPut: a put's messages, events and blobs go in multi-row
// INSERTs of up to 16 rows; past that, and with hashes repeated within a
// put and from an earlier one, every row reads back as the memory
// store's reference keeps it.
func TestManyRowsAPut(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	sq, ref := open(t, filepath.Join(t.TempDir(), "rewind.db")), store.Store(memory.New())
	var hashes, blobHashes []string
	for id := int64(1); id <= 3; id++ {
		cp := store.Checkpoint{ThreadID: "t", ID: id, ParentID: id - 1, State: []byte(`{}`), CreatedAt: time.UnixMicro(1e15 + id).UTC()}
		var events []store.Event
		for i := range 16*int(id) + 1 {
			body := fmt.Appendf(nil, `{"n":%d}`, i%23) // repeats within the put and across puts
			cp.Messages = append(cp.Messages, store.Message{Hash: store.ContentHash(body), Index: int64(i), Body: body})
			blob := fmt.Appendf(nil, `"blob %d"`, i%19)
			cp.Blobs = append(cp.Blobs, store.Blob{Hash: store.ContentHash(blob), Body: blob})
			events = append(events, store.Event{Type: fmt.Sprint("e", i), Payload: fmt.Appendf(nil, `[%d]`, i)})
			hashes, blobHashes = append(hashes, cp.Messages[i].Hash), append(blobHashes, cp.Blobs[i].Hash)
		}
		for _, st := range []store.Store{sq, ref} {
			if err := st.PutCheckpoint(ctx, cp, events); err != nil {
				t.Fatal(err)
			}
		}
	}
	sortMsgs := func(ms []store.Message) []store.Message {
		slices.SortFunc(ms, func(a, b store.Message) int { return strings.Compare(a.Hash, b.Hash) })
		return ms
	}
	sortBlobs := func(bs []store.Blob) []store.Blob {
		slices.SortFunc(bs, func(a, b store.Blob) int { return strings.Compare(a.Hash, b.Hash) })
		return bs
	}
	got, err1 := sq.Messages(ctx, "t", hashes)
	want, err2 := ref.Messages(ctx, "t", hashes)
	if err := errors.Join(err1, err2); err != nil || !reflect.DeepEqual(sortMsgs(got), sortMsgs(want)) || len(got) != 23 {
		t.Errorf("messages: %v\n got %v\nwant %v", err, got, want)
	}
	gotB, err1 := sq.Blobs(ctx, "t", blobHashes)
	wantB, err2 := ref.Blobs(ctx, "t", blobHashes)
	if err := errors.Join(err1, err2); err != nil || !reflect.DeepEqual(sortBlobs(gotB), sortBlobs(wantB)) || len(gotB) != 19 {
		t.Errorf("blobs: %v\n got %v\nwant %v", err, gotB, wantB)
	}
	for id := int64(1); id <= 3; id++ {
		got, err1 := sq.Events(ctx, "t", id)
		want, err2 := ref.Events(ctx, "t", id)
		if err := errors.Join(err1, err2); err != nil || !reflect.DeepEqual(got, want) || len(got) != 16*int(id)+1 {
			t.Errorf("events of %d: %v\n got %v\nwant %v", id, err, got, want)
		}
	}
}

// TestCheckpointerFoldsTheWAL: the puts' commits wake the WAL
// checkpointer, which copies them into the file long before SQLite's
// own checkpoint (at 1,000 frames) would.
func TestCheckpointerFoldsTheWAL(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "rewind.db")
	s := open(t, path)
	for id := int64(1); id <= 64; id++ { // checkpointEvery commits, a few frames each
		cp := store.Checkpoint{ThreadID: "t", ID: id, ParentID: id - 1, State: fmt.Appendf(nil, `{"m":"checkpointer marker %d"}`, id)}
		if err := s.PutCheckpoint(context.Background(), cp, nil); err != nil {
			t.Fatal(err)
		}
	}
	for start := time.Now(); ; time.Sleep(10 * time.Millisecond) {
		file, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(file, []byte("checkpointer marker 64")) {
			return
		}
		if time.Since(start) > 30*time.Second {
			t.Fatal("the 64th put is not in the file: nothing checkpointed the WAL")
		}
	}
}

// TestCancelledInsideThePut: a put whose context ends while its
// statements run (they run without its cancel: quiet) commits nothing
// and says why.
func TestCancelledInsideThePut(t *testing.T) {
	t.Parallel()
	s := open(t, filepath.Join(t.TempDir(), "rewind.db"))
	ctx, cancel := context.WithCancel(context.Background())
	s.SetTxHook(func(string) { cancel() })
	cp := store.Checkpoint{ThreadID: "t", ID: 1, State: []byte(`{}`)}
	if err := s.PutCheckpoint(ctx, cp, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("put cancelled before its COMMIT: %v, want context.Canceled", err)
	}
	s.SetTxHook(nil)
	if _, err := s.Latest(context.Background(), "t"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Latest after the cancelled put: %v, want ErrNotFound", err)
	}
}

// watched is a cancellable context that counts how often its Done channel
// is asked for: what the driver and database/sql do to watch it.
type watched struct {
	context.Context
	asked atomic.Int64 // a rows' watcher asks from its own goroutine
}

func (w *watched) Done() <-chan struct{} {
	w.asked.Add(1)
	return w.Context.Done()
}

// TestBriefReadsRefuseADoneContextAndWatchNoLiveOne: a load's reads (a
// checkpoint, its chain, the bodies and blobs it names, the thread's size
// and owner, a draft) refuse a context already done with its error, and
// leave a live one unwatched: watching it is a goroutine a statement, a
// sixth of a new process's first load (issue 31 item 2). A listing keeps
// watching, so a person can stop a long one.
func TestBriefReadsRefuseADoneContextAndWatchNoLiveOne(t *testing.T) {
	t.Parallel()
	s := open(t, filepath.Join(t.TempDir(), "rewind.db"))
	ctx := context.Background()
	body, blob := []byte(`{"role":"user","content":"hello"}`), []byte(`"x"`)
	m1, b1 := store.ContentHash(body), store.ContentHash(blob)
	cp := store.Checkpoint{ThreadID: "t", ID: 1, State: []byte(`{}`),
		Messages: []store.Message{{Hash: m1, Index: 0, Body: body}},
		Blobs:    []store.Blob{{Hash: b1, Body: blob}}, BlobRefs: []string{b1}}
	if err := s.PutCheckpoint(ctx, cp, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.CreateDraft(ctx, store.Draft{ThreadID: "t", OperationID: "op", Body: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	reads := map[string]func(context.Context) error{
		"get":    func(ctx context.Context) error { _, err := s.Get(ctx, "t", 1); return err },
		"latest": func(ctx context.Context) error { _, err := s.Latest(ctx, "t"); return err },
		"chain":  func(ctx context.Context) error { _, err := s.Chain(ctx, "t", 1); return err },
		"chain owned": func(ctx context.Context) error {
			_, err := s.ChainOwned(ctx, "t", store.DefaultTenant, 1)
			return err
		},
		"bodies": func(ctx context.Context) error {
			ms, bs, err := s.Bodies(ctx, "t", []string{m1}, []string{b1})
			if err == nil && (len(ms) != 1 || len(bs) != 1) {
				return fmt.Errorf("read %d messages and %d blobs, want 1 and 1", len(ms), len(bs))
			}
			return err
		},
		"blobs":    func(ctx context.Context) error { _, err := s.Blobs(ctx, "t", []string{b1}); return err },
		"messages": func(ctx context.Context) error { _, err := s.Messages(ctx, "t", []string{m1}); return err },
		"size":     func(ctx context.Context) error { _, err := s.Size(ctx, "t"); return err },
		"owner":    func(ctx context.Context) error { _, err := s.ThreadTenant(ctx, "t"); return err },
		"draft":    func(ctx context.Context) error { _, err := s.Draft(ctx, "t", "op"); return err },
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	for name, read := range reads {
		if err := read(done); !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "sqlite store") {
			t.Errorf("%s with a cancelled context: %v, want context.Canceled, said by the store", name, err)
		}
		live, stop := context.WithCancel(ctx)
		w := &watched{Context: live}
		if err := read(w); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		stop()
		if n := w.asked.Load(); n != 0 {
			t.Errorf("%s asked for its context's Done %d times: the driver watches it (a goroutine a statement)", name, n)
		}
	}
	live, stop := context.WithCancel(ctx)
	defer stop()
	w := &watched{Context: live}
	if _, err := s.History(w, "t", 0, 0); err != nil {
		t.Fatal(err)
	}
	if w.asked.Load() == 0 {
		t.Error("a listing no longer watches its context: a long log could not be stopped")
	}
}
