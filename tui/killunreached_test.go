package tui

import (
	"context"
	"errors"
	"strings"
	"testing"

	"rewind/engine"
)

// TestARunThatEndsBeforeItsKillPointSaysSo: a run started with a kill
// point armed (K) that ends without reaching it says so in the status
// line, whichever way it ends (as `rewind run --kill-at` does, exit 3):
// done, paused, failed or stopped. Before, a failed or stopped run said
// nothing of it, and the next run went without the point, the user left
// thinking the drill happened.
func TestARunThatEndsBeforeItsKillPointSaysSo(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		end  RunUpdate
	}{
		{"done", RunUpdate{Done: true, Result: engine.Result{Checkpoint: 4, Status: engine.RunDone}}},
		{"failed", RunUpdate{Done: true, Result: engine.Result{Checkpoint: 3}, Err: errors.New("planner: the model refused")}},
		{"stopped", RunUpdate{Done: true, Result: engine.Result{Checkpoint: 3}, Err: context.Canceled}},
	} {
		live := &liveStrip{killAt: "mid-fanout"}
		c2 := runControl{sess: &session{}, live: live, keys: newThreadKeys()}
		got := c2.describeEnd(c.end)
		if !strings.Contains(got, "kill point mid-fanout was not reached") {
			t.Errorf("a run %s before its kill point says %q, not that the point was not reached", c.name, got)
		}
	}
}
