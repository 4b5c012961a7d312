package cli

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"rewind/engine"
	"rewind/engine/telemetry"
	"rewind/tui/termtext"
)

func newStatsCmd() *cobra.Command {
	var store string
	var asJSON, all bool
	c := &cobra.Command{
		Use:   "stats T | --all",
		Short: "the counters OpenTelemetry exports (runs, conflicts, blocked side effects, compaction rejections, model errors, latency, tokens), from the stored events",
		Long: `The counters rewind exports through OpenTelemetry (README, Signals), as the
stored events of thread T (or of every thread, --all) give them: for
whoever has no collector. Turns started, and the runs that failed or were
cancelled; conflicts (resumes that found a record changed under them);
side effects blocked; summaries the compaction check rejected, and summary
calls that failed; model calls, errors, latency and tokens by role.

A fence, a late write refused and a run refused because another process
held the thread change nothing and store nothing: only the live metrics
count them.`,
		Example: `  rewind stats ticket-1
  rewind stats --all --json
  rewind stats t-fail --store sqlite:checkpoints.db`,
		Args: between(0, 1),
		RunE: func(c *cobra.Command, args []string) error {
			if all == (len(args) == 1) {
				return usagef("stats takes a thread or --all, one of them: rewind stats T, or rewind stats --all")
			}
			ctx, out := c.Context(), c.OutOrStdout()
			if !all { // the thread's checkpoints read through its graph
				ctx = forListings(ctx, args[0])
			}
			return withReader(ctx, store, func(e *engine.Engine) error {
				threads := args
				if all {
					ts, err := e.Threads(ctx)
					if err != nil {
						return err
					}
					threads = nil
					for _, t := range ts {
						threads = append(threads, t.ID)
					}
				}
				s, err := countStats(ctx, e, threads, !all)
				if err != nil {
					return err
				}
				if asJSON {
					r := statsReport{Stats: s}
					if !all {
						r.Thread = threads[0]
					}
					return writeJSON(out, r)
				}
				printStats(out, threads, all, s)
				return nil
			})
		},
	}
	addStore(c, &store)
	addJSON(c, &asJSON)
	c.Flags().BoolVar(&all, "all", false, "every thread of the store, counted together")
	return c
}

// statsReport is the --json shape: the thread asked for (none with
// --all) and the counts.
type statsReport struct {
	Thread string `json:"thread,omitempty"`
	*telemetry.Stats
}

// countStats counts the threads' stored events; must says a thread that
// is not there is an error (one named on the command line).
func countStats(ctx context.Context, e *engine.Engine, threads []string, must bool) (*telemetry.Stats, error) {
	s := telemetry.NewStats()
	for _, th := range threads {
		if must {
			if _, err := e.Latest(ctx, th); err != nil {
				return nil, err
			}
		}
		evs, err := e.Events(ctx, th, 0)
		if err != nil {
			return nil, err
		}
		s.Add(evs)
	}
	return s, nil
}

func printStats(out io.Writer, threads []string, all bool, s *telemetry.Stats) {
	if all {
		fmt.Fprintf(out, "%s, %s stored\n", count(s.Threads, "thread"), count(s.Events, "event"))
	} else {
		fmt.Fprintf(out, "thread %s, %s stored\n", idText(threads[0]), count(s.Events, "event"))
	}
	m := s.Model
	row := func(name string, n int, what string) {
		fmt.Fprintln(out, strings.TrimRight(fmt.Sprintf("  %-29s %6d  %s", name, n, what), " "))
	}
	row(telemetry.MetricRuns, s.Runs.Turns, fmt.Sprintf("turns started (%s, %s); %d failed, %d cancelled; %s in all with resumes and answers (rewind runs)", count(s.Runs.Inputs, "input"), count(s.Runs.Forks, "fork"), s.Runs.Failed, s.Runs.Cancelled, count(s.Runs.All, "run")))
	row(telemetry.MetricConflicts, s.Conflicts, "resumes that found a record changed under them")
	row(telemetry.MetricBlocked, s.SideEffectsBlocked, "side effects not performed")
	row(telemetry.MetricCompactionsRej, s.CompactionsRejected, fmt.Sprintf("summaries the check rejected; %d summary calls failed", s.CompactionsSkipped))
	row(telemetry.MetricModelCalls, telemetry.Sum(m.Calls), byRole(m.Calls))
	row(telemetry.MetricModelErrors, telemetry.Sum(m.Errors), byRole(m.Errors))
	d := m.DurationMs
	fmt.Fprintf(out, "  %-29s %6s  p50 %d ms, p95 %d ms, max %d ms, total %d ms\n", telemetry.MetricModelDuration, "", d.P50, d.P95, d.Max, d.Total)
	fmt.Fprintf(out, "  %-29s %6s  %s in, %s out\n", telemetry.MetricModelTokens, "", termtext.Count(telemetry.Sum(m.InputTokens)), termtext.Count(telemetry.Sum(m.OutputTokens)))
	fmt.Fprintf(out, "  not stored (live metrics only): %s, %s, runs refused by another writer\n", telemetry.MetricFences, telemetry.MetricWritesRefused)
}

// byRole is "planner 2, executor 6", roles sorted; "" for none.
func byRole(m map[string]int) string {
	var parts []string
	for _, role := range slices.Sorted(maps.Keys(m)) {
		if m[role] != 0 {
			parts = append(parts, fmt.Sprintf("%s %d", termtext.Line(role), m[role]))
		}
	}
	return strings.Join(parts, ", ")
}
