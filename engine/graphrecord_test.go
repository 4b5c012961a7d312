package engine_test

import (
	"testing"

	"rewind/engine"
)

// A run's first and last checkpoints name the graph that wrote them
// (Metadata.Graph, the listing's position 26), whoever ran: a turn, a
// fork, a replay, an update and an answer; the checkpoints between name
// none (they are their run's graph's: a listing costs no more bytes). A
// new engine on a new handle reads it back from the listing (History)
// and from the state (Get, Latest), on every store, as the engine that
// wrote it holds it in its cache.
func TestARunNamesItsGraph(t *testing.T) {
	for _, sc := range storeCases {
		t.Run(sc.name, func(t *testing.T) {
			ctx := t.Context()
			st, reopen := sc.open(t)
			g := gateGraph(nil)
			e := newTestEngine(t, st, g)
			if _, err := e.Run(ctx, "g", input("user"), engine.RunConfig{}); err != nil {
				t.Fatal(err)
			}
			if _, err := e.Fork(ctx, "g", 2, input("fork"), engine.RunConfig{}); err != nil {
				t.Fatal(err)
			}
			if _, err := e.Replay(ctx, "g", 2, engine.RunConfig{}); err != nil {
				t.Fatal(err)
			}
			head, err := e.Latest(ctx, "g")
			if err == nil {
				_, err = e.UpdateState(ctx, "g", head.ID, input("edit"), "")
			}
			if err != nil {
				t.Fatal(err)
			}
			ok := func(engine.Checkpoint) ([]engine.Write, error) { return input("ok"), nil }
			if _, err := e.Answer(ctx, "g", ok, engine.RunConfig{}); err != nil {
				t.Fatal(err)
			}
			checkRunsNameTheirGraph(t, g.Name, e, reopened(t, st, reopen, g))
		})
	}
}

// checkRunsNameTheirGraph: through the writer (its cache) and a new
// engine, each checkpoint of thread g, listed and read whole, names graph
// when it is its run's first or last, and none between; of every source.
func checkRunsNameTheirGraph(t *testing.T, graph string, engines ...*engine.Engine) {
	t.Helper()
	ctx := t.Context()
	sources, named, between := map[string]bool{}, map[string]bool{}, 0
	for n, r := range engines {
		hs, err := r.History(ctx, "g", 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hs {
			cp, err := r.Get(ctx, "g", h.ID)
			if err != nil {
				t.Fatal(err)
			}
			sources[h.Source] = true
			want := ""
			if h.Metadata.Run != nil || h.Metadata.Status != engine.RunRunning {
				want, named[h.Source] = graph, true
			} else {
				between++
			}
			if h.Metadata.Graph != want || cp.Metadata.Graph != want {
				t.Errorf("engine %d: @%d (%s, %s, run %v) names graph %q in its listing, %q read whole; want %q", n, h.ID, h.Source, h.Metadata.Status, h.Metadata.Run, h.Metadata.Graph, cp.Metadata.Graph, want)
			}
		}
		if cp, err := r.Latest(ctx, "g"); err != nil || cp.Metadata.Graph != graph {
			t.Errorf("engine %d: the newest checkpoint (done) names graph %q (%v), want %q", n, cp.Metadata.Graph, err, graph)
		}
	}
	for _, s := range []string{engine.SourceInput, engine.SourceLoop, engine.SourceFork, engine.SourceUpdate} {
		if !named[s] {
			t.Errorf("no checkpoint of source %s named the graph: the test checks less than it says (written %v, named %v)", s, sources, named)
		}
	}
	if between == 0 {
		t.Error("no checkpoint between a run's first and last: the test checks less than it says")
	}
}
