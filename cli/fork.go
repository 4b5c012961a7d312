package cli

import (
	"github.com/spf13/cobra"

	"rewind/engine/worker"
)

// newForkCmd is `rewind fork` (asWorker: `rewind worker fork`).
func newForkCmd(asWorker bool) *cobra.Command {
	f := execFlags{worker: asWorker}
	var t turnFlags
	c := &cobra.Command{
		Use:   "fork T CHECKPOINT --input TEXT",
		Short: "a new branch whose parent is CHECKPOINT, with new input; nothing is deleted",
		Example: `  rewind fork ticket-1 2 --input "Please send me the invoice for SO20260901."
  rewind log ticket-1                       # the fork branches from @2`,
		Args: between(2, 2),
		RunE: func(c *cobra.Command, args []string) error {
			id, err := checkpointArg(args[1])
			if err != nil {
				return err
			}
			turn, err := t.turn(c, "fork needs --input TEXT (or --input-file PATH): the new message for the branch (it is empty)")
			if err != nil {
				return err
			}
			return f.do(c.Context(), c.OutOrStdout(), worker.Request{Op: worker.OpFork, Thread: args[0], Checkpoint: id, Turn: turn})
		},
	}
	t.add(c)
	f.add(c)
	return c
}
