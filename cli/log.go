package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"rewind/engine"
	"rewind/store/browse"
	"rewind/tui/termtext"
)

func newLogCmd() *cobra.Command {
	var store, ns, before string
	var asJSON, values bool
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
On a terminal, without -n or --before, it lists a screenful of the newest
(a long thread's first screen comes as fast as a short one's) and says how
to list the rest: -n 0 lists every checkpoint. Piped, it lists them all.
--before ID lists those older than ID (a number on a rewind store, a
checkpoint id on a LangGraph database), as LangGraph's
list(before=…, limit=…) pages: the next page is --before the oldest one
listed.

--values streams every checkpoint with its state, oldest first, one JSON
object a line (id, parent, step, source, createdAt, the nodes that wrote
it, the tasks still to run, values: every channel as show --json prints
it): what LangGraph's list() yields, for jq or pandas.read_json(lines=True).
It rebuilds each checkpoint from its parent, so a 1,000-turn thread's
8,000 states stream in about a second. -n and --before choose which, as
above; every one unless -n is given. On a LangGraph database, the values
are the graph's channels as LangGraph's get_state shows them.`,
		Example: `  rewind log ticket-1
  rewind log ticket-1 -n 20
  rewind log ticket-1 --json | jq '.checkpoints[-1]'
  rewind log ticket-1 --before 40 --limit 20    # the 20 before @40
  rewind log ticket-1 --values | jq -c '{id, summary: .values.summary}'
  rewind log t-main --store sqlite:checkpoints.db --ns 'review:1f0…'`,
		Args: between(1, 1),
		RunE: func(c *cobra.Command, args []string) error {
			if last < 0 {
				return usagef("-n %d is negative: give how many of the newest checkpoints to list, e.g. -n 20 (0 lists them all)", last)
			}
			screen := false
			if !asJSON && !values && before == "" && !c.Flags().Changed("last") && !c.Flags().Changed("limit") {
				last = screenful(c.OutOrStdout())
				screen = last > 0
			}
			return withRead(c.Context(), store, ns, func(r reader) error {
				if values && r.langGraph() {
					return printLangGraphValues(c.Context(), r, args[0], ns, before, last, c.OutOrStdout())
				}
				if !values && (!asJSON || r.langGraph()) {
					return runLog(c.Context(), r, args[0], ns, before, last, screen, asJSON, c.OutOrStdout())
				}
				var from int64
				if before != "" {
					var err error
					if from, err = checkpointArg(before); err != nil {
						return err
					}
				}
				if values {
					return printLogValues(c, r.e, args[0], from, last)
				}
				return printLogJSON(c, r.e, args[0], from, last)
			})
		},
	}
	c.Flags().IntVarP(&last, "last", "n", 0, "list only the newest `N` checkpoints (0: all)")
	c.Flags().IntVar(&last, "limit", 0, "the same as -n: at most `N` checkpoints, the newest (LangGraph's list(limit=…))")
	c.Flags().BoolVar(&values, "values", false, "every checkpoint with its values (its state), oldest first, as JSON lines")
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

// screenful is how many checkpoints `rewind log` lists when not told how
// many: on a terminal, its height less the header, the footer and the
// prompt (20 when the height is unknown); piped, 0: all of them. A thread
// of 5,000 turns printed whole took 1.5 s in a new process (issue 31).
func screenful(out io.Writer) int {
	f, ok := out.(*os.File)
	if !ok || !term.IsTerminal(f.Fd()) {
		return 0
	}
	if _, h, err := term.GetSize(f.Fd()); err == nil && h > 8 {
		return h - 4
	}
	return 20
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

// logLine appends a checkpoint's line of the table to b, a rewind store's
// or a LangGraph database's: ID PARENT STEP SOURCE WRITTEN BY, then what
// the listing counts (a rewind store: CALLS MSGS; LangGraph: WRITES), then
// NEXT. Without fmt: a whole-chain log writes one a checkpoint, 40,000 for
// a 5,000-turn thread.
func logLine(b []byte, l browse.Listing, langGraph bool) []byte {
	parent := idOrDash(l.Parent)
	if l.Parent == "" && l.RerootedFrom != "" {
		parent = "pruned (was @" + idOrDash(l.RerootedFrom) + ")"
	}
	by := strings.Join(l.WrittenBy, ",")
	if by == "" {
		by = "(" + l.Source + ")"
	}
	if l.ReplayOf != "" {
		by = "(replay of @" + l.ReplayOf + ")"
	}
	next := browse.DescribeNext(l.Next)
	if l.Interrupted != "" {
		next += "  [interrupted " + l.Interrupted + "]"
	}
	nextCell := termtext.Name(next)
	if l.Damaged != "" {
		nextCell = "? " + termtext.Line(firstLine(l.Damaged))
	}
	b = append(append(b, idOrDash(l.ID)...), '\t')
	b = append(append(b, parent...), '\t')
	b = append(strconv.AppendInt(b, int64(l.Step), 10), '\t')
	b = append(append(b, termtext.Name(l.Source)...), '\t')
	b = append(append(b, termtext.Name(by)...), '\t')
	if langGraph {
		b = strconv.AppendInt(b, int64(l.Counts.Writes), 10)
		if l.Counts.Errors > 0 {
			b = append(strconv.AppendInt(append(b, " ("...), int64(l.Counts.Errors), 10), " error)"...)
		}
		if l.Counts.Interrupts > 0 {
			b = append(strconv.AppendInt(append(b, " ("...), int64(l.Counts.Interrupts), 10), " interrupt)"...)
		}
	} else {
		b = append(strconv.AppendInt(b, int64(l.Counts.Calls), 10), '\t')
		b = strconv.AppendInt(b, int64(l.Counts.Messages), 10)
	}
	b = append(append(b, '\t'), nextCell...)
	return append(b, '\n')
}

// runLog is `rewind log` on either store but a rewind store's --json
// (printLogJSON): the chain oldest first, listings only (no values are
// read), then on LangGraph the subgraph runs hanging off its checkpoints.
// A rewind thread's whole chain streams a page at a time (eachPage);
// LangGraph's lists newest first only, so it is read whole.
//
// screen says last is a screenful (screenful), not asked for: the footer
// says how to list them all.
func runLog(ctx context.Context, r reader, thread, ns, before string, last int, screen, asJSON bool, out io.Writer) error {
	c, h, err := logStart(ctx, r, thread, ns, before, last)
	if err != nil {
		return err
	}
	slices.Reverse(h)
	var subs []browse.Namespace
	for _, n := range c.nss {
		if n.NS != "" && n.Parent == c.NS {
			subs = append(subs, n)
		}
	}
	if asJSON {
		if subs == nil {
			subs = []browse.Namespace{}
		}
		return writeJSON(out, map[string]any{"thread": c.Thread, "ns": c.NS, "checkpoints": h, "subgraphs": subs})
	}
	tw := newTable(out)
	if r.langGraph() {
		fmt.Fprintln(tw, "ID\tPARENT\tSTEP\tSOURCE\tWRITTEN BY\tWRITES\tNEXT")
	} else {
		fmt.Fprintln(tw, "ID\tPARENT\tSTEP\tSOURCE\tWRITTEN BY\tCALLS\tMSGS\tNEXT")
	}
	var line []byte
	printPage := func(page []browse.Listing) error {
		for _, l := range page {
			line = logLine(line[:0], l, r.langGraph())
			tw.Write(line)
		}
		return tw.Flush()
	}
	if last > 0 || len(h) == 0 || r.langGraph() {
		err = printPage(h)
	} else {
		// Garbage a row, a little live: GC at twice the live heap, not
		// once, took a tenth of the CPU off a 40,000-checkpoint log for
		// 4 MB more. A GOGC the user set wins.
		if os.Getenv("GOGC") == "" {
			defer debug.SetGCPercent(debug.SetGCPercent(200))
		}
		newest, _ := strconv.ParseInt(h[0].ID, 10, 64)
		err = listingPages(ctx, r.src, c.Chain, newest, printPage)
	}
	if err != nil {
		return err
	}
	for _, s := range subs {
		fmt.Fprintf(out, "subgraph %s (task %s) runs from @%s: rewind log %s --ns %s\n", termtext.Name(s.Node), idOrDash(s.Task), idOrDash(s.ParentCheckpoint), c.thread(), c.nsText(s.NS))
	}
	if last > 0 && len(h) == last {
		logFooter(ctx, r, c, h[0].ID, last, screen, out)
	}
	return nil
}

// logStart finds the chain log reads (a thread, or on LangGraph a
// subgraph run of it) and its first listings (firstListings), older than
// before, a checkpoint given as the user wrote it.
func logStart(ctx context.Context, r reader, thread, ns, before string, last int) (readChain, []browse.Listing, error) {
	c, err := r.chain(ctx, thread, ns)
	if err != nil {
		return c, nil, err
	}
	if before, err = r.checkpoint(ctx, c, before); err != nil {
		return c, nil, err
	}
	h, err := firstListings(ctx, r, c.Chain, before, last)
	return c, h, err
}

// firstListings reads what log lists first, newest first: the newest last
// (all of them when last is 0 on LangGraph; on rewind the newest alone,
// which says where the pages end), older than before when it is given.
func firstListings(ctx context.Context, r reader, c browse.Chain, before string, last int) ([]browse.Listing, error) {
	limit := last
	if limit == 0 && !r.langGraph() {
		limit = 1
	}
	h, err := r.src.History(ctx, c, before, limit)
	if err != nil {
		return nil, err
	}
	if len(h) == 0 && before != "" {
		// Below a checkpoint, nothing listed says nothing of the thread.
		if _, err := r.src.History(ctx, c, "", 1); err != nil {
			return nil, err
		}
	}
	if h == nil {
		h = []browse.Listing{}
	}
	return h, nil
}

// logFooter says how to list the checkpoints older than oldest, when
// there are any.
func logFooter(ctx context.Context, r reader, c readChain, oldest string, last int, screen bool, out io.Writer) {
	earlier, err := r.src.History(ctx, c.Chain, oldest, 1)
	if err != nil || len(earlier) == 0 {
		return
	}
	fmt.Fprintf(out, "… %d; earlier checkpoints from @%s down: rewind log %s --before %s --limit %d\n", last, idOrDash(earlier[0].ID), c.where(), idOrDash(oldest), last)
	if screen {
		fmt.Fprintf(out, "(the newest screenful; every checkpoint: rewind log %s -n 0)\n", c.where())
	}
}

// eachPage calls f with a rewind thread's listings up to newest, oldest
// first, logPage at a time: a page is read (read: the listings below an
// id, newest first; id: a listing's number), handed over and let go, so a
// long thread is never held whole. The page below lo+logPage holds every
// listing of [lo, lo+logPage) (at most logPage of them), and the older
// ones it may hold are left out.
func eachPage[L any](newest int64, read func(below int64, n int) ([]L, error), id func(L) int64, f func([]L) error) error {
	for lo := int64(1); lo <= newest; lo += logPage {
		page, err := read(lo+logPage, logPage)
		if err != nil {
			return err
		}
		page = slices.DeleteFunc(page, func(l L) bool { return id(l) < lo })
		slices.Reverse(page)
		if len(page) > 0 {
			if err := f(page); err != nil {
				return err
			}
		}
	}
	return nil
}

// listingPages pages a rewind thread's listings through its browse.Source
// (eachPage).
func listingPages(ctx context.Context, src browse.Source, c browse.Chain, newest int64, f func([]browse.Listing) error) error {
	read := func(below int64, n int) ([]browse.Listing, error) {
		return src.History(ctx, c, strconv.FormatInt(below, 10), n)
	}
	id := func(l browse.Listing) int64 { n, _ := strconv.ParseInt(l.ID, 10, 64); return n }
	return eachPage(newest, read, id, f)
}

// printLogJSON is `rewind log --json` on a rewind store: the rows of its
// listings as the engine reads them (model calls by role, bytes stored),
// streamed a row at a time.
func printLogJSON(c *cobra.Command, e *engine.Engine, thread string, before int64, last int) error {
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
		read := func(below int64, n int) ([]engine.Checkpoint, error) { return e.History(ctx, thread, below, n) }
		return eachPage(cps[0].ID, read, func(cp engine.Checkpoint) int64 { return cp.ID }, f)
	}
	// As writeJSON writes {"checkpoints": [rows], "thread": T}, a row at
	// a time.
	w := bufio.NewWriter(out)
	fmt.Fprint(w, "{\n  \"checkpoints\": [")
	first := true
	err = pages(func(page []engine.Checkpoint) error {
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

// valuesRow is a checkpoint in `log --values` but its values: its
// listing's fields and its time.
type valuesRow struct {
	logRow
	CreatedAt time.Time `json:"createdAt"`
}

// printLogValues is `rewind log --values`: every checkpoint with its
// values, oldest first, one JSON line each, streamed as rebuilt.
func printLogValues(c *cobra.Command, e *engine.Engine, thread string, before int64, last int) error {
	if before > 0 {
		if _, err := e.Status(c.Context(), thread); err != nil { // the thread is not found
			return err
		}
	}
	if os.Getenv("GOGC") == "" {
		// As runLog: much garbage, little live (the parent's state).
		defer debug.SetGCPercent(debug.SetGCPercent(200))
	}
	w := bufio.NewWriterSize(c.OutOrStdout(), 64<<10)
	var line []byte
	err := e.EachState(c.Context(), thread, before, last, func(cp engine.Checkpoint) error {
		var err error
		if line, err = appendValuesLine(line[:0], cp); err != nil {
			return fmt.Errorf("encode checkpoint %d as JSON: %w", cp.ID, err)
		}
		_, err = w.Write(termtext.JSON(line))
		return err
	})
	if err != nil {
		return err
	}
	return w.Flush()
}

// langGraphValues is a checkpoint of a LangGraph database in `log
// --values`: its listing as `log --json` gives it, and its values as
// LangGraph's get_state shows them (the graph's channels, not its
// bookkeeping ones).
type langGraphValues struct {
	browse.Listing
	Values map[string]any `json:"values"`
}

// printLangGraphValues is `rewind log --values` on a LangGraph database:
// its chain's checkpoints oldest first, each read whole (LangGraph stores
// each checkpoint's values whole, or rebuilds a delta channel's).
func printLangGraphValues(ctx context.Context, r reader, thread, ns, before string, last int, out io.Writer) error {
	c, h, err := logStart(ctx, r, thread, ns, before, last)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(out, 64<<10)
	for _, l := range slices.Backward(h) {
		cp, err := r.src.Checkpoint(ctx, c.Chain, l.ID)
		if err != nil {
			return err
		}
		v := langGraphValues{Listing: l, Values: map[string]any{}}
		for _, ch := range cp.Channels {
			if !ch.Internal {
				v.Values[ch.Name] = ch.Value
			}
		}
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("encode checkpoint %s as JSON: %w", l.ID, err)
		}
		if _, err := w.Write(termtext.JSON(append(b, '\n'))); err != nil {
			return err
		}
	}
	return w.Flush()
}

// appendValuesLine appends cp's line of `log --values` to b. The values
// are the engine's JSON as it decoded them (json.Marshal would check and
// compact each again: a third of a 1,000-turn thread's stream),
// compacted only where one holds a line break.
func appendValuesLine(b []byte, cp engine.Checkpoint) ([]byte, error) {
	head, err := json.Marshal(valuesRow{logRowOf(cp), cp.CreatedAt})
	if err != nil {
		return b, err
	}
	b = append(b, head[:len(head)-1]...)
	b = append(b, `,"values":{`...)
	for i, k := range slices.Sorted(maps.Keys(cp.Values)) {
		if i > 0 {
			b = append(b, ',')
		}
		name, _ := json.Marshal(k)
		b = append(append(b, name...), ':')
		v := cp.Values[k]
		if bytes.ContainsAny(v, "\r\n") {
			var c bytes.Buffer
			if err := json.Compact(&c, v); err != nil {
				return b, err
			}
			v = c.Bytes()
		}
		b = append(b, v...)
	}
	return append(b, "}}\n"...), nil
}

// firstLine is s up to its first line break, for a table cell.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
