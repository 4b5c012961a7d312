package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"rewind/cli/app"
	"rewind/engine/bench"
	"rewind/store/backend"
	"rewind/tui/termtext"
)

func newBenchCmd() *cobra.Command {
	var store string
	var asJSON bool
	var turns, inlineBytes int
	c := &cobra.Command{
		Use:   "bench",
		Short: "a long conversation on a new thread (mock, zero latency): time and bytes per turn, listing and loading times",
		Long: `A long conversation on a new thread, with the mock model at zero latency
and ten support sentences cycled: time and bytes stored per turn, then
listing and loading times and peak memory.`,
		Example: `  rewind bench --store sqlite:/tmp/b.db --turns 1000
  rewind bench --store memory: --turns 50 --json`,
		Args: between(0, 0),
		RunE: func(c *cobra.Command, _ []string) error {
			if turns < 1 {
				return usagef("bench: --turns %d: give at least 1", turns)
			}
			if inlineBytes < 0 {
				return usagef("bench: --inline-bytes %d is negative", inlineBytes)
			}
			ctx, out, spec := c.Context(), c.OutOrStdout(), app.ResolveStore(store)
			if err := spec.Writable(c.Context()); err != nil {
				return err // a LangGraph database: refused before anything is written
			}
			st, err := spec.Open(ctx)
			if err != nil {
				return err
			}
			defer st.Close()
			durability := backend.Durability(st)
			var progress func(bench.Turn)
			if !asJSON {
				fmt.Fprintf(out, "bench on %s: %d turns of the ticket conversation, mock model at zero latency\n", termtext.Line(spec.Label()), turns)
				if durability != "" {
					fmt.Fprintf(out, "  durability: %s\n", durability)
				}
				progress = func(t bench.Turn) {
					if t.Turn == 1 || t.Turn%max(turns/10, 1) == 0 {
						fmt.Fprintf(out, "  turn %5d: %7.2f ms, %2d checkpoints, %6.1f KB\n", t.Turn, t.Ms, t.Checkpoints, float64(t.Bytes)/1024)
					}
				}
			}
			rep, err := bench.Run(ctx, st, spec.Label(), bench.Options{Turns: turns, InlineBytes: inlineBytes}, progress)
			if err != nil {
				return err
			}
			rep.Durability = durability
			if asJSON {
				return writeJSON(out, rep)
			}
			fmt.Fprintln(out, turnSummary(rep))
			fmt.Fprintf(out, "thread %s: %d checkpoints, %.1f MB; list %.2f ms; load latest %.3f ms (%.3f ms cached), middle %.3f ms; peak RSS %.0f MB\n",
				idText(rep.Thread), rep.Checkpoints, float64(rep.TotalBytes)/1e6, rep.HistoryMs, rep.GetLatestMs, rep.GetLatestWarmMs, rep.GetMiddleMs, float64(rep.RSSBytes)/1e6)
			return nil
		},
	}
	addStore(c, &store)
	addJSON(c, &asJSON)
	c.Flags().IntVar(&turns, "turns", 100, "how many turns to run")
	c.Flags().IntVar(&inlineBytes, "inline-bytes", 0, "attach an inline value of `B` bytes to every turn")
	return c
}

// turnSummary compares turns 11-20 (past the first turns' set-up) with the
// last ten, the flatness the long-conversation targets ask for. A run too
// short for both windows is summed up whole rather than shown as zeros.
func turnSummary(rep bench.Report) string {
	n := len(rep.Turns)
	if n < 20 {
		ms, bytes := rep.Medians(1, n)
		return fmt.Sprintf("turns 1-%d: median %.2f ms, %.1f KB a turn (run 20 or more to compare turns 11-20 with the last 10)", n, ms, bytes/1024)
	}
	early, earlyKB := rep.Medians(11, 20)
	late, lateKB := rep.Medians(n-9, n)
	return fmt.Sprintf("turns 11-20: median %.2f ms, %.1f KB a turn; last 10: median %.2f ms, %.1f KB a turn", early, earlyKB/1024, late, lateKB/1024)
}
