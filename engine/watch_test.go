package engine_test

import (
	"context"
	"errors"
	"os"
	"strconv"
	"testing"
	"time"

	"rewind/engine"
	"rewind/store"
	"rewind/store/memory"
)

// Engine.Watch wakes a watcher on one handle when a run on another commits,
// and Engine.Writer names the run's process while it holds the thread, on
// every store.
func TestWatchAndWriter(t *testing.T) {
	t.Parallel()
	for _, sc := range storeCases {
		t.Run(sc.name, func(t *testing.T) {
			ctx := t.Context()
			st, reopen := sc.open(t)
			block, working := make(chan struct{}), make(chan struct{})
			g := gateGraph(func(context.Context, *engine.NodeContext) ([]engine.Write, error) {
				close(working)
				<-block
				return nil, nil
			})
			watching := newTestEngine(t, st, g)
			runner := reopened(t, st, reopen, g)
			c, err := watching.Watch(ctx, "t")
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				_, err := runner.Run(ctx, "t", input("user"), engine.RunConfig{})
				done <- err
			}()
			<-working
			select {
			case <-c: // the first checkpoints
			case <-time.After(10 * time.Second):
				t.Fatal("the watcher never woke for the run's checkpoints")
			}
			if who, err := watching.Writer(ctx, "t"); err != nil || who != "pid "+strconv.Itoa(os.Getpid()) {
				t.Errorf("Writer during the run = %q, %v; want this process", who, err)
			}
			close(block)
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if who, err := watching.Writer(ctx, "t"); err != nil || who != "" {
				t.Errorf("Writer after the run = %q, %v; want nobody", who, err)
			}
		})
	}
}

// A store that cannot be watched says so (errors.Is ErrNoWatch).
func TestWatchUnsupported(t *testing.T) {
	t.Parallel()
	e := newTestEngine(t, struct{ store.Store }{memory.New()}, gateGraph(nil))
	if _, err := e.Watch(t.Context(), "t"); !errors.Is(err, engine.ErrNoWatch) {
		t.Fatalf("Watch on a store without it: %v, want ErrNoWatch", err)
	}
	if who, err := e.Writer(t.Context(), "t"); err != nil || who != "" {
		t.Fatalf("Writer on a store that cannot name the holder: %q, %v", who, err)
	}
}
