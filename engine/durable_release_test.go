package engine_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"rewind/engine"
	"rewind/engine/ticket"
	"rewind/store"
	"rewind/store/memory"
)

// releaseFails is a store whose lock release reports err: a store that
// makes a run's commits durable at release (sqlite's shared fsync) and
// could not.
type releaseFails struct {
	store.Store
	err error
}

func (r releaseFails) Lock(ctx context.Context, thread string) (func() error, error) {
	unlock, err := r.Store.Lock(ctx, thread)
	if err != nil {
		return nil, err
	}
	return func() error { return errors.Join(unlock(), r.err) }, nil
}

// A run whose commits may not be on disk (the release's fsync failed) has
// not succeeded: it says so, naming the thread, with everything it stored
// still there. Any other trouble at release changes nothing done.
func TestARunWhoseCommitsAreNotDurableFails(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, c := range []struct {
		name string
		err  error
		fail bool
	}{
		{"fsync failed", fmt.Errorf("sqlite store x.db: fsync its WAL: input/output error (%w)", store.ErrNotDurable), true},
		{"other trouble", errors.New("the lock file was already gone"), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := memory.New()
			e, err := ticket.NewEngine(releaseFails{st, c.err}, ticket.NewMock())
			if err != nil {
				t.Fatal(err)
			}
			res, err := e.Run(ctx, "d", ticket.Input("Where is my order SO20260901?"), engine.RunConfig{})
			if got := errors.Is(err, store.ErrNotDurable); got != c.fail {
				t.Fatalf("run: %v, want a not-durable error: %t", err, c.fail)
			}
			if c.fail && res.Checkpoint == 0 {
				t.Fatal("the result lost what the run did")
			}
			if _, err := st.Latest(ctx, "d"); err != nil {
				t.Fatalf("the run's checkpoints: %v", err)
			}
		})
	}
}
