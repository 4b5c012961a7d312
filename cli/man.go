package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

func newManCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "man DIR",
		Short: "write a man page for rewind and each command into DIR",
		Example: `  rewind man /tmp/man && man -l /tmp/man/rewind-log.1
  sudo rewind man /usr/local/share/man/man1`,
		Args: between(1, 1),
		RunE: func(c *cobra.Command, args []string) error {
			dir := args[0]
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return fmt.Errorf("man: create %s: %w", dir, err)
			}
			header := &doc.GenManHeader{Title: "REWIND", Section: "1", Source: "rewind " + version()}
			if err := doc.GenManTree(c.Root(), header, dir); err != nil {
				return fmt.Errorf("man: write pages into %s: %w", dir, err)
			}
			fmt.Fprintf(c.OutOrStdout(), "wrote man pages into %s (man -l %s/rewind.1)\n", dir, dir)
			return nil
		},
	}
}
