package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"rewind/engine"
	"rewind/engine/model"
	"rewind/engine/ticket"
	"rewind/store"
	"rewind/store/memory"
)

// noHeads is a store read as if it kept no head snapshot: the chain a
// snapshot stops goes on to its base.
type noHeads struct{ store.Store }

func (s noHeads) Get(ctx context.Context, thread string, id int64) (store.Checkpoint, error) {
	cp, err := s.Store.Get(ctx, thread, id)
	cp.Head = nil
	return cp, err
}

func (s noHeads) Latest(ctx context.Context, thread string) (store.Checkpoint, error) {
	cp, err := s.Store.Latest(ctx, thread)
	cp.Head = nil
	return cp, err
}

func (s noHeads) Chain(ctx context.Context, thread string, id int64) ([]store.Checkpoint, error) {
	chain, err := s.Store.Chain(ctx, thread, id)
	if err != nil {
		return nil, err
	}
	last := &chain[len(chain)-1]
	if len(last.Head) == 0 {
		return chain, nil
	}
	last.Head = nil
	if last.Base || last.Rebased != nil || last.ParentID == 0 {
		return chain, nil
	}
	rest, err := s.Store.Chain(ctx, thread, last.ParentID)
	for i := range rest {
		rest[i].Head = nil
	}
	return append(chain, rest...), err
}

// checkHead reads the thread's newest checkpoint in a new process's way
// twice, from its head snapshot and from its chain, and wants the same
// checkpoint: values, the writes that made it (whole, not as stored
// patches), tasks, metadata. ok is false when the newest has no snapshot.
func checkHead(t *testing.T, st store.Store, thread, when string) (ok bool) {
	t.Helper()
	return checkHeadWith(t, st, thread, when, func(st store.Store) (*engine.Engine, error) { return ticket.NewEngine(st, ticket.NewMock()) })
}

func checkHeadWith(t *testing.T, st store.Store, thread, when string, newEngine func(store.Store) (*engine.Engine, error)) (ok bool) {
	t.Helper()
	ctx := t.Context()
	row, err := st.Latest(ctx, thread)
	if err != nil {
		t.Fatalf("%s: Latest: %v", when, err)
	}
	if len(row.Head) == 0 {
		return false
	}
	read := func(st store.Store) []byte {
		e, err := newEngine(st)
		if err != nil {
			t.Fatal(err)
		}
		cp, err := e.Get(ctx, thread, row.ID)
		if err != nil {
			t.Fatalf("%s: Get(%d): %v", when, row.ID, err)
		}
		out, err := json.Marshal(cp)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	// The same JSON: a rebuilt object may order its keys otherwise than
	// the writer did.
	if head, chain := read(st), read(noHeads{st}); !sameDoc(head, chain) {
		t.Fatalf("%s: checkpoint %d from its head snapshot\n%s\nbut from its chain\n%s", when, row.ID, head, chain)
	}
	return true
}

// A run's last checkpoint is its thread's head snapshot on every store,
// and reads the same from it as from its chain; one with a task due (an
// interrupt) is not, and a fork's end takes the snapshot over.
func TestHeadSnapshotReadsAsItsChain(t *testing.T) {
	t.Cleanup(engine.SetBaseEvery(5)) // the process's: once, for the stores in parallel
	for _, sc := range storeCases {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			st, reopen := sc.open(t)
			e, err := ticket.NewEngine(st, ticket.NewMock())
			if err != nil {
				t.Fatal(err)
			}
			for i := range 12 { // compaction, several bases, patched objects
				res, err := e.Run(ctx, "h", ticket.Input(sentences[i%len(sentences)]), engine.RunConfig{})
				if err != nil {
					t.Fatal(err)
				}
				if !checkHead(t, st, "h", "after turn "+sentences[i%len(sentences)]) {
					t.Fatalf("turn %d ended at @%d without a head snapshot", i+1, res.Checkpoint)
				}
			}
			if _, err := e.Fork(ctx, "h", 3, ticket.Input(sentences[1]), engine.RunConfig{}); err != nil {
				t.Fatal(err)
			}
			if !checkHead(t, st, "h", "after a fork") {
				t.Fatal("a fork's end has no head snapshot")
			}
			res, err := e.Run(ctx, "h", ticket.Input(sentences[0]), engine.RunConfig{InterruptBefore: []string{"executor"}})
			if err != nil {
				t.Fatal(err)
			}
			if row, err := st.Get(ctx, "h", res.Checkpoint); err != nil || len(row.Head) != 0 {
				t.Fatalf("@%d waits at an interrupt: it should not be the snapshot (%v)", res.Checkpoint, err)
			}
			if reopen != nil {
				st = reopen()
			}
			if _, err := ticket.NewEngine(st, ticket.NewMock()); err != nil {
				t.Fatal(err)
			}
			e2, _ := ticket.NewEngine(st, ticket.NewMock())
			if _, err := e2.Resume(ctx, "h", engine.RunConfig{}); err != nil {
				t.Fatal(err)
			}
			if !checkHead(t, st, "h", "after the resume") {
				t.Fatal("a resumed run's end has no head snapshot")
			}
		})
	}
}

func sameDoc(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

// A run that ends on a patched object (stored as a patch of its parent's)
// with a long string and a value of the caller's that looks like a blob
// reference: the snapshot holds the write whole and the object escaped.
func TestHeadSnapshotHoldsWholeWrites(t *testing.T) {
	t.Cleanup(engine.SetBaseEvery(4)) // the process's: once, for the stores in parallel
	for _, sc := range storeCases {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			st, _ := sc.open(t)
			e, err := objectEngine(st)
			if err != nil {
				t.Fatal(err)
			}
			for i := range 6 {
				if _, err := e.Run(t.Context(), "o", []engine.Write{engine.Put("note", i)}, engine.RunConfig{}); err != nil {
					t.Fatal(err)
				}
				if !checkHeadWith(t, st, "o", fmt.Sprint("after run ", i+1), objectEngine) {
					t.Fatalf("run %d has no head snapshot", i+1)
				}
			}
			fresh, _ := objectEngine(st)
			cp, err := fresh.Latest(t.Context(), "o")
			if err != nil {
				t.Fatal(err)
			}
			var doc map[string]any
			if err := json.Unmarshal(cp.Values["doc"], &doc); err != nil || doc["n"] != 6.0 || !reflect.DeepEqual(doc["fake"], map[string]any{"$b": "0123456789abcdef0123"}) {
				t.Fatalf("the newest doc read back as %s (%v)", cp.Values["doc"], err)
			}
		})
	}
}

// objectEngine runs a graph whose one node patches an object channel
// (stored as a patch of its parent's), with a long string (a blob in a
// base) and a value of the caller's that looks like a blob reference.
func objectEngine(st store.Store) (*engine.Engine, error) {
	edit := func(_ context.Context, nc *engine.NodeContext) ([]engine.Write, error) {
		var doc map[string]any
		if err := json.Unmarshal(nc.Values["doc"], &doc); err != nil || doc == nil {
			doc = map[string]any{}
		}
		n, _ := doc["n"].(float64)
		doc["n"] = n + 1
		doc["text"] = strings.Repeat(fmt.Sprint("turn ", n+1, " "), 300) // a blob in a base
		doc["fake"] = map[string]any{"$b": "0123456789abcdef0123"}
		return []engine.Write{engine.Put("doc", doc)}, nil
	}
	g := engine.NewGraph("head-test", 1).Channel("doc", engine.LastValue, map[string]any{}).Object("doc").Channel("note", engine.LastValue, nil).
		Node("edit", edit).Entry("edit").Edge("edit", engine.End)
	return engine.New(st, g, model.NewMock(model.Text(func(model.Request) (string, error) { return "ok", nil })))
}

// A prune that deletes a delta checkpoint's parent stores the checkpoint
// whole: it reads as it did before, the writes that made it included
// (not the patches of a parent that is gone).
func TestPruneRebaseKeepsWholeWrites(t *testing.T) {
	t.Cleanup(engine.SetBaseEvery(50)) // the process's: once, for the stores in parallel
	for _, sc := range storeCases {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			st, _ := sc.open(t)
			e, err := objectEngine(st)
			if err != nil {
				t.Fatal(err)
			}
			for i := range 5 {
				if _, err := e.Run(ctx, "p", []engine.Write{engine.Put("note", i)}, engine.RunConfig{}); err != nil {
					t.Fatal(err)
				}
			}
			read := func(id int64) map[string]any {
				fresh, _ := objectEngine(st)
				cp, err := fresh.Get(ctx, "p", id)
				if err != nil {
					t.Fatalf("Get(%d): %v", id, err)
				}
				raw, _ := json.Marshal(cp)
				var m map[string]any
				if err := json.Unmarshal(raw, &m); err != nil {
					t.Fatal(err)
				}
				delete(m, "parentId")
				delete(m, "rerootedFrom")
				return m
			}
			latest, _ := e.Latest(ctx, "p")
			keep := int64(3)
			before := map[int64]map[string]any{}
			for id := latest.ID - keep + 1; id <= latest.ID; id++ {
				before[id] = read(id)
			}
			res, err := e.Prune(ctx, "p", engine.PrunePolicy{KeepLast: int(keep)})
			if err != nil || len(res.Rerooted) != 1 {
				t.Fatalf("Prune = %+v, %v; want one checkpoint re-rooted", res, err)
			}
			for id, want := range before {
				if got := read(id); !reflect.DeepEqual(got, want) {
					g, _ := json.Marshal(got)
					w, _ := json.Marshal(want)
					t.Errorf("checkpoint %d after the prune reads\n%s\nbut before it\n%s", id, g, w)
				}
			}
		})
	}
}

// rowsRead is a store that counts the checkpoint rows its reads return.
type rowsRead struct {
	store.Store
	rows, bodies int
}

func (s *rowsRead) Get(ctx context.Context, thread string, id int64) (store.Checkpoint, error) {
	s.rows++
	return s.Store.Get(ctx, thread, id)
}

func (s *rowsRead) Latest(ctx context.Context, thread string) (store.Checkpoint, error) {
	s.rows++
	return s.Store.Latest(ctx, thread)
}

func (s *rowsRead) Chain(ctx context.Context, thread string, id int64) ([]store.Checkpoint, error) {
	chain, err := s.Store.Chain(ctx, thread, id)
	s.rows += len(chain)
	return chain, err
}

func (s *rowsRead) Bodies(ctx context.Context, thread string, messages, blobs []string) ([]store.Message, []store.Blob, error) {
	s.bodies++
	return s.Store.Bodies(ctx, thread, messages, blobs)
}

// bigAttachment is an attachment that carries n bytes inline (a pasted
// image), seeded so that two differ.
func bigAttachment(n int, seed byte) ticket.Attachment {
	raw := make([]byte, n)
	for i := range raw {
		raw[i] = 'A' + (byte(i)*7+seed)%26
	}
	return ticket.Attachment{ID: "pasted", Kind: "image", Ref: "data:text/plain," + string(raw)}
}

// headBlobRef finds the blob hashes a head snapshot refers to.
var headBlobRef = regexp.MustCompile(`"\$b":"([0-9a-f]{20})"`)

// A thread holding a 200 KB value keeps its head snapshot, which holds
// the value by reference: a new engine loads the newest checkpoint from
// that one row (and its blob), and each turn stores the value no more.
func TestHeadSnapshotOfALargeValue(t *testing.T) {
	const big = 200 << 10
	for _, sc := range storeCases {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			st, _ := sc.open(t)
			sizes := largeValueTurns(t, st, big)
			for i := 2; i < len(sizes); i++ {
				if grew := sizes[i] - sizes[i-1]; grew > big/4 {
					t.Errorf("turn %d grew the thread by %d bytes: the %d KB value is stored again (sizes %v)", i+1, grew, big>>10, sizes)
				}
			}
			rr := &rowsRead{Store: st}
			latest, err := ticketEngine(t, rr).Latest(ctx, "big")
			if err != nil {
				t.Fatal(err)
			}
			if rr.rows != 1 || rr.bodies > 1 {
				t.Errorf("a new engine read %d checkpoint rows and %d times messages and blobs for the newest checkpoint; want its one row, then its blob", rr.rows, rr.bodies)
			}
			if !strings.Contains(string(latest.Values["attachments"]), bigAttachment(big, 0).Ref) {
				t.Errorf("the newest checkpoint lost the %d KB value: attachments %.200s", big>>10, latest.Values["attachments"])
			}
		})
	}
}

// largeValueTurns runs five turns on thread "big", the first attaching
// a value of big bytes, and wants each to end at a head snapshot that
// reads as its chain and holds the value by reference. It returns the
// thread's size after each.
func largeValueTurns(t *testing.T, st store.Store, big int) []int64 {
	t.Helper()
	ctx := t.Context()
	e := ticketEngine(t, st)
	var sizes []int64
	for i := range 5 {
		input := ticket.Input(sentences[i%len(sentences)])
		if i == 0 {
			input = append(input, engine.Put("attachments", []ticket.Attachment{bigAttachment(big, 0)}))
		}
		if _, err := e.Run(ctx, "big", input, engine.RunConfig{}); err != nil {
			t.Fatal(err)
		}
		if !checkHead(t, st, "big", fmt.Sprint("after turn ", i+1)) {
			t.Fatalf("turn %d with a %d KB value ended without a head snapshot", i+1, big>>10)
		}
		if row, _ := st.Latest(ctx, "big"); len(row.Head) > big/4 {
			t.Fatalf("turn %d's head snapshot is %d bytes: it holds the %d KB value, not a reference", i+1, len(row.Head), big>>10)
		}
		size, err := st.Size(ctx, "big")
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, size)
	}
	return sizes
}

// The blobs a head snapshot refers to outlive neither a prune nor a
// delete: after a prune every blob the thread keeps is one a kept row
// refers to, the value replaced is gone, and the newest still reads (and
// gets its snapshot back at the next turn); a delete leaves none.
func TestHeadSnapshotBlobsLeaveNoOrphan(t *testing.T) {
	const big = 100 << 10
	for _, sc := range storeCases {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			st, _ := sc.open(t)
			e := ticketEngine(t, st)
			seen := replacedValueTurns(t, e, st, big)
			if _, err := e.Prune(ctx, "orphans", engine.PrunePolicy{KeepLast: 2}); err != nil {
				t.Fatal(err)
			}
			checkNoOrphanBlobs(t, st, "orphans", seen)
			cp, err := ticketEngine(t, st).Latest(ctx, "orphans")
			if err != nil {
				t.Fatalf("the newest after the prune: %v", err)
			}
			if !strings.Contains(string(cp.Values["attachments"]), bigAttachment(big, 1).Ref) {
				t.Fatalf("the newest after the prune lost its value: %.200s", cp.Values["attachments"])
			}
			if _, err := e.Run(ctx, "orphans", ticket.Input(sentences[3]), engine.RunConfig{}); err != nil {
				t.Fatal(err)
			}
			if !checkHead(t, st, "orphans", "after the prune and a turn") {
				t.Fatal("the turn after a prune stored no head snapshot")
			}
			if err := e.DeleteThread(ctx, "orphans", false); err != nil {
				t.Fatal(err)
			}
			for h := range seen {
				if bs, err := st.Blobs(ctx, "orphans", []string{h}); err != nil || len(bs) != 0 {
					t.Errorf("after the delete the thread keeps blob %s (%v)", h, err)
				}
			}
		})
	}
}

// replacedValueTurns runs three turns on thread "orphans": the first
// attaches a value of big bytes, the second replaces it (the same id).
// It returns the blobs the head snapshots referred to, at least both
// values'.
func replacedValueTurns(t *testing.T, e *engine.Engine, st store.Store, big int) map[string]bool {
	t.Helper()
	seen := map[string]bool{}
	for i := range 3 {
		input := ticket.Input(sentences[i])
		if i < 2 {
			input = append(input, engine.Put("attachments", []ticket.Attachment{bigAttachment(big, byte(i))}))
		}
		if _, err := e.Run(t.Context(), "orphans", input, engine.RunConfig{}); err != nil {
			t.Fatal(err)
		}
		row, _ := st.Latest(t.Context(), "orphans")
		for _, m := range headBlobRef.FindAllSubmatch(row.Head, -1) {
			seen[string(m[1])] = true
		}
	}
	if len(seen) < 2 {
		t.Fatalf("the head snapshots referred to %d blobs; want both values' by reference", len(seen))
	}
	return seen
}

// checkNoOrphanBlobs wants the thread to keep none of the blobs seen
// that no kept checkpoint refers to.
func checkNoOrphanBlobs(t *testing.T, st store.Store, thread string, seen map[string]bool) {
	t.Helper()
	kept, err := st.History(t.Context(), thread, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	referred := map[string]bool{}
	for _, cp := range kept {
		for _, h := range cp.BlobRefs {
			referred[h] = true
		}
	}
	for h := range seen {
		bs, err := st.Blobs(t.Context(), thread, []string{h})
		if err != nil {
			t.Fatal(err)
		}
		if len(bs) != 0 && !referred[h] {
			t.Errorf("after the prune the thread keeps blob %s, which no kept checkpoint refers to", h)
		}
	}
}

// BenchmarkHeadLoad is what a new process's first load of a thread's
// newest checkpoint does past the store: a new engine reads its head
// snapshot (a transcript of a few dozen messages) and rebuilds it.
func BenchmarkHeadLoad(b *testing.B) {
	st := memory.New()
	e := ticketEngine(b, st)
	for i := range 40 {
		if _, err := e.Run(b.Context(), "h", ticket.Input(sentences[i%len(sentences)]), engine.RunConfig{}); err != nil {
			b.Fatal(err)
		}
	}
	if row, err := st.Latest(b.Context(), "h"); err != nil || len(row.Head) == 0 {
		b.Fatalf("no head snapshot to read (%v)", err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ticketEngine(b, st).Latest(b.Context(), "h"); err != nil {
			b.Fatal(err)
		}
	}
}

// A head snapshot keeps a value whose strings are at most 8 KB as it is
// (a ledger's pages, a summary): a new engine reads the newest checkpoint
// from its one row and no blob. A longer string stays a blob reference,
// and so do all of them when keeping them in place would make the
// snapshot larger than 64 KB.
func TestHeadSnapshotKeepsMidSizeStringsInPlace(t *testing.T) {
	var ten []ticket.Attachment
	for i := range 10 {
		a := bigAttachment(7<<10, byte(i))
		a.ID = fmt.Sprint("pasted-", i)
		ten = append(ten, a)
	}
	cases := []struct {
		name   string
		attach []ticket.Attachment
		refers bool
	}{
		{"4 KB in place", []ticket.Attachment{bigAttachment(4<<10, 0)}, false},
		{"12 KB by reference", []ticket.Attachment{bigAttachment(12<<10, 0)}, true},
		{"ten of 7 KB by reference", ten, true},
	}
	for _, sc := range storeCases {
		for _, c := range cases {
			t.Run(sc.name+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				st, _ := sc.open(t)
				checkHeadAttachments(t, st, c.attach, c.refers)
			})
		}
	}
}

// checkHeadAttachments runs two turns on thread "mid", the first putting
// attach, and wants the head snapshot to refer to blobs or not (refers),
// and a new engine to read the newest from one row, reading blobs only
// when it refers to them.
func checkHeadAttachments(t *testing.T, st store.Store, attach []ticket.Attachment, refers bool) {
	t.Helper()
	ctx := t.Context()
	e := ticketEngine(t, st)
	for i := range 2 {
		input := ticket.Input(sentences[i])
		if i == 0 {
			input = append(input, engine.Put("attachments", attach))
		}
		if _, err := e.Run(ctx, "mid", input, engine.RunConfig{}); err != nil {
			t.Fatal(err)
		}
	}
	if !checkHead(t, st, "mid", "after two turns") {
		t.Fatal("the run ended without a head snapshot")
	}
	row, err := st.Latest(ctx, "mid")
	if err != nil {
		t.Fatal(err)
	}
	if refs := headBlobRef.FindAll(row.Head, -1); (len(refs) > 0) != refers {
		t.Errorf("the head snapshot (%d bytes) refers to %d blobs; want references: %v", len(row.Head), len(refs), refers)
	}
	rr := &rowsRead{Store: st}
	latest, err := ticketEngine(t, rr).Latest(ctx, "mid")
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	if refers {
		want = 1
	}
	if rr.rows != 1 || rr.bodies != want {
		t.Errorf("a new engine read %d checkpoint rows and %d times messages and blobs for the newest; want 1 and %d", rr.rows, rr.bodies, want)
	}
	for _, a := range attach {
		if !strings.Contains(string(latest.Values["attachments"]), a.Ref) {
			t.Fatalf("the newest checkpoint lost attachment %s: %.200s", a.ID, latest.Values["attachments"])
		}
	}
}
