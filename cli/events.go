package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"rewind/engine"
	"rewind/store/browse"
	"rewind/tui/termtext"
)

func newEventsCmd() *cobra.Command {
	var store, ns string
	var asJSON bool
	c := &cobra.Command{
		Use:   "events T [CHECKPOINT]",
		Short: "events committed with a checkpoint, or all of T's (node, model, compaction, interrupt)",
		Long: `The events committed with checkpoint CHECKPOINT of thread T, or all of T's:
nodes started and finished, model calls, compactions, interrupts.

On a LangGraph database (read-only), which keeps no event log: the writes
stored for the superstep from each checkpoint (or from CHECKPOINT, a UUID),
by task, LangGraph's special ones named (error, scheduled, interrupt,
resume) with the error text and the interrupt values; --ns picks a
subgraph's chain.`,
		Example: `  rewind events ticket-1
  rewind events ticket-1 4 --json
  rewind events t-fail --store sqlite:checkpoints.db`,
		Args: between(1, 2),
		RunE: func(c *cobra.Command, args []string) error {
			ctx, out, thread := c.Context(), c.OutOrStdout(), args[0]
			lg := func(src browse.Source) error {
				at := ""
				if len(args) == 2 {
					at = strings.TrimPrefix(args[1], "@")
				}
				return lgEvents(ctx, src, thread, ns, at, asJSON, out)
			}
			return withSource(ctx, store, ns, lg, func(ctx context.Context) error {
				id, err := optCheckpoint(args)
				if err != nil {
					return err
				}
				return rwEvents(ctx, store, thread, id, asJSON, out)
			})
		},
	}
	addStore(c, &store)
	addJSON(c, &asJSON)
	addNS(c, &ns)
	return c
}

func rwEvents(ctx context.Context, store, thread string, id int64, asJSON bool, out io.Writer) error {
	ctx = forListings(ctx, thread) // its checkpoints read through its graph
	return withReader(ctx, store, func(e *engine.Engine) error {
		// Without the key the events still list; the model calls, kept
		// in the encrypted checkpoints, are said to be left out.
		sealed, err := unlessSealed(e, func() error {
			if _, err := e.Latest(ctx, thread); err != nil {
				return err
			}
			if id != 0 {
				_, err := e.Get(ctx, thread, id)
				return err
			}
			return nil
		})
		if err != nil {
			return err
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
		if sealed != nil {
			fmt.Fprintf(out, "model calls are left out: %s\n", sealedText(*sealed))
		}
		return nil
	})
}
