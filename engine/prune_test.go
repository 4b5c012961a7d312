package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"rewind/engine/model"
	"rewind/store"
	"rewind/store/backend/backendtest"
	"rewind/store/memory"
)

// pruneEngine is a two-node graph (a → b → end) on a memory store.
func pruneEngine(t testing.TB) (*Engine, *memory.Store) {
	t.Helper()
	node := func(name string) NodeFunc {
		return func(ctx context.Context, nc *NodeContext) ([]Write, error) {
			return []Write{Put("log", []map[string]any{{"by": name}})}, nil
		}
	}
	g := NewGraph("prune-test", 1).
		Channel("log", IndexedAppend("index"), []any{}).
		Node("a", node("a")).Node("b", node("b")).
		Entry("a").Edge("a", "b").Edge("b", End)
	st := memory.New()
	e, err := New(st, g, model.NewMock(model.Text(func(model.Request) (string, error) { return "ok", nil })))
	if err != nil {
		t.Fatal(err)
	}
	return e, st
}

// step adds a checkpoint whose parent is base: with asNode "b" it has no
// pending tasks, with "a" it waits for b (a paused branch).
func step(t *testing.T, e *Engine, thread string, base int64, asNode string) int64 {
	t.Helper()
	cp, err := e.UpdateState(t.Context(), thread, base, []Write{Put("log", []map[string]any{{"by": "test"}})}, asNode)
	if err != nil {
		t.Fatalf("UpdateState(%d, %s): %v", base, asNode, err)
	}
	return cp.ID
}

type chainLink struct{ id, parent, from int64 }

func chainOf(t *testing.T, e *Engine, thread string) []chainLink {
	t.Helper()
	cps, err := e.History(t.Context(), thread, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []chainLink
	for _, cp := range slices.Backward(cps) {
		out = append(out, chainLink{cp.ID, cp.ParentID, cp.RerootedFrom})
	}
	return out
}

// The tree
//
//	1 ─ 2 ─ 3 ─ 4 ─ 5 ─ 6 ─ 9 (head)
//	     ╲   ╲
//	      8   7 (paused: pending b)
//
// with keep-last 2 keeps 9 and 8 by rule, 7 as a paused tip, and
// re-roots all three.
func TestPruneKeepLastKeepsHeadAndPausedTips(t *testing.T) {
	t.Parallel()
	e, _ := pruneEngine(t)
	ctx := t.Context()
	prev := int64(0)
	for range 6 {
		prev = step(t, e, "t", prev, "b")
	}
	if id := step(t, e, "t", 3, "a"); id != 7 {
		t.Fatalf("paused branch is %d, want 7", id)
	}
	step(t, e, "t", 2, "b")
	step(t, e, "t", 6, "b")

	dry, err := e.Prune(ctx, "t", PrunePolicy{KeepLast: 2, DryRun: true})
	if err != nil {
		t.Fatalf("dry run: %v", err)
	}
	wantRerooted := []Reroot{{7, 3}, {8, 2}, {9, 6}}
	if !dry.DryRun || !slices.Equal(dry.Pruned, []int64{1, 2, 3, 4, 5, 6}) || !slices.Equal(dry.Rerooted, wantRerooted) ||
		!slices.Equal(dry.KeptTips, []int64{7}) || dry.Kept != 3 {
		t.Fatalf("dry run = %+v", dry)
	}
	if got := chainOf(t, e, "t"); len(got) != 9 {
		t.Fatalf("a dry run changed the thread: %v", got)
	}

	// Kept checkpoints are stored as deltas on the ones that go: they must
	// read the same after the prune.
	want := map[int64]Values{}
	for _, id := range []int64{7, 8, 9} {
		cp, err := e.Get(ctx, "t", id)
		if err != nil {
			t.Fatal(err)
		}
		want[id] = cp.Values
	}
	res, err := e.Prune(ctx, "t", PrunePolicy{KeepLast: 2})
	if err != nil {
		t.Fatalf("Prune: %v", err)
	}
	if res.DryRun || !slices.Equal(res.Pruned, dry.Pruned) || !slices.Equal(res.Rerooted, wantRerooted) || res.Kept != 3 ||
		res.Events != 6 {
		t.Fatalf("Prune = %+v; want what the dry run said, with 6 events (1 a checkpoint) deleted", res)
	}
	for id, values := range want {
		cp, err := e.Get(ctx, "t", id)
		if err != nil {
			t.Fatalf("Get(%d) after prune: %v", id, err)
		}
		if got, want := string(cp.Values["log"]), string(values["log"]); got != want {
			t.Errorf("checkpoint %d after prune: log = %s, want %s", id, got, want)
		}
	}
	if got, want := chainOf(t, e, "t"), []chainLink{{7, 0, 3}, {8, 0, 2}, {9, 0, 6}}; !slices.Equal(got, want) {
		t.Fatalf("chain after prune = %v, want %v", got, want)
	}
	paused, err := e.Get(ctx, "t", 7)
	if err != nil || len(paused.Tasks) != 1 || paused.Tasks[0].Node != "b" || paused.RerootedFrom != 3 {
		t.Fatalf("paused tip after prune = %+v, %v; want its pending b, re-rooted from 3", paused, err)
	}
	if chain, err := e.Ancestors(ctx, "t", 9); err != nil || len(chain) != 1 {
		t.Fatalf("Ancestors(9) = %d checkpoints, %v; want the re-rooted 9 alone", len(chain), err)
	}
	// Nothing left to prune: the rules and the tips keep the rest.
	if again, err := e.Prune(ctx, "t", PrunePolicy{KeepLast: 1}); err != nil || len(again.Pruned) != 1 || again.Pruned[0] != 8 {
		t.Fatalf("second prune = %+v, %v; want only the finished tip 8", again, err)
	}
}

// A paused head with one task's writes stored survives any prune, writes
// and all, and resumes running only the rest.
func TestPruneThenResume(t *testing.T) {
	t.Parallel()
	e, st := pruneEngine(t)
	ctx := t.Context()
	for range 3 {
		if _, err := e.Run(ctx, "t", []Write{Put("log", []map[string]any{{"by": "user"}})}, RunConfig{}); err != nil {
			t.Fatal(err)
		}
	}
	run, err := e.Run(ctx, "t", []Write{Put("log", []map[string]any{{"by": "user"}})}, RunConfig{InterruptBefore: []string{"b"}})
	if err != nil || run.Status != "interrupted" {
		t.Fatalf("Run = %+v, %v; want interrupted before b", run, err)
	}
	res, err := e.Prune(ctx, "t", PrunePolicy{KeepLast: 1})
	if err != nil || int64(len(res.Pruned)) != run.Checkpoint-1 || res.Kept != 1 {
		t.Fatalf("Prune = %+v, %v; want all but the head %d", res, err, run.Checkpoint)
	}
	if h, err := st.History(ctx, "t", 0, 0); err != nil || len(h) != 1 || h[0].RerootedFrom != run.Checkpoint-1 {
		t.Fatalf("stored after prune: %+v, %v", h, err)
	}
	resumed, err := e.Resume(ctx, "t", RunConfig{})
	if err != nil || resumed.Status != "done" || len(resumed.Steps) == 0 || resumed.Steps[0].Ran[0].Node != "b" {
		t.Fatalf("Resume after prune = %+v, %v; want b run, then done", resumed, err)
	}
	if latest, err := e.Latest(ctx, "t"); err != nil || latest.ParentID != run.Checkpoint {
		t.Fatalf("after resume, latest = %+v, %v; want a child of %d", latest, err, run.Checkpoint)
	}
}

func TestPruneOlderThan(t *testing.T) {
	t.Parallel()
	e, _ := pruneEngine(t)
	ctx := t.Context()
	prev := int64(0)
	var created []time.Time
	for range 5 {
		prev = step(t, e, "t", prev, "b")
		cp, err := e.Get(ctx, "t", prev)
		if err != nil {
			t.Fatal(err)
		}
		created = append(created, cp.CreatedAt)
		time.Sleep(3 * time.Millisecond)
	}
	// An hour after checkpoint 2 was written, 3-5 are younger than an hour.
	e.now = func() time.Time { return created[1].Add(time.Hour) }
	for _, tc := range []struct {
		policy PrunePolicy
		want   []int64
	}{
		{PrunePolicy{OlderThan: time.Hour}, []int64{1, 2}},
		{PrunePolicy{OlderThan: time.Hour, KeepLast: 4}, []int64{1}},    // either rule keeps
		{PrunePolicy{OlderThan: 2 * time.Hour, KeepLast: 1}, []int64{}}, // all younger than 2h
	} {
		p := tc.policy
		p.DryRun = true
		res, err := e.Prune(ctx, "t", p)
		if err != nil || !slices.Equal(res.Pruned, tc.want) {
			t.Errorf("Prune(%+v) prunes %v, %v; want %v", tc.policy, res.Pruned, err, tc.want)
		}
	}
	// Everything is old: only the head stays.
	e.now = func() time.Time { return created[4].Add(48 * time.Hour) }
	res, err := e.Prune(ctx, "t", PrunePolicy{OlderThan: 24 * time.Hour})
	if err != nil || !slices.Equal(res.Pruned, []int64{1, 2, 3, 4}) || !slices.Equal(res.Rerooted, []Reroot{{5, 4}}) {
		t.Fatalf("Prune = %+v, %v; want 1-4 pruned and 5 re-rooted from 4", res, err)
	}
}

func TestPruneRefusals(t *testing.T) {
	t.Parallel()
	e, st := pruneEngine(t)
	ctx := t.Context()
	step(t, e, "t", step(t, e, "t", 0, "b"), "b")
	for _, p := range []PrunePolicy{{}, {KeepLast: -1}, {OlderThan: -time.Hour}, {DryRun: true}} {
		if _, err := e.Prune(ctx, "t", p); !errors.Is(err, ErrPrunePolicy) {
			t.Errorf("Prune(%+v) = %v, want ErrPrunePolicy", p, err)
		}
	}
	_, err := e.Prune(ctx, "nope", PrunePolicy{KeepLast: 1})
	var fixer Fixer
	if !errors.Is(err, store.ErrNotFound) || !errors.As(err, &fixer) || fixer.Fixes()[0].Action != FixThreads {
		t.Errorf("Prune of an unknown thread = %v, want not found offering the list of threads", err)
	}
	if err := st.DeleteThread(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Prune of an unknown thread left rows behind (DeleteThread: %v)", err)
	}

	// Another live writer holds the thread: refused, nothing deleted; a
	// dry run still reads.
	release, err := st.Lock(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.Prune(ctx, "t", PrunePolicy{KeepLast: 1})
	if !errors.Is(err, store.ErrLocked) || !strings.Contains(err.Error(), "being run by another process") {
		t.Errorf("Prune of a locked thread = %v, want ErrLocked", err)
	}
	if dry, err := e.Prune(ctx, "t", PrunePolicy{KeepLast: 1, DryRun: true}); err != nil || !slices.Equal(dry.Pruned, []int64{1}) {
		t.Errorf("dry run on a locked thread = %+v, %v", dry, err)
	}
	if got := chainOf(t, e, "t"); len(got) != 2 {
		t.Errorf("a refused prune changed the thread: %v", got)
	}
	release()

	// Prune fences earlier writers, like a run: a stale writer's late
	// checkpoint is refused.
	stale, err := st.Fence(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Prune(ctx, "t", PrunePolicy{KeepLast: 1}); err != nil {
		t.Fatal(err)
	}
	late := store.Checkpoint{ThreadID: "t", ID: 3, ParentID: 2, State: []byte(`{"schemaVersion":1}`), Epoch: stale}
	if err := st.PutCheckpoint(ctx, late, nil); !errors.Is(err, store.ErrFenced) {
		t.Errorf("a write from before the prune's fence = %v, want ErrFenced", err)
	}
}

// BenchmarkPrune10kKeepLast100 is Engine.Prune end to end (lock, fence,
// reading the thread page by page, one store transaction) on a thread of
// 10,000 checkpoints of about 2 KB each. ns/prune is the Prune call alone.
func BenchmarkPrune10kKeepLast100(b *testing.B) {
	backendtest.Each(b, func(b *testing.B, be backendtest.Backend) {
		st := be.Open(b, "prune")
		e, _ := pruneEngine(b)
		e.store = st
		// A whole document, as rows before listings held them.
		type document struct {
			SchemaVersion int      `json:"schemaVersion"`
			Step          int      `json:"step"`
			Source        string   `json:"source"`
			Values        Values   `json:"values"`
			Tasks         []Task   `json:"tasks"`
			Metadata      Metadata `json:"metadata"`
		}
		doc, err := json.Marshal(document{SchemaVersion: e.graph.SchemaVersion, Step: 1, Source: SourceLoop, Tasks: []Task{}, Values: Values{
			"log": json.RawMessage("[" + strings.TrimSuffix(strings.Repeat(`{"by":"executor","text":"looked up the order and found it shipped","index":1},`, 24), ",") + "]")}})
		if err != nil {
			b.Fatal(err)
		}
		var i int
		var pruning time.Duration
		for b.Loop() {
			i++
			thread := fmt.Sprint("bench-", i)
			for id := int64(1); id <= 10_000; id++ {
				if err := st.PutCheckpoint(b.Context(), store.Checkpoint{ThreadID: thread, ID: id, ParentID: id - 1, State: doc, Base: true}, nil); err != nil {
					b.Fatal(err)
				}
			}
			start := time.Now()
			res, err := e.Prune(b.Context(), thread, PrunePolicy{KeepLast: 100})
			pruning += time.Since(start)
			if err != nil || len(res.Pruned) != 9_900 || res.Kept != 100 {
				b.Fatalf("Prune = %d pruned, %d kept, %v", len(res.Pruned), res.Kept, err)
			}
		}
		b.ReportMetric(float64(pruning.Nanoseconds())/float64(b.N), "ns/prune")
	})
}
