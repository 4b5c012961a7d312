package cli

import (
	"github.com/spf13/cobra"
)

// newWorkerCmd is `rewind worker OP …`, hidden: one invocation in a process
// of its own, its events as JSON lines on stdout, for the TUI and the
// drills (see engine/worker). Each OP is the public command's twin, with
// the same flags less --json.
func newWorkerCmd() *cobra.Command {
	c := &cobra.Command{
		Use:    "worker run|resume|fork|approve|reject",
		Short:  "one invocation in its own process, events as JSON lines (used by the TUI and the drills)",
		Hidden: true,
		Args:   cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("worker: unknown operation %q: usage: rewind %s", named(args[0]), c.Use)
			}
			return usagef("usage: rewind %s", c.Use)
		},
	}
	for _, op := range []*cobra.Command{newRunCmd(true), newResumeCmd(true), newForkCmd(true), newReplayCmd(true), newApproveCmd(true), newRejectCmd(true)} {
		op.Short += " (JSON lines)"
		op.Example = ""
		c.AddCommand(op)
	}
	return c
}
