package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
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
	var a threadsArgs
	c := &cobra.Command{
		Use:   "threads",
		Short: "the threads in the store, the most recently updated first, with their run status (and with --tokens what they cost)",
		Long: `The store's threads, the most recently updated first: each with its run
status, its checkpoints, its newest checkpoint and when it was updated.

On a terminal, without -n or --before, it lists a screenful of the most
recently updated (the first screen of 10,000 threads comes as fast as
that of ten) and says how many more there are and how to list them:
-n 0 lists every thread. Piped or with --json, it lists them all. -n N
(--limit N) lists at most N; --before CURSOR lists those after CURSOR,
the next page: the footer's cursor is the last thread listed and when it
was updated, THREAD@TIME (RFC 3339), a place that holds when that thread
is written again or deleted meanwhile, so paging on lists every thread
once; a bare THREAD is that thread's place now (--json gives each row's
cursor). A page reads its own threads on an index: at 9,000 threads it
costs 10-13 ms CPU over a bare start and 31 MB, as at 1,000.`,
		Example: `  rewind threads
  rewind threads -n 0                            # every thread, on a terminal too
  rewind threads --before t-0412@2026-03-01T12:00:00.123456Z --limit 20   # the footer's next page
  rewind threads --before t-0412 --limit 20      # the 20 updated before t-0412 as it is now
  rewind threads --tokens                        # sums every listing: slower on long threads
  rewind threads --store postgres://rewind@127.0.0.1:5518/rewind --json
  rewind threads --store sqlite:checkpoints.db   # a LangGraph database, read-only`,
		Args: between(0, 0),
		RunE: func(c *cobra.Command, _ []string) error {
			if !a.asJSON && a.before == "" && !c.Flags().Changed("last") && !c.Flags().Changed("limit") {
				a.last = screenful(c.OutOrStdout())
				a.screen = a.last > 0
			}
			return withRead(c.Context(), store, "", func(r reader) error {
				return runThreads(c.Context(), r, a, c.OutOrStdout())
			})
		},
	}
	addStore(c, &store)
	addJSON(c, &a.asJSON)
	c.Flags().BoolVar(&a.tokens, "tokens", false, "add each thread's tokens (all branches, and the last turn's): reads every listing of every thread")
	c.Flags().IntVarP(&a.last, "last", "n", 0, "list only the `N` most recently updated threads (0: all)")
	c.Flags().IntVar(&a.last, "limit", 0, "the same as -n: at most `N` threads, the most recently updated")
	c.Flags().StringVar(&a.before, "before", "", "list only threads after `CURSOR` (THREAD@TIME, the footer's: where the last thread listed was; or a bare THREAD: where it is now)")
	return c
}

// threadsArgs is what `rewind threads` was asked: its flags, and screen
// when last is a screenful (screenful), not asked for: the footer then
// says how to list them all.
type threadsArgs struct {
	tokens, asJSON, screen bool
	before                 string
	last                   int
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

// runThreads is `rewind threads`: the threads, the most recently updated
// first, with their status (a rewind thread's run status, who holds its
// lock included: Engine.LiveStatus; a LangGraph thread's as get_state
// tells it), then on LangGraph the chains of its subgraph runs, and what
// failed or asked after the table. A rewind store's come in one read
// (Engine.RecentThreads), a page when -n asks for one: a screenful reads
// its own threads only. Every thread is one read too, one snapshot. The
// footer's next page starts at a cursor, the place of the last thread
// listed as it was listed (threadCursor): a thread written between pages
// moves to the top, out of the pages still to come, and the next page
// goes on from where the last one ended, whether its last thread was
// written since or not (paging after its id started again from the top).
func runThreads(ctx context.Context, r reader, a threadsArgs, out io.Writer) error {
	if r.langGraph() {
		return lgThreads(ctx, r.src, a, out)
	}
	// The engine's page, with each thread's newest listing: the statuses
	// read nothing more (but a running run's lock).
	ts, rest, err := r.e.RecentThreads(ctx, threadCursor(a.before), a.last)
	if errors.Is(err, store.ErrNotFound) {
		return usagef("--before %s: no thread of that id in this store; page on with the cursor (THREAD@TIME) the last page's footer printed, or a thread rewind threads lists", idText(a.before))
	}
	if err != nil {
		return err
	}
	rows, err := threadRows(ctx, r.e, ts, a.tokens)
	if err != nil {
		return err
	}
	if a.asJSON {
		return writeJSON(out, rows)
	}
	if len(rows) == 0 {
		if a.before != "" {
			fmt.Fprintf(out, "no thread was updated before %s\n", idText(a.before))
		} else {
			fmt.Fprintln(out, "no threads yet: start one with `rewind run --thread T --input TEXT`")
		}
		return nil
	}
	if err := printThreadRows(out, rows, a.tokens); err != nil {
		return err
	}
	if rest > 0 {
		threadsFooter(out, store.CursorAt(ts[len(ts)-1]), a, rest)
	}
	return nil
}

// threadCursor reads --before: THREAD@TIME, cut at the last '@' when what
// follows is an RFC 3339 time, is a place (the footer's cursor, which
// cursorText writes); any other text, '@' and all, is a thread's id.
func threadCursor(before string) store.ThreadCursor {
	if i := strings.LastIndexByte(before, '@'); i >= 0 {
		if at, err := time.Parse(time.RFC3339Nano, before[i+1:]); err == nil && !at.IsZero() {
			return store.ThreadCursor{ID: before[:i], UpdatedAt: at}
		}
	}
	return store.ThreadCursor{ID: before}
}

// cursorArg is c as --before takes it: THREAD@TIME, the time in UTC to
// the nanosecond (a store keeps microseconds).
func cursorArg(c store.ThreadCursor) string {
	return c.ID + "@" + c.UpdatedAt.UTC().Format(time.RFC3339Nano)
}

// cursorText is c's --before value to paste into a shell, whole (an id
// is not cut short here): bare when a plain word, else in $'…' with its
// controls escaped (bash, zsh and ksh read it back).
func cursorText(c store.ThreadCursor) string {
	s := cursorArg(c)
	if wholeText(s) == s {
		return s
	}
	q := strconv.Quote(s)
	return termtext.Line("$'" + strings.ReplaceAll(q[1:len(q)-1], "'", `\'`) + "'")
}

// threadsFooter says how many threads were updated before the last one
// listed and how to list them: after cursor, its place.
func threadsFooter(out io.Writer, cursor store.ThreadCursor, a threadsArgs, rest int) {
	more := "threads"
	if rest == 1 {
		more = "thread"
	}
	fmt.Fprintf(out, "… %d more %s, updated earlier: rewind threads --before %s --limit %d\n", rest, more, cursorText(cursor), a.last)
	if a.screen {
		fmt.Fprintln(out, "(the most recently updated screenful; every thread: rewind threads -n 0)")
	}
}

// printThreadRows prints a rewind store's threads.
func printThreadRows(out io.Writer, rows []threadRow, tokens bool) error {
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
	cells := ""
	if tokens {
		cells = "\tTOKENS IN/OUT\tLAST TURN IN/OUT"
	}
	return printThreads(out, lines, cells, nil)
}

// lgThreads reads each listed LangGraph thread's status
// (browse.ThreadStatus) and prints them. The reader lists every thread
// at once; the page is cut from it (the most recently updated first), so
// a screenful reads only its own threads' statuses.
func lgThreads(ctx context.Context, src browse.Source, a threadsArgs, out io.Writer) error {
	all, err := src.Threads(ctx)
	if err != nil {
		return err
	}
	ids := make([]string, len(all))
	for i, t := range all {
		ids[i] = t.ID
	}
	slices.SortStableFunc(all, func(x, y browse.Thread) int {
		if c := y.UpdatedAt.Compare(x.UpdatedAt); c != 0 {
			return c
		}
		return strings.Compare(y.ID, x.ID)
	})
	ts, err := lgAfter(all, a.before)
	if errors.Is(err, store.ErrNotFound) {
		return usagef("--before %s: no thread of that id in this %s; page on with the cursor (THREAD@TIME) the last page's footer printed, or a thread rewind threads lists", pasteText(a.before, ids), src.About().Status())
	}
	rest := 0
	if a.last > 0 && len(ts) > a.last {
		ts, rest = ts[:a.last], len(ts)-a.last
	}
	type row struct {
		browse.Thread
		Status browse.Status `json:"status"`
		Cursor string        `json:"cursor"`
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
		rows = append(rows, row{t, st, cursorArg(store.ThreadCursor{ID: t.ID, UpdatedAt: t.UpdatedAt})})
	}
	if a.asJSON {
		return writeJSON(out, rows)
	}
	if len(all) == 0 {
		fmt.Fprintf(out, "no threads in this %s\n", src.About().Status())
		return nil
	}
	if ab := src.About(); ab.Note != "" {
		fmt.Fprintf(out, "%s\n", ab.Status())
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
	if err := printThreads(out, lines, "", notes); err != nil {
		return err
	}
	if rest > 0 {
		more := "threads"
		if rest == 1 {
			more = "thread"
		}
		last := ts[len(ts)-1]
		fmt.Fprintf(out, "… %d more %s, updated earlier: rewind threads --before %s --limit %d\n", rest, more, cursorText(store.ThreadCursor{ID: last.ID, UpdatedAt: last.UpdatedAt}), a.last)
		if a.screen {
			fmt.Fprintln(out, "(the most recently updated screenful; every thread: rewind threads -n 0)")
		}
	}
	return nil
}

// lgAfter is the sorted list all after --before (threadCursor): after a
// place, or after the thread of a bare id (store.ErrNotFound when all
// has none).
func lgAfter(all []browse.Thread, before string) ([]browse.Thread, error) {
	c := threadCursor(before)
	switch {
	case c.Placed():
		at := store.Thread{ID: c.ID, UpdatedAt: c.UpdatedAt}
		i := slices.IndexFunc(all, func(t browse.Thread) bool {
			return store.NewerFirst(at, store.Thread{ID: t.ID, UpdatedAt: t.UpdatedAt}) < 0
		})
		if i < 0 {
			return nil, nil
		}
		return all[i:], nil
	case c.ID != "":
		i := slices.IndexFunc(all, func(t browse.Thread) bool { return t.ID == c.ID })
		if i < 0 {
			return nil, store.ErrNotFound
		}
		return all[i+1:], nil
	}
	return all, nil
}

// printThreads is the threads table of either store: THREAD STATUS
// CHECKPOINTS LATEST, the columns cells names (--tokens), UPDATED, and when a
// thread ran subgraphs, a row for each run with the parent checkpoint it
// runs from; then notes, a line each.
func printThreads(out io.Writer, lines []threadLine, cells string, notes []string) error {
	tw := newTable(out)
	subgraphs := slices.ContainsFunc(lines, func(l threadLine) bool { return len(l.Namespaces) > 1 })
	head := "THREAD\tSTATUS\tCHECKPOINTS\tLATEST" + cells + "\tUPDATED"
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
	// Cursor is the --before value that lists the threads after this one
	// (THREAD@TIME: threadCursor).
	Cursor string `json:"cursor"`
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
		r.Cursor = cursorArg(store.CursorAt(t))
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
