package cli

import (
	"strings"

	"github.com/spf13/cobra"
)

func newDiffCmd() *cobra.Command {
	var store, ns, graph string
	var asJSON bool
	c := &cobra.Command{
		Use:   "diff T A B",
		Short: "how the state changed from checkpoint A to checkpoint B (any two, also on different branches)",
		Example: `  rewind diff ticket-1 7 8          # what one superstep changed
  rewind diff ticket-1 8 16 --json  # the end of one branch against a fork's
  rewind diff t-main 1f0a… 1f0b… --store sqlite:checkpoints.db   # LangGraph, by UUID`,
		Args: between(3, 3),
		RunE: func(c *cobra.Command, args []string) error {
			ctx, out, thread := c.Context(), c.OutOrStdout(), args[0]
			ctx, err := forThread(ctx, thread, givenGraph(c, graph))
			if err != nil {
				return err
			}
			return withRead(ctx, store, ns, func(r reader) error {
				return runDiff(ctx, r, thread, ns, strings.TrimPrefix(args[1], "@"), strings.TrimPrefix(args[2], "@"), asJSON, out)
			})
		},
	}
	addStore(c, &store)
	addGraphFlag(c, &graph)
	addJSON(c, &asJSON)
	addNS(c, &ns)
	return c
}
