package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"rewind/engine"
	"rewind/engine/model"
	"rewind/engine/ticket"
	"rewind/store"
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
