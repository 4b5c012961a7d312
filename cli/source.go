package cli

import (
	"errors"
	"fmt"
	"maps"
	"slices"

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
					return usagef("%v", err)
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
			ids := args
			if len(ids) == 0 {
				ids = slices.Sorted(maps.Keys(vs))
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
				return writeJSON(out, map[string]any{"file": a.Store.SourcesPath(), "sources": rows})
			}
			if len(rows) == 0 {
				fmt.Fprintf(out, "no record was bumped: every source is at v%d\n", ticket.BaseVersion)
			}
			for _, r := range rows {
				fmt.Fprintf(out, "%-28s v%d\n", termtext.Line(r.ID), r.Version)
			}
			if p := a.Store.SourcesPath(); p != "" {
				fmt.Fprintf(out, "versions kept in %s\n", termtext.Line(p))
			}
			return nil
		},
	}
	addStore(c, &store)
	addJSON(c, &asJSON)
	c.AddCommand(newSourceBumpCmd())
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
			for _, id := range args {
				if err := ticket.CheckSource(id); err != nil {
					return usagef("%v", err)
				}
			}
			a, err := openApp(c.Context(), store, nil)
			if err != nil {
				return err
			}
			defer a.Close()
			if a.Store.SourcesPath() == "" {
				return usagef("a memory: store's source versions live and die with this process: bump them for sqlite:PATH or postgres://…, or set $%s to a file", app.EnvSources)
			}
			out := c.OutOrStdout()
			rows := make([]ticket.SourceRead, 0, len(args))
			for _, id := range args {
				v, err := a.Sources.Bump(c.Context(), id)
				if errors.Is(err, ticket.ErrBadSource) {
					return usagef("%v", err)
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
