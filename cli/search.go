package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"rewind/engine"
	"rewind/engine/ticket"
	"rewind/store"
	"rewind/store/browse"
	"rewind/tui/termtext"
)

// searchWidth is how much of a hit's text a line shows.
const searchWidth = 100

func newSearchCmd() *cobra.Command {
	var spec, ns string
	var asJSON bool
	var limit int
	c := &cobra.Command{
		Use:   "search T QUERY...",
		Short: "find T's messages, on every branch, that hold the query's words",
		Long: `The messages of thread T that hold, for each word of QUERY, a word that
begins with it (letters and digits, without case: "refund so2026" finds
"Refund SO20260901"), on every branch, compacted ones too, from the store's
full-text index: where each is (the checkpoint that stored it, its branch,
the turn), who said it, and its text around the match, matches in [ ].
A branch is named by its newest checkpoint; "head" marks the branch of the
thread's newest checkpoint.

On a LangGraph database (read-only), which keeps no index: a scan of the
messages channel at the newest checkpoint of each branch of the root
graph (or of the subgraph run --ns names), newest branch first (a message several branches share is listed
once, on the newest); a hit names that checkpoint, not the one that first
stored the message. It reads one whole checkpoint per branch.`,
		Example: `  rewind search ticket-1 refund
  rewind search ticket-1 'parcel SO2026' --json
  rewind search ticket-1 refund --limit 0 --store sqlite:checkpoints.db
  rewind search t-main tables --store sqlite:langgraph.db   # a LangGraph database: a scan`,
		Args: between(2, 1<<20),
		RunE: func(c *cobra.Command, args []string) error {
			query := strings.Join(args[1:], " ")
			if strings.TrimSpace(query) == "" {
				return usagef("search: the query is empty: give the words to find, as in `rewind search %s refund`", idText(args[0]))
			}
			switch n := len(store.SearchQuery(query)); {
			case n == 0:
				return usagef("search: the query %q has no word to find (letters or digits): give one, as in `rewind search %s refund`", termtext.Line(query), idText(args[0]))
			case n > store.MaxQueryWords:
				return usagef("search: the query has %d words: give at most %d", n, store.MaxQueryWords)
			}
			lg := func(src browse.Source) error {
				return lgSearch(c.Context(), src, args[0], ns, query, limit, asJSON, c.OutOrStdout())
			}
			return withSource(c.Context(), spec, ns, lg, func(ctx context.Context) error {
				return withReader(ctx, spec, func(e *engine.Engine) error {
					return runSearch(ctx, e, args[0], query, limit, asJSON, c.OutOrStdout())
				})
			})
		},
	}
	addStore(c, &spec)
	addNS(c, &ns)
	addJSON(c, &asJSON)
	c.Flags().IntVar(&limit, "limit", 200, "show at most `N` hits, the first by message index (0: all)")
	return c
}

// searchHit is a hit as the CLI prints it.
type searchHit struct {
	ticket.Hit
	// Branch is the newest checkpoint of the branch the message is on
	// (following the newest child from its checkpoint), Head whether that
	// is the branch of the thread's newest checkpoint.
	Branch int64 `json:"branch"`
	Head   bool  `json:"head"`
	// Turn counts the turns (inputs and forks) from the thread's root to
	// the checkpoint, its own included.
	Turn    int    `json:"turn"`
	Snippet string `json:"snippet"`
}

func runSearch(ctx context.Context, e *engine.Engine, thread, query string, limit int, asJSON bool, out io.Writer) error {
	ask := limit
	if ask > 0 {
		ask++ // one more says there are more
	}
	found, err := e.Search(ctx, thread, query, ask)
	if err != nil {
		return err
	}
	more := limit > 0 && len(found) > limit
	if more {
		found = found[:limit]
	}
	var where map[int64]place
	if len(found) > 0 {
		listing, err := e.History(ctx, thread, 0, 0)
		if err != nil {
			return err
		}
		where = places(listing)
	}
	hits := make([]searchHit, 0, len(found))
	for _, h := range ticket.Hits(found, query) {
		p := where[h.Checkpoint]
		snip, _ := h.Snippet(searchWidth)
		hits = append(hits, searchHit{Hit: h, Branch: p.leaf, Head: p.head, Turn: p.turn, Snippet: snip})
	}
	if asJSON {
		return writeJSON(out, map[string]any{"thread": thread, "query": query, "hits": hits, "more": more})
	}
	if len(hits) == 0 {
		fmt.Fprintf(out, "no message of %s holds %q (every branch searched)\n", idText(thread), termtext.Line(query))
		return nil
	}
	fmt.Fprintf(out, "%s %q in %s, on every branch:\n", hitsWhat(len(hits), more), termtext.Line(query), idText(thread))
	for _, h := range hits {
		branch := fmt.Sprintf("@%d", h.Branch)
		if h.Head {
			branch = "head"
		}
		fmt.Fprint(out, hitLine(fmt.Sprintf("@%-5d %-6s turn %-4d", h.Checkpoint, branch, h.Turn), h.Hit))
	}
	return nil
}

// hitsWhat says how many messages hold the query: n, the first n of
// more (--limit).
func hitsWhat(n int, more bool) string {
	switch {
	case more:
		return fmt.Sprintf("the first %d messages (--limit) that hold", n)
	case n == 1:
		return "1 message holds"
	}
	return fmt.Sprintf("%d messages hold", n)
}

// hitLine is a hit's line of either store: where it is, its index, who
// said it and its text around the match, matches in [ ].
func hitLine(where string, h ticket.Hit) string {
	snip, spans := h.Snippet(searchWidth)
	return fmt.Sprintf("%s #%-5d %s: %s\n", where, h.Index, termtext.Line(h.Speaker), marked(snip, spans))
}

// lgHit is a hit of a LangGraph thread: a message of Checkpoint, the
// newest checkpoint of a branch (Head: the thread's newest); Index counts
// from 1, as `show --message` takes it.
type lgHit struct {
	ticket.Hit
	Checkpoint string `json:"checkpoint"`
	ID         string `json:"id,omitempty"`
	Head       bool   `json:"head"`
	Snippet    string `json:"snippet"`
}

// lgSearch is `rewind search` on a LangGraph database: LangGraph keeps no
// index, so browse.Search scans the messages of each branch's newest
// checkpoint of the chain (the root's, or the subgraph run's --ns names;
// the TUI's / does the same).
func lgSearch(ctx context.Context, src browse.Source, thread, ns, query string, limit int, asJSON bool, out io.Writer) error {
	c, err := chainOf(ctx, src, thread, ns)
	if err != nil {
		return err
	}
	found, more, err := browse.Search(ctx, src, c.Chain, query, limit)
	if err != nil {
		return err
	}
	hits := make([]lgHit, 0, len(found))
	for _, f := range found {
		m := f.Message
		hit := lgHit{Hit: ticket.Hit{Index: int64(m.Index + 1), Role: m.Role, Speaker: f.Speaker, Text: f.Text, Matches: f.Matches},
			Checkpoint: f.Checkpoint, ID: m.ID, Head: f.Head}
		hit.Snippet, _ = hit.Hit.Snippet(searchWidth)
		hits = append(hits, hit)
	}
	if asJSON {
		return writeJSON(out, map[string]any{"thread": c.Thread, "ns": c.NS, "query": query, "hits": hits, "more": more})
	}
	if len(hits) == 0 {
		fmt.Fprintf(out, "no message of %s holds %q (every branch's newest checkpoint searched)\n", c.where(), termtext.Line(query))
		return nil
	}
	fmt.Fprintf(out, "%s %q in %s, on every branch's newest checkpoint:\n", hitsWhat(len(hits), more), termtext.Line(query), c.where())
	for _, h := range hits {
		where := "@" + idOrDash(h.Checkpoint)
		if h.Head {
			where += " head"
		}
		fmt.Fprint(out, hitLine(where, h.Hit))
	}
	return nil
}

// marked is text with each span in [ ], sanitised for the terminal.
func marked(text string, spans [][2]int) string {
	var b strings.Builder
	at := 0
	for _, sp := range spans {
		b.WriteString(termtext.Line(text[at:sp[0]]) + "[" + termtext.Line(text[sp[0]:sp[1]]) + "]")
		at = sp[1]
	}
	b.WriteString(termtext.Line(text[at:]))
	return b.String()
}

// place is where a checkpoint is in its thread's tree.
type place struct {
	turn int
	leaf int64
	head bool
}

// places reads a thread's listing (any order): each checkpoint's turn
// (the inputs and forks from the root to it, as the TUI counts them), its
// branch's newest checkpoint (following the newest child) and whether
// that branch is the newest checkpoint's.
func places(listing []engine.Checkpoint) map[int64]place {
	byID := make(map[int64]engine.Checkpoint, len(listing))
	newestChild := map[int64]int64{}
	var newest int64
	for _, cp := range listing {
		byID[cp.ID] = cp
		newest = max(newest, cp.ID)
		if cp.ParentID != 0 {
			newestChild[cp.ParentID] = max(newestChild[cp.ParentID], cp.ID)
		}
	}
	out := make(map[int64]place, len(listing))
	// Parents have smaller ids: ascending for turns, descending for leaves.
	ids := make([]int64, 0, len(byID))
	for id := range byID {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		cp := byID[id]
		p := out[cp.ParentID]
		if cp.ParentID == 0 {
			p = place{}
		}
		turn := p.turn
		if cp.Source == engine.SourceInput || cp.Source == engine.SourceFork && !cp.Metadata.Replay {
			turn++
		}
		out[id] = place{turn: turn}
	}
	for i := len(ids) - 1; i >= 0; i-- {
		id := ids[i]
		p := out[id]
		p.leaf = id
		if c, ok := newestChild[id]; ok {
			p.leaf = out[c].leaf
		}
		out[id] = p
	}
	// The newest checkpoint's chain is the head's branch, whichever
	// child of its checkpoints is newer.
	for id := newest; id != 0; id = byID[id].ParentID {
		p := out[id]
		p.leaf, p.head = newest, true
		out[id] = p
	}
	return out
}
