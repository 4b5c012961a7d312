package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"rewind/engine"
	"rewind/engine/model"
	"rewind/store"
	"rewind/store/browse"
	"rewind/tui/termtext"
)

func newThreadsCmd() *cobra.Command {
	var store string
	var asJSON, tokens bool
	c := &cobra.Command{
		Use:   "threads",
		Short: "every thread in the store, with its run status (and with --tokens what it cost)",
		Example: `  rewind threads
  rewind threads --tokens                        # sums every listing: slower on long threads
  rewind threads --store postgres://rewind@127.0.0.1:5518/rewind --json
  rewind threads --store sqlite:checkpoints.db   # a LangGraph database, read-only`,
		Args: between(0, 0),
		RunE: func(c *cobra.Command, _ []string) error {
			return withRead(c.Context(), store, "", func(r reader) error {
				return runThreads(c.Context(), r, tokens, asJSON, c.OutOrStdout())
			})
		},
	}
	addStore(c, &store)
	addJSON(c, &asJSON)
	c.Flags().BoolVar(&tokens, "tokens", false, "add each thread's tokens (all branches, and the last turn's): reads every listing of every thread")
	return c
}

// threadLine is a thread's row of the table, of either store: the
// thread, its status as the store words it, and the cells a rewind
// store's --tokens adds.
type threadLine struct {
	browse.Thread
	c      readChain
	status string
	tokens []string
}

// runThreads is `rewind threads`: every thread with its status (a rewind
// thread's run status, who holds its lock included: Engine.LiveStatus; a
// LangGraph thread's as get_state tells it), then on LangGraph the chains
// of its subgraph runs, and what failed or asked after the table.
func runThreads(ctx context.Context, r reader, tokens, asJSON bool, out io.Writer) error {
	if r.langGraph() {
		return lgThreads(ctx, r.src, asJSON, out)
	}
	// The engine's list, with each thread's newest listing: the statuses
	// read nothing more (but a running run's lock).
	ts, err := r.e.Threads(ctx)
	if err != nil {
		return err
	}
	rows, err := threadRows(ctx, r.e, ts, tokens)
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(out, rows)
	}
	if len(rows) == 0 {
		fmt.Fprintln(out, "no threads yet: start one with `rewind run --thread T --input TEXT`")
		return nil
	}
	lines := make([]threadLine, len(rows))
	for i, row := range rows {
		l := threadLine{Thread: row.Thread, c: readChain{Chain: browse.Chain{Thread: row.ID}, rewind: true}, status: termtext.Line(row.Status)}
		if tokens {
			sum, last := termtext.Count(row.Tokens.Total.PromptTokens)+"/"+termtext.Count(row.Tokens.Total.CompletionTokens), "-"
			if row.TokensError != "" {
				sum, last = "unreadable", "?"
			}
			if row.Tokens.LastTurn != nil {
				last = fmt.Sprintf("%d/%d", row.Tokens.LastTurn.Total.PromptTokens, row.Tokens.LastTurn.Total.CompletionTokens)
			}
			l.tokens = []string{sum, last}
		}
		lines[i] = l
	}
	head := ""
	if tokens {
		head = "\tTOKENS IN/OUT\tLAST TURN IN/OUT"
	}
	return printThreads(out, lines, head, nil)
}

// lgThreads reads each LangGraph thread's status (browse.ThreadStatus)
// and prints them.
func lgThreads(ctx context.Context, src browse.Source, asJSON bool, out io.Writer) error {
	ts, err := src.Threads(ctx)
	if err != nil {
		return err
	}
	type row struct {
		browse.Thread
		Status browse.Status `json:"status"`
	}
	rows := make([]row, 0, len(ts))
	for _, t := range ts {
		st, err := browse.ThreadStatus(ctx, src, t)
		switch {
		case errors.Is(err, browse.ErrNotFound):
			continue // gone since the list was read
		case ctx.Err() != nil:
			return ctx.Err()
		case err != nil:
			// A thread whose newest checkpoint or writes do not read is
			// still listed, as the browser lists it; the note says why.
			st = browse.Status{State: stateUnread, Error: err.Error()}
		}
		rows = append(rows, row{t, st})
	}
	if asJSON {
		return writeJSON(out, rows)
	}
	if len(rows) == 0 {
		fmt.Fprintf(out, "no threads in this %s\n", src.About().Status())
		return nil
	}
	if a := src.About(); a.Note != "" {
		fmt.Fprintf(out, "%s\n", a.Status())
	}
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	lines := make([]threadLine, len(rows))
	var notes []string
	for i, r := range rows {
		c := readChain{Chain: browse.Chain{Thread: r.ID}, nss: r.Namespaces, threads: ids}
		lines[i] = threadLine{Thread: r.Thread, c: c, status: termtext.Name(r.Status.Text())}
		if n := statusNote(c, r.Status); n != "" {
			notes = append(notes, n)
		}
	}
	return printThreads(out, lines, "", notes)
}

// printThreads is the threads table of either store: THREAD STATUS
// CHECKPOINTS LATEST, the cells head names (--tokens), UPDATED, and when a
// thread ran subgraphs, a row for each run with the parent checkpoint it
// runs from; then notes, a line each.
func printThreads(out io.Writer, lines []threadLine, head string, notes []string) error {
	tw := newTable(out)
	subgraphs := slices.ContainsFunc(lines, func(l threadLine) bool { return len(l.Namespaces) > 1 })
	head = "THREAD\tSTATUS\tCHECKPOINTS\tLATEST" + head + "\tUPDATED"
	if subgraphs {
		head += "\tRUNS FROM"
	}
	fmt.Fprintln(tw, head)
	for _, l := range lines {
		// The root chain's checkpoints, as the browser counts them; each
		// subgraph's run is counted on its own row (--json: Checkpoints is
		// every namespace's).
		root := l.Checkpoints
		if len(l.Namespaces) > 0 && l.Namespaces[0].NS == "" {
			root = l.Namespaces[0].Checkpoints
		}
		extra := ""
		for _, cell := range l.tokens {
			extra += "\t" + cell
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s%s\t%s\n", l.c.thread(), l.status, root, idOrDash(l.Latest), extra, l.UpdatedAt.Local().Format("2006-01-02 15:04:05"))
		for _, ns := range l.Namespaces {
			if ns.NS == "" {
				continue
			}
			// A subgraph's run: its chain, and the parent checkpoint whose
			// task runs it.
			fmt.Fprintf(tw, "  --ns %s\t\t%d\t%s\t%s\t@%s\n", l.c.nsText(ns.NS), ns.Checkpoints, idOrDash(ns.Latest), ns.UpdatedAt.Local().Format("2006-01-02 15:04:05"), idOrDash(ns.ParentCheckpoint))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, n := range notes {
		fmt.Fprintln(out, n)
	}
	return nil
}

// threadRow is one thread in `rewind threads`.
type threadRow struct {
	ID          string    `json:"id"`
	Status      string    `json:"status"`
	Reason      string    `json:"reason,omitempty"`
	Checkpoints int       `json:"checkpoints"`
	Latest      int64     `json:"latest"`
	UpdatedAt   time.Time `json:"updatedAt"`
	// Thread is the thread as the store's browse.Source listed it.
	Thread browse.Thread `json:"-"`
	// Tokens of every branch (each call once) and of the latest
	// checkpoint's turn.
	Tokens *threadTokens `json:"tokens,omitempty"`
	// TokensError says why the tokens could not be read (a damaged row).
	TokensError string `json:"tokensError,omitempty"`
}

// threadTokens is a thread's tokens in `rewind threads --tokens`.
type threadTokens struct {
	Roles    map[string]engine.RoleUsage `json:"roles"`
	Total    model.Usage                 `json:"total"`
	LastTurn *engine.TurnUsage           `json:"lastTurn,omitempty"`
}

// threadRows reads the listed threads' rows. A thread deleted since the
// list was read (another process's `rewind rm`) is left out when a row
// reads it again (a running run's, --tokens): it is no longer in the
// store, and the others still are.
func threadRows(ctx context.Context, e *engine.Engine, ts []store.Thread, tokens bool) ([]threadRow, error) {
	rows := make([]threadRow, 0, len(ts))
	for _, t := range ts {
		r, err := threadOf(ctx, e, t, tokens)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		r.Checkpoints, r.UpdatedAt, r.Latest, r.Thread = t.Checkpoints, t.UpdatedAt, t.LatestID, engine.BrowseThread(t)
		rows = append(rows, r)
	}
	return rows, nil
}

// threadOf reads a thread's run status (its newest listing, and who holds
// its lock: Engine.LiveStatusOf, so a run nobody runs any more reads
// stopped) and, with tokens, its costs (every listing).
func threadOf(ctx context.Context, e *engine.Engine, t store.Thread, tokens bool) (threadRow, error) {
	thread := t.ID
	r := threadRow{ID: thread}
	st, err := e.LiveStatusOf(ctx, t)
	if err != nil {
		return r, err
	}
	r.Status, r.Reason = st.Status, reasonWithFixes(st.Reason, st.Fix)
	if !tokens {
		return r, nil
	}
	r.Tokens = &threadTokens{}
	c, err := e.Costs(ctx, thread)
	if errors.Is(err, engine.ErrCorrupt) {
		// One damaged thread must not hide the others.
		r.TokensError = err.Error()
		return r, nil
	}
	if err != nil {
		return r, err
	}
	r.Tokens.Roles, r.Tokens.Total, r.Tokens.LastTurn = c.Roles, c.Total, c.LastTurn
	return r, nil
}
