package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"rewind/engine"
	"rewind/store/memory"
)

// hookGraph runs start then work; work fails (an error, leaving its task
// pending) while failing is set, and every hook the graph declares panics
// while panicking names it.
func hookGraph(panicking *atomic.Value, failing *atomic.Bool) *engine.Graph {
	boom := func(hook string) {
		if panicking.Load() == hook {
			var m map[string]int
			_ = m[hook] + []int{}[len(hook)] // out of range: the bug an author's hook has
		}
	}
	log := func(by string) []engine.Write { return []engine.Write{engine.Put("log", []map[string]any{{"by": by}})} }
	return engine.NewGraph("hooks", 1).
		Channel("log", engine.IndexedAppend("index"), []any{}).
		Node("start", func(context.Context, *engine.NodeContext) ([]engine.Write, error) { return log("start"), nil }).
		Node("work", func(context.Context, *engine.NodeContext) ([]engine.Write, error) {
			if failing.Load() {
				return nil, errors.New("work failed")
			}
			return log("work"), nil
		}).
		Entry("start").Edge("start", "work").Edge("work", engine.End).
		OnBuild(func(context.Context, engine.ResumeInfo) error { boom("OnBuild"); return nil }).
		OnResume(func(context.Context, engine.ResumeInfo) (engine.Recheck, error) {
			boom("OnResume")
			return engine.Recheck{}, nil
		}).
		OnAccess(func(context.Context, string, int64, []engine.Task) error { boom("OnAccess"); return nil }).
		OnCancel(func(context.Context, string, engine.Values, string) ([]engine.Write, error) {
			boom("OnCancel")
			return nil, nil
		}).
		CheckState(func(engine.Values) error { boom("CheckState"); return nil }).
		CheckChannel("log", func(context.Context, engine.ChannelEdit) error { boom("CheckChannel"); return nil })
}

// Every hook a graph's author hands the engine that panics is an error
// naming the hook (and its channel or tasks) and the panic, not a crash:
// the chain is as it was, and the thread's lock is released (the same
// call with the hook fixed succeeds).
func TestEveryHookThatPanicsIsAnError(t *testing.T) {
	headCheck := func(panicking *atomic.Value) engine.HeadCheck {
		return func(engine.Checkpoint) error {
			if panicking.Load() == "HeadCheck" {
				panic("head check bug")
			}
			return nil
		}
	}
	for _, c := range []struct {
		hook    string
		pending bool // the thread waits on a failed task, else its turn is done
		op      func(ctx context.Context, e *engine.Engine, p *atomic.Value) error
		names   []string // what the error names besides the hook
	}{
		{"OnBuild", false, func(ctx context.Context, e *engine.Engine, _ *atomic.Value) error {
			_, err := e.Fork(ctx, "t", 1, input("again"), engine.RunConfig{})
			return err
		}, []string{"fork thread"}},
		{"OnResume", true, func(ctx context.Context, e *engine.Engine, _ *atomic.Value) error {
			_, err := e.Resume(ctx, "t", engine.RunConfig{})
			return err
		}, []string{"work"}},
		{"OnAccess", true, func(ctx context.Context, e *engine.Engine, _ *atomic.Value) error {
			_, err := e.Resume(ctx, "t", engine.RunConfig{})
			return err
		}, []string{"work"}},
		{"OnCancel", true, func(ctx context.Context, e *engine.Engine, _ *atomic.Value) error {
			_, err := e.Cancel(ctx, "t", "stop")
			return err
		}, []string{"cancel thread"}},
		{"CheckChannel", false, func(ctx context.Context, e *engine.Engine, _ *atomic.Value) error {
			_, err := e.EditState(ctx, "t", 1, "log", json.RawMessage(`[]`), engine.UpdateOptions{})
			return err
		}, []string{"channel log"}},
		{"CheckState", false, func(ctx context.Context, e *engine.Engine, _ *atomic.Value) error {
			_, err := e.EditState(ctx, "t", 1, "log", json.RawMessage(`[]`), engine.UpdateOptions{})
			return err
		}, []string{"edit log"}},
		{"answer function", true, func(ctx context.Context, e *engine.Engine, p *atomic.Value) error {
			_, err := e.Answer(ctx, "t", func(engine.Checkpoint) ([]engine.Write, error) {
				if p.Load() == "answer function" {
					panic("answer bug")
				}
				return nil, nil
			}, engine.RunConfig{})
			return err
		}, nil},
		{"HeadCheck", true, func(ctx context.Context, e *engine.Engine, p *atomic.Value) error {
			_, err := e.CancelIf(ctx, "t", "stop", headCheck(p))
			return err
		}, []string{"cancel"}},
		{"HeadCheck", true, func(ctx context.Context, e *engine.Engine, p *atomic.Value) error {
			_, err := e.DiscardIf(ctx, "t", headCheck(p))
			return err
		}, []string{"discard"}},
	} {
		t.Run(c.hook, func(t *testing.T) {
			ctx := context.Background()
			var panicking atomic.Value
			var failing atomic.Bool
			panicking.Store("")
			failing.Store(c.pending)
			e := newTestEngine(t, memory.New(), hookGraph(&panicking, &failing))
			if _, err := e.Run(ctx, "t", input("user"), engine.RunConfig{}); (err != nil) != c.pending {
				t.Fatalf("the first turn: %v", err)
			}
			failing.Store(false)
			before := chainOf(t, e)
			panicking.Store(c.hook)
			err := c.op(ctx, e, &panicking)
			var pe *engine.PanicError
			if !errors.As(err, &pe) {
				t.Fatalf("a panicking %s: %v, want an *engine.PanicError", c.hook, err)
			}
			for _, want := range append([]string{c.hook, "panicked", "hookpanic_test.go"}, c.names...) {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("the error does not say %q: %v", want, err)
				}
			}
			if after := chainOf(t, e); after != before {
				t.Errorf("the panic changed the chain:\nbefore %s\nafter  %s", before, after)
			}
			panicking.Store("")
			if err := c.op(ctx, e, &panicking); err != nil {
				t.Errorf("the same call with the hook fixed: %v (was the thread's lock left held?)", err)
			}
		})
	}
}

// A migration of the graph's that panics is an error naming the versions
// it migrates, where the older checkpoint is read; the stored data is
// untouched, and an engine with the migration fixed reads it.
func TestAMigrationThatPanicsIsAnError(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	v := func(version int) *engine.Graph {
		return engine.NewGraph("m", version).Channel("log", engine.IndexedAppend("index"), []any{}).
			Node("a", func(context.Context, *engine.NodeContext) ([]engine.Write, error) { return input("a"), nil }).
			Entry("a").Edge("a", engine.End)
	}
	old := newTestEngine(t, st, v(1))
	if _, err := old.Run(ctx, "t", input("user"), engine.RunConfig{}); err != nil {
		t.Fatal(err)
	}
	before := chainOf(t, old)
	bad := v(2)
	bad.Migrations[1] = func(doc map[string]any) error { return errors.New(doc["nothing"].(string)) } // a nil interface's conversion panics
	_, err := newTestEngine(t, st, bad).Latest(ctx, "t")
	var pe *engine.PanicError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "migration v1 to v2") || !strings.Contains(err.Error(), "hookpanic_test.go") {
		t.Fatalf("a panicking migration: %v, want an *engine.PanicError naming it", err)
	}
	if after := chainOf(t, old); after != before {
		t.Errorf("the panic changed the chain:\nbefore %s\nafter  %s", before, after)
	}
	good := v(2)
	good.Migrations[1] = func(map[string]any) error { return nil }
	if _, err := newTestEngine(t, st, good).Latest(ctx, "t"); err != nil {
		t.Errorf("the fixed migration: %v", err)
	}
}

// chainOf is the thread's checkpoints with their tasks and values, as one
// string to compare.
func chainOf(t *testing.T, e *engine.Engine) string {
	t.Helper()
	hist, err := e.History(context.Background(), "t", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, cp := range hist {
		v, _ := json.Marshal(cp.Values)
		b.WriteString(engine.DescribeTasks(cp.Tasks) + string(v) + ";")
	}
	return b.String()
}
