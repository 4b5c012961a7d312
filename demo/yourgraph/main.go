// Command yourgraph opens rewind's TUI on a graph of its own (README,
// "Your own graph"): go run ./demo/yourgraph [file.db]
package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"rewind/engine"
	"rewind/engine/model"
	"rewind/store/sqlite"
	"rewind/tui"
)

// Graph: what a person types goes into chat; shout answers it in capitals,
// count adds one to turns. chat is a message list ({role, content}), so the
// TUI shows it as the conversation.
func Graph() *engine.Graph {
	msg := func(role, text string) []map[string]any { return []map[string]any{{"role": role, "content": text}} }
	return engine.NewGraph("yourgraph", 1).
		Channel("chat", engine.IndexedAppend("index"), []any{}).
		Channel("turns", engine.Counter, 0).
		Input(func(in engine.Input, _ time.Time) ([]engine.Write, error) {
			return []engine.Write{engine.Put("chat", msg("user", in.Text))}, nil
		}).
		Node("shout", func(_ context.Context, nc *engine.NodeContext) ([]engine.Write, error) {
			var s struct{ Chat []struct{ Content string } }
			if err := nc.Values.Decode(&s, "chat"); err != nil {
				return nil, err
			}
			return []engine.Write{engine.Put("chat", msg("assistant", strings.ToUpper(s.Chat[len(s.Chat)-1].Content)))}, nil
		}).
		Node("count", func(context.Context, *engine.NodeContext) ([]engine.Write, error) {
			return []engine.Write{engine.Put("turns", 1)}, nil
		}).
		Entry("shout").Edge("shout", "count").Edge("count", engine.End)
}

func main() {
	path := "yourgraph.db"
	if len(os.Args) > 1 {
		path = os.Args[1]
	}
	if err := run(context.Background(), path); err != nil {
		fmt.Fprintln(os.Stderr, "yourgraph:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, path string) error {
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		return err
	}
	defer st.Close()
	e, err := engine.New(st, Graph(), model.NewMock(nil))
	if err != nil {
		return err
	}
	return tui.Run(ctx, tui.Options{Engine: e, StoreLabel: "sqlite:" + path})
}
