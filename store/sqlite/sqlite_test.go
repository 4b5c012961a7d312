package sqlite_test

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"rewind/store"
	"rewind/store/sqlite"
	"rewind/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return open(t, filepath.Join(t.TempDir(), "rewind.db")) })
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

// TestUpgradeInPlace opens a file written by every older store schema: it
// is upgraded in place, keeps its rows, and gains the newer tables.
func TestUpgradeInPlace(t *testing.T) {
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
	if entries, _ := os.ReadDir(path + ".locks"); len(entries) != 0 {
		t.Errorf("a released lock left %d files behind", len(entries))
	}
	release, err = b.Lock(t.Context(), "t")
	if err != nil {
		t.Fatalf("Lock after release: %v", err)
	}
	release()
}

// TestHelperProcess is the child of the process tests, not a test itself.
func TestHelperProcess(t *testing.T) {
	mode := os.Getenv("REWIND_SQLITE_HELPER")
	if mode == "" {
		t.Skip("child of the process tests")
	}
	if mode != "fenced-writer" { // that one reads its orders from stdin
		go func() { // die with the parent, whose end of stdin then closes
			io.Copy(io.Discard, os.Stdin)
			os.Exit(3)
		}()
	}
	ctx := context.Background()
	s, err := sqlite.Open(ctx, os.Getenv("REWIND_SQLITE_DB"))
	if err != nil {
		fmt.Println("error", err)
		os.Exit(2)
	}
	switch mode {
	case "lock":
		if _, err := s.Lock(ctx, "t"); err != nil {
			fmt.Println("error", err)
			os.Exit(2)
		}
		fmt.Println("locked")
	case "hook-kill":
		// The drills' "mid-transaction" kill point: die inside the put.
		s.SetTxHook(func(stage string) {
			fmt.Println("hook", stage)
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {}
		})
		err := s.PutCheckpoint(ctx, killCheckpoint(3), killEvents(3))
		fmt.Println("returned", err)
		os.Exit(0)
	case "fenced-writer":
		// A worker that fences the thread and then writes when told to,
		// one "put ID" or "writes ID" line at a time.
		epoch, err := s.Fence(ctx, "t")
		fmt.Println("epoch", epoch, err)
		in := bufio.NewScanner(os.Stdin)
		for in.Scan() {
			var what string
			var id int64
			fmt.Sscan(in.Text(), &what, &id)
			if what == "put" {
				cp := killCheckpoint(id)
				cp.Epoch = epoch
				err = s.PutCheckpoint(ctx, cp, killEvents(id))
			} else {
				err = s.PutWrites(ctx, store.TaskWrites{ThreadID: "t", CheckpointID: id, TaskID: "late", Writes: []byte(`{}`), Epoch: epoch})
			}
			switch {
			case err == nil:
				fmt.Println("ok", what, id)
			case errors.Is(err, store.ErrFenced):
				fmt.Println("fenced", what, id)
			default:
				fmt.Println("error", what, id, err)
			}
		}
		os.Exit(3)
	case "write":
		from, _ := strconv.ParseInt(os.Getenv("REWIND_SQLITE_FROM"), 10, 64)
		for id := from; ; id++ {
			if err := s.PutCheckpoint(ctx, killCheckpoint(id), killEvents(id)); err != nil {
				fmt.Println("error", err)
				os.Exit(2)
			}
			fmt.Println("ok", id)
		}
	}
	time.Sleep(time.Minute)
	os.Exit(0)
}

// child starts the helper and returns it with its stdout, one line at a time.
func child(t *testing.T, mode, db string, env ...string) (*exec.Cmd, *bufio.Scanner) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), append(env, "REWIND_SQLITE_HELPER="+mode, "REWIND_SQLITE_DB="+db)...)
	cmd.Stderr = os.Stderr
	if _, err := cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, bufio.NewScanner(out)
}

func kill(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("child ended with %v, want killed", err)
	}
}

func TestLockReleasedWhenHolderIsKilled(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rewind.db")
	s := open(t, path)
	cmd, out := child(t, "lock", path)
	if !out.Scan() || out.Text() != "locked" {
		t.Fatalf("child did not take the lock: %q %v", out.Text(), out.Err())
	}
	_, err := s.Lock(t.Context(), "t")
	wantIs(t, err, store.ErrLocked)
	release, err := s.Lock(t.Context(), "other")
	if err != nil {
		t.Fatalf("Lock of another thread: %v", err)
	}
	release()

	kill(t, cmd)
	release, err = s.Lock(t.Context(), "t")
	if err != nil {
		t.Fatalf("Lock after the holder was killed: %v", err)
	}
	release()
}

// A writer killed mid-transaction leaves a store that opens, holds every
// checkpoint it acknowledged, and has no half-written one.
func TestKillMidWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rewind.db")
	from := int64(1)
	for round := range 3 {
		cmd, out := child(t, "write", path, fmt.Sprint("REWIND_SQLITE_FROM=", from))
		var acked int64
		for acked < from+150 && out.Scan() {
			if _, err := fmt.Sscanf(out.Text(), "ok %d", &acked); err != nil {
				t.Fatalf("child: %s", out.Text())
			}
		}
		kill(t, cmd)
		for out.Scan() { // what it printed before it died
			fmt.Sscanf(out.Text(), "ok %d", &acked)
		}

		s, err := sqlite.Open(t.Context(), path)
		if err != nil {
			t.Fatalf("round %d: reopen after kill: %v", round, err)
		}
		latest := verify(t, s)
		if latest < acked {
			t.Fatalf("round %d: latest is %d, but the child committed %d", round, latest, acked)
		}
		t.Logf("round %d: killed after %d, store holds 1..%d", round, acked, latest)
		s.Close()
		from = latest + 1
	}
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
}

// TestKillInsideTransaction kills a writer from PutCheckpoint's hook, after
// its rows are written and before COMMIT: the checkpoint is absent, the
// earlier ones are intact, and the same put then succeeds.
func TestKillInsideTransaction(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rewind.db")
	s := open(t, path)
	for id := int64(1); id <= 2; id++ {
		if err := s.PutCheckpoint(t.Context(), killCheckpoint(id), killEvents(id)); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()

	cmd, out := child(t, "hook-kill", path)
	if !out.Scan() || out.Text() != "hook checkpoint-written" {
		t.Fatalf("child did not reach the hook: %q %v", out.Text(), out.Err())
	}
	if err := cmd.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("child ended with %v, want killed", err)
	}
	if out.Scan() {
		t.Fatalf("child went on after the hook: %q", out.Text())
	}

	s = open(t, path)
	ctx := t.Context()
	if _, err := s.Get(ctx, "t", 3); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the killed transaction's checkpoint is visible (Get: %v)", err)
	}
	if evs, err := s.Events(ctx, "t", 3); err != nil || len(evs) != 0 {
		t.Errorf("the killed transaction's events are visible: %v, %v", evs, err)
	}
	if latest := verify(t, s); latest != 2 {
		t.Fatalf("latest = %d, want 2", latest)
	}
	if err := s.PutCheckpoint(ctx, killCheckpoint(3), killEvents(3)); err != nil {
		t.Fatalf("retry of the killed put: %v", err)
	}
	if latest := verify(t, s); latest != 3 {
		t.Fatalf("latest after the retry = %d, want 3", latest)
	}
}

// TestStoppedWriterIsFenced is issue 5's drill on the store: a writer is
// stopped with SIGSTOP, another takes the thread over (Fence) and goes on,
// and the first one, continued, has its late writes refused: the chain
// does not fork.
func TestStoppedWriterIsFenced(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rewind.db")
	s := open(t, path)
	ctx := t.Context()
	if err := s.PutCheckpoint(ctx, killCheckpoint(1), killEvents(1)); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), "REWIND_SQLITE_HELPER=fenced-writer", "REWIND_SQLITE_DB="+path)
	cmd.Stderr = os.Stderr
	orders, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	out := bufio.NewScanner(stdout)
	say := func(order, want string) {
		t.Helper()
		if order != "" {
			fmt.Fprintln(orders, order)
		}
		if !out.Scan() || out.Text() != want {
			t.Fatalf("worker said %q (%v), want %q", out.Text(), out.Err(), want)
		}
	}
	say("", "epoch 1 <nil>")
	say("put 2", "ok put 2")

	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	waitState(t, cmd.Process.Pid, 'T')
	// Its next orders wait in the pipe while it is stopped.
	fmt.Fprintln(orders, "put 3")
	fmt.Fprintln(orders, "writes 2")
	fmt.Fprintln(orders, "put 4")

	epoch, err := s.Fence(ctx, "t")
	if err != nil || epoch != 2 {
		t.Fatalf("takeover Fence = %d, %v; want 2", epoch, err)
	}
	mine := store.Checkpoint{ThreadID: "t", ID: 3, ParentID: 2, State: []byte(`{"by":"the new writer"}`), Epoch: epoch}
	if err := s.PutCheckpoint(ctx, mine, nil); err != nil {
		t.Fatalf("the new writer's put: %v", err)
	}
	if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	say("", "fenced put 3")
	say("", "fenced writes 2")
	say("", "fenced put 4")

	h, err := s.History(ctx, "t", 0, 0)
	if err != nil || !slices.Equal(idsOf(h), []int64{3, 2, 1}) || h[0].ParentID != 2 || string(h[0].State) != string(mine.State) {
		t.Fatalf("history after the late writes = %v, %v; want 3 (the new writer's) ← 2 ← 1", idsOf(h), err)
	}
	if ws, err := s.Writes(ctx, "t", 2); err != nil || len(ws) != 0 {
		t.Errorf("the stopped writer's late writes were stored: %v, %v", ws, err)
	}
}

// TestStoppedWriterIsFencedAcrossDelete is issue 11's first case on the
// store: a writer process is stopped with SIGSTOP, the thread is deleted
// and a new writer starts it again from 1; the first writer, continued,
// has every late write refused, though its next checkpoint would fit on
// top of the new writer's chain.
func TestStoppedWriterIsFencedAcrossDelete(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rewind.db")
	s := open(t, path)
	ctx := t.Context()
	if err := s.PutCheckpoint(ctx, killCheckpoint(1), killEvents(1)); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), "REWIND_SQLITE_HELPER=fenced-writer", "REWIND_SQLITE_DB="+path)
	cmd.Stderr = os.Stderr
	orders, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	out := bufio.NewScanner(stdout)
	say := func(order, want string) {
		t.Helper()
		if order != "" {
			fmt.Fprintln(orders, order)
		}
		if !out.Scan() || out.Text() != want {
			t.Fatalf("worker said %q (%v), want %q", out.Text(), out.Err(), want)
		}
	}
	say("", "epoch 1 <nil>")
	say("put 2", "ok put 2")

	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	waitState(t, cmd.Process.Pid, 'T')
	late := []string{"put 3", "writes 2", "writes 1", "put 1", "put 4"}
	for _, order := range late {
		fmt.Fprintln(orders, order)
	}

	if err := s.DeleteThread(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	epoch, err := s.Fence(ctx, "t")
	if err != nil || epoch <= 1 {
		t.Fatalf("Fence after DeleteThread = %d, %v; want more than the stopped writer's 1", epoch, err)
	}
	var mine []store.Checkpoint
	for id := int64(1); id <= 2; id++ {
		cp := store.Checkpoint{ThreadID: "t", ID: id, ParentID: id - 1, State: fmt.Appendf(nil, `{"by":"the new writer","id":%d}`, id), Epoch: epoch}
		if err := s.PutCheckpoint(ctx, cp, nil); err != nil {
			t.Fatalf("the new writer's put: %v", err)
		}
		mine = append(mine, cp)
	}
	if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	for _, order := range late {
		say("", "fenced "+order)
	}

	h, err := s.History(ctx, "t", 0, 0)
	if err != nil || !slices.Equal(idsOf(h), []int64{2, 1}) {
		t.Fatalf("history after the late writes = %v, %v; want the new writer's 2 ← 1", idsOf(h), err)
	}
	for _, cp := range mine {
		if got, err := s.Get(ctx, "t", cp.ID); err != nil || string(got.State) != string(cp.State) {
			t.Errorf("checkpoint %d = %s, %v; want the new writer's", cp.ID, got.State, err)
		}
		if ws, err := s.Writes(ctx, "t", cp.ID); err != nil || len(ws) != 0 {
			t.Errorf("the stopped writer's late writes were stored at %d: %v, %v", cp.ID, ws, err)
		}
	}
}

// waitState waits until process pid is in state (from /proc/PID/stat).
func waitState(t *testing.T, pid int, state byte) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			t.Fatal(err)
		}
		// The state follows the command name, which is in parentheses.
		if i := bytes.LastIndexByte(b, ')'); i > 0 && i+2 < len(b) && b[i+2] == state {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d never reached state %c: %s", pid, state, b)
		}
		time.Sleep(time.Millisecond)
	}
}

func idsOf(cps []store.Checkpoint) []int64 {
	var out []int64
	for _, cp := range cps {
		out = append(out, cp.ID)
	}
	return out
}

// verify checks every checkpoint of the kill test and returns the newest id.
func verify(t *testing.T, s store.Store) int64 {
	t.Helper()
	ctx := t.Context()
	history, err := s.History(ctx, "t", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, got := range history {
		id := history[0].ID - int64(i)
		want := killCheckpoint(id)
		if got.ID != id || got.ParentID != want.ParentID || !bytes.Equal(got.State, want.State) {
			t.Fatalf("checkpoint %d: got id %d, parent %d, %d state bytes; want parent %d, %d bytes",
				id, got.ID, got.ParentID, len(got.State), want.ParentID, len(want.State))
		}
		if _, err := s.Get(ctx, "t", got.ParentID); got.ParentID != 0 && err != nil {
			t.Fatalf("checkpoint %d: parent %d: %v", id, got.ParentID, err)
		}
		evs, err := s.Events(ctx, "t", id)
		if err != nil || len(evs) != 3 {
			t.Fatalf("checkpoint %d: %d events, %v; want 3", id, len(evs), err)
		}
	}
	if len(history) == 0 || history[len(history)-1].ID != 1 {
		t.Fatalf("history of %d checkpoints does not go back to 1", len(history))
	}
	return history[0].ID
}

// killCheckpoint is deterministic, of varied size (up to ~200 KB) so that
// some transactions span many pages, and every seventh one is a fork.
func killCheckpoint(id int64) store.Checkpoint {
	parent := id - 1
	if id%7 == 0 {
		parent = id / 2
	}
	pad := strings.Repeat("x", int(id*7919%200_000))
	state, _ := json.Marshal(map[string]any{"id": id, "pad": pad})
	return store.Checkpoint{ThreadID: "t", ID: id, ParentID: parent, State: state}
}

func killEvents(id int64) []store.Event {
	return []store.Event{
		{Type: "node.started", Payload: fmt.Appendf(nil, `{"id":%d}`, id)},
		{Type: "model.called"},
		{Type: "node.finished", Payload: fmt.Appendf(nil, `{"id":%d}`, id)},
	}
}

func wantIs(t *testing.T, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("error = %v, want %v", err, target)
	}
}
