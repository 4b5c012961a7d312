package storetest

import (
	"fmt"
	"testing"

	"rewind/store"
)

// WantSizeCounted checks that thread's Size, a running total, is what
// counting its rows gives (store.SizeCounter), and returns it; when says
// in a failure what had happened to the store.
func WantSizeCounted(t testing.TB, s store.Store, thread, when string) int64 {
	t.Helper()
	counter, ok := s.(store.SizeCounter)
	if !ok {
		t.Fatalf("%T is no store.SizeCounter: every backend counts its rows", s)
	}
	kept, err := s.Size(t.Context(), thread)
	if err != nil {
		t.Fatalf("%s: Size(%s): %v", when, thread, err)
	}
	counted, err := counter.CountSize(t.Context(), thread)
	if err != nil {
		t.Fatalf("%s: CountSize(%s): %v", when, thread, err)
	}
	if kept != counted {
		t.Errorf("%s: Size(%s) = %d, but its rows count %d", when, thread, kept, counted)
	}
	return kept
}

// testSizeKept: Size is a running total the writes keep, and it equals
// what counting the rows gives (store.SizeCounter) after each kind of
// write: a fence, drafts, puts with events, messages, blobs and head
// snapshots, task writes and the put that settles them, a fork, prunes
// (one re-rooting and rebasing a delta), a reseal and a delete; another
// thread is left as it was.
func testSizeKept(t *testing.T, s store.Store) {
	ctx := t.Context()
	same := func(step string) {
		t.Helper()
		for _, thread := range []string{"t", "u"} {
			WantSizeCounted(t, s, thread, "after "+step)
		}
	}
	same("nothing")
	put(t, s, withMeta(checkpoint("u", 1, 0)), event("e", `{"u":1}`))
	epoch, err := s.Fence(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	same("a fence")
	if ds, ok := s.(store.Drafts); ok {
		for _, op := range []string{"op-1", "op-2"} {
			if _, _, err := ds.CreateDraft(ctx, store.Draft{ThreadID: "t", OperationID: op, Body: []byte(`{"to":"` + op + `"}`), Epoch: epoch}); err != nil {
				t.Fatal(err)
			}
		}
		same("drafts")
	}
	m1, m2, b1, b2 := message(1, "the first message"), message(2, "the second, longer message"), blob("one blob"), blob("another, larger blob")
	cp1 := withMeta(checkpoint("t", 1, 0))
	cp1.Messages, cp1.Blobs, cp1.BlobRefs, cp1.Head, cp1.Epoch = []store.Message{m1}, []store.Blob{b1}, []string{b1.Hash}, []byte(`{"head":1}`), epoch
	put(t, s, cp1, event("a", `{"n":1}`), event("b", `{"n":2}`))
	same("a put")
	putWrites(t, s, writes("t", 1, "a"))
	putWrites(t, s, writes("t", 1, "b"))
	putWrites(t, s, writes("t", 1, "a")) // the same again: a no-op
	same("task writes")
	cp2 := withMeta(delta("t", 2, 1))
	cp2.Messages, cp2.Blobs, cp2.BlobRefs = []store.Message{m1, m2}, []store.Blob{b1, b2}, []string{b1.Hash, b2.Hash}
	cp2.Settles, cp2.Head = 1, []byte(`{"head":"two, longer than one"}`)
	put(t, s, cp2, event("c", `{"n":3}`))
	put(t, s, cp2, event("c", `{"n":3}`)) // the same again: a no-op
	same("a put that settles writes, repeats a message and a blob and replaces the head")
	put(t, s, withMeta(delta("t", 3, 1)), event("fork", `{}`))
	cp4 := withMeta(delta("t", 4, 3))
	cp4.Head = []byte(`{"h":4}`)
	put(t, s, cp4)
	putWrites(t, s, writes("t", 4, "c"))
	same("a fork")
	if _, err := s.Prune(ctx, "t", []int64{2}, nil); err != nil {
		t.Fatal(err)
	}
	same("a prune of a branch, its blob and the head")
	if _, err := s.Prune(ctx, "t", []int64{1}, []store.Rebase{{ID: 3, State: []byte(`{"whole":3,"rebased":true}`), BlobRefs: []string{b1.Hash}}}); err != nil {
		t.Fatal(err)
	}
	same("a prune that re-roots and rebases")
	cp5 := withMeta(delta("t", 5, 4))
	cp5.Head = []byte(`{"h":5}`)
	put(t, s, cp5)
	same("a put of a head after the prunes")
	if rs, ok := s.(store.Resealer); ok {
		if _, err := rs.Reseal(ctx, "t", resealLonger); err != nil {
			t.Fatal(err)
		}
		same("a reseal")
	}
	if err := s.DeleteThread(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	same("a delete")
	if n, _ := s.Size(ctx, "t"); n != 0 {
		t.Errorf("Size after DeleteThread = %d, want 0", n)
	}
	put(t, s, checkpoint("t", 1, 0))
	same("a new start")
}

// resealLonger rewrites every document it may (not messages and blobs,
// which their hashes name) to a longer one.
func resealLonger(kind store.DocKind, _ string, doc []byte) ([]byte, error) {
	if kind == store.DocMessage || kind == store.DocBlob {
		return doc, nil
	}
	return fmt.Appendf(nil, `{"sealed":%q}`, doc), nil
}
