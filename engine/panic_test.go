package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"rewind/engine"
	"rewind/store/memory"
)

// buggyGraph fans start out to ok and buggy side by side; buggy fails the
// way fail says while broken is set (a panic or an error return).
func buggyGraph(broken *atomic.Bool, panics bool) *engine.Graph {
	logged := func(by string) engine.NodeFunc {
		return func(context.Context, *engine.NodeContext) ([]engine.Write, error) {
			return []engine.Write{engine.Put("log", []map[string]any{{"by": by}})}, nil
		}
	}
	buggy := func(ctx context.Context, nc *engine.NodeContext) ([]engine.Write, error) {
		if broken.Load() {
			if panics {
				words := strings.Fields("")
				return nil, errors.New(words[0]) // out of range: the bug a user's node has
			}
			return nil, errors.New("boom")
		}
		return logged("buggy")(ctx, nc)
	}
	return engine.NewGraph("buggy", 1).
		Channel("log", engine.IndexedAppend("index"), []any{}).
		Node("start", logged("start")).Node("ok", logged("ok")).Node("buggy", buggy).
		Entry("start").Edge("start", "ok").Edge("start", "buggy").
		Edge("ok", engine.End).Edge("buggy", engine.End)
}

// A node that panics fails its task as an error return does: the run ends
// failed naming the node and the panic, the thread stands where an error
// would leave it, and a resume after the fix finishes the turn.
func TestANodeThatPanicsFailsItsTaskLikeAnError(t *testing.T) {
	if byPanic, byError := failAndResume(t, true), failAndResume(t, false); byPanic != byError {
		t.Errorf("a panic leaves the thread at %s; an error leaves it at %s", byPanic, byError)
	}
}

// failAndResume runs buggyGraph broken (its node panicking or returning
// an error), checks a panic's error, then fixes the node and resumes; it
// returns where the failed run left the thread: its head's tasks and
// values, and its checkpoint count.
func failAndResume(t *testing.T, panics bool) string {
	t.Helper()
	ctx := context.Background()
	var broken atomic.Bool
	broken.Store(true)
	e := newTestEngine(t, memory.New(), buggyGraph(&broken, panics))
	_, err := e.Run(ctx, "t", input("user"), engine.RunConfig{})
	if err == nil {
		t.Fatalf("panics=%v: the run did not fail", panics)
	}
	if panics {
		checkPanicError(t, err)
	}
	head, err := e.Latest(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	hist, err := e.History(ctx, "t", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(head.Values)
	at := fmt.Sprintf("%s|%s|%d checkpoints", engine.DescribeTasks(head.Tasks), b, len(hist))
	broken.Store(false)
	res, err := e.Resume(ctx, "t", engine.RunConfig{})
	if err != nil || res.Status != "done" {
		t.Fatalf("panics=%v: resume after the fix: %v (%s), want done", panics, err, res.Status)
	}
	var s struct{ Log []struct{ By string } }
	last, _ := e.Latest(ctx, "t")
	_ = last.Values.Decode(&s, "log")
	if len(s.Log) != 4 {
		t.Errorf("panics=%v: the turn logged %v, want user, start, ok and buggy once each", panics, s.Log)
	}
	return at
}

// checkPanicError checks a node's panic reads as the brief says: one line
// naming the node, the panic and the user's frame, with a resume as fix.
func checkPanicError(t *testing.T, err error) {
	t.Helper()
	var pe *engine.PanicError
	if !errors.As(err, &pe) {
		t.Fatalf("the error is not a *engine.PanicError: %v", err)
	}
	for _, want := range []string{"node buggy", "panicked", "index out of range [0] with length 0", "panic_test.go", "fix the node", "a resume runs only the rest"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
	var fe *engine.FixError
	if !errors.As(err, &fe) || len(fe.Fixes()) == 0 || fe.Fixes()[0].Action != engine.FixResume {
		t.Errorf("the error does not offer a resume as its fix: %v", err)
	}
	if strings.Contains(err.Error(), "runtime/") || strings.Contains(err.Error(), "\n") {
		t.Errorf("the error shows runtime frames or spans lines: %q", err)
	}
}

// A router or a reducer of the user's that panics fails the run with an
// error that says so, rather than take the process down.
func TestARouterOrReducerThatPanicsFailsTheRun(t *testing.T) {
	ctx := context.Background()
	noop := func(context.Context, *engine.NodeContext) ([]engine.Write, error) {
		return []engine.Write{engine.Put("n", 1)}, nil
	}
	router := engine.NewGraph("router", 1).Channel("n", engine.LastValue, 0).
		Node("a", noop).Node("b", noop).Entry("a").
		Route("a", func(engine.Values) ([]engine.Target, error) { panic("router bug") }, engine.Goto("b")).
		Edge("b", engine.End)
	reducer := engine.NewGraph("reducer", 1).
		Channel("n", func(_, _ json.RawMessage) (json.RawMessage, error) { panic("reducer bug") }, 0).
		Node("a", noop).Entry("a").Edge("a", engine.End)
	for _, g := range []*engine.Graph{router, reducer} {
		e := newTestEngine(t, memory.New(), g)
		_, err := e.Run(ctx, "t", []engine.Write{engine.Put("n", 2)}, engine.RunConfig{})
		var pe *engine.PanicError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), g.Name+" bug") {
			t.Errorf("graph %s: the run's error is %v, want a panic error naming %q", g.Name, err, g.Name+" bug")
		}
	}
}

// A graph's Input function that panics is an error from TurnInput (the
// TUI's i and f, `rewind run`), not a crash; a graph that declares none
// still has none; a node declared with a nil function fails its run
// saying so, not with a nil pointer's panic.
func TestAnInputThatPanicsAndANilNodeAreErrors(t *testing.T) {
	g := engine.NewGraph("inputs", 1).
		Channel("log", engine.IndexedAppend("index"), []any{}).
		Input(func(in engine.Input, _ time.Time) ([]engine.Write, error) {
			words := strings.Fields(in.Text)
			return nil, errors.New(words[1]) // out of range: the bug a user's function has
		}).
		Node("a", nil).Entry("a").Edge("a", engine.End)
	_, err := g.TurnInput()(engine.Input{Text: "hi"}, time.Now())
	var pe *engine.PanicError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "Input func") || !strings.Contains(err.Error(), "index out of range") {
		t.Fatalf("a panicking Input: %v, want an *engine.PanicError naming the Input func and the panic", err)
	}
	if engine.NewGraph("none", 1).TurnInput() != nil {
		t.Error("a graph that declares no Input has one")
	}
	e := newTestEngine(t, memory.New(), g)
	_, err = e.Run(context.Background(), "t", []engine.Write{engine.Put("log", []map[string]any{{"by": "user"}})}, engine.RunConfig{})
	if err == nil || !strings.Contains(err.Error(), "has no function") || errors.As(err, &pe) {
		t.Fatalf("a node declared with nil: %v, want an error saying it has no function", err)
	}
}
