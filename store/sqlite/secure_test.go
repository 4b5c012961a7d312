package sqlite_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"rewind/store"
)

// secretThread writes a thread whose every row holds the sentinel:
// checkpoints (a small one, and one whose state spills onto overflow
// pages), events, task writes, messages, blobs and a draft; its id holds
// it too.
func secretThread(t *testing.T, s store.Store, sentinel string) string {
	t.Helper()
	ctx := t.Context()
	thread := "secret " + sentinel
	body := func(n int) []byte { return fmt.Appendf(nil, `{"text":%q}`, strings.Repeat(sentinel+" ", n)) }
	msg := store.Message{Hash: store.ContentHash(body(3)), Index: 0, Body: body(3)}
	blob := store.Blob{Hash: store.ContentHash(body(2000)), Body: body(2000)}
	cps := []store.Checkpoint{
		{ThreadID: thread, ID: 1, State: body(1), Meta: body(1), Base: true, Messages: []store.Message{msg}},
		{ThreadID: thread, ID: 2, ParentID: 1, State: body(5000), Meta: body(1), BlobRefs: []string{blob.Hash}, Blobs: []store.Blob{blob}},
	}
	for _, cp := range cps {
		if err := s.PutCheckpoint(ctx, cp, []store.Event{{Type: "said " + sentinel, Payload: body(1)}}); err != nil {
			t.Fatal(err)
		}
		if err := s.PutWrites(ctx, store.TaskWrites{ThreadID: thread, CheckpointID: cp.ID, TaskID: "task " + sentinel, Writes: body(50)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := s.(store.Drafts).CreateDraft(ctx, store.Draft{ThreadID: thread, OperationID: "op " + sentinel, Body: body(1)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Fence(ctx, thread); err != nil {
		t.Fatal(err)
	}
	return thread
}

// leaks lists the files of the store at path (the database, -wal, -shm)
// that hold sentinel.
func leaks(t *testing.T, path, sentinel string) []string {
	t.Helper()
	var out []string
	for _, f := range []string{path, path + "-wal", path + "-shm", path + "-journal"} {
		b, err := os.ReadFile(f)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if n := bytes.Count(b, []byte(sentinel)); n > 0 {
			out = append(out, fmt.Sprintf("%s (%d times)", filepath.Base(f), n))
		}
	}
	return out
}

// A deleted thread leaves no text behind in the file: issue 11 found `rm`'s
// thread 8 times with grep. Once with the store closed (the last handle
// folds the WAL into the file), once with another handle still open, so
// the WAL stays.
func TestDeletedThreadLeavesNoText(t *testing.T) {
	t.Parallel()
	for _, other := range []bool{false, true} {
		t.Run(fmt.Sprintf("other handle open %v", other), func(t *testing.T) {
			var b [8]byte
			_, _ = rand.Read(b[:])
			sentinel := "SENTINEL" + hex.EncodeToString(b[:])
			path := filepath.Join(t.TempDir(), "rewind.db")
			s := open(t, path)
			if other {
				o := open(t, path)
				if _, err := o.Threads(t.Context()); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.PutCheckpoint(t.Context(), store.Checkpoint{ThreadID: "kept", ID: 1, State: []byte(`{"kept":true}`)}, nil); err != nil {
				t.Fatal(err)
			}
			thread := secretThread(t, s, sentinel)
			if got := leaks(t, path, sentinel); len(got) == 0 {
				t.Fatal("the sentinel is nowhere before the delete: the test cannot see a leak")
			}
			if err := s.DeleteThread(t.Context(), thread); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if got := leaks(t, path, sentinel); len(got) > 0 {
				t.Errorf("the deleted thread's text is still in %s", strings.Join(got, ", "))
			}
		})
	}
}

// While another process is in the middle of a read, the WAL cannot start
// over at once, so the deleted text stays in its older frames for a
// while; once the reader is done, the store's next write empties the WAL
// first, and the text is gone. So does closing the store.
func TestDeletedThreadTextGoesOnceReadersLeave(t *testing.T) {
	t.Parallel()
	for _, then := range []string{"next write", "close"} {
		t.Run(then, func(t *testing.T) {
			var b [8]byte
			_, _ = rand.Read(b[:])
			sentinel := "SENTINEL" + hex.EncodeToString(b[:])
			path := filepath.Join(t.TempDir(), "rewind.db")
			s := open(t, path)
			ctx := t.Context()
			thread := secretThread(t, s, sentinel)

			other, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
			if err != nil {
				t.Fatal(err)
			}
			defer other.Close()
			conn, err := other.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if _, err := conn.ExecContext(ctx, `BEGIN`); err != nil {
				t.Fatal(err)
			}
			var n int
			if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM graph_checkpoints`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if err := s.DeleteThread(ctx, thread); err != nil {
				t.Fatal(err)
			}
			if got := leaks(t, path, sentinel); len(got) == 0 {
				t.Fatal("the text is gone while a reader kept the WAL from starting over: the test cannot see what it tests")
			}
			if _, err := conn.ExecContext(context.Background(), `COMMIT`); err != nil {
				t.Fatal(err)
			}
			if then == "close" {
				err = s.Close() // other keeps the file open: the WAL stays
			} else {
				err = s.PutCheckpoint(ctx, store.Checkpoint{ThreadID: "other", ID: 1, State: []byte(`{}`)}, nil)
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := leaks(t, path, sentinel); len(got) > 0 {
				t.Errorf("after the reader left and the %s, the deleted thread's text is still in %s", then, strings.Join(got, ", "))
			}
		})
	}
}
