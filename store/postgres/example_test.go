package postgres_test

import (
	"context"
	"log"
	"os"

	"rewind/engine"
	"rewind/engine/model"
	"rewind/store/postgres"
)

// The shared store: several processes (a TUI, workers, the CLI) on one
// PostgreSQL database work on the same threads. Open creates rewind's
// tables in an empty database and refuses one whose tables it did not
// create, naming what it found.
func ExampleOpen() {
	ctx := context.Background()
	st, err := postgres.Open(ctx, os.Getenv("DATABASE_URL")) // postgres://user:pass@host:5432/db
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	g := engine.NewGraph("hello", 1).
		Channel("name", engine.LastValue, "").
		Channel("greeting", engine.LastValue, "").
		Node("greet", func(_ context.Context, nc *engine.NodeContext) ([]engine.Write, error) {
			var s struct{ Name string }
			if err := nc.Values.Decode(&s, "name"); err != nil {
				return nil, err
			}
			return []engine.Write{engine.Put("greeting", "hello, "+s.Name)}, nil
		}).
		Entry("greet").Edge("greet", engine.End)
	e, err := engine.New(st, g, model.NewMock(nil))
	if err != nil {
		log.Fatal(err)
	}
	if _, err := e.Run(ctx, "t", []engine.Write{engine.Put("name", "Ada")}, engine.RunConfig{}); err != nil {
		log.Fatal(err)
	}
}
