package cli

import (
	"strings"

	"github.com/spf13/cobra"

	"rewind/engine/worker"
)

// newRunCmd is `rewind run` (asWorker: `rewind worker run`).
func newRunCmd(asWorker bool) *cobra.Command {
	f := execFlags{worker: asWorker}
	var t turnFlags
	var thread string
	c := &cobra.Command{
		Use:   "run --thread T --input TEXT",
		Short: "a new turn on thread T (created when new)",
		Long: `Run a new turn on thread T through its graph, with a checkpoint after every
superstep: on the ticket, the customer's message goes through planner →
executors → critic → summarizer → reply; on research (--graph research),
the question through plan → search → write, to the review before publish.
The thread is created when new; a thread with pending tasks must be resumed
(or its tasks discarded) first.`,
		Example: `  rewind run --thread ticket-1 --input "Where is my order SO20260901?"
  rewind run --thread t --input "…" --attach blob://tickets/att-1.png --interrupt-before executor
  rewind run --thread t --input "…" --draft --auth-ttl 1h     # pauses at the approval gate
  rewind run --thread t --input "…" --mock-latency 500ms      # time to kill -9 it by hand
  rewind run --thread t --input-file message.txt               # up to 64 KB; - reads stdin
  rewind run --graph research --thread r --input "How does WAL mode commit?"`,
		Args: between(0, 0),
		RunE: func(c *cobra.Command, _ []string) error {
			if strings.TrimSpace(thread) == "" {
				return usagef("run needs --thread T: name the thread, e.g. --thread ticket-1")
			}
			turn, err := t.turn(c, "run needs --input TEXT (or --input-file PATH): "+turnText(givenGraph(c, f.graph))+" (it is empty)")
			if err != nil {
				return err
			}
			return f.do(c.Context(), c.OutOrStdout(), worker.Request{Op: worker.OpRun, Thread: thread, Turn: turn})
		},
	}
	c.Flags().StringVar(&thread, "thread", "", "the thread `T` to run the turn on")
	t.add(c)
	f.add(c)
	return c
}
