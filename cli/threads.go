package cli

import (
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"rewind/engine"
	"rewind/store/browse"
)

func newThreadsCmd() *cobra.Command {
	var store string
	var asJSON bool
	c := &cobra.Command{
		Use:   "threads",
		Short: "every thread in the store",
		Example: `  rewind threads
  rewind threads --store postgres://rewind@127.0.0.1:5518/rewind --json
  rewind threads --store sqlite:checkpoints.db   # a LangGraph database, read-only`,
		Args: between(0, 0),
		RunE: func(c *cobra.Command, _ []string) error {
			out := c.OutOrStdout()
			lg := func(src browse.Source) error { return lgThreads(c.Context(), src, asJSON, out) }
			return withSource(c.Context(), store, "", lg, func() error {
				return withEngine(c.Context(), store, func(e *engine.Engine) error {
					ts, err := e.Threads(c.Context())
					if err != nil {
						return err
					}
					if asJSON {
						type row struct {
							ID          string    `json:"id"`
							Checkpoints int       `json:"checkpoints"`
							Latest      int64     `json:"latest"`
							UpdatedAt   time.Time `json:"updatedAt"`
						}
						rows := make([]row, len(ts))
						for i, t := range ts {
							rows[i] = row{t.ID, t.Checkpoints, t.LatestID, t.UpdatedAt}
						}
						return writeJSON(out, rows)
					}
					if len(ts) == 0 {
						fmt.Fprintln(out, "no threads yet: start one with `rewind run --thread T --input TEXT`")
						return nil
					}
					tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
					fmt.Fprintln(tw, "THREAD\tCHECKPOINTS\tLATEST\tUPDATED")
					for _, t := range ts {
						fmt.Fprintf(tw, "%s\t%d\t%d\t%s\n", idText(t.ID), t.Checkpoints, t.LatestID, t.UpdatedAt.Local().Format("2006-01-02 15:04:05"))
					}
					return tw.Flush()
				})
			})
		},
	}
	addStore(c, &store)
	addJSON(c, &asJSON)
	return c
}
