package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"rewind/cli/app"
	"rewind/store"
)

// newTenantCmd is `rewind tenant`: the tenants a store knows, and `rewind
// tenant add` to add one. A thread belongs to one tenant; --tenant (or
// $REWIND_TENANT) picks whose threads a command reads and writes.
func newTenantCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "tenant",
		Short: "the store's tenants: list them, add one",
		Long: `A thread belongs to one tenant. --tenant T (or $REWIND_TENANT) makes a command
read and write tenant T's threads only: another tenant's thread is not found.
Every store has the tenant default, which owns every thread written without
--tenant (and every thread written before tenants existed).`,
		Example: `  rewind tenant add acme
  rewind tenant list --json
  rewind run --tenant acme --thread t1 --input "where is my order?"`,
		Args: between(0, 0),
		RunE: func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	c.AddCommand(newTenantListCmd(), newTenantAddCmd())
	return c
}

func newTenantListCmd() *cobra.Command {
	var spec string
	var asJSON bool
	c := &cobra.Command{
		Use:     "list",
		Short:   "the tenants the store knows",
		Example: "  rewind tenant list\n  rewind tenant list --json",
		Args:    between(0, 0),
		RunE: func(c *cobra.Command, _ []string) error {
			return withTenancy(c.Context(), spec, true, func(ten store.Tenancy) error {
				names, err := ten.Tenants(c.Context())
				if err != nil {
					return err
				}
				if asJSON {
					return writeJSON(c.OutOrStdout(), map[string]any{"tenants": names})
				}
				for _, n := range names {
					fmt.Fprintln(c.OutOrStdout(), n)
				}
				return nil
			})
		},
	}
	addStoreOnly(c, &spec)
	addJSON(c, &asJSON)
	return c
}

func newTenantAddCmd() *cobra.Command {
	var spec string
	c := &cobra.Command{
		Use:     "add TENANT…",
		Short:   "add tenants (letters, digits, _ or -, starting with a letter)",
		Example: "  rewind tenant add acme globex",
		Args:    between(1, 64),
		RunE: func(c *cobra.Command, args []string) error {
			for _, name := range args {
				if err := store.CheckTenant(name); err != nil {
					return usagef("tenant add %q: a tenant is 1 to 63 letters, digits, _ or -, starting with a letter", named(name))
				}
			}
			return withTenancy(c.Context(), spec, false, func(ten store.Tenancy) error {
				for _, name := range args {
					if err := ten.AddTenant(c.Context(), name); err != nil {
						return err
					}
					fmt.Fprintf(c.OutOrStdout(), "tenant %s: added\n", store.Name(name))
				}
				return nil
			})
		},
	}
	addStoreOnly(c, &spec)
	return c
}

// withTenancy runs fn on the store's tenants, opened as the default
// tenant (the store's, whatever $REWIND_TENANT says); read-only when only
// reading.
func withTenancy(ctx context.Context, flag string, read bool, fn func(store.Tenancy) error) error {
	spec := app.Store{Spec: app.ResolveStore(flag).Spec}
	open := spec.Open
	if read {
		open = spec.OpenRead
	}
	st, err := open(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	ten, ok := store.Unwrap(st).(store.Tenancy)
	if !ok {
		return fmt.Errorf("%s keeps no tenants", spec.Label())
	}
	return fn(ten)
}
