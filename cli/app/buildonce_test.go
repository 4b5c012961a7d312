package app_test

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"

	"rewind/cli/app"
	"rewind/engine"
	"rewind/engine/model"
	"rewind/engine/ticket"
)

// TestOpenBuildsTheThreadsGraphOnce: a command opening a thread builds
// the graph the thread records, once, and no other: opened with another
// graph as the default (--graph's, or the ticket's), the default is not
// built to read which graph the thread records. Before, Open built the
// default graph's engine, read the record through it, and built the
// thread's graph's again.
func TestOpenBuildsTheThreadsGraphOnce(t *testing.T) {
	ctx := context.Background()
	spec := "sqlite:" + filepath.Join(t.TempDir(), "r.db")
	tk, err := app.Open(ctx, app.Config{Store: spec, Model: &app.ModelFlags{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tk.Engine.Run(ctx, "ticket-1", ticket.Input("Where is my parcel SO20260901?"), engine.RunConfig{}); err != nil {
		t.Fatal(err)
	}
	var builds atomic.Int64
	counted := &app.Graph{Name: "count",
		New: func() *engine.Graph {
			builds.Add(1)
			return engine.NewGraph("count", 1).Channel("n", engine.LastValue, 0).
				Node("one", func(context.Context, *engine.NodeContext) ([]engine.Write, error) {
					return []engine.Write{engine.Put("n", 1)}, nil
				}).
				Entry("one").Edge("one", engine.End)
		},
		Mock: func() *model.Mock {
			return model.NewMock(model.Text(func(model.Request) (string, error) { return "", nil }))
		}}
	ce, err := tk.For(counted)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ce.Run(ctx, "count-1", []engine.Write{engine.Put("n", 0)}, engine.RunConfig{}); err != nil {
		t.Fatal(err)
	}
	if err := tk.Close(); err != nil {
		t.Fatal(err)
	}
	choose := func(rec string) (*app.Graph, error) {
		if rec == "count" {
			return counted, nil
		}
		return nil, nil // the ticket's
	}
	for _, c := range []struct {
		thread, graph string
		builds        int64
	}{{"ticket-1", ticket.GraphName, 0}, {"count-1", "count", 1}} {
		builds.Store(0)
		a, err := app.Open(ctx, app.Config{Store: spec, Model: &app.ModelFlags{}, Graph: counted, Thread: c.thread, Choose: choose})
		if err != nil {
			t.Fatal(err)
		}
		if got := a.Engine.Graph().Name; got != c.graph {
			t.Errorf("%s opened on graph %s, want %s", c.thread, got, c.graph)
		}
		if got := builds.Load(); got != c.builds {
			t.Errorf("opening %s built graph count %d times, want %d", c.thread, got, c.builds)
		}
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
