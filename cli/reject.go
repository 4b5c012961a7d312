package cli

import (
	"strings"

	"github.com/spf13/cobra"

	"rewind/engine/worker"
)

// newRejectCmd is `rewind reject` (asWorker: `rewind worker reject`).
func newRejectCmd(asWorker bool) *cobra.Command {
	f := execFlags{worker: asWorker}
	var reason, op string
	var redraft bool
	var seen seenFlags
	c := &cobra.Command{
		Use:   "reject T --reason TEXT",
		Short: "reject the draft thread T waits on (no draft is created), and carry on",
		Example: `  rewind reject t --reason "the refund amount is wrong" --op op-draft-c9-1f2e3d4c
  rewind reject t --reason "say the refund takes 5 days" --redraft`,
		Args: between(1, 1),
		RunE: func(c *cobra.Command, args []string) error {
			if strings.TrimSpace(reason) == "" {
				return usagef("reject needs --reason TEXT: say why the draft must not be created")
			}
			if err := checkReason(reason); err != nil {
				return err
			}
			return f.do(c.Context(), c.OutOrStdout(), worker.Request{Op: worker.OpReject, Thread: args[0], Reason: reason, Redraft: redraft, Seen: seen.seen(op)})
		},
	}
	c.Flags().StringVar(&reason, "reason", "", "why the draft must not be created (recorded with the decision)")
	c.Flags().BoolVar(&redraft, "redraft", false, "write the reply again with the reason: the new reply is a new draft waiting for approval")
	c.Flags().StringVar(&op, "op", "", "reject only if the thread waits on draft operation `ID` (the one you reviewed)")
	seen.add(c, asWorker)
	f.add(c)
	return c
}
