package cli

// Positional arguments: how many a command takes, and checkpoint ids.

import (
	"strconv"
	"strings"

	"github.com/spf13/cobra"
)

// between accepts min to max positional arguments; otherwise it shows the
// command's form.
func between(min, max int) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) < min || len(args) > max {
			return usagef("usage: %s (see `%s --help`)", c.UseLine(), c.CommandPath())
		}
		return nil
	}
}

// optCheckpoint reads the optional CHECKPOINT after THREAD (0 when absent).
func optCheckpoint(args []string) (int64, error) {
	if len(args) < 2 {
		return 0, nil
	}
	return checkpointArg(args[1])
}

func checkpointArg(s string) (int64, error) {
	// "@16" is how output names checkpoints; "#16" was, before.
	id, err := strconv.ParseInt(strings.TrimPrefix(strings.TrimPrefix(s, "@"), "#"), 10, 64)
	if err != nil || id <= 0 {
		return 0, usagef("checkpoint %q is not a checkpoint id: use the number from `rewind log THREAD`", named(s))
	}
	return id, nil
}
