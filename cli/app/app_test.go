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
	f := app.ModelFlags{MockLatency: 300 * time.Millisecond, MockFail: []string{"critic"}, Record: "r.jsonl"}
	want := []string{"--mock-latency", "300ms", "--mock-fail", "critic", "--record", "r.jsonl"}
	if got := f.Args(); !slices.Equal(got, want) {
		t.Fatalf("args %q, want %q", got, want)
	}
	if got := (app.ModelFlags{}).Args(); len(got) != 0 {
		t.Fatalf("no flags should give no args, got %q", got)
	}
}
