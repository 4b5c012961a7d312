package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"rewind/cli/rewindbin"
	"rewind/engine"
	"rewind/engine/drill"
	"rewind/engine/model"
	"rewind/store/sqlite"
)

func TestMain(m *testing.M) {
	drill.MainIfWorker(build) // the drill's workers are this test binary
	rewindbin.Exit(m.Run())
}

// build is the program's engine (run's) on the drill's SQLite file.
func build(ctx context.Context, spec string) (*engine.Engine, error) {
	path, ok := strings.CutPrefix(spec, "sqlite:")
	if !ok {
		return nil, fmt.Errorf("store %q: this program opens sqlite:PATH", spec)
	}
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	e, err := engine.New(st, Graph(), model.NewMock(nil))
	if err != nil {
		st.Close()
	}
	return e, err
}

// The drill matrix on this graph (README, "Drill your own graph"): killed
// by a real SIGKILL at every point a turn reaches, resumed in new
// processes, the same chain and values as a turn never killed. The
// workers are this test binary built without -race (raced, they were
// most of the test's CPU), as the drill's own graph test's are.
func TestDrillYourGraph(t *testing.T) {
	t.Parallel()
	exe := rewindbin.TestBinary(t, "rewind/demo/yourgraph")
	res, err := drill.RunGraph(context.Background(), drill.GraphConfig{
		Exe: exe, Store: "sqlite:" + filepath.Join(t.TempDir(), "drill.db"), Build: build,
		Env: os.Environ(), Input: "hello rewind", Parallel: 4,
	})
	if err != nil {
		t.Fatal(err)
	}
	// shout and count, each before and after; three commits (the input's
	// and two supersteps), before, after and inside each.
	if len(res.Outcomes) != 4+3*3 {
		t.Errorf("%d points drilled, want 13", len(res.Outcomes))
	}
	for _, o := range res.Outcomes {
		if !o.Passed {
			b, _ := json.MarshalIndent(o, "", "  ")
			t.Errorf("kill point %s failed:\n%s", o.Point, b)
		}
	}
}

// The graph takes typed input as the TUI gives it (its Input), answers in
// capitals and counts the turn, on a real SQLite file.
func TestYourGraphAnswersATurn(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "yourgraph.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	g := Graph()
	e, err := engine.New(st, g, model.NewMock(nil))
	if err != nil {
		t.Fatal(err)
	}
	for i, text := range []string{"hello rewind", "again"} {
		in, err := g.TurnInput()(engine.Input{Text: text}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Run(ctx, "t", in, engine.RunConfig{}); err != nil {
			t.Fatalf("turn %d: %v", i+1, err)
		}
	}
	head, err := e.Latest(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Chat  []struct{ Role, Content string }
		Turns int
	}
	if err := head.Values.Decode(&s, "chat", "turns"); err != nil {
		t.Fatal(err)
	}
	if len(s.Chat) != 4 || s.Chat[1].Content != "HELLO REWIND" || s.Chat[3].Role != "assistant" || s.Chat[3].Content != "AGAIN" || s.Turns != 2 {
		t.Errorf("after two turns: chat %+v, turns %d; want the answers in capitals and 2 turns", s.Chat, s.Turns)
	}
}

// README's "Your own graph" prints this program whole: it must be the one
// `go run ./demo/yourgraph` runs.
func TestREADMEPrintsTheProgram(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	prog, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(readme), "## Your own graph")
	if !ok {
		t.Fatal(`README has no "## Your own graph" section`)
	}
	if !strings.Contains(sec, "```go\n"+string(prog)+"```") {
		t.Error("README's \"Your own graph\" program is not demo/yourgraph/main.go: copy the file into it")
	}
}
