package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

// help lists commands in the order newRoot adds them. Set once, not in
// newRoot: the tests build roots on parallel goroutines.
func init() { cobra.EnableCommandSorting = false }

// newRoot builds `rewind` and its commands, writing to stdout and stderr.
// started turns true once a command's own code runs, so an error before
// that is a usage error.
func newRoot(stdout, stderr io.Writer) (root *cobra.Command, started *bool) {
	started = new(bool)
	var f tuiFlags
	root = &cobra.Command{
		Use:   "rewind",
		Short: "time travel for a checkpointed multi-agent conversation",
		Long: `rewind drives a support ticket through planner → executors → critic →
summarizer → reply, checkpoints every superstep, and lets you scrub the
chain, fork it and kill and resume runs. Alone it opens the TUI.`,
		Version: version(),
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return nil
			}
			hint := ""
			if s := c.SuggestionsFor(args[0]); len(s) > 0 {
				hint = fmt.Sprintf(" (did you mean %q?)", s[0])
			}
			return usagef("unknown command %q%s: see `rewind help`", named(args[0]), hint)
		},
		RunE: func(c *cobra.Command, _ []string) error { return f.run(c.Context(), f.thread) },
		PersistentPreRunE: func(c *cobra.Command, _ []string) error {
			*started = true
			return checkStoreFlag(c)
		},
		SilenceErrors:     true,
		SilenceUsage:      true,
		DisableAutoGenTag: true, // man pages stay the same from build to build
	}
	f.add(root)
	// Before the completion command is made: it keeps the writer it finds.
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(flagError)
	root.SuggestionsMinimumDistance = 2
	// Flag help wrapped to the terminal's usual width, in every command.
	root.SetUsageTemplate(strings.ReplaceAll(root.UsageTemplate(), "Flags.FlagUsages |", "Flags.FlagUsagesWrapped 100 |"))
	root.SetVersionTemplate("rewind {{.Version}}\n")
	root.AddCommand(
		newTUICmd(),
		newSelftestCmd(),
		newRunCmd(false),
		newResumeCmd(false),
		newForkCmd(false),
		newReplayCmd(false),
		newEditCmd(),
		newApproveCmd(false),
		newRejectCmd(false),
		newDiscardCmd(),
		newCancelCmd(),
		newLogCmd(),
		newShowCmd(),
		newEventsCmd(),
		newRunsCmd(),
		newStatsCmd(),
		newSearchCmd(),
		newDiffCmd(),
		newCheckCmd(),
		newDemoCmd(),
		newThreadsCmd(),
		newSourceCmd(),
		newTenantCmd(),
		newRmCmd(),
		newRekeyCmd(),
		newPruneCmd(),
		newBenchCmd(),
		newDrillCmd(),
		newWorkerCmd(),
		newManCmd(),
	)
	// Made now rather than on Execute, so that help and man pages list them.
	root.InitDefaultVersionFlag()
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	boundFlags(root)
	for _, c := range root.Commands() {
		switch c.Name() {
		case "help":
			c.Short = "help on any command"
			// cobra shows the root's help for a topic it does not know,
			// and exits 0: a typo would pass unnoticed in a script.
			show := c.Run
			c.Run = nil
			c.RunE = func(c *cobra.Command, args []string) error {
				if found, _, err := c.Root().Find(args); len(args) > 0 && (err != nil || found == c.Root()) {
					return usagef("help: no command %q: see `rewind help`", named(strings.Join(args, " ")))
				}
				show(c, args)
				return nil
			}
		case "completion":
			c.Args = cobra.ArbitraryArgs // RunE names the shells
			c.RunE = func(c *cobra.Command, args []string) error {
				if len(args) > 0 {
					return usagef("completion: no script for %q: choose bash, zsh, fish or powershell", named(args[0]))
				}
				return usagef("completion needs a shell: rewind completion bash|zsh|fish|powershell")
			}
			c.Short = "a shell completion script: bash, zsh, fish or powershell"
			c.Example = "  source <(rewind completion bash)\n  rewind completion zsh > \"${fpath[1]}/_rewind\"\n  rewind completion fish > ~/.config/fish/completions/rewind.fish"
		}
	}
	commandHelp := root.HelpFunc()
	root.SetHelpFunc(func(c *cobra.Command, args []string) {
		if c == root {
			rootHelp(c)
			return
		}
		commandHelp(c, args)
	})
	return root, started
}
