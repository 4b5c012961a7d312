package cli

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/spf13/cobra"

	"rewind/cli/app"
	"rewind/engine/selftest"
	"rewind/tui/termtext"
)

func newSelftestCmd() *cobra.Command {
	var store string
	var asJSON bool
	c := &cobra.Command{
		Use:   "selftest",
		Short: "the seed lab's five checks on the chosen store; exit 0 only when all pass",
		Example: `  rewind selftest --store memory:
  rewind selftest --store sqlite:/tmp/selftest.db --json`,
		Args: between(0, 0),
		RunE: func(c *cobra.Command, _ []string) error {
			out, spec := c.OutOrStdout(), app.ResolveStore(store)
			if err := spec.Writable(c.Context()); err != nil {
				return err // a LangGraph database: refused before anything is written
			}
			open, cleanup := spec.Opener()
			defer cleanup()
			checks, err := selftest.Run(c.Context(), open)
			if err != nil {
				return err
			}
			failed := 0
			for _, ch := range checks {
				if !ch.Passed {
					failed++
				}
			}
			if asJSON {
				if err := writeJSON(out, map[string]any{"passed": failed == 0, "checks": checks}); err != nil {
					return err
				}
			} else {
				fmt.Fprintf(out, "selftest on %s\n", termtext.Line(spec.Label()))
				for _, ch := range checks {
					mark := "PASS"
					if !ch.Passed {
						mark = "FAIL"
					}
					fmt.Fprintf(out, "%s check %d: %s\n", mark, ch.N, ch.Name)
					keys := slices.Sorted(maps.Keys(ch.Figures))
					for _, k := range keys {
						b, _ := json.Marshal(ch.Figures[k])
						fmt.Fprintf(out, "       %s: %s\n", termtext.Line(k), termtext.Line(string(b)))
					}
					for _, f := range ch.Failures {
						fmt.Fprintf(out, "     ✗ %s\n", termtext.Line(f))
					}
				}
				fmt.Fprintf(out, "%d passed, %d failed\n", len(checks)-failed, failed)
			}
			if failed > 0 {
				return failedChecks{failed, len(checks)}
			}
			return nil
		},
	}
	addStore(c, &store)
	addJSON(c, &asJSON)
	return c
}
