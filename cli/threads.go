package cli

import (
	"context"
	"errors"
	"fmt"
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
			out := c.OutOrStdout()
			lg := func(src browse.Source) error { return lgThreads(c.Context(), src, asJSON, out) }
			return withSource(c.Context(), store, "", lg, func() error {
				return withReader(c.Context(), store, func(e *engine.Engine) error {
					ts, err := e.Threads(c.Context())
					if err != nil {
						return err
					}
					rows, err := threadRows(c.Context(), e, ts, tokens)
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
					tw := newTable(out)
					if !tokens {
						fmt.Fprintln(tw, "THREAD\tSTATUS\tCHECKPOINTS\tLATEST\tUPDATED")
						for _, r := range rows {
							fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\n", idText(r.ID), termtext.Line(r.Status), r.Checkpoints, r.Latest, r.UpdatedAt.Local().Format("2006-01-02 15:04:05"))
						}
						return tw.Flush()
					}
					fmt.Fprintln(tw, "THREAD\tSTATUS\tCHECKPOINTS\tLATEST\tTOKENS IN/OUT\tLAST TURN IN/OUT\tUPDATED")
					for _, r := range rows {
						tokens, last := termtext.Count(r.Tokens.Total.PromptTokens)+"/"+termtext.Count(r.Tokens.Total.CompletionTokens), "-"
						if r.TokensError != "" {
							tokens, last = "unreadable", "?"
						}
						if r.Tokens.LastTurn != nil {
							last = fmt.Sprintf("%d/%d", r.Tokens.LastTurn.Total.PromptTokens, r.Tokens.LastTurn.Total.CompletionTokens)
						}
						fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\t%s\n", idText(r.ID), termtext.Line(r.Status), r.Checkpoints, r.Latest,
							tokens, last, r.UpdatedAt.Local().Format("2006-01-02 15:04:05"))
					}
					return tw.Flush()
				})
			})
		},
	}
	addStore(c, &store)
	addJSON(c, &asJSON)
	c.Flags().BoolVar(&tokens, "tokens", false, "add each thread's tokens (all branches, and the last turn's): reads every listing of every thread")
	return c
}

// threadRow is one thread in `rewind threads`.
type threadRow struct {
	ID          string    `json:"id"`
	Status      string    `json:"status"`
	Reason      string    `json:"reason,omitempty"`
	Checkpoints int       `json:"checkpoints"`
	Latest      int64     `json:"latest"`
	UpdatedAt   time.Time `json:"updatedAt"`
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
// list was read (another process's `rewind rm`) is left out: it is no
// longer in the store, and the others still are.
func threadRows(ctx context.Context, e *engine.Engine, ts []store.Thread, tokens bool) ([]threadRow, error) {
	rows := make([]threadRow, 0, len(ts))
	for _, t := range ts {
		r, err := threadOf(ctx, e, t.ID, tokens)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		r.Checkpoints, r.Latest, r.UpdatedAt = t.Checkpoints, t.LatestID, t.UpdatedAt
		rows = append(rows, r)
	}
	return rows, nil
}

// threadOf reads a thread's run status (its newest listing, and who holds
// its lock: Engine.LiveStatus, so a run nobody runs any more reads
// stopped) and, with tokens, its costs (every listing).
func threadOf(ctx context.Context, e *engine.Engine, thread string, tokens bool) (threadRow, error) {
	r := threadRow{ID: thread}
	st, err := e.LiveStatus(ctx, thread)
	if err != nil {
		return r, err
	}
	r.Status, r.Reason = st.Status, st.Reason
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
