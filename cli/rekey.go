package cli

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"rewind/cli/app"
	"rewind/engine"
	"rewind/engine/seal"
)

func newRekeyCmd() *cobra.Command {
	var spec string
	var olds []string
	var asJSON, takeOver bool
	c := &cobra.Command{
		Use:   "rekey T --key-file NEW --old-key-file OLD",
		Short: "encrypt thread T's sealed messages, summaries and states again with a new key (key rotation)",
		Long: `Every document of thread T that is encrypted (messages, states, head
snapshot, large values, pending writes, drafts) is opened with the key
that sealed it (--old-key-file, repeatable, or the new key itself) and
sealed again with the new key (--key-file or $REWIND_KEY_FILE), in one
transaction: a document no key given opens fails it with nothing
written. Documents stored in the clear, before the thread had a key,
stay so and are counted.`,
		Example: `  rewind rekey ticket-1 --key-file key-2026 --old-key-file key-2025
  REWIND_KEY_FILE=key-2026 rewind rekey ticket-1 --old-key-file key-2025 --json`,
		Args: between(1, 1),
		RunE: func(c *cobra.Command, args []string) error {
			ctx, out, thread := c.Context(), c.OutOrStdout(), args[0]
			var keys []*seal.Key
			for _, path := range olds {
				k, err := seal.LoadFile(path)
				if err != nil {
					return usagef("--old-key-file: %v", err)
				}
				keys = append(keys, k)
			}
			a, err := app.Open(ctx, app.Config{Store: spec, OldKeys: keys})
			if errors.Is(err, app.ErrUsage) {
				return usageOf(err)
			}
			if err != nil {
				return err
			}
			defer a.Close()
			res, err := a.Engine.Rekey(ctx, thread, takeOver)
			if errors.Is(err, engine.ErrNoNewKey) {
				return usagef("rekey: give the new key with --key-file NEW (or $%s), and the old one with --old-key-file OLD", app.KeyFileEnv)
			}
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(out, map[string]any{"thread": thread, "keyId": res.KeyID, "resealed": res.Resealed, "clear": res.Clear})
			}
			var from []string
			total := 0
			for _, id := range slices.Sorted(maps.Keys(res.Resealed)) {
				if id == res.KeyID {
					from = append(from, fmt.Sprintf("%d already", res.Resealed[id]))
				} else {
					from = append(from, fmt.Sprintf("%d from key %s", res.Resealed[id], id))
				}
				total += res.Resealed[id]
			}
			if total == 0 {
				fmt.Fprintf(out, "thread %s has no encrypted document: nothing to rekey", idText(thread))
			} else {
				fmt.Fprintf(out, "thread %s: %d documents now sealed with key %s (%s)", idText(thread), total, res.KeyID, strings.Join(from, ", "))
			}
			if res.Clear > 0 {
				fmt.Fprintf(out, "; %d stored in the clear before the thread had a key stay so", res.Clear)
			}
			fmt.Fprintln(out)
			return nil
		},
	}
	addStore(c, &spec)
	addJSON(c, &asJSON)
	c.Flags().StringArrayVar(&olds, "old-key-file", nil, "the `FILE` of a key the thread was sealed with (repeatable)")
	c.Flags().BoolVar(&takeOver, "take-over", false, "rekey a thread another live process is running; that process is fenced out")
	return c
}
