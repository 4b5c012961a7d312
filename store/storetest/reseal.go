package storetest

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"rewind/store"
)

// Reseal (store.Resealer): a thread's documents rewritten in place, in
// one transaction, by the rules that keep its hashes and search true.

// testReseal: every document of every kind reaches fn once; what it
// changes reads back byte for byte (listings, events and other threads
// untouched); a message body that would lose its words, an error of fn,
// and an unknown thread write nothing.
func testReseal(t *testing.T, s store.Store) {
	ctx := t.Context()
	rs, ok := s.(store.Resealer)
	if !ok {
		t.Fatal("the store is not a store.Resealer: every backend is")
	}
	m := message(1, "where is SO20260901")
	sealedHash := store.ContentHash([]byte(`{"sealed":1}`))
	sm := store.Message{Hash: sealedHash, Index: 2, Body: sealedBody(sealedHash, "QUJD")}
	b := blob("a large value")
	cp1 := withMeta(checkpoint("t", 1, 0))
	cp1.Messages = []store.Message{m}
	put(t, s, cp1, event("node.started", `{"n":1}`))
	cp2 := withMeta(delta("t", 2, 1))
	cp2.Messages, cp2.Blobs, cp2.BlobRefs = []store.Message{sm}, []store.Blob{b}, []string{b.Hash}
	cp2.Head = []byte(`{"head":2}`)
	put(t, s, cp2)
	putWrites(t, s, writes("t", 2, "task-a"))
	put(t, s, checkpoint("other", 1, 0))

	wrapped := func(doc []byte) []byte { return fmt.Appendf(nil, `{"r":%s}`, doc) }
	var seen []string
	n, err := rs.Reseal(ctx, "t", func(kind store.DocKind, hash string, doc []byte) ([]byte, error) {
		seen = append(seen, string(kind)+" "+hash)
		switch kind {
		case store.DocMessage:
			if hash == sealedHash {
				return sealedBody(sealedHash, "REVG"), nil // another key: no words either way
			}
			return doc, nil
		case store.DocBlob:
			return sealedBody(hash, "R0hJ"), nil
		}
		return wrapped(doc), nil
	})
	if err != nil {
		t.Fatalf("Reseal: %v", err)
	}
	slices.Sort(seen)
	want := []string{"blob " + b.Hash, "head ", "message " + m.Hash, "message " + sealedHash, "state ", "state ", "writes "}
	slices.Sort(want)
	if !slices.Equal(seen, want) || n != 6 {
		t.Fatalf("Reseal passed %q and changed %d; want %q and 6", seen, n, want)
	}
	resealedReadBack(t, s, cp2, m, sm, b, wrapped)
	resealRefusals(t, s, rs, m.Hash, wrapped)
}

// resealedReadBack: what testReseal's fn changed reads back byte for
// byte, and nothing else changed.
func resealedReadBack(t *testing.T, s store.Store, cp2 store.Checkpoint, m, sm store.Message, b store.Blob, wrapped func([]byte) []byte) {
	ctx := t.Context()
	sealedHash := sm.Hash
	got, err := s.Get(ctx, "t", 2)
	if err != nil {
		t.Fatal(err)
	}
	if string(got.State) != string(wrapped(cp2.State)) || string(got.Meta) != string(cp2.Meta) {
		t.Errorf("@2 reads %s / %s; want its state resealed, its listing as it was", got.State, got.Meta)
	}
	chain, err := s.Chain(ctx, "t", 2)
	if err != nil || len(chain) == 0 || string(chain[0].Head) != string(wrapped(cp2.Head)) {
		t.Errorf("Chain(@2) = %v, %v; want the head resealed", chain, err)
	}
	ms, bs, err := s.Bodies(ctx, "t", []string{m.Hash, sealedHash}, []string{b.Hash})
	if err != nil || len(ms) != 2 || len(bs) != 1 || string(bs[0].Body) != string(sealedBody(b.Hash, "R0hJ")) {
		t.Fatalf("Bodies = %v, %v, %v", ms, bs, err)
	}
	for _, got := range ms {
		if got.Hash == sealedHash && string(got.Body) != string(sealedBody(sealedHash, "REVG")) || got.Hash == m.Hash && string(got.Body) != string(m.Body) {
			t.Errorf("message %s reads %s", got.Hash, got.Body)
		}
	}
	if ws, err := s.Writes(ctx, "t", 2); err != nil || len(ws) != 1 || string(ws[0].Writes) != string(wrapped(writes("t", 2, "task-a").Writes)) {
		t.Errorf("Writes = %v, %v", ws, err)
	}
	if evs, err := s.Events(ctx, "t", 1); err != nil || len(evs) != 1 || string(evs[0].Payload) != `{"n":1}` {
		t.Errorf("events changed: %v, %v", evs, err)
	}
	if other, err := s.Get(ctx, "other", 1); err != nil || string(other.State) != string(checkpoint("other", 1, 0).State) {
		t.Errorf("another thread changed: %s, %v", other.State, err)
	}
	if found, err := s.Search(ctx, "t", "SO20260901", 0); err != nil || len(found) != 1 {
		t.Errorf("search after a reseal: %v, %v", found, err)
	}
}

// resealRefusals: a message body that would lose its words, a body
// under another hash, a document that is not JSON, an error of fn and an
// unknown thread each write nothing.
func resealRefusals(t *testing.T, s store.Store, rs store.Resealer, messageHash string, wrapped func([]byte) []byte) {
	ctx := t.Context()
	before, _ := s.Get(ctx, "t", 1)
	// keep leaves bodies as they are and wraps the other documents.
	keep := func(kind store.DocKind, doc []byte) []byte {
		if kind == store.DocMessage || kind == store.DocBlob {
			return doc
		}
		return wrapped(doc)
	}
	for name, fn := range map[string]func(store.DocKind, string, []byte) ([]byte, error){
		"a message that loses its words": func(kind store.DocKind, hash string, doc []byte) ([]byte, error) {
			if kind == store.DocMessage && hash == messageHash {
				return sealedBody(hash, "QUJD"), nil
			}
			return keep(kind, doc), nil
		},
		"a blob under another hash": func(kind store.DocKind, hash string, doc []byte) ([]byte, error) {
			if kind == store.DocBlob {
				return []byte(`"changed"`), nil
			}
			return keep(kind, doc), nil
		},
		"a head that is not JSON": func(kind store.DocKind, hash string, doc []byte) ([]byte, error) {
			if kind == store.DocHead {
				return []byte(`{"cut`), nil
			}
			return keep(kind, doc), nil
		},
	} {
		if _, err := rs.Reseal(ctx, "t", fn); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
	boom := errors.New("no key")
	if _, err := rs.Reseal(ctx, "t", func(kind store.DocKind, _ string, doc []byte) ([]byte, error) {
		if kind == store.DocWrites {
			return nil, boom
		}
		return keep(kind, doc), nil
	}); !errors.Is(err, boom) {
		t.Errorf("an error of fn: %v", err)
	}
	if after, err := s.Get(ctx, "t", 1); err != nil || string(after.State) != string(before.State) {
		t.Errorf("a refused reseal changed @1: %s, then %s (%v)", before.State, after.State, err)
	}
	if _, err := rs.Reseal(ctx, "nobody", func(_ store.DocKind, _ string, doc []byte) ([]byte, error) { return doc, nil }); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("an unknown thread: %v, want ErrNotFound", err)
	}
}
