package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"rewind/cli/app"
	"rewind/engine/ticket"
	"rewind/tui/termtext"
)

// newSourceCmd is `rewind source`: the versions of the back-office records
// the mock's tools read, and `rewind source bump` to change one, as the
// outside world would while a run waits.
func newSourceCmd() *cobra.Command {
	var store string
	var asJSON bool
	c := &cobra.Command{
		Use:   "source [SOURCE…]",
		Short: "the versions of the records the tools read (KIND/ORDER, e.g. shipments/SO20260901)",
		Long: `The mock's tools read versioned records named KIND/ORDER (orders, shipments,
refunds, addresses, invoices, warranties, payments, kb). Every tool result
records the record and the version it read. ` + "`rewind source bump`" + ` changes a
record: a resume then re-reads the work that read it, and the approval gate
blocks a draft written from it. Versions live beside the store (see README).`,
		Example: `  rewind source
  rewind source shipments/SO20260901 --json`,
		Args: between(0, 64),
		RunE: func(c *cobra.Command, args []string) error {
			for _, id := range args {
				if err := ticket.CheckSource(id); err != nil {
					return usageOf(err)
				}
			}
			a, err := openReader(c.Context(), store)
			if err != nil {
				return err
			}
			defer a.Close()
			vs, err := a.Sources.Versions(c.Context())
			if err != nil {
				return err
			}
			withdrawn := withdrawnOf(c.Context(), a.Sources)
			ids := args
			if len(ids) == 0 {
				// Every bumped record, and every withdrawn one.
				all := maps.Clone(vs)
				for id := range withdrawn {
					all[id] = max(all[id], ticket.BaseVersion)
				}
				ids = slices.Sorted(maps.Keys(all))
			}
			out := c.OutOrStdout()
			rows := make([]ticket.SourceRead, len(ids))
			for i, id := range ids {
				rows[i] = ticket.SourceRead{ID: id, Version: ticket.BaseVersion}
				if v, ok := vs[id]; ok {
					rows[i].Version = v
				}
			}
			if asJSON {
				return writeJSON(out, map[string]any{"file": a.Store.SourcesPath(), "sources": rows, "withdrawn": slices.Sorted(maps.Keys(withdrawn))})
			}
			printSources(out, rows, withdrawn)
			if p := a.Store.SourcesPath(); p != "" {
				fmt.Fprintf(out, "versions kept in %s\n", termtext.Line(p))
			}
			return nil
		},
	}
	addStore(c, &store)
	addJSON(c, &asJSON)
	c.AddCommand(newSourceBumpCmd(), newSourceAccessCmd(true), newSourceAccessCmd(false))
	return c
}

func newSourceBumpCmd() *cobra.Command {
	var store string
	var asJSON bool
	c := &cobra.Command{
		Use:   "bump SOURCE…",
		Short: "change records: move each SOURCE to its next version",
		Example: `  rewind source bump shipments/SO20260901
  rewind source bump orders/SO20260901 refunds/SO20260901 --json`,
		Args: between(1, 64),
		RunE: func(c *cobra.Command, args []string) error {
			a, err := openSourcesOf(c, store, args, "source versions live and die", "bump them")
			if err != nil {
				return err
			}
			defer a.Close()
			out := c.OutOrStdout()
			rows := make([]ticket.SourceRead, 0, len(args))
			for _, id := range args {
				v, err := a.Sources.Bump(c.Context(), id)
				if errors.Is(err, ticket.ErrBadSource) {
					return usageOf(err)
				}
				if err != nil {
					return err
				}
				rows = append(rows, ticket.SourceRead{ID: id, Version: v})
				if !asJSON {
					fmt.Fprintf(out, "%s: v%d → v%d\n", termtext.Line(id), v-1, v)
				}
			}
			if asJSON {
				return writeJSON(out, map[string]any{"file": a.Store.SourcesPath(), "sources": rows})
			}
			return nil
		},
	}
	addStore(c, &store)
	addJSON(c, &asJSON)
	return c
}

// printSources lists rows, each with its version and whether access to
// it is withdrawn.
func printSources(out io.Writer, rows []ticket.SourceRead, withdrawn map[string]bool) {
	if len(rows) == 0 {
		fmt.Fprintf(out, "no record was bumped: every source is at v%d\n", ticket.BaseVersion)
	}
	for _, r := range rows {
		note := ""
		if withdrawn[r.ID] {
			note = "  access withdrawn"
		}
		fmt.Fprintf(out, "%-28s v%d%s\n", termtext.Line(r.ID), r.Version, note)
	}
}

// withdrawnOf is the sources whose access is withdrawn (none when the
// back office cannot withdraw, or cannot be read: the versions above
// were read from it already).
func withdrawnOf(ctx context.Context, src ticket.Sources) map[string]bool {
	acc, ok := src.(ticket.SourceAccess)
	if !ok {
		return nil
	}
	w, err := acc.Withdrawn(ctx)
	if err != nil {
		return nil
	}
	return w
}

// openSourcesOf checks the SOURCE arguments and opens the app whose
// source records a command changes: one kept beyond this process (what,
// how: the words of the refusal for a memory: store).
func openSourcesOf(c *cobra.Command, store string, args []string, what, how string) (*app.App, error) {
	for _, id := range args {
		if err := ticket.CheckSource(id); err != nil {
			return nil, usageOf(err)
		}
	}
	a, err := openApp(c.Context(), store, nil)
	if err != nil {
		return nil, err
	}
	if a.Store.SourcesPath() == "" {
		_ = a.Close()
		return nil, usagef("a memory: store's %s with this process: %s for sqlite:PATH or postgres://…, or set $%s to a file", what, how, app.EnvSources)
	}
	return a, nil
}

// newSourceAccessCmd is `rewind source withdraw` (withdraw true) and
// `rewind source restore`: a person's access to records, as the back
// office would take it away while a run waits. A resume whose pending
// work would read a withdrawn record is refused before any task runs.
func newSourceAccessCmd(withdraw bool) *cobra.Command {
	var store string
	use, short, done := "restore SOURCE…", "give back access to records withdrawn before", "access restored"
	if withdraw {
		use, short, done = "withdraw SOURCE…", "withdraw access to records: a pending task that would read one is refused", "access withdrawn"
	}
	verb := strings.Fields(use)[0]
	c := &cobra.Command{
		Use:     use,
		Short:   short,
		Example: "  rewind source " + verb + " shipments/SO20260901",
		Args:    between(1, 64),
		RunE: func(c *cobra.Command, args []string) error {
			a, err := openSourcesOf(c, store, args, "source access lives and dies", verb+" records")
			if err != nil {
				return err
			}
			defer a.Close()
			acc, ok := a.Sources.(ticket.SourceAccess)
			if !ok {
				return fmt.Errorf("the store's source records keep no access list: %s needs sqlite:PATH or postgres://…", verb)
			}
			for _, id := range args {
				if err := acc.SetWithdrawn(c.Context(), id, withdraw); err != nil {
					return err
				}
				fmt.Fprintf(c.OutOrStdout(), "%s: %s\n", termtext.Line(id), done)
			}
			return nil
		},
	}
	addStore(c, &store)
	return c
}
