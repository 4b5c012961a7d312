package app_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"rewind/cli/app"
	"rewind/engine"
	"rewind/engine/model/openai"
	"rewind/engine/ticket"
)

// A bad model flag is a usage error and opens nothing: no sqlite file
// appears for a command that was refused.
func TestBadModelFlagOpensNoStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.db")
	_, err := app.Open(context.Background(), app.Config{Store: "sqlite:" + path, Model: &app.ModelFlags{MockFail: []string{"oracle"}}})
	if !errors.Is(err, app.ErrUsage) || !strings.Contains(err.Error(), "not a model role") || strings.HasPrefix(err.Error(), "usage") {
		t.Fatalf("want a usage error naming the role, got %v", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the refused open created %s: %v", path, err)
	}
}

func TestOpenGivesAnEngineOnTheSpecsStore(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "r.db")
	for spec, shared := range map[string]bool{"memory:": false, "sqlite:" + path: true} {
		a, err := app.Open(ctx, app.Config{Store: spec})
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		if a.Store.Spec != spec || a.Store.Shared() != shared {
			t.Errorf("%s: resolved %q, shared %v", spec, a.Store.Spec, a.Store.Shared())
		}
		if _, err := a.Engine.Threads(ctx); err != nil {
			t.Errorf("%s: %v", spec, err)
		}
		if err := a.Close(); err != nil {
			t.Errorf("%s: close: %v", spec, err)
		}
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the sqlite store was not opened at %s: %v", path, err)
	}
}

func TestStoreLabelHidesThePassword(t *testing.T) {
	l := app.ResolveStore("postgres://u:s3cret@h:5/db").Label()
	if strings.Contains(l, "s3cret") || !strings.Contains(l, "h:5/db") {
		t.Fatalf("label %q", l)
	}
}

// Args gives a worker the flags that build the same model.
func TestModelFlagsArgs(t *testing.T) {
	f := app.ModelFlags{MockLatency: 300 * time.Millisecond, MockFail: []string{"critic"}, Record: "r.jsonl", JSONMode: "object", MaxTokensPerTurn: 9000}
	want := []string{"--mock-latency", "300ms", "--mock-fail", "critic", "--json-mode", "object", "--record", "r.jsonl", "--max-tokens-per-turn", "9000"}
	if got := f.Args(); !slices.Equal(got, want) {
		t.Fatalf("args %q, want %q", got, want)
	}
	if got := (app.ModelFlags{}).Args(); len(got) != 0 {
		t.Fatalf("no flags should give no args, got %q", got)
	}
}

// --max-tokens-per-turn is the budget of every run the app's engine makes,
// whoever starts it (a command or the TUI).
func TestMaxTokensPerTurnIsTheEnginesBudget(t *testing.T) {
	ctx := context.Background()
	a, err := app.Open(ctx, app.Config{Store: "memory:", Model: &app.ModelFlags{MaxTokensPerTurn: 50}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	res, err := a.Engine.Run(ctx, "b", ticket.Input("Where is SO20260901?"), engine.RunConfig{})
	if !errors.Is(err, engine.ErrTokenBudget) || res.ModelCalls["planner"] != 1 || res.ModelCalls["executor"] != 0 {
		t.Fatalf("%v after calls %v: want the run stopped after the planner", err, res.ModelCalls)
	}
	if _, err := app.Open(ctx, app.Config{Store: "memory:", Model: &app.ModelFlags{MaxTokensPerTurn: -1}}); !errors.Is(err, app.ErrUsage) {
		t.Fatalf("a negative budget: %v", err)
	}
}

// With OpenAI's API and no model named, the app says which model it uses.
func TestDefaultModelIsPrinted(t *testing.T) {
	for _, k := range []string{"OPENAI_BASE_URL", "OPENAI_MODEL", "REWIND_MODEL_PLANNER", "REWIND_MODEL_EXECUTOR", "REWIND_MODEL_CRITIC", "REWIND_MODEL_SUMMARIZER", "REWIND_MODEL_REPLY", "REWIND_PROVIDER"} {
		t.Setenv(k, "")
	}
	t.Setenv("OPENAI_API_KEY", "sk-test-notreal")
	var notes strings.Builder
	if _, err := (app.ModelFlags{Provider: "openai", Notes: &notes}).Build(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(notes.String(), "rewind: no model named for any role: using "+openai.DefaultModel+", rewind's default on api.openai.com") || strings.Count(notes.String(), "\n") != 1 {
		t.Fatalf("printed %q", notes.String())
	}
}
