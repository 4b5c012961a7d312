package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"rewind/engine"
	"rewind/store"
)

func newRmCmd() *cobra.Command {
	var spec string
	var asJSON bool
	c := &cobra.Command{
		Use:     "rm T",
		Short:   "delete every row of thread T (checkpoints, writes, events, messages, drafts)",
		Example: `  rewind rm ticket-1`,
		Args:    between(1, 1),
		RunE: func(c *cobra.Command, args []string) error {
			out, thread := c.OutOrStdout(), args[0]
			return withEngine(c.Context(), spec, func(e *engine.Engine) error {
				if err := e.Store().DeleteThread(c.Context(), thread); err != nil {
					if errors.Is(err, store.ErrNotFound) {
						return fmt.Errorf("thread %q not found: list threads with `rewind threads`", thread)
					}
					return fmt.Errorf("delete thread %q: %w", thread, err)
				}
				if asJSON {
					return writeJSON(out, map[string]any{"thread": thread, "deleted": true})
				}
				fmt.Fprintf(out, "deleted thread %s\n", clean(thread))
				return nil
			})
		},
	}
	addStore(c, &spec)
	addJSON(c, &asJSON)
	return c
}
