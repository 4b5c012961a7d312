package engine_test

import (
	"testing"

	"rewind/engine"
)

// Every checkpoint names the graph that wrote it (Metadata.Graph, its
// listing's position 26), whoever wrote it: a turn, a fork, a replay, an
// update and an answer; a new engine on a new handle reads it back from
// the listing (History) and from the state (Get, Latest), on every store,
// as the engine that wrote it holds it in its cache.
func TestEveryCheckpointNamesItsGraph(t *testing.T) {
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
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.UpdateState(ctx, "g", head.ID, input("edit"), ""); err != nil {
				t.Fatal(err)
			}
			ok := func(engine.Checkpoint) ([]engine.Write, error) { return input("ok"), nil }
			if _, err := e.Answer(ctx, "g", ok, engine.RunConfig{}); err != nil {
				t.Fatal(err)
			}
			sources := map[string]bool{}
			for name, r := range map[string]*engine.Engine{"the writer": e, "a new engine": reopened(t, st, reopen, g)} {
				hs, err := r.History(ctx, "g", 0, 0)
				if err != nil {
					t.Fatal(err)
				}
				for _, h := range hs {
					sources[h.Source] = true
					cp, err := r.Get(ctx, "g", h.ID)
					if err != nil {
						t.Fatal(err)
					}
					if h.Metadata.Graph != g.Name || cp.Metadata.Graph != g.Name {
						t.Errorf("%s: @%d (%s) names graph %q in its listing, %q read whole; want %q", name, h.ID, h.Source, h.Metadata.Graph, cp.Metadata.Graph, g.Name)
					}
				}
				if cp, err := r.Latest(ctx, "g"); err != nil || cp.Metadata.Graph != g.Name {
					t.Errorf("%s: the newest checkpoint names graph %q (%v), want %q", name, cp.Metadata.Graph, err, g.Name)
				}
			}
			for _, s := range []string{engine.SourceInput, engine.SourceLoop, engine.SourceFork, engine.SourceUpdate} {
				if !sources[s] {
					t.Errorf("no checkpoint of source %s was written: the test checks less than it says (%v)", s, sources)
				}
			}
		})
	}
}
