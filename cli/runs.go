package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"rewind/engine"
	"rewind/tui/termtext"
)

func newRunsCmd() *cobra.Command {
	var store string
	var asJSON bool
	c := &cobra.Command{
		Use:   "runs T",
		Short: "the runs that wrote thread T, oldest first: which checkpoints each wrote, where it stopped, which run carried it on",
		Long: `The runs that wrote thread T, oldest first. Every command that writes
(run, resume, fork, replay, approve, reject, edit, cancel, discard, and the
TUI's) is a run with an id of its own; a resume names the run it
continues. Each line: the run's id and kind, the checkpoint it started
from, the checkpoints it wrote, the run it continues, the task results it
reused and the tasks it ran again, and where it stands: a run left running
that no process runs any more reads stopped. Read from the listings alone;
checkpoints stored before runs were recorded read as run —.`,
		Example: `  rewind runs ticket-1
  rewind runs ticket-1 --json`,
		Args: between(1, 1),
		RunE: func(c *cobra.Command, args []string) error {
			return withReader(c.Context(), store, func(e *engine.Engine) error {
				return runRuns(c.Context(), e, args[0], asJSON, c.OutOrStdout())
			})
		},
	}
	addStore(c, &store)
	addJSON(c, &asJSON)
	return c
}

// runRuns is `rewind runs`: Engine.Runs, one run a line.
func runRuns(ctx context.Context, e *engine.Engine, thread string, asJSON bool, out io.Writer) error {
	runs, err := e.Runs(ctx, thread)
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(out, runs)
	}
	fmt.Fprintf(out, "thread %s: %s\n", idText(thread), count(len(runs.List), "run"))
	for _, s := range runs.List {
		fmt.Fprintf(out, "  %s\n", termtext.Line(s.Text()))
	}
	return nil
}
