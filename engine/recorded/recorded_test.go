package recorded_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"rewind/engine"
	"rewind/engine/recorded"
	"rewind/engine/ticket"
	"rewind/store/memory"
)

// A thread names the graph that wrote it, also when its newest run was
// killed half-way (its head, a middle checkpoint, names none: the run's
// first does); a thread that is not there names none.
func TestAThreadNamesItsGraph(t *testing.T) {
	ctx := context.Background()
	e, err := ticket.NewEngine(memory.New(), ticket.NewMock())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Run(ctx, "done", ticket.Input("Where is my parcel SO20260901?"), engine.RunConfig{}); err != nil {
		t.Fatal(err)
	}
	killed, cancel := context.WithCancel(ctx)
	var tasks atomic.Int64
	_, err = e.Run(killed, "killed", ticket.Input("Where is my parcel SO20260901?"), engine.RunConfig{Hook: func(p engine.HookPoint, _ engine.HookInfo) {
		if p == engine.HookTaskFinished && tasks.Add(1) == 2 {
			cancel()
		}
	}})
	cancel()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("the run to kill ended with %v", err)
	}
	head, err := e.Latest(ctx, "killed")
	if err != nil || head.Metadata.Graph != "" {
		t.Fatalf("the killed run's head names graph %q (%v): the test needs one that names none", head.Metadata.Graph, err)
	}
	for thread, want := range map[string]string{"done": ticket.GraphName, "killed": ticket.GraphName, "nobody": ""} {
		if got, err := recorded.Graph(ctx, e, thread); err != nil || got != want {
			t.Errorf("thread %s: graph %q, %v; want %q", thread, got, err, want)
		}
	}
}

// counting is a History that counts the listings it returns.
type counting struct {
	h    recorded.History
	read int
}

func (c *counting) History(ctx context.Context, thread string, before int64, limit int) ([]engine.Checkpoint, error) {
	cps, err := c.h.History(ctx, thread, before, limit)
	c.read += len(cps)
	return cps, err
}

// A finished run's last checkpoint names its graph, so every command that
// opens such a thread reads one listing for it, not a page: in a new
// process each listing is decoded once more than the command needs.
func TestAFinishedThreadReadsOneListing(t *testing.T) {
	ctx := context.Background()
	e, err := ticket.NewEngine(memory.New(), ticket.NewMock())
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := e.Run(ctx, "done", ticket.Input("Where is my parcel SO20260901?"), engine.RunConfig{}); err != nil {
			t.Fatal(err)
		}
	}
	c := &counting{h: e}
	if got, err := recorded.Graph(ctx, c, "done"); err != nil || got != ticket.GraphName {
		t.Fatalf("graph %q, %v; want %q", got, err, ticket.GraphName)
	}
	if c.read != 1 {
		t.Errorf("read %d listings to name the graph of a finished thread; want 1", c.read)
	}
}
