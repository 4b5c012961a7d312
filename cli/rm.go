package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"rewind/engine"
	"rewind/store"
	"rewind/tui/termtext"
)

func newRmCmd() *cobra.Command {
	var spec string
	var asJSON, takeOver bool
	c := &cobra.Command{
		Use:   "rm T",
		Short: "delete every row of thread T (checkpoints, writes, events, messages, drafts)",
		Example: `  rewind rm ticket-1
  rewind rm ticket-1 --take-over   # its run is stuck: fence it out, then delete`,
		Args: between(1, 1),
		RunE: func(c *cobra.Command, args []string) error {
			out, thread := c.OutOrStdout(), args[0]
			return withEngine(c.Context(), spec, func(e *engine.Engine) error {
				// As the thread's writer: a live run is refused (or, with
				// --take-over, fenced out for good) rather than deleted
				// under its feet.
				if err := e.DeleteThread(c.Context(), thread, takeOver); err != nil {
					return err
				}
				// A read another process holds keeps the deleted text in
				// the store's files until it ends (SQLite's WAL): said,
				// never left to a grep to find.
				var unerased string
				if er, ok := e.Store().(store.Erasing); ok {
					unerased, _ = er.Unerased(c.Context())
				}
				if asJSON {
					j := map[string]any{"thread": thread, "deleted": true}
					if unerased != "" {
						j["unerased"] = unerased
					}
					return writeJSON(out, j)
				}
				fmt.Fprintf(out, "deleted thread %s\n", idText(thread))
				if unerased != "" {
					fmt.Fprintf(out, "its text stays in the store's files while %s lasts; the first rewind command on this store after that erases it\n", termtext.Line(unerased))
				}
				return nil
			})
		},
	}
	addStore(c, &spec)
	addJSON(c, &asJSON)
	c.Flags().BoolVar(&takeOver, "take-over", false, "delete a thread another live process is running; that process is fenced out")
	return c
}
