package cli

import (
	"github.com/spf13/cobra"

	"rewind/engine/worker"
)

// newApproveCmd is `rewind approve` (asWorker: `rewind worker approve`).
func newApproveCmd(asWorker bool) *cobra.Command {
	f := execFlags{worker: asWorker}
	c := &cobra.Command{
		Use:   "approve T",
		Short: "approve the draft thread T waits on, and carry on",
		Long: `Approve the draft thread T waits on at the approval gate, and carry on:
create_draft then writes it (once, looked up by operation id on any retry).
The answer is recorded as a decision, never as conversation input.`,
		Example: `  rewind run --thread t --input "…" --draft --auth-ttl 1h
  rewind approve t`,
		Args: between(1, 1),
		RunE: func(c *cobra.Command, args []string) error {
			return f.do(c.Context(), c.OutOrStdout(), worker.Request{Op: worker.OpApprove, Thread: args[0]})
		},
	}
	f.add(c)
	return c
}
