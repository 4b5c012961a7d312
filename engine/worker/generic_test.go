package worker_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"rewind/engine"
	"rewind/engine/model"
	"rewind/engine/ticket"
	"rewind/engine/worker"
	"rewind/store/memory"
)

// fork: a fans out to b and c (two edges); line: x then y.
func pointsGraph(fanOut bool) *engine.Graph {
	nop := func(context.Context, *engine.NodeContext) ([]engine.Write, error) { return nil, nil }
	g := engine.NewGraph("points", 1).Channel("v", engine.LastValue, "").
		Input(func(in engine.Input, _ time.Time) ([]engine.Write, error) {
			return []engine.Write{engine.Put("v", in.Text)}, nil
		})
	if fanOut {
		return g.Node("a", nop).Node("b", nop).Node("c", nop).Entry("a").Edge("a", "b").Edge("a", "c").Edge("b", engine.End).Edge("c", engine.End)
	}
	return g.Node("x", nop).Node("y", nop).Entry("x").Edge("x", "y").Edge("y", engine.End)
}

func names(ps []worker.Point) []string {
	var out []string
	for _, p := range ps {
		out = append(out, string(p.Name))
	}
	return out
}

// Any graph's kill points come from its declaration: three a node, the
// commit's, and mid-fanout only where one superstep can run two tasks.
func TestGraphPointsFromTheDeclaration(t *testing.T) {
	t.Parallel()
	fan := names(worker.GraphPoints(pointsGraph(true)))
	want := []string{"before:a", "after:a", "after-writes:a", "before:b", "after:b", "after-writes:b", "before:c", "after:c", "after-writes:c",
		"mid-fanout", "before-commit", "after-commit", "mid-transaction"}
	if !slices.Equal(fan, want) {
		t.Errorf("points of a fan-out graph:\n got %v\nwant %v", fan, want)
	}
	if line := names(worker.GraphPoints(pointsGraph(false))); slices.Contains(line, "mid-fanout") {
		t.Errorf("a graph that never runs two tasks at once lists mid-fanout: %v", line)
	}
	// The ticket's own points come first and keep their names (its
	// mid-fanout holds executors); the generic ones are added, once each.
	tk := worker.GraphPoints(ticket.NewGraph())
	tn := names(tk)
	if !slices.Equal(tn[:len(worker.Points)], names(worker.Points)) {
		t.Errorf("the ticket's points do not start with its own: %v", tn)
	}
	seen := map[string]bool{}
	for _, n := range tn {
		if seen[n] {
			t.Errorf("the ticket lists %s twice", n)
		}
		seen[n] = true
	}
	for _, n := range []string{"before:planner", "after-writes:executor", "before-commit", "after-commit"} {
		if !seen[n] {
			t.Errorf("the ticket's points lack the generic %s: %v", n, tn)
		}
	}
}

// A point is typed by name: a node the graph lacks is refused with the
// graph's points listed, a bad count with what it must be.
func TestParseForRefusesWhatTheGraphLacks(t *testing.T) {
	t.Parallel()
	g := pointsGraph(true)
	p, nth, err := worker.ParseFor(g, "after-writes:b@2")
	if err != nil || p.Kind != worker.AfterWrites || p.Node != "b" || nth != 2 || p.DrillSpec() != "after-writes:b" {
		t.Errorf("after-writes:b@2 = %+v, %d, %v", p, nth, err)
	}
	_, _, err = worker.ParseFor(g, "before:z")
	if err == nil || !strings.Contains(err.Error(), `unknown kill point "before:z" for graph points`) || !strings.Contains(err.Error(), "before:a, after:a") {
		t.Errorf("before:z: %v, want the graph's points listed", err)
	}
	if _, _, err := worker.ParseFor(g, "before-commit@0"); err == nil || !strings.Contains(err.Error(), "positive number") {
		t.Errorf("before-commit@0: %v", err)
	}
	if _, _, err := worker.ParseFor(pointsGraph(false), "mid-fanout"); err == nil {
		t.Error("mid-fanout on a graph that cannot fan out was taken")
	}
	// The CLI's Parse is the ticket's: its nodes, not another graph's.
	if _, _, err := worker.Parse("before:critic"); err != nil {
		t.Errorf("before:critic on the ticket: %v", err)
	}
	if _, _, err := worker.Parse("before:a"); err == nil || !strings.Contains(err.Error(), "NODE one of approval") {
		t.Errorf("before:a on the ticket: %v, want its nodes named", err)
	}
}

// Each generic point fires at its own moment, the Nth time only.
func TestGenericTriggersFireAtTheirMoment(t *testing.T) {
	t.Parallel()
	g := pointsGraph(true)
	task := &engine.Task{ID: "t1", Node: "b"}
	moments := []struct {
		spec string
		fire func(tr *worker.Trigger)
	}{
		{"before:b", func(tr *worker.Trigger) { tr.Observe(engine.Event{Type: engine.EventNodeStarted, Node: "b"}) }},
		{"after:b", func(tr *worker.Trigger) { tr.Observe(engine.Event{Type: engine.EventNodeFinished, Node: "b"}) }},
		{"after-writes:b", func(tr *worker.Trigger) { tr.Hook(engine.HookTaskFinished, engine.HookInfo{Task: task}) }},
		{"before-commit", func(tr *worker.Trigger) { tr.Hook(engine.HookBeforeCommit, engine.HookInfo{}) }},
		{"after-commit", func(tr *worker.Trigger) { tr.Hook(engine.HookAfterCommit, engine.HookInfo{}) }},
	}
	for _, m := range moments {
		p, _, err := worker.ParseFor(g, m.spec)
		if err != nil {
			t.Fatal(err)
		}
		var killed []worker.KillPoint
		tr := worker.NewTrigger(p, 2, func(k worker.KillPoint) { killed = append(killed, k) })
		// Every other moment, and another node's, leaves it alone.
		for _, other := range moments {
			if other.spec != m.spec {
				other.fire(tr)
			}
		}
		tr.Observe(engine.Event{Type: engine.EventNodeStarted, Node: "c"})
		tr.Hook(engine.HookTaskFinished, engine.HookInfo{Task: &engine.Task{ID: "t2", Node: "c"}})
		m.fire(tr)
		if len(killed) != 0 {
			t.Errorf("%s@2 fired the first time (or at another moment): %v", m.spec, killed)
		}
		m.fire(tr)
		if !slices.Equal(killed, []worker.KillPoint{p.Name}) {
			t.Errorf("%s@2 the second time: killed %v", m.spec, killed)
		}
	}
}

// A fan-out whose first task fails, with mid-fanout armed: the held task
// is let go and the run fails with the task's error, instead of the
// worker hanging on the hold (a drill waiting on it forever). The bound
// only guards against that hang; it times nothing.
func TestMidFanoutLetsGoWhenTheFirstTaskFails(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	// The first task let run is the first to enter a node function (the
	// others are held before theirs): it fails, the rest succeed.
	work := func(context.Context, *engine.NodeContext) ([]engine.Write, error) {
		if calls.Add(1) == 1 {
			return nil, errors.New("the search index is down")
		}
		return []engine.Write{engine.Put("v", "done")}, nil
	}
	e := fanOutTo(t, "failing-fanout", work)
	ctx := context.Background()
	req := worker.Request{Op: worker.OpRun, Thread: "fan", Input: []engine.Write{engine.Put("v", "go")}, KillAt: string(worker.MidFanout)}
	done := make(chan error, 1)
	var killed atomic.Value
	go func() {
		_, err := worker.Execute(ctx, e, req, func(m worker.Message) {
			if m.Kill != "" {
				killed.Store(m.Kill)
			}
		})
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "the search index is down") {
			t.Fatalf("the run ended with %v, want the failing task's error", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the run still hangs 30 s after its first fan-out task failed: mid-fanout holds the other task for good")
	}
	if k := killed.Load(); k != nil {
		t.Errorf("mid-fanout killed at %v though the task it let run failed", k)
	}
}

// A run whose context ends while mid-fanout holds a task returns; the
// held task does not keep it (and the worker) waiting.
func TestMidFanoutHoldEndsWithTheRunsContext(t *testing.T) {
	t.Parallel()
	started := make(chan struct{})
	var calls atomic.Int32
	// The task let run outlives the run's context; the held one would
	// finish at once.
	work := func(ctx context.Context, _ *engine.NodeContext) ([]engine.Write, error) {
		if calls.Add(1) == 1 {
			close(started)
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return []engine.Write{engine.Put("v", "done")}, nil
	}
	e := fanOutTo(t, "cancelled-fanout", work)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req := worker.Request{Op: worker.OpRun, Thread: "fan", Input: []engine.Write{engine.Put("v", "go")}, KillAt: string(worker.MidFanout)}
	done := make(chan error, 1)
	go func() {
		_, err := worker.Execute(ctx, e, req, func(worker.Message) {})
		done <- err
	}()
	<-started
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("the cancelled run ended with %v, want context.Canceled", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the run still hangs 30 s after its context ended: mid-fanout holds the other task for good")
	}
}

// fanOutTo is an engine on a graph whose node a fans out to b and c, both
// running work: a mid-fanout kill point holds one while the other runs.
func fanOutTo(t *testing.T, name string, work engine.NodeFunc) *engine.Engine {
	t.Helper()
	nop := func(context.Context, *engine.NodeContext) ([]engine.Write, error) { return nil, nil }
	g := engine.NewGraph(name, 1).Channel("v", engine.LastValue, "").
		Input(func(in engine.Input, _ time.Time) ([]engine.Write, error) {
			return []engine.Write{engine.Put("v", in.Text)}, nil
		}).
		Node("a", nop).Node("b", work).Node("c", work).Entry("a").
		Edge("a", "b").Edge("a", "c").Edge("b", engine.End).Edge("c", engine.End)
	e, err := engine.New(memory.New(), g, model.NewMock(nil))
	if err != nil {
		t.Fatal(err)
	}
	return e
}
