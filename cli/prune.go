package cli

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"rewind/cli/app"
	"rewind/engine"
)

func newPruneCmd() *cobra.Command {
	var store, keepLast, olderThan string
	var asJSON, all, dryRun bool
	c := &cobra.Command{
		Use:   "prune T|--all",
		Short: "delete old checkpoints with their writes and events, keeping the newest N and/or those younger than D",
		Long: `Delete old checkpoints of thread T (or of every thread with --all) with their
writes and events, keeping the newest N (--keep-last) and/or those younger
than D (--older-than), the head, paused branch tips and the newest
checkpoint that names the thread's graph (so it still opens as that graph). A kept checkpoint
whose parent went is re-rooted (rewind log shows "pruned (was @14)") and
stored whole if it was a delta; large values nothing refers to any more are
freed; messages and drafts stay.`,
		Example: `  rewind prune ticket-1 --keep-last 50 --dry-run
  rewind prune --all --older-than 720h        # keep 30 days`,
		Args: cobra.ArbitraryArgs, // RunE words the THREAD|--all rule
		RunE: func(c *cobra.Command, args []string) error {
			const form = "prune THREAD|--all [--keep-last N] [--older-than DURATION] [--dry-run]"
			switch {
			case all && len(args) > 0:
				return usagef("prune takes a THREAD or --all, not both: usage: rewind %s", form)
			case !all && len(args) != 1:
				return usagef("usage: rewind %s (name the thread, or --all for every thread)", form)
			case keepLast == "" && olderThan == "":
				return usagef("prune needs --keep-last N (keep the newest N checkpoints) or --older-than DURATION (keep those younger, e.g. 720h for 30 days), or both")
			}
			policy := engine.PrunePolicy{DryRun: dryRun}
			if keepLast != "" {
				n, err := strconv.Atoi(keepLast)
				if err != nil || n < 1 {
					return usagef("--keep-last %q: give the number of newest checkpoints to keep, at least 1", named(keepLast))
				}
				policy.KeepLast = n
			}
			if olderThan != "" {
				d, err := time.ParseDuration(olderThan)
				if err != nil || d <= 0 {
					return usagef("--older-than %q: give a positive duration in h, m or s, e.g. 720h for 30 days", named(olderThan))
				}
				policy.OlderThan = d
			}
			ctx, out := c.Context(), c.OutOrStdout()
			return withEngine(ctx, store, func(e *engine.Engine) error {
				threads := args
				if all {
					ts, err := e.Threads(ctx)
					if err != nil {
						return err
					}
					for _, t := range ts {
						threads = append(threads, t.ID)
					}
				}
				if len(threads) == 0 && !asJSON {
					fmt.Fprintln(out, "no threads to prune")
				}
				results := []engine.PruneResult{}
				var failed error
				for _, thread := range threads {
					res, err := pruneOn(ctx, e, store, thread, policy)
					if err != nil {
						if failed == nil {
							failed = err
						} else {
							failed = fmt.Errorf("%w; %w", failed, err)
						}
						continue
					}
					results = append(results, res)
					if !asJSON {
						fmt.Fprintln(out, pruneSummary(res, policy))
					}
				}
				if asJSON && all {
					if err := writeJSON(out, map[string]any{"dryRun": dryRun, "threads": results}); err != nil {
						return err
					}
				} else if asJSON && len(results) == 1 {
					if err := writeJSON(out, results[0]); err != nil {
						return err
					}
				}
				return failed
			})
		},
	}
	addStore(c, &store)
	addJSON(c, &asJSON)
	f := c.Flags()
	f.StringVar(&keepLast, "keep-last", "", "keep the newest `N` checkpoints (at least 1)")
	f.StringVar(&olderThan, "older-than", "", "prune only checkpoints older than `D`, e.g. 720h for 30 days")
	f.BoolVar(&all, "all", false, "prune every thread")
	f.BoolVar(&dryRun, "dry-run", false, "say what would be pruned; change nothing")
	return c
}

// pruneSummary is one line: what was pruned, what now starts a chain.
func pruneSummary(r engine.PruneResult, p engine.PrunePolicy) string {
	if len(r.Pruned) == 0 {
		return fmt.Sprintf("nothing to prune on thread %s: all %d checkpoint(s) kept", idText(r.Thread), r.Kept)
	}
	verb, reroot, tail := "pruned", "re-rooted", ""
	if r.DryRun {
		verb, reroot, tail = "would prune", "would re-root", " (dry run: nothing changed)"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %d checkpoint(s) of thread %s", verb, len(r.Pruned), idText(r.Thread))
	for i, rr := range r.Rerooted {
		if i == 5 {
			fmt.Fprintf(&b, ", and %d more", len(r.Rerooted)-i)
			break
		}
		sep := ", "
		if i == 0 {
			sep = "; " + reroot + " "
		}
		fmt.Fprintf(&b, "%s@%d (was child of @%d)", sep, rr.ID, rr.From)
	}
	fmt.Fprintf(&b, "; %d kept", r.Kept)
	if graphKept(r, p) {
		b.WriteString(" (one more than --keep-last: the newest checkpoint that records the thread's graph is kept, so the thread still opens as its graph)")
	}
	if len(r.KeptTips) > 0 {
		tips := make([]string, len(r.KeptTips))
		for i, id := range r.KeptTips {
			tips[i] = fmt.Sprintf("@%d", id)
		}
		fmt.Fprintf(&b, " (with paused branch tip(s) %s)", strings.Join(tips, ", "))
	}
	return b.String() + tail
}

// graphKept tells, from what planPrune reports, that it kept one more than
// --keep-last and its paused tips account for: the listing that records the
// thread's graph. Under --older-than the rules' own count is not known here.
func graphKept(r engine.PruneResult, p engine.PrunePolicy) bool {
	if p.KeepLast == 0 || p.OlderThan > 0 {
		return false
	}
	return r.Kept-len(r.KeptTips) > min(p.KeepLast, r.Kept+len(r.Pruned))
}

// pruneOn prunes thread with e when e runs the graph the thread records
// (its rebases replay the thread's writes through that graph's
// reducers), else with an engine of the recorded graph on the same store.
func pruneOn(ctx context.Context, e *engine.Engine, store, thread string, policy engine.PrunePolicy) (engine.PruneResult, error) {
	rec, err := app.RecordedGraph(ctx, e, thread)
	if err != nil {
		return engine.PruneResult{}, err
	}
	if rec == "" || rec == e.Graph().Name {
		return e.Prune(ctx, thread, policy)
	}
	if ctx, err = forThread(ctx, thread, ""); err != nil {
		return engine.PruneResult{}, err
	}
	var res engine.PruneResult
	err = withEngine(ctx, store, func(e *engine.Engine) error {
		res, err = e.Prune(ctx, thread, policy)
		return err
	})
	return res, err
}
