package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"rewind/engine"
	"rewind/engine/model"
	"rewind/store/browse"
	"rewind/tui/termtext"
)

func newLogCmd() *cobra.Command {
	var store, ns, before string
	var asJSON bool
	var last int
	c := &cobra.Command{
		Use:   "log T",
		Short: "the chain of T: id, parent, step, source, writer, model calls, next tasks",
		Long: `The checkpoint chain of thread T, every branch: id, parent, step, source,
the nodes that wrote it, model calls, messages and the tasks still to run.
It reads listings only, never a state, so a 1,000-turn thread lists in
milliseconds.

On a LangGraph database (read-only): the chain of the root graph, or of a
subgraph run with --ns; WRITES counts what the superstep from each
checkpoint stored.

-n N (--limit N) lists only the newest N checkpoints (of every branch),
oldest first, and reads only their listings: a screenful of a long thread.
--before ID lists those older than ID (a number on a rewind store, a
checkpoint id on a LangGraph database), as LangGraph's
list(before=…, limit=…) pages: the next page is --before the oldest one
listed.`,
		Example: `  rewind log ticket-1
  rewind log ticket-1 -n 20
  rewind log ticket-1 --json | jq '.checkpoints[-1]'
  rewind log ticket-1 --before 40 --limit 20    # the 20 before @40
  rewind log t-main --store sqlite:checkpoints.db --ns 'review:1f0…'`,
		Args: between(1, 1),
		RunE: func(c *cobra.Command, args []string) error {
			if last < 0 {
				return usagef("-n %d is negative: give how many of the newest checkpoints to list, e.g. -n 20 (0 lists them all)", last)
			}
			lg := func(src browse.Source) error {
				return lgLog(c.Context(), src, args[0], ns, before, last, asJSON, c.OutOrStdout())
			}
			return withSource(c.Context(), store, ns, lg, func() error {
				var from int64
				if before != "" {
					var err error
					if from, err = checkpointArg(before); err != nil {
						return err
					}
				}
				return withReader(c.Context(), store, func(e *engine.Engine) error {
					return printLog(c, e, args[0], from, last, asJSON)
				})
			})
		},
	}
	c.Flags().IntVarP(&last, "last", "n", 0, "list only the newest `N` checkpoints (0: all)")
	c.Flags().IntVar(&last, "limit", 0, "the same as -n: at most `N` checkpoints, the newest (LangGraph's list(limit=…))")
	c.Flags().StringVar(&before, "before", "", "list only checkpoints older than `ID` (LangGraph's list(before=…)): page back with the oldest id listed")
	addStore(c, &store)
	addJSON(c, &asJSON)
	addNS(c, &ns)
	return c
}

// nextTask is a pending task in `log --json`: a listing names the node;
// `show` has the task's id and arguments.
type nextTask struct {
	Node string `json:"node"`
}

// logPage is how many listings `rewind log` reads, prints and lets go
// of at a time.
const logPage = 512

// logRow is a checkpoint in `log --json`.
type logRow struct {
	ID       int64          `json:"id"`
	Parent   int64          `json:"parent"`
	Step     int            `json:"step"`
	Source   string         `json:"source"`
	Nodes    []string       `json:"nodes"`
	Next     []nextTask     `json:"next"`
	Calls    map[string]int `json:"modelCalls,omitempty"`
	Messages int            `json:"messages"`
	// Bytes is what the checkpoint added to the store.
	Bytes int `json:"bytes,omitempty"`
	// RerootedFrom is the parent a checkpoint had before prune deleted it.
	RerootedFrom int64 `json:"rerootedFrom,omitempty"`
	// Unreadable says why the checkpoint's listing does not read.
	Unreadable string `json:"unreadable,omitempty"`
	// ReplayOf is the checkpoint a replay runs again.
	ReplayOf int64 `json:"replayOf,omitempty"`
}

func logRowOf(cp engine.Checkpoint) logRow {
	next := make([]nextTask, len(cp.Tasks))
	for j, t := range cp.Tasks {
		next[j] = nextTask{t.Node}
	}
	r := logRow{cp.ID, cp.ParentID, cp.Step, cp.Source, cp.Metadata.Nodes, next, cp.Metadata.ModelCalls, cp.Messages, cp.Bytes, cp.RerootedFrom, cp.Unreadable, 0}
	if cp.Metadata.Replay {
		r.ReplayOf = cp.Metadata.ForkedFrom
	}
	if r.Nodes == nil {
		r.Nodes = []string{}
	}
	return r
}

// logLine is a checkpoint's line of the table.
func logLine(cp engine.Checkpoint) string {
	parent := parentLabel(cp, "-", "")
	by := strings.Join(cp.Metadata.Nodes, ",")
	if by == "" {
		by = "(" + cp.Source + ")"
	}
	if cp.Metadata.Replay {
		by = fmt.Sprintf("(replay of @%d)", cp.Metadata.ForkedFrom)
	}
	next := engine.DescribeTasks(cp.Tasks)
	if next == "" {
		next = "—"
	}
	if cp.Metadata.Interrupt != nil {
		next += fmt.Sprintf("  [interrupted %s %s]", cp.Metadata.Interrupt.When, cp.Metadata.Interrupt.Node)
	}
	nextCell := termtext.Name(next)
	if cp.Unreadable != "" {
		nextCell = "? " + termtext.Line(firstLine(cp.Unreadable))
	}
	return fmt.Sprintf("%d\t%s\t%d\t%s\t%s\t%d\t%d\t%s\n", cp.ID, parent, cp.Step, termtext.Name(cp.Source), termtext.Name(by), model.Counts(cp.Metadata.ModelCalls).Sum(), cp.Messages, nextCell)
}

// eachPage calls f with the thread's listings up to newest, oldest first,
// logPage at a time: a page is read, handed over and let go, so a long
// thread is never held whole. History lists newest first below an id:
// the page below lo+logPage holds every listing of [lo, lo+logPage) (at
// most logPage of them), and the older ones it may hold are left out.
func eachPage(ctx context.Context, e *engine.Engine, thread string, newest int64, f func([]engine.Checkpoint) error) error {
	for lo := int64(1); lo <= newest; lo += logPage {
		page, err := e.History(ctx, thread, lo+logPage, logPage)
		if err != nil {
			return err
		}
		page = slices.DeleteFunc(page, func(cp engine.Checkpoint) bool { return cp.ID < lo })
		slices.Reverse(page)
		if len(page) > 0 {
			if err := f(page); err != nil {
				return err
			}
		}
	}
	return nil
}

func printLog(c *cobra.Command, e *engine.Engine, thread string, before int64, last int, asJSON bool) error {
	ctx, out := c.Context(), c.OutOrStdout()
	limit := last
	if limit == 0 {
		limit = 1 // the newest (below before), to know where the stream ends
	}
	cps, err := e.History(ctx, thread, before, limit)
	if err != nil {
		return err
	}
	if len(cps) == 0 && before == 0 {
		_, err := e.Latest(ctx, thread) // says the thread is not found
		return err
	}
	if len(cps) == 0 {
		if _, err := e.Status(ctx, thread); err != nil { // the thread is not found
			return err
		}
	}
	slices.Reverse(cps)
	pages := func(f func([]engine.Checkpoint) error) error {
		if last > 0 || len(cps) == 0 {
			return f(cps)
		}
		return eachPage(ctx, e, thread, cps[0].ID, f)
	}
	if asJSON {
		// As writeJSON writes {"checkpoints": [rows], "thread": T}, a
		// row at a time.
		w := bufio.NewWriter(out)
		fmt.Fprint(w, "{\n  \"checkpoints\": [")
		first := true
		err := pages(func(page []engine.Checkpoint) error {
			for _, cp := range page {
				b, err := json.MarshalIndent(logRowOf(cp), "    ", "  ")
				if err != nil {
					return fmt.Errorf("encode the JSON output: %w", err)
				}
				if !first {
					w.WriteString(",")
				}
				first = false
				w.WriteString("\n    ")
				w.Write(termtext.JSON(b))
			}
			return nil
		})
		if err != nil {
			return err
		}
		if !first {
			w.WriteString("\n  ")
		}
		name, err := json.Marshal(thread)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "],\n  \"thread\": %s\n}\n", termtext.JSON(name))
		return w.Flush()
	}
	tw := newTable(out)
	fmt.Fprintln(tw, "ID\tPARENT\tSTEP\tSOURCE\tWRITTEN BY\tCALLS\tMSGS\tNEXT")
	err = pages(func(page []engine.Checkpoint) error {
		for _, cp := range page {
			io.WriteString(tw, logLine(cp))
		}
		return tw.Flush()
	})
	if err != nil {
		return err
	}
	if last > 0 && len(cps) == last {
		if earlier, err := e.History(ctx, thread, cps[0].ID, 1); err == nil && len(earlier) > 0 {
			fmt.Fprintf(out, "… %d; earlier checkpoints from @%d down: rewind log %s --before %d --limit %d\n", last, earlier[0].ID, idText(thread), cps[0].ID, last)
		}
	}
	return nil
}

// firstLine is s up to its first line break, for a table cell.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
