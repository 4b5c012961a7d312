package engine_test

import (
	"context"
	"errors"
	"testing"

	"rewind/engine"
	"rewind/engine/model"
	"rewind/store/browse"
	"rewind/store/memory"
)

// The engine read through browse.Source: a fan-out of three Sends paused
// before it ran, then resumed, then a fork of the first checkpoint.
func TestBrowseReadsTheEngine(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g := engine.NewGraph("browse", 1).
		Channel("messages", engine.IndexedAppend("index"), []any{}).
		Channel("findings", engine.IndexedAppend("index"), []any{}).
		Node("plan", func(context.Context, *engine.NodeContext) ([]engine.Write, error) {
			return []engine.Write{engine.Put("messages", []map[string]any{{"role": "ai", "content": "fanning out", "id": "ai-2"}})}, nil
		}).
		Node("worker", func(_ context.Context, nc *engine.NodeContext) ([]engine.Write, error) {
			return []engine.Write{engine.Put("findings", []map[string]any{{"part": string(nc.Task.Args)}})}, nil
		}).
		Entry("plan").
		Route("plan", func(engine.Values) ([]engine.Target, error) {
			return []engine.Target{engine.Send("worker", 0), engine.Send("worker", 1), engine.Send("worker", 2)}, nil
		}).
		Edge("worker", engine.End)
	e, err := engine.New(memory.New(), g, model.NewMock(model.Text(func(model.Request) (string, error) { return "ok", nil })))
	if err != nil {
		t.Fatal(err)
	}
	input := []engine.Write{engine.Put("messages", []map[string]any{{"role": "user", "content": "go", "id": "h-1"}})}
	if _, err := e.Run(ctx, "t", input, engine.RunConfig{InterruptBefore: []string{"worker"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Resume(ctx, "t", engine.RunConfig{}); err != nil {
		t.Fatal(err)
	}
	src := e.Browse(browse.About{Backend: "memory", Where: "memory:"})
	if a := src.About(); a.Kind != browse.KindRewind || a.Status() != "rewind store" {
		t.Errorf("About %+v (%q)", a, a.Status())
	}
	ts, err := src.Threads(ctx)
	if err != nil || len(ts) != 1 || ts[0].ID != "t" || len(ts[0].Namespaces) != 1 || ts[0].Namespaces[0].NS != "" || ts[0].Latest != "3" {
		t.Fatalf("threads %+v, %v: want t with one chain, latest 3", ts, err)
	}
	c := browse.Chain{Thread: "t"}
	h, err := src.History(ctx, c, "", 0)
	if err != nil || len(h) != 3 || h[0].ID != "3" || h[0].Parent != "2" || h[2].Parent != "" {
		t.Fatalf("history %+v, %v: want 3 2 1, newest first, each with its parent", h, err)
	}
	if h, err := src.History(ctx, c, "3", 1); err != nil || len(h) != 1 || h[0].ID != "2" {
		t.Errorf("history before 3, limit 1: %+v, %v", h, err)
	}
	// Checkpoint 2 is the fan-out, paused before its workers ran.
	fan := h[1]
	if fan.ID != "2" || len(fan.Next) != 3 || fan.Next[0].Node != "worker" {
		t.Errorf("checkpoint 2 lists %+v: want three workers due", fan)
	}
	// A listing carries no arguments; the checkpoint has the Sends'.
	cp, err := src.Checkpoint(ctx, c, "2")
	if err != nil {
		t.Fatal(err)
	}
	if len(cp.Next) != 3 || !cp.Next[2].Send || cp.Next[2].Arg != float64(2) || cp.Counts.Sends != 3 {
		t.Errorf("checkpoint 2 has %+v (counts %+v): want three Sends, the last with 2", cp.Next, cp.Counts)
	}
	if v, ok := cp.Value("messages"); !ok || len(v.([]any)) != 2 {
		t.Errorf("messages at 2: %v", v)
	}
	if _, ok := cp.State()["findings"]; !ok {
		t.Errorf("State %v lacks findings", cp.State())
	}
	latest, err := src.Checkpoint(ctx, c, "")
	if err != nil || latest.ID != "3" {
		t.Errorf("newest checkpoint %s, %v: want 3", latest.ID, err)
	}
	// What made 3: the three workers' writes, stored under 2.
	ws, err := src.Writes(ctx, c, "2")
	if err != nil || len(ws) != 3 || ws[0].Node != "worker" || len(ws[0].Writes) != 1 || ws[0].Writes[0].Channel != "findings" {
		t.Errorf("writes from 2: %+v, %v: want the three workers' findings", ws, err)
	}
	if ws, err := src.Writes(ctx, c, "3"); err != nil || len(ws) != 0 {
		t.Errorf("writes from 3 (done): %+v, %v", ws, err)
	}
	for _, bad := range []struct {
		what string
		err  error
	}{
		{"a missing thread", func() error { _, err := src.History(ctx, browse.Chain{Thread: "nope"}, "", 0); return err }()},
		{"a missing checkpoint", func() error { _, err := src.Checkpoint(ctx, c, "99"); return err }()},
		{"a checkpoint id that is no number", func() error { _, err := src.Checkpoint(ctx, c, "1f0-uuid"); return err }()},
		{"a namespace", func() error { _, err := src.History(ctx, browse.Chain{Thread: "t", NS: "node:x"}, "", 0); return err }()},
		{"writes of a missing checkpoint", func() error { _, err := src.Writes(ctx, c, "99"); return err }()},
	} {
		if !errors.Is(bad.err, browse.ErrNotFound) {
			t.Errorf("%s: %v, want browse.ErrNotFound", bad.what, bad.err)
		}
	}
}
