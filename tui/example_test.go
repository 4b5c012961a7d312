package tui_test

import (
	"context"
	"fmt"
	"log"
	"strings"
	"time"

	"rewind/engine"
	"rewind/engine/model"
	"rewind/store/sqlite"
	"rewind/tui"
	"rewind/tui/draw"
	"rewind/tui/termtext"
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

// trailPane is an extension of the trail graph (ExampleExtension): its one
// channel, trail, is the names of the nodes that ran, joined by ">". The
// State pane lists them one a line, numbered, drawn with rewind/tui/draw
// (the TUI's panes' own helpers); the conversation is left to the shape
// (nil), which says the graph keeps none.
type trailPane struct{}

// Decode reads the trail into its steps, once per checkpoint.
func (trailPane) Decode(v engine.Values) (any, error) {
	var s struct{ Trail string }
	if err := v.Decode(&s, "trail"); err != nil {
		return nil, fmt.Errorf("the trail channel does not read: %w", err)
	}
	return strings.Split(s.Trail, ">"), nil
}

func (trailPane) State(s tui.Shown) []string {
	if s.Err != nil {
		return []string{s.Theme.Error.Render(termtext.Error(s.Err.Error()))}
	}
	steps := s.Value.([]string)
	out := []string{s.Theme.Heading.Render(fmt.Sprintf("Trail · %d steps", len(steps)))}
	for i, step := range steps {
		// Stored text: sanitised, and kept to the pane's width with the
		// TUI's own drawing kit.
		out = append(out, draw.Cut(fmt.Sprintf("  %d. %s", i+1, termtext.Line(step)), s.Width))
	}
	return out
}

func (trailPane) Conversation(tui.Shown) []string { return nil }

// Input: the trail's first step is what the thread was started with.
func (trailPane) Input(v engine.Values) (string, bool, error) {
	var s struct{ Trail string }
	if err := v.Decode(&s, "trail"); err != nil {
		return "", false, err
	}
	first, _, _ := strings.Cut(s.Trail, ">")
	return first, first != "", nil
}

func (trailPane) InputHints() (message, attachment string) {
	return "e.g. go: the trail's first step", ""
}

// trailGraph appends each node's name to the trail.
func trailGraph() *engine.Graph {
	step := func(name string) engine.NodeFunc {
		return func(_ context.Context, nc *engine.NodeContext) ([]engine.Write, error) {
			var s struct{ Trail string }
			if err := nc.Values.Decode(&s, "trail"); err != nil {
				return nil, err
			}
			return []engine.Write{engine.Put("trail", s.Trail+">"+name)}, nil
		}
	}
	return engine.NewGraph("trail", 1).
		Channel("trail", engine.LastValue, "").
		Input(func(in engine.Input, _ time.Time) ([]engine.Write, error) {
			return []engine.Write{engine.Put("trail", in.Text)}, nil
		}).
		Node("first", step("first")).
		Node("second", step("second")).
		Entry("first").
		Edge("first", "second").
		Edge("second", engine.End)
}

// A graph's own extension: the trail graph's State pane lists its steps
// (trailPane above), passed to the TUI in Options.Extension. What only
// some graphs have (a draft reply: tui.DraftReplier) is a method more on
// the same type.
func ExampleExtension() {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, "trail.db")
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	e, err := engine.New(st, trailGraph(), model.NewMock(nil))
	if err != nil {
		log.Fatal(err)
	}
	if err := tui.Run(ctx, tui.Options{Engine: e, StoreLabel: "sqlite:trail.db", Extension: trailPane{}}); err != nil {
		log.Fatal(err)
	}
}
