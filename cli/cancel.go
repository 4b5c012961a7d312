package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"rewind/engine"
	"rewind/tui/termtext"
)

func newCancelCmd() *cobra.Command {
	var store, reason string
	var asJSON bool
	c := &cobra.Command{
		Use:   "cancel T [--reason TEXT]",
		Short: "end thread T's run for good: drop its pending tasks, fence out the process running it",
		Long: `End thread T's run on purpose. Its pending tasks are dropped and recorded
as discarded in a checkpoint whose run status is cancelled, with the reason.
The thread is fenced first, taken over from a live worker if one runs it:
that worker's late writes and drafts are refused, so its late result changes
nothing, and no resume revives the run. A new turn (rewind run) or a fork
starts a new run.`,
		Example: `  rewind cancel ticket-1 --reason "the customer withdrew the request"`,
		Args:    between(1, 1),
		RunE: func(c *cobra.Command, args []string) error {
			out, thread := c.OutOrStdout(), args[0]
			if err := checkReason(reason); err != nil {
				return err
			}
			return withEngine(c.Context(), store, func(e *engine.Engine) error {
				cp, err := e.Cancel(c.Context(), thread, reason)
				if err != nil {
					return err
				}
				if asJSON {
					return writeJSON(out, map[string]any{"thread": thread, "checkpoint": cp.ID, "status": cp.Metadata.Status, "reason": cp.Metadata.Reason, "discarded": cp.Metadata.Discarded})
				}
				fmt.Fprintf(out, "cancelled the run of thread %s at @%d: dropped %d pending task(s) (%s); reason: %s\n",
					termtext.Line(thread), cp.ID, len(cp.Metadata.Discarded), engine.DescribeTasks(cp.Metadata.Discarded), termtext.Line(cp.Metadata.Reason))
				return nil
			})
		},
	}
	addStore(c, &store)
	addJSON(c, &asJSON)
	c.Flags().StringVar(&reason, "reason", "", "why the run is cancelled (recorded with it)")
	return c
}
