package cli

import (
	"fmt"
	"testing"

	"rewind/engine"
)

// The engine's fixes end the CLI's line as commands to type, in the
// engine's order, with the thread as the CLI prints ids.
func TestFixesAreWordedAsCommands(t *testing.T) {
	pending := fmt.Errorf("run: %w", &engine.PendingError{Thread: "my thread", Checkpoint: 4})
	want := "run: thread \"my thread\" has 0 pending task(s) at checkpoint 4 (): carry on with `rewind resume \"my thread\"`, " +
		"branch from an earlier checkpoint with `rewind fork \"my thread\" CHECKPOINT --input …`, or drop the pending tasks with `rewind discard \"my thread\"`"
	if got := withFixes(pending.Error(), pending); got != want {
		t.Errorf("pending:\n got %s\nwant %s", got, want)
	}
	fork := &engine.FixError{Thread: "t", Err: fmt.Errorf("already continued"), Fix: []engine.Fix{{Action: engine.FixFork, Thread: "t", At: 7}}}
	if got := withFixes(fork.Error(), fork); got != "already continued: fork from @7 with `rewind fork t 7 --input …`" {
		t.Errorf("fork: %s", got)
	}
	if got := withFixes("boom", fmt.Errorf("boom")); got != "boom" {
		t.Errorf("no fixes: %s", got)
	}
}
