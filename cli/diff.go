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

func newDiffCmd() *cobra.Command {
	var store, ns string
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
			lg := func(src browse.Source) error {
				return lgDiff(ctx, src, thread, ns, strings.TrimPrefix(args[1], "@"), strings.TrimPrefix(args[2], "@"), asJSON, out)
			}
			return withSource(ctx, store, ns, lg, func() error { return rwDiff(ctx, store, args, asJSON, out) })
		},
	}
	addStore(c, &store)
	addJSON(c, &asJSON)
	addNS(c, &ns)
	return c
}

func rwDiff(ctx context.Context, store string, args []string, asJSON bool, out io.Writer) error {
	a, err := checkpointArg(strings.TrimPrefix(args[1], "@"))
	if err != nil {
		return err
	}
	b, err := checkpointArg(strings.TrimPrefix(args[2], "@"))
	if err != nil {
		return err
	}
	thread := args[0]
	return withReader(ctx, store, func(e *engine.Engine) error {
		from, err := e.Get(ctx, thread, a)
		if err != nil {
			return err
		}
		to, err := e.Get(ctx, thread, b)
		if err != nil {
			return err
		}
		rel, err := e.Relation(ctx, thread, a, b)
		if err != nil {
			return err
		}
		diffs := engine.Diff(from.Values, to.Values)
		if asJSON {
			if diffs == nil {
				diffs = []engine.ChannelDiff{}
			}
			return writeJSON(out, map[string]any{"thread": thread, "from": a, "to": b, "relation": rel, "channels": diffs})
		}
		fmt.Fprintf(out, "@%d → @%d of thread %s (%s): %d channel(s) changed\n", a, b, idText(thread), rel, len(diffs))
		for _, d := range diffs {
			fmt.Fprintf(out, "@@ %s: %s\n", termtext.Line(d.Channel), termtext.Line(d.Summary))
			for _, l := range d.Lines {
				fmt.Fprintf(out, "  %s\n", termtext.Line(l))
			}
			if d.More > 0 {
				fmt.Fprintf(out, "  … %d more line(s)\n", d.More)
			}
		}
		return nil
	})
}
