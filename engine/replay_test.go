package engine_test

import (
	"context"
	"errors"
	"testing"

	"rewind/engine"
	"rewind/engine/ticket"
)

// A replay runs a checkpoint's due tasks again on a new branch, with no
// input: from the input checkpoint it is the whole turn again, from the
// planner's checkpoint the executors on; the deterministic mock lands on
// the same values as the original branch, which stays as it was, on every
// store and after reopening.
func TestReplayRunsTheDueTasksAgainOnANewBranch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const sentence = "My order SO20260901 hasn't arrived yet: where is the parcel now, and can I get a refund?"
	for _, sc := range storeCases {
		t.Run(sc.name, func(t *testing.T) {
			st, reopen := sc.open(t)
			e, err := ticket.NewEngine(st, ticket.NewMock())
			if err != nil {
				t.Fatal(err)
			}
			first, err := e.Run(ctx, "r", ticket.Input(sentence), engine.RunConfig{})
			if err != nil {
				t.Fatal(err)
			}
			original, err := e.Get(ctx, "r", first.Checkpoint)
			if err != nil {
				t.Fatal(err)
			}
			for _, tc := range []struct {
				from    int64
				planner int
			}{{1, 1}, {2, 0}} {
				res, err := e.Replay(ctx, "r", tc.from, engine.RunConfig{})
				if err != nil {
					t.Fatalf("replay @%d: %v", tc.from, err)
				}
				if res.Status != engine.RunDone || res.ModelCalls["planner"] != tc.planner || res.ModelCalls["executor"] == 0 {
					t.Fatalf("replay @%d: %s, calls %v", tc.from, res.Status, res.ModelCalls)
				}
				chain, err := e.Ancestors(ctx, "r", res.Checkpoint)
				if err != nil {
					t.Fatal(err)
				}
				var copy engine.Checkpoint
				for _, c := range chain {
					if c.ParentID == tc.from {
						copy = c
					}
				}
				if copy.Source != engine.SourceFork || !copy.Metadata.Replay || copy.Metadata.ForkedFrom != tc.from {
					t.Fatalf("replay @%d: the branch starts with %+v, want a replay fork of @%d", tc.from, copy, tc.from)
				}
				end, err := e.Get(ctx, "r", res.Checkpoint)
				if err != nil {
					t.Fatal(err)
				}
				if diff := engine.Diff(original.Values, end.Values); len(diff) != 0 {
					t.Errorf("replay @%d ends with other values than the original: %+v", tc.from, diff)
				}
			}
			if again, err := e.Get(ctx, "r", first.Checkpoint); err != nil || len(engine.Diff(original.Values, again.Values)) != 0 {
				t.Fatalf("the original branch changed: %v", err)
			}
			if _, err := e.Replay(ctx, "r", first.Checkpoint, engine.RunConfig{}); !errors.Is(err, engine.ErrNothingToReplay) {
				t.Fatalf("replay of a turn's end: %v, want ErrNothingToReplay", err)
			}
			if _, err := e.Replay(ctx, "r", 999, engine.RunConfig{}); err == nil {
				t.Fatal("replay of an unknown checkpoint went through")
			}
			if reopen == nil {
				return
			}
			e2, err := ticket.NewEngine(reopen(), ticket.NewMock())
			if err != nil {
				t.Fatal(err)
			}
			hist, err := e2.History(ctx, "r", 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			replays := 0
			for _, c := range hist {
				if c.Metadata.Replay {
					replays++
				}
			}
			if replays != 2 {
				t.Fatalf("after reopening, %d listings say replay, want 2", replays)
			}
		})
	}
}
