package engine_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"rewind/engine"
	"rewind/engine/model"
)

// resetGraph has a channel of every kind a replay may skip writes of
// (LastValue, Counter, TurnMap, an Object, a Keyed list, the transcript)
// and one it may not (MergeMap); its one node writes each of them, now in
// part (a patch, an increment, a merge, an append) and now whole, as the
// seed in its input says.
func resetGraph() *engine.Graph {
	return engine.NewGraph("resets", 1).
		Channel("msgs", engine.IndexedAppend("index"), []any{}).
		Channel("last", engine.LastValue, nil).
		Channel("count", engine.Counter, 0).
		Channel("turn", engine.TurnMap, map[string]int{}).
		Channel("merge", engine.MergeMap, map[string]int{}).
		Channel("obj", engine.LastValue, nil).
		Channel("items", engine.MergeByID("id"), []any{}).
		Channel("seed", engine.LastValue, 0).
		Transcript("msgs", "index").
		Keyed("items", "id").
		Object("obj").
		Node("step", func(_ context.Context, nc *engine.NodeContext) ([]engine.Write, error) {
			var seed uint64
			_ = nc.Values.Decode(&struct {
				Seed *uint64 `json:"seed"`
			}{&seed}, "seed")
			rng := rand.New(rand.NewPCG(seed, 1))
			n := rng.IntN(1000)
			var ws []engine.Write
			if rng.IntN(2) == 0 {
				ws = append(ws, engine.Put("last", map[string]any{"n": n}))
			}
			if rng.IntN(4) == 0 {
				ws = append(ws, engine.Put("count", map[string]any{"set": n}))
			} else {
				ws = append(ws, engine.Put("count", 1))
			}
			if rng.IntN(4) == 0 {
				ws = append(ws, engine.Put("turn", map[string]any{"$reset": map[string]int{"r": n}}))
			} else {
				ws = append(ws, engine.Put("turn", map[string]int{fmt.Sprint("k", n%5): n}))
			}
			ws = append(ws, engine.Put("merge", map[string]int{fmt.Sprint("m", n%7): n}))
			// "n" changes every write, "even" and "third" come and go, and
			// "slow" (a blob) and "rare" change every few writes: an older
			// patch's field that no newer patch names must survive its
			// newer ones, and one they set or delete is read from them.
			obj := map[string]any{"fixed": "a long text that stays the same from write to write", "n": n,
				"slow": fmt.Sprint(seed/5, strings.Repeat("a long text kept as a blob ", 50))}
			if n%2 == 0 {
				obj["even"] = n
			}
			if n%3 == 0 {
				obj["third"] = []int{n, n}
			}
			if seed%7 != 3 {
				obj["rare"] = seed / 7
			}
			if rng.IntN(5) == 0 {
				obj = map[string]any{"other": n} // smaller whole: stored as $w
			}
			ws = append(ws, engine.Put("obj", obj))
			if rng.IntN(5) == 0 {
				ws = append(ws, engine.Replace("items", []map[string]any{{"id": "a", "v": n}, {"id": fmt.Sprint(n % 3), "v": 0}}))
			} else {
				ws = append(ws, engine.Put("items", []map[string]any{{"id": fmt.Sprint(n % 3), "v": n, "note": "a note long enough to patch"}}))
			}
			if rng.IntN(6) == 0 {
				ws = append(ws, engine.Replace("msgs", []map[string]any{{"role": "summary", "n": n}}))
			} else {
				ws = append(ws, engine.Put("msgs", []map[string]any{{"role": "ai", "n": n}}))
			}
			return ws, nil
		}).
		Entry("step").
		Edge("step", engine.End)
}

// TestReplaySkipsOnlyWhatIsReplaced writes long delta chains through
// every kind of channel a replay skips writes of, and checks every
// checkpoint against the values it was written with and against a
// replay of every write, on every store.
func TestReplaySkipsOnlyWhatIsReplaced(t *testing.T) {
	t.Parallel()
	for _, sc := range storeCases {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			st, _ := sc.open(t)
			newEngine := func() *engine.Engine {
				e, err := engine.New(st, resetGraph(), model.NewMock(model.Text(func(model.Request) (string, error) { return "ok", nil })))
				if err != nil {
					t.Fatal(err)
				}
				return e
			}
			e := newEngine()
			// The writer's own base interval (not the process's), so the
			// stores and the package's other tests run at once.
			engine.Tune(e, 64, false)
			ref := &reference{values: map[int64]engine.Values{}}
			for i := 0; i < 40; i++ {
				input := []engine.Write{engine.Put("seed", i), engine.Put("msgs", []map[string]any{{"role": "user", "n": i}})}
				if _, err := e.Run(t.Context(), "r", input, engine.RunConfig{Hook: ref.hook}); err != nil {
					t.Fatal(err)
				}
			}
			// Every checkpoint read cold (a new engine) rebuilds the values
			// it was written with: checked on checkReplayAllWith's skipping
			// read, which is that Get (rebuilding each a third time cost a
			// third of the test).
			checked := map[int64]bool{}
			checkReplayAllWith(t, st, "r", newEngine, func(id int64, cp engine.Checkpoint) {
				want, ok := ref.values[id]
				if !ok {
					return
				}
				checked[id] = true
				if ch, ok := sameValues(cp.Values, want); !ok {
					t.Fatalf("checkpoint %d rebuilt channel %q as\n%s\nbut it was written as\n%s", id, ch, cp.Values[ch], want[ch])
				}
			})
			for _, id := range ref.ids() {
				if !checked[id] {
					t.Fatalf("checkpoint %d was written but History does not list it: its values went unchecked", id)
				}
			}
		})
	}
}
