package app_test

import (
	"context"
	"slices"
	"testing"

	"rewind/cli/app"
	"rewind/engine"
	"rewind/engine/model"
	"rewind/store"
)

// App.For builds another graph's engine on the store the app opened
// (what `rewind tui` opens a thread of another graph on), with that
// graph's own mock when the flags chose the mock: its thread is the
// app's store's, and its model answers its own roles.
func TestForBuildsAnotherGraphOnTheSameStore(t *testing.T) {
	ctx := context.Background()
	a, err := app.Open(ctx, app.Config{Store: "memory:", Model: &app.ModelFlags{}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ask := func(ctx context.Context, nc *engine.NodeContext) ([]engine.Write, error) {
		resp, err := nc.Model.Complete(ctx, model.Simple("oracle", "Answer in one word.", "six times seven"))
		if err != nil {
			return nil, err
		}
		return []engine.Write{engine.Put("answer", resp.Text)}, nil
	}
	g := &app.Graph{Name: "ask",
		New: func() *engine.Graph {
			return engine.NewGraph("ask", 1).Channel("answer", engine.LastValue, "").Node("ask", ask).Entry("ask").Edge("ask", engine.End)
		},
		Mock: func() *model.Mock {
			return model.NewMock(model.Text(func(model.Request) (string, error) { return "fortytwo", nil }))
		}}
	e, err := a.For(g)
	if err != nil {
		t.Fatal(err)
	}
	if e.Graph().Name != "ask" {
		t.Fatalf("For built graph %s, want ask", e.Graph().Name)
	}
	if _, err := e.Run(ctx, "a", []engine.Write{engine.Put("answer", "")}, engine.RunConfig{}); err != nil {
		t.Fatalf("a run on the other graph (its own mock answers oracle): %v", err)
	}
	var got struct{ Answer string }
	if cp, err := e.Latest(ctx, "a"); err != nil || cp.Values.Decode(&got, "answer") != nil || got.Answer != "fortytwo" {
		t.Fatalf("the other graph's answer %q (%v), want its own mock's fortytwo", got.Answer, err)
	}
	ts, err := a.Engine.Threads(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(ts, func(th store.Thread) bool { return th.ID == "a" }) {
		t.Fatalf("the app's engine does not see the thread the other graph ran: %v", ts)
	}
}
