package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"rewind/engine"
	"rewind/engine/ticket"
	"rewind/tui/termtext"
)

// newCheckCmd is `rewind check fidelity`: the checks a teacher or a
// reviewer runs on a stored thread.
func newCheckCmd() *cobra.Command {
	c := &cobra.Command{
		Use:     "check",
		Short:   "checks on a stored thread: fidelity (does the summary keep every pinned fact?)",
		Example: `  rewind check fidelity ticket-1`,
		Args:    between(0, 0),
		RunE: func(c *cobra.Command, _ []string) error {
			return usagef("check needs what to check: rewind check fidelity T [CHECKPOINT]")
		},
	}
	c.AddCommand(newFidelityCmd())
	return c
}

func newFidelityCmd() *cobra.Command {
	var store string
	var asJSON, all bool
	c := &cobra.Command{
		Use:   "fidelity T [CHECKPOINT]",
		Short: "which pinned facts (ids, amounts, dates, references, sign-offs) the summary keeps with their exact #index and speaker; exit 1 if one was lost, altered or moved",
		Example: `  rewind check fidelity ticket-1          # the newest checkpoint's summary
  rewind check fidelity ticket-1 @16 --all # every fact, kept and folded ones too`,
		Args: between(1, 2),
		RunE: func(c *cobra.Command, args []string) error {
			at, err := optCheckpoint(args)
			if err != nil {
				return err
			}
			ctx, out, thread := c.Context(), c.OutOrStdout(), args[0]
			return withTicketThread(ctx, store, thread, func(e *engine.Engine) error {
				cp, err := e.Latest(ctx, thread)
				if at != 0 {
					cp, err = e.Get(ctx, thread, at)
				}
				if err != nil {
					return err
				}
				s, err := ticket.Decode(cp.Values, "summary", "facts")
				if err != nil {
					return fmt.Errorf("read the summary at @%d: %w", cp.ID, err)
				}
				var r ticket.FidelityReport
				if s.Summary != nil {
					stored, err := e.Transcript(ctx, thread, cp.ID, int64(max(s.Summary.From, 1)), int64(s.Summary.To))
					if err != nil {
						return err
					}
					msgs := make([]ticket.Message, 0, len(stored))
					for _, m := range stored {
						var msg ticket.Message
						if err := json.Unmarshal(m.Body, &msg); err != nil {
							return fmt.Errorf("message #%d of thread %s: %w", m.Index, idText(thread), err)
						}
						msgs = append(msgs, msg)
					}
					r = ticket.CheckFidelity(s.Summary, s.Facts, msgs)
				}
				if asJSON {
					if r.Facts == nil {
						r.Facts = []ticket.FactCheck{}
					}
					if err := writeJSON(out, map[string]any{"thread": thread, "checkpoint": cp.ID, "summary": s.Summary != nil, "pass": r.OK(), "verdict": verdictOf(s.Summary != nil, r), "report": r}); err != nil {
						return err
					}
				} else {
					printFidelity(out, thread, cp.ID, s.Summary != nil, r, all)
				}
				if !r.OK() {
					return errFidelity
				}
				return nil
			})
		},
	}
	addStore(c, &store)
	addJSON(c, &asJSON)
	c.Flags().BoolVar(&all, "all", false, "list every pinned fact, the kept and folded ones too")
	return c
}

// errFidelity ends a failed check with exit 1 after its report.
var errFidelity = errors.New("fidelity check failed: the summary lost or changed a pinned fact (see the lines above); the originals are in `rewind show T --message N`")

func verdictOf(has bool, r ticket.FidelityReport) string {
	if !has {
		return "no summary yet: nothing has been compacted"
	}
	return r.Verdict()
}

func printFidelity(out interface{ Write([]byte) (int, error) }, thread string, at int64, has bool, r ticket.FidelityReport, all bool) {
	if !has {
		fmt.Fprintf(out, "thread %s @%d: %s\n", idText(thread), at, verdictOf(false, r))
		return
	}
	fmt.Fprintf(out, "thread %s @%d: summary of #%d–#%d (history v%d), %d messages, %d pinned facts\n",
		idText(thread), at, r.From, r.To, r.HistoryVersion, r.Messages, len(r.Facts))
	for _, f := range r.Facts {
		if (f.Status == ticket.FactKept || f.Status == ticket.FactFolded) && !all {
			continue
		}
		fmt.Fprintf(out, "  %-8s #%d %s: %s", f.Status, f.Index, termtext.Line(f.Speaker), termtext.Line(f.Fact))
		if len(f.Instead) > 0 {
			fmt.Fprintf(out, " (the summary says %s)", termtext.Line(fmt.Sprint(f.Instead)))
		}
		if f.Line != "" && f.Status != ticket.FactKept && f.Status != ticket.FactFolded {
			fmt.Fprintf(out, "\n           in %q", termtext.Line(clipRunes(f.Line, 100)))
		}
		fmt.Fprintln(out)
	}
	fmt.Fprintln(out, r.Verdict())
}

func clipRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// withTicketThread is withReader on thread's own graph, refused by name
// (exit 2) when that is not the ticket's: fidelity checks the ticket's
// summary.
func withTicketThread(ctx context.Context, store, thread string, fn func(*engine.Engine) error) error {
	ctx, err := forThread(ctx, thread, "")
	if err != nil {
		return err
	}
	return withReader(ctx, store, func(e *engine.Engine) error {
		if g := e.Graph().Name; g != ticket.GraphName {
			return usagef("check fidelity checks the ticket graph's summary: thread %s runs graph %s, which keeps none", idText(thread), idText(g))
		}
		return fn(e)
	})
}
