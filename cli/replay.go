package cli

import (
	"github.com/spf13/cobra"

	"rewind/engine/worker"
)

// newReplayCmd is `rewind replay` (asWorker: `rewind worker replay`).
func newReplayCmd(asWorker bool) *cobra.Command {
	f := execFlags{worker: asWorker}
	c := &cobra.Command{
		Use:   "replay T CHECKPOINT",
		Short: "run CHECKPOINT's due tasks again on a new branch, with no input (the old branch stays)",
		Long: `Replay copies CHECKPOINT as a new branch (source fork, marked replay) and
runs the tasks that were due there again, fresh: nothing its own
continuation stored is reused. From a turn's input checkpoint that is the
whole turn again; from the planner's checkpoint, the executors on. What
differs on the new branch is only what the nodes do differently this time:
a real model's answers, a record that changed, a node you fixed. A
checkpoint with nothing due (a turn's end) cannot be replayed: fork it with
new input. Compare the branches with rewind diff.`,
		Example: `  rewind replay ticket-1 1          # the whole first turn again
  rewind replay ticket-1 2 --provider openai
  rewind diff ticket-1 8 16         # the original end against the replay's`,
		Args: between(2, 2),
		RunE: func(c *cobra.Command, args []string) error {
			id, err := checkpointArg(args[1])
			if err != nil {
				return err
			}
			return f.do(c.Context(), c.OutOrStdout(), worker.Request{Op: worker.OpReplay, Thread: args[0], Checkpoint: id})
		},
	}
	f.add(c)
	return c
}
