package drill_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"rewind/cli/rewindbin"
	"rewind/engine"
	"rewind/engine/drill"
	"rewind/engine/model"
	"rewind/store/backend"
	"rewind/store/backend/backendtest"
)

// rounds is a graph rewind did not write: plan fans out to left and right
// (two edges, both writing seen, a map merged, and n, a counter), join
// routes back to plan until n reaches 4, then to finish.
func rounds() *engine.Graph {
	node := func(name string) engine.NodeFunc {
		return func(_ context.Context, nc *engine.NodeContext) ([]engine.Write, error) {
			var s struct{ N int }
			if err := nc.Values.Decode(&s, "n"); err != nil {
				return nil, err
			}
			ws := []engine.Write{engine.Put("seen", map[string]any{fmt.Sprintf("%s-%d", name, s.N): name})}
			if name == "left" || name == "right" {
				ws = append(ws, engine.Put("n", 1))
			}
			return ws, nil
		}
	}
	return engine.NewGraph("rounds", 1).
		Channel("topic", engine.LastValue, "").
		Channel("seen", engine.MergeMap, map[string]any{}).
		Channel("n", engine.Counter, 0).
		Input(func(in engine.Input, _ time.Time) ([]engine.Write, error) {
			return []engine.Write{engine.Put("topic", in.Text)}, nil
		}).
		Node("plan", node("plan")).Node("left", node("left")).Node("right", node("right")).
		Node("join", node("join")).Node("finish", node("finish")).
		Entry("plan").Edge("plan", "left").Edge("plan", "right").
		Edge("left", "join").Edge("right", "join").
		Route("join", func(v engine.Values) ([]engine.Target, error) {
			var s struct{ N int }
			if err := v.Decode(&s, "n"); err != nil {
				return nil, err
			}
			if s.N < 4 {
				return []engine.Target{engine.Goto("plan")}, nil
			}
			return []engine.Target{engine.Goto("finish")}, nil
		}, engine.Goto("plan"), engine.Goto("finish")).
		Edge("finish", engine.End)
}

// buildRounds is the workers' and the drill's engine on a store spec.
func buildRounds(ctx context.Context, spec string) (*engine.Engine, error) {
	st, err := backend.Open(ctx, spec)
	if err != nil {
		return nil, err
	}
	e, err := engine.New(st, rounds(), model.NewMock(nil))
	if err != nil {
		st.Close()
		return nil, err
	}
	return e, nil
}

// runGraphMatrix drills every point an uninterrupted run of rounds
// reaches, with this test binary as the worker, built without -race (its
// workers were 33 of the test's 35 s of CPU raced).
func runGraphMatrix(t *testing.T, spec string) drill.Result {
	exe := rewindbin.TestBinary(t, "rewind/engine/drill")
	var lines []string
	var mu sync.Mutex
	res, err := drill.RunGraph(context.Background(), drill.GraphConfig{
		Exe: exe, Store: spec, Build: buildRounds, Env: os.Environ(), Input: "rounds", Parallel: 8,
		Observe: func(l string) { mu.Lock(); lines = append(lines, l); mu.Unlock() },
	})
	if err != nil {
		t.Fatalf("graph drill: %v\n%s", err, strings.Join(lines, "\n"))
	}
	allPassed(t, res, lines)
	return res
}

// The generic matrix on a graph of the test's own, with a fan-out and a
// conditional route, on every store processes share (a real SQLite file,
// PostgreSQL): every point the run reaches is drilled by a real SIGKILL,
// and the thread resumed in new processes.
func TestGraphDrill(t *testing.T) {
	t.Parallel()
	backendtest.EachShared(t, func(t *testing.T, b backendtest.Backend) {
		t.Parallel()
		res := runGraphMatrix(t, b.Spec(t, "graphdrill"))
		var names []string
		for _, o := range res.Outcomes {
			names = append(names, o.Point)
		}
		for _, want := range []string{"before:plan", "after:join", "after-writes:left@1", "mid-fanout", "before-commit@1", "after-commit@3", "mid-transaction@2"} {
			if !slices.Contains(names, want) {
				t.Errorf("the matrix did not drill %s: %v", want, names)
			}
		}
		// The kills fell where their names say: mid-fanout with one of the
		// two branches' writes stored, the other held before it ran.
		for _, o := range res.Outcomes {
			if o.Point == "mid-fanout" && o.Figures["storedWrites"] != 1 {
				t.Errorf("mid-fanout: %v task writes stored at the kill, want 1 of the 2 branches", o.Figures["storedWrites"])
			}
			if o.Point == "before:plan" && o.Figures["killedAtCheckpoint"] != int64(1) {
				t.Errorf("before:plan: killed at checkpoint %v, want 1 (the input's)", o.Figures["killedAtCheckpoint"])
			}
		}
	})
}

// What a graph drill cannot run on is refused before any worker starts,
// saying what to give instead.
func TestGraphDrillRefusesWhatItCannotRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := "sqlite:" + t.TempDir() + "/refuse.db"
	noInput := func(ctx context.Context, spec string) (*engine.Engine, error) {
		e, err := buildRounds(ctx, spec)
		if err != nil {
			return nil, err
		}
		g := rounds().Input(nil)
		return engine.New(e.Store(), g, model.NewMock(nil))
	}
	for _, c := range []struct {
		why  string
		cfg  drill.GraphConfig
		want string
	}{
		{"no build", drill.GraphConfig{Exe: "x", Store: db}, "needs the worker binary (Exe), a store spec processes share (Store) and the engine's Build"},
		{"a memory store", drill.GraphConfig{Exe: "x", Store: "memory:", Build: buildRounds}, "cannot share a memory store; give a sqlite:PATH or postgres:// spec"},
		{"no Input", drill.GraphConfig{Exe: "x", Store: db, Build: noInput}, "declares no Input, so a drill cannot start its turn: declare one (Graph.Input)"},
		{"a node it lacks", drill.GraphConfig{Exe: "x", Store: db, Build: buildRounds, Points: []string{"before:nope"}}, `unknown kill point "before:nope" for graph rounds: choose one of before:finish`},
	} {
		_, err := drill.RunGraph(ctx, c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.why, err, c.want)
		}
	}
}
