package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"rewind/engine"
	"rewind/engine/ticket"
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
nothing, and no resume revives the run. A draft it waited on is cancelled
with it, in the same checkpoint: no later turn, fork or answer performs it.
A new turn (rewind run) or a fork starts a new run.

When the run waits on a draft as cancel begins and an answer to it is acted
on first (approved, rejected), cancel is refused and changes nothing.`,
		Example: `  rewind cancel ticket-1 --reason "the customer withdrew the request"`,
		Args:    between(1, 1),
		RunE: func(c *cobra.Command, args []string) error {
			out, thread := c.OutOrStdout(), args[0]
			if err := checkReason(reason); err != nil {
				return err
			}
			return withThreadEngine(c.Context(), store, thread, "", func(e *engine.Engine) error {
				cp, err := e.CancelIf(c.Context(), thread, reason, unanswered(c.Context(), e, thread))
				if err != nil {
					return err
				}
				if asJSON {
					return writeJSON(out, map[string]any{"thread": thread, "checkpoint": cp.ID, "status": cp.Metadata.Status, "reason": cp.Metadata.Reason, "discarded": cp.Metadata.Discarded})
				}
				fmt.Fprintf(out, "cancelled the run of thread %s at @%d: dropped %s (%s); reason: %s\n",
					termtext.Line(thread), cp.ID, count(len(cp.Metadata.Discarded), "pending task"), engine.DescribeTasks(cp.Metadata.Discarded), termtext.Line(cp.Metadata.Reason))
				return nil
			})
		},
	}
	addStore(c, &store)
	addJSON(c, &asJSON)
	c.Flags().StringVar(&reason, "reason", "", "why the run is cancelled (recorded with it)")
	return c
}

// unanswered is the check of a cancel or discard on thread: when its run
// waits on a draft as the command begins, the command is refused if the
// run acted on an answer to it (approved, rejected) before the command
// holds the thread.
func unanswered(ctx context.Context, e *engine.Engine, thread string) engine.HeadCheck {
	cp, err := e.Latest(ctx, thread)
	if err != nil {
		return nil // the command reads it again, and says why
	}
	return ticket.StillWaiting(ticket.Waiting(cp))
}
