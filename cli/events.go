package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"rewind/engine"
	"rewind/tui/termtext"
)

func newEventsCmd() *cobra.Command {
	var store string
	var asJSON bool
	c := &cobra.Command{
		Use:   "events T [CHECKPOINT]",
		Short: "events committed with a checkpoint, or all of T's (node, model, compaction, interrupt)",
		Example: `  rewind events ticket-1
  rewind events ticket-1 4 --json`,
		Args: between(1, 2),
		RunE: func(c *cobra.Command, args []string) error {
			id, err := optCheckpoint(args)
			if err != nil {
				return err
			}
			ctx, out, thread := c.Context(), c.OutOrStdout(), args[0]
			return withEngine(ctx, store, func(e *engine.Engine) error {
				if _, err := e.Latest(ctx, thread); err != nil {
					return err
				}
				if id != 0 {
					if _, err := e.Get(ctx, thread, id); err != nil {
						return err
					}
				}
				evs, err := e.Events(ctx, thread, id)
				if err != nil {
					return err
				}
				if asJSON {
					return writeJSON(out, evs)
				}
				for _, ev := range evs {
					fmt.Fprintf(out, "%4d.%-3d %-28s %-10s %s\n", ev.Checkpoint, ev.Seq, termtext.Line(ev.Type), termtext.Line(ev.Node), termtext.Line(string(ev.Data)))
				}
				return nil
			})
		},
	}
	addStore(c, &store)
	addJSON(c, &asJSON)
	return c
}
