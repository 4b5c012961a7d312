package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"rewind/engine"
	"rewind/tui/termtext"
)

func newDiscardCmd() *cobra.Command {
	var store string
	var asJSON bool
	c := &cobra.Command{
		Use:   "discard T",
		Short: "drop T's pending tasks explicitly (as an update checkpoint)",
		Long: `Drop thread T's pending tasks explicitly, recorded as an update checkpoint
that names them, so a new turn can start without resuming.`,
		Example: `  rewind discard ticket-1`,
		Args:    between(1, 1),
		RunE: func(c *cobra.Command, args []string) error {
			out, thread := c.OutOrStdout(), args[0]
			return withThreadEngine(c.Context(), store, thread, "", func(e *engine.Engine) error {
				cp, err := e.DiscardIf(c.Context(), thread, unanswered(c.Context(), e, thread))
				if err != nil {
					return err
				}
				if asJSON {
					return writeJSON(out, map[string]any{"thread": thread, "checkpoint": cp.ID, "discarded": cp.Metadata.Discarded})
				}
				fmt.Fprintf(out, "discarded %s (%s) of thread %s at checkpoint %d\n", count(len(cp.Metadata.Discarded), "pending task"), termtext.Line(engine.DescribeTasks(cp.Metadata.Discarded)), idText(thread), cp.ID)
				return nil
			})
		},
	}
	addStore(c, &store)
	addJSON(c, &asJSON)
	return c
}
