package engine_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"rewind/engine"
	"rewind/engine/model"
	"rewind/store/memory"
)

// notesGraph is a two-node graph: draft appends a note, review counts the
// notes. notes is a list channel with a reducer (IndexedAppend numbers
// each item); reviews is a plain value each write replaces.
func notesGraph() *engine.Graph {
	return engine.NewGraph("notes", 1).
		Channel("notes", engine.IndexedAppend("index"), []any{}).
		Channel("reviews", engine.LastValue, 0).
		Node("draft", func(_ context.Context, nc *engine.NodeContext) ([]engine.Write, error) {
			var s struct{ Topic string }
			if err := nc.Values.Decode(&s, "topic"); err != nil {
				return nil, err
			}
			return []engine.Write{engine.Put("notes", []map[string]any{{"text": "a note on " + s.Topic}})}, nil
		}).
		Channel("topic", engine.LastValue, "").
		Node("review", func(_ context.Context, nc *engine.NodeContext) ([]engine.Write, error) {
			return []engine.Write{engine.Put("reviews", nc.Values.Len("notes"))}, nil
		}).
		Entry("draft").
		Edge("draft", "review").
		Edge("review", engine.End)
}

// A graph run on a store: every superstep is a checkpoint, and the state
// at any of them can be read back.
func ExampleNewGraph() {
	ctx := context.Background()
	e, err := engine.New(memory.New(), notesGraph(), model.NewMock(nil))
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := e.Run(ctx, "t", []engine.Write{engine.Put("topic", "tides")}, engine.RunConfig{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Status, "at checkpoint", res.Checkpoint)
	history, _ := e.History(ctx, "t", 0, 0)
	for _, cp := range history {
		next := engine.DescribeTasks(cp.Tasks)
		if next == "" {
			next = "(none: the run is done)"
		}
		fmt.Printf("@%d %-5s next: %s\n", cp.ID, cp.Source, next)
	}
	head, _ := e.Latest(ctx, "t")
	var s struct {
		Notes   []struct{ Text string }
		Reviews int
	}
	_ = head.Values.Decode(&s, "notes", "reviews")
	fmt.Println(s.Notes[0].Text, "- reviewed", s.Reviews, "note(s)")
	// Output:
	// done at checkpoint 3
	// @3 loop  next: (none: the run is done)
	// @2 loop  next: review
	// @1 input next: draft
	// a note on tides - reviewed 1 note(s)
}

// A fork runs a new input from an older checkpoint (here @1, before draft
// ran): the new branch continues from there, and the original branch
// stays as it was.
func ExampleEngine_Fork() {
	ctx := context.Background()
	e, _ := engine.New(memory.New(), notesGraph(), model.NewMock(nil))
	if _, err := e.Run(ctx, "t", []engine.Write{engine.Put("topic", "tides")}, engine.RunConfig{}); err != nil {
		fmt.Println(err)
		return
	}
	res, err := e.Fork(ctx, "t", 1, []engine.Write{engine.Put("topic", "reefs")}, engine.RunConfig{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, id := range []int64{3, res.Checkpoint} {
		cp, _ := e.Get(ctx, "t", id)
		var s struct{ Notes []struct{ Text string } }
		_ = cp.Values.Decode(&s, "notes")
		var texts []string
		for _, n := range s.Notes {
			texts = append(texts, n.Text)
		}
		fmt.Printf("@%d (parent @%d): %s\n", cp.ID, cp.ParentID, strings.Join(texts, "; "))
	}
	// Output:
	// @3 (parent @2): a note on tides
	// @6 (parent @5): a note on reefs
}

// Every checkpoint with its state, oldest first, on every branch (what
// LangGraph's list() yields; `rewind log T --values` prints it as JSON
// lines): each is rebuilt from its parent, so a long thread streams at a
// tenth of a millisecond a checkpoint.
func ExampleEngine_EachState() {
	ctx := context.Background()
	e, _ := engine.New(memory.New(), notesGraph(), model.NewMock(nil))
	if _, err := e.Run(ctx, "t", []engine.Write{engine.Put("topic", "tides")}, engine.RunConfig{}); err != nil {
		fmt.Println(err)
		return
	}
	if _, err := e.Fork(ctx, "t", 1, []engine.Write{engine.Put("topic", "reefs")}, engine.RunConfig{}); err != nil {
		fmt.Println(err)
		return
	}
	err := e.EachState(ctx, "t", 0, 0, func(cp engine.Checkpoint) error {
		var s struct {
			Topic   string
			Reviews int
		}
		_ = cp.Values.Decode(&s, "topic", "reviews")
		fmt.Printf("@%d (parent @%d) %-5s topic %q, %d note(s), reviews %d\n", cp.ID, cp.ParentID, cp.Source, s.Topic, cp.Values.Len("notes"), s.Reviews)
		return nil
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output:
	// @1 (parent @0) input topic "tides", 0 note(s), reviews 0
	// @2 (parent @1) loop  topic "tides", 1 note(s), reviews 0
	// @3 (parent @2) loop  topic "tides", 1 note(s), reviews 1
	// @4 (parent @1) fork  topic "reefs", 0 note(s), reviews 0
	// @5 (parent @4) loop  topic "reefs", 1 note(s), reviews 0
	// @6 (parent @5) loop  topic "reefs", 1 note(s), reviews 1
}

// A run stopped before a node keeps its pending task in the checkpoint; a
// resume (in this process or another one) runs it.
func ExampleEngine_Resume() {
	ctx := context.Background()
	e, _ := engine.New(memory.New(), notesGraph(), model.NewMock(nil))
	res, err := e.Run(ctx, "t", []engine.Write{engine.Put("topic", "tides")}, engine.RunConfig{InterruptBefore: []string{"review"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Status, "at", res.Checkpoint, "pending:", engine.DescribeTasks(res.Pending))
	res, err = e.Resume(ctx, "t", engine.RunConfig{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Status, "at", res.Checkpoint)
	// Output:
	// interrupted at 2 pending: review
	// done at 3
}

// Fan-out: a router returns one Send a packet (its Route declares that
// it sends to search), each packet is a task of
// its own in one superstep (they run in parallel), and their writes to
// one channel meet in its reducer (IndexedAppend keeps them all, in task
// order, numbering each).
func ExampleSend() {
	ctx := context.Background()
	g := engine.NewGraph("fanout", 1).
		Channel("topics", engine.LastValue, []string{}).
		Channel("notes", engine.IndexedAppend("index"), []any{}).
		Node("plan", func(context.Context, *engine.NodeContext) ([]engine.Write, error) { return nil, nil }).
		Node("search", func(_ context.Context, nc *engine.NodeContext) ([]engine.Write, error) {
			var topic string
			if err := json.Unmarshal(nc.Task.Args, &topic); err != nil {
				return nil, err
			}
			return []engine.Write{engine.Put("notes", []map[string]any{{"text": "found " + topic}})}, nil
		}).
		Node("write", func(context.Context, *engine.NodeContext) ([]engine.Write, error) { return nil, nil }).
		Entry("plan").
		Route("plan", func(v engine.Values) ([]engine.Target, error) {
			var s struct{ Topics []string }
			if err := v.Decode(&s, "topics"); err != nil {
				return nil, err
			}
			var out []engine.Target
			for _, t := range s.Topics {
				out = append(out, engine.Send("search", t))
			}
			return out, nil
		}, engine.Send("search", nil)). // declared: the router sends to search

		Edge("search", "write").
		Edge("write", engine.End)
	e, err := engine.New(memory.New(), g, model.NewMock(nil))
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := e.Run(ctx, "t", []engine.Write{engine.Put("topics", []string{"tides", "reefs", "kelp"})}, engine.RunConfig{}); err != nil {
		fmt.Println(err)
		return
	}
	history, _ := e.History(ctx, "t", 0, 0)
	for i := len(history) - 1; i >= 0; i-- {
		fmt.Printf("@%d next: %s\n", history[i].ID, cmp.Or(engine.DescribeTasks(history[i].Tasks), "(none)"))
	}
	head, _ := e.Latest(ctx, "t")
	var s struct {
		Notes []struct {
			Index int
			Text  string
		}
	}
	_ = head.Values.Decode(&s, "notes")
	for _, n := range s.Notes {
		fmt.Printf("%d %s\n", n.Index, n.Text)
	}
	// Output:
	// @1 next: plan
	// @2 next: search ×3
	// @3 next: write
	// @4 next: (none)
	// 1 found tides
	// 2 found reefs
	// 3 found kelp
}

// A person's answer: the run stops before a node (here review), the
// answer is written into the state at that checkpoint as if a node had
// written it (a new checkpoint; the pending task stays pending), and a
// resume runs the rest with it. The engine has no interrupt() call that
// returns a value inside a node: this is the pattern instead.
func ExampleEngine_UpdateState() {
	ctx := context.Background()
	e, _ := engine.New(memory.New(), notesGraph(), model.NewMock(nil))
	res, err := e.Run(ctx, "t", []engine.Write{engine.Put("topic", "tides")}, engine.RunConfig{InterruptBefore: []string{"review"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	cp, err := e.UpdateState(ctx, "t", res.Checkpoint, []engine.Write{engine.Put("notes", []map[string]any{{"text": "a person's note"}})}, "draft")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("@%d %s, pending: %s\n", cp.ID, cp.Source, engine.DescribeTasks(cp.Tasks))
	res, err = e.Resume(ctx, "t", engine.RunConfig{})
	if err != nil {
		fmt.Println(err)
		return
	}
	head, _ := e.Latest(ctx, "t")
	var s struct{ Reviews int }
	_ = head.Values.Decode(&s, "reviews")
	fmt.Println(res.Status, "at", res.Checkpoint, "- reviewed", s.Reviews, "notes")
	// Output:
	// @3 update, pending: review
	// done at 4 - reviewed 2 notes
}
