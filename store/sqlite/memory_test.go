package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"rewind/store"
	"rewind/store/memory"
)

// TestAgreesWithMemory runs one long-conversation scenario on this store
// and on the reference, memory.Store, and wants the same answers: Size to
// the byte, and every read row for row (creation times aside).
func TestAgreesWithMemory(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	lite, mem := open(t, filepath.Join(t.TempDir(), "rewind.db")), memory.New()
	// Multi-byte: Size counts bytes, not characters.
	const thread = "thread-é€😀"
	both := func(what string, f func(s store.Store) error) {
		t.Helper()
		if errLite, errMem := f(lite), f(mem); errLite != nil || errMem != nil {
			t.Fatalf("%s: sqlite says %v, memory says %v", what, errLite, errMem)
		}
	}
	body := func(i int, text string) []byte {
		return fmt.Appendf(nil, `{"index":%d,"role":"user","content":%q}`, i, text)
	}
	msg := func(i int, text string) store.Message {
		b := body(i, text)
		return store.Message{Hash: store.ContentHash(b), Index: int64(i), Body: b}
	}
	blob := func(text string) store.Blob {
		b := fmt.Appendf(nil, "%q", text)
		return store.Blob{Hash: store.ContentHash(b), Body: b}
	}
	big, other, solo := blob(strings.Repeat("attachment ", 400)), blob("small ünïcode blob"), blob("inlined by a rebase")

	both("Fence", func(s store.Store) error { _, err := s.Fence(ctx, thread); return err })
	for id := int64(1); id <= 12; id++ {
		cp := store.Checkpoint{ThreadID: thread, ID: id, ParentID: id - 1, Base: id%5 == 1,
			State: fmt.Appendf(nil, `{"delta":%d,"text":"ça va €"}`, id)}
		if id != 3 { // one row without meta
			cp.Meta = fmt.Appendf(nil, `{"step":%d, "next": ["executor"]}`, id)
		}
		if id == 9 {
			cp.ParentID = 4 // a fork
		}
		cp.Messages = []store.Message{msg(int(id), "message ✓"), msg(int(id-1), "message ✓")}
		if id%4 == 0 {
			cp.Messages = append(cp.Messages, msg(int(id), "another branch's"))
		}
		switch id % 3 {
		case 0:
			cp.Blobs, cp.BlobRefs = []store.Blob{big}, []string{big.Hash}
		case 1:
			cp.Blobs, cp.BlobRefs = []store.Blob{big, other}, []string{big.Hash, other.Hash}
		}
		if id == 2 { // a blob that only 2 and, once 2 is pruned, 4's rebase refer to
			cp.Blobs, cp.BlobRefs = append(cp.Blobs, solo), append(cp.BlobRefs, solo.Hash)
		}
		if id > 2 {
			cp.Settles = cp.ParentID
		}
		events := []store.Event{{Type: "node.started", Payload: []byte(`{"node":"executor"}`)}, {Type: "model.called"}}
		both(fmt.Sprint("PutCheckpoint ", id), func(s store.Store) error { return s.PutCheckpoint(ctx, cp, events) })
		both(fmt.Sprint("PutWrites ", id), func(s store.Store) error {
			return s.PutWrites(ctx, store.TaskWrites{ThreadID: thread, CheckpointID: id, TaskID: "tâche", Writes: []byte(`{"w":"é"}`)})
		})
	}
	both("CreateDraft", func(s store.Store) error {
		_, _, err := s.(store.Drafts).CreateDraft(ctx, store.Draft{ThreadID: thread, OperationID: "op-ü", Body: []byte(`{"to":"ünïcode"}`)})
		return err
	})
	compare(t, ctx, lite, mem, thread, 12)

	// Pruning 1-3 re-roots 4 (a delta: rebased, with a blob of its own) and
	// frees the blob only they held.
	rebase := []store.Rebase{{ID: 4, State: []byte(`{"whole":4,"é":true}`), BlobRefs: []string{solo.Hash}}}
	both("Prune", func(s store.Store) error { _, err := s.Prune(ctx, thread, []int64{1, 2, 3}, rebase); return err })
	compare(t, ctx, lite, mem, thread, 12)
	if got, err := lite.Blobs(ctx, thread, []string{solo.Hash}); err != nil || len(got) != 1 {
		t.Errorf("the blob a rebase refers to = %v, %v; want it kept", got, err)
	}
	// Then the rebased row goes: its delta children need rebases, the
	// fork's without blob references.
	both("Prune 4-7", func(s store.Store) error {
		_, err := s.Prune(ctx, thread, []int64{4, 5, 6, 7},
			[]store.Rebase{{ID: 8, State: []byte(`{"whole":8}`), BlobRefs: []string{big.Hash}}, {ID: 9, State: []byte(`{"whole":9}`)}})
		return err
	})
	compare(t, ctx, lite, mem, thread, 12)
	both("Prune 8-10", func(s store.Store) error { _, err := s.Prune(ctx, thread, []int64{8, 9, 10}, nil); return err })
	compare(t, ctx, lite, mem, thread, 12)
}

func compare(t *testing.T, ctx context.Context, lite, mem store.Store, thread string, newest int64) {
	t.Helper()
	same := func(what string, f func(s store.Store) (any, error)) {
		t.Helper()
		a, errA := f(lite)
		b, errB := f(mem)
		if (errA == nil) != (errB == nil) || !reflect.DeepEqual(normal(a), normal(b)) {
			t.Errorf("%s:\nsqlite %+v, %v\nmemory %+v, %v", what, normal(a), errA, normal(b), errB)
		}
	}
	same("Size", func(s store.Store) (any, error) { return s.Size(ctx, thread) })
	same("History", func(s store.Store) (any, error) { return s.History(ctx, thread, 0, 0) })
	same("History before 8, limit 3", func(s store.Store) (any, error) { return s.History(ctx, thread, 8, 3) })
	for id := int64(0); id <= newest+1; id++ {
		same(fmt.Sprint("Get ", id), func(s store.Store) (any, error) { return s.Get(ctx, thread, id) })
		same(fmt.Sprint("Chain ", id), func(s store.Store) (any, error) { return s.Chain(ctx, thread, id) })
		same(fmt.Sprint("Writes ", id), func(s store.Store) (any, error) { return s.Writes(ctx, thread, id) })
		same(fmt.Sprint("MessagesAt ", id), func(s store.Store) (any, error) { return s.MessagesAt(ctx, thread, id) })
	}
	same("MessagesIn", func(s store.Store) (any, error) { return s.MessagesIn(ctx, thread, 0, newest+1) })
	var hashes []string
	for id := int64(0); id <= newest; id++ {
		at, _ := mem.MessagesAt(ctx, thread, id)
		for _, m := range at {
			hashes = append(hashes, m.Hash, m.Hash)
		}
	}
	byHash := func(s store.Store) (any, error) {
		ms, err := s.Messages(ctx, thread, append(hashes, "unknown"))
		slices.SortFunc(ms, func(a, b store.Message) int { return strings.Compare(a.Hash, b.Hash) })
		return ms, err
	}
	same("Messages", byHash)
	var refs []string
	for id := int64(1); id <= newest; id++ {
		if cp, err := mem.Get(ctx, thread, id); err == nil {
			refs = append(refs, cp.BlobRefs...)
		}
	}
	same("Blobs", func(s store.Store) (any, error) {
		bs, err := s.Blobs(ctx, thread, append(refs, store.ContentHash([]byte(`"gone"`))))
		slices.SortFunc(bs, func(a, b store.Blob) int { return strings.Compare(a.Hash, b.Hash) })
		return bs, err
	})
}

// normal zeroes what the stores may legitimately differ in: creation
// times, and nil versus empty.
func normal(v any) any {
	clear := func(cp store.Checkpoint) store.Checkpoint {
		cp.CreatedAt = time.Time{}
		if len(cp.BlobRefs) == 0 {
			cp.BlobRefs = nil
		}
		return cp
	}
	switch v := v.(type) {
	case store.Checkpoint:
		return clear(v)
	case []store.Checkpoint:
		out := []store.Checkpoint{}
		for _, cp := range v {
			out = append(out, clear(cp))
		}
		return out
	case []store.Message:
		out := []store.Message{}
		for _, m := range v {
			m.CreatedAt = time.Time{}
			out = append(out, m)
		}
		return out
	case []store.TaskWrites:
		out := []store.TaskWrites{}
		for _, w := range v {
			w.CreatedAt = time.Time{}
			out = append(out, w)
		}
		return out
	case []store.Blob:
		return append([]store.Blob{}, v...)
	}
	return v
}
