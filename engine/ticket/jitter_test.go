package ticket_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"rewind/engine"
	"rewind/engine/model"
	"rewind/engine/ticket"
	"rewind/store/memory"
)

// fanoutWaits runs one turn without waiting and returns what each executor
// of the first fan-out would wait with this latency, jitter and seed.
func fanoutWaits(t *testing.T, latency, jitter time.Duration, seed uint64) []time.Duration {
	t.Helper()
	twin := ticket.NewMock()
	twin.Latency, twin.Jitter, twin.Seed = latency, jitter, seed
	rec := &waitRecorder{Model: ticket.NewMock(), twin: twin}
	e, err := engine.New(memory.New(), ticket.NewGraph(), rec)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Run(context.Background(), "j", ticket.Input(sentence), engine.RunConfig{}); err != nil {
		t.Fatal(err)
	}
	// The executors run in parallel: order their waits, not their calls.
	slices.Sort(rec.waits)
	return rec.waits
}

type waitRecorder struct {
	model.Model
	twin     *model.Mock
	mu       sync.Mutex
	reviewed bool
	waits    []time.Duration
}

func (r *waitRecorder) Complete(ctx context.Context, req model.Request) (model.Response, error) {
	r.mu.Lock()
	switch {
	case req.Role == model.RoleCritic:
		r.reviewed = true
	case req.Role == model.RoleExecutor && !r.reviewed:
		r.waits = append(r.waits, r.twin.Wait(req))
	}
	r.mu.Unlock()
	return r.Model.Complete(ctx, req)
}

// A hand kill halfway through the fan-out should catch some executors done
// and some still running: that is what makes a resume worth watching.
// Without jitter every executor finishes at once; with it, most seeds
// spread them across the middle.
func TestMockJitterSpreadsTheFanOut(t *testing.T) {
	t.Parallel()
	const latency, jitter = 200 * time.Millisecond, 800 * time.Millisecond
	flat := fanoutWaits(t, latency, 0, 1)
	if len(flat) < 3 {
		t.Fatalf("the fan-out has %d executors, want at least 3", len(flat))
	}
	for _, w := range flat {
		if w != latency {
			t.Fatalf("without jitter an executor waits %v, want %v", w, latency)
		}
	}
	mixed := 0
	const seeds = 20
	for seed := uint64(1); seed <= seeds; seed++ {
		waits := fanoutWaits(t, latency, jitter, seed)
		again := fanoutWaits(t, latency, jitter, seed)
		mid := latency + jitter/2
		before, after := 0, 0
		for i, w := range waits {
			if w != again[i] {
				t.Fatalf("seed %d: executor %d waits %v, then %v on the same run: not reproducible", seed, i, w, again[i])
			}
			if w < latency || w >= latency+jitter {
				t.Fatalf("seed %d: wait %v outside [%v, %v)", seed, w, latency, latency+jitter)
			}
			if w < mid {
				before++
			} else {
				after++
			}
		}
		if before > 0 && after > 0 {
			mixed++
		}
	}
	// With 3–4 executors uniformly spread, all on one side happens with
	// probability ≤ 2·(1/2)^3 = 1/4; most seeds must mix.
	if mixed < seeds*2/3 {
		t.Fatalf("a kill at the middle of the fan-out catches a mix in %d of %d seeds, want most", mixed, seeds)
	}
	other := fanoutWaits(t, latency, jitter, 2)
	same := fanoutWaits(t, latency, jitter, 1)
	differs := false
	for i := range other {
		differs = differs || other[i] != same[i]
	}
	if !differs {
		t.Fatal("seeds 1 and 2 give the same waits: the seed is not used")
	}
}
