package sqlite_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"rewind/engine"
	"rewind/engine/model"
	"rewind/store/sqlite"
)

// tally is a one-node graph: each turn's word goes into words, and count
// keeps how many turns ran.
func tally() *engine.Graph {
	return engine.NewGraph("tally", 1).
		Channel("words", engine.IndexedAppend("index"), []any{}).
		Channel("count", engine.Counter, 0).
		Input(func(in engine.Input, _ time.Time) ([]engine.Write, error) {
			return []engine.Write{engine.Put("words", []map[string]any{{"text": in.Text}})}, nil
		}).
		Node("count", func(context.Context, *engine.NodeContext) ([]engine.Write, error) {
			return []engine.Write{engine.Put("count", 1)}, nil
		}).
		Entry("count").Edge("count", engine.End)
}

// A graph's checkpoints in a SQLite file: what one store wrote, a store
// opened later on the same file (another process, after a kill or a
// reboot) reads, and goes on from.
func ExampleOpen() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "rewind-example-")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "chat.db")

	turn := func(text string) error {
		st, err := sqlite.Open(ctx, path) // creates the file the first time
		if err != nil {
			return err
		}
		defer st.Close()
		e, err := engine.New(st, tally(), model.NewMock(nil))
		if err != nil {
			return err
		}
		in, err := tally().TurnInput()(engine.Input{Text: text}, time.Now())
		if err != nil {
			return err
		}
		res, err := e.Run(ctx, "t", in, engine.RunConfig{})
		if err != nil {
			return err
		}
		head, err := e.Latest(ctx, "t")
		if err != nil {
			return err
		}
		var s struct{ Count int }
		if err := head.Values.Decode(&s, "count"); err != nil {
			return err
		}
		fmt.Printf("%s at checkpoint %d, %d turn(s) in the file\n", res.Status, res.Checkpoint, s.Count)
		return nil
	}
	for _, w := range []string{"hello", "again"} {
		if err := turn(w); err != nil {
			fmt.Println(err)
			return
		}
	}
	// Output:
	// done at checkpoint 2, 1 turn(s) in the file
	// done at checkpoint 4, 2 turn(s) in the file
}
