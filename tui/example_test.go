package tui_test

import (
	"context"
	"log"
	"time"

	"rewind/engine"
	"rewind/engine/model"
	"rewind/store/sqlite"
	"rewind/tui"
)

// Opening the TUI on a graph of one's own: a store, an engine on the
// graph, and Run (README's "Your own graph" is the whole program). The
// graph's Input is what the TUI's new-thread and fork forms write; Run
// returns when the person quits.
func ExampleRun() {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, "notes.db")
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	g := engine.NewGraph("notes", 1).
		Channel("notes", engine.IndexedAppend("index"), []any{}).
		Input(func(in engine.Input, _ time.Time) ([]engine.Write, error) {
			return []engine.Write{engine.Put("notes", []map[string]any{{"role": "user", "content": in.Text}})}, nil
		}).
		Node("echo", func(_ context.Context, nc *engine.NodeContext) ([]engine.Write, error) {
			return []engine.Write{engine.Put("notes", []map[string]any{{"role": "assistant", "content": "noted"}})}, nil
		}).
		Entry("echo").Edge("echo", engine.End)
	e, err := engine.New(st, g, model.NewMock(nil))
	if err != nil {
		log.Fatal(err)
	}
	if err := tui.Run(ctx, tui.Options{Engine: e, StoreLabel: "sqlite:notes.db"}); err != nil {
		log.Fatal(err)
	}
}
