package engine_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"rewind/engine"
	"rewind/engine/ticket"
	"rewind/store"
)

// checkEachState walks the whole thread and pages of it with EachState on
// a new engine and wants every checkpoint the reference holds, oldest
// first, each with the values and tasks it was written with.
func (r *reference) checkEachState(t *testing.T, st store.Store, thread, when string) {
	t.Helper()
	ids := r.ids()
	walk := func(before int64, limit int) []int64 {
		t.Helper()
		e := ticketEngine(t, st) // nothing cached: every row rebuilt by the walk
		var got []int64
		err := e.EachState(t.Context(), thread, before, limit, func(cp engine.Checkpoint) error {
			got = append(got, cp.ID)
			r.mu.Lock()
			want, tasks := r.values[cp.ID], r.tasks[cp.ID]
			r.mu.Unlock()
			if ch, ok := sameValuesWith(cp.Values, want, r.isValid, r.decode); !ok {
				return fmt.Errorf("checkpoint %d streamed channel %q as\n%s\nbut it was written as\n%s", cp.ID, ch, cp.Values[ch], want[ch])
			}
			if got := r.taskIDs(cp); got != tasks {
				return fmt.Errorf("checkpoint %d streamed its tasks as\n%s\nbut they were written as\n%s", cp.ID, got, tasks)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%s: EachState(before %d, limit %d): %v", when, before, limit, err)
		}
		return got
	}
	if got := walk(0, 0); !slices.Equal(got, ids) {
		t.Fatalf("%s: EachState streamed %d checkpoints %v\nwant the %d written, oldest first %v", when, len(got), got, len(ids), ids)
	}
	mid := ids[len(ids)/2]
	below := ids[:len(ids)/2]
	want := below[max(len(below)-37, 0):]
	if got := walk(mid, 37); !slices.Equal(got, want) {
		t.Fatalf("%s: EachState(before %d, limit 37) streamed %v\nwant %v", when, mid, got, want)
	}
}

// TestEachStateStopsAndSaysWhy: f's error ends the walk and comes back
// as it is; an unknown thread says so, with the fix.
func TestEachStateStopsAndSaysWhy(t *testing.T) {
	for _, sc := range storeCases {
		t.Run(sc.name, func(t *testing.T) {
			st, _ := sc.open(t)
			e := ticketEngine(t, st)
			for range 3 {
				if _, err := e.Run(t.Context(), "t", ticket.Input(sentences[0]), engine.RunConfig{}); err != nil {
					t.Fatal(err)
				}
			}
			stop := errors.New("enough")
			n := 0
			err := e.EachState(t.Context(), "t", 0, 0, func(cp engine.Checkpoint) error {
				if n++; n == 5 {
					return stop
				}
				return nil
			})
			if !errors.Is(err, stop) || n != 5 {
				t.Fatalf("EachState returned %v after %d checkpoints, want f's error after 5", err, n)
			}
			err = e.EachState(t.Context(), "nope", 0, 0, func(engine.Checkpoint) error { return nil })
			var fixed engine.Fixer
			if err == nil || !errors.As(err, &fixed) || err.Error() != `thread "nope" not found` {
				t.Fatalf("EachState of an unknown thread: %v (a fix: %v), want thread \"nope\" not found with the fix", err, errors.As(err, &fixed))
			}
			if err := e.EachState(t.Context(), "t", 1, 0, func(cp engine.Checkpoint) error {
				return fmt.Errorf("checkpoint %d is not below 1", cp.ID)
			}); err != nil {
				t.Fatalf("EachState before the first checkpoint: %v, want nothing streamed", err)
			}
		})
	}
}
