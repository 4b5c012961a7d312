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

// commandTable is rewind's commands, in the order help lists them, by name.
var commandTable = []struct {
	name string
	new  func() *cobra.Command
}{
	{"tui", newTUICmd},
	{"selftest", newSelftestCmd},
	{"run", func() *cobra.Command { return newRunCmd(false) }},
	{"resume", func() *cobra.Command { return newResumeCmd(false) }},
	{"fork", func() *cobra.Command { return newForkCmd(false) }},
	{"replay", func() *cobra.Command { return newReplayCmd(false) }},
	{"edit", newEditCmd},
	{"approve", func() *cobra.Command { return newApproveCmd(false) }},
	{"reject", func() *cobra.Command { return newRejectCmd(false) }},
	{"discard", newDiscardCmd},
	{"cancel", newCancelCmd},
	{"log", newLogCmd},
	{"show", newShowCmd},
	{"events", newEventsCmd},
	{"runs", newRunsCmd},
	{"stats", newStatsCmd},
	{"search", newSearchCmd},
	{"diff", newDiffCmd},
	{"check", newCheckCmd},
	{"demo", newDemoCmd},
	{"threads", newThreadsCmd},
	{"source", newSourceCmd},
	{"tenant", newTenantCmd},
	{"rm", newRmCmd},
	{"rekey", newRekeyCmd},
	{"prune", newPruneCmd},
	{"bench", newBenchCmd},
	{"drill", newDrillCmd},
	{"worker", newWorkerCmd},
	{"man", newManCmd},
}

// newRoot builds `rewind` and its commands, writing to stdout and stderr.
// started turns true once a command's own code runs, so an error before
// that is a usage error.
func newRoot(stdout, stderr io.Writer) (root *cobra.Command, started *bool) {
	return newRootFor(stdout, stderr, "")
}

// rootFor is the one command args name first, when it is one of
// commandTable: Run builds it alone ("" builds them all). Building every
// command and its flags was a tenth of a one-shot command's start; what
// a command line does is the same either way (TestOneCommandRootIsTheWhole).
func rootFor(args []string) string {
	if len(args) == 0 {
		return ""
	}
	if len(args) == 1 && (args[0] == "--version" || args[0] == "-v") {
		return rootAlone
	}
	for _, c := range commandTable {
		// man writes a page for every command: it needs them all.
		if c.name == args[0] && c.name != "man" {
			return c.name
		}
	}
	return ""
}

// rootAlone, as rootFor's answer, is the root without commands: all that
// `rewind --version` needs (every command built was a tenth of its
// start). No command has the name.
const rootAlone = "-"

// newRootFor is newRoot with only the command named only ("": all;
// rootAlone: none).
func newRootFor(stdout, stderr io.Writer, only string) (root *cobra.Command, started *bool) {
	started = new(bool)
	var f tuiFlags
	root = &cobra.Command{
		Use:   "rewind",
		Short: "time travel for a checkpointed multi-agent conversation",
		Long: `rewind drives a support ticket through planner → executors → critic →
summarizer → reply, checkpoints every superstep, and lets you scrub the
chain, fork it and kill and resume runs. Alone it opens the TUI.`,
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
	// The TUI's flags are the root's own, not inherited: a root built for
	// one command never parses them (building them, with the graphs their
	// help names, was a tenth of that root).
	if only == "" {
		f.add(root)
	}
	// So is --version: reading the build's module list (debug.ReadBuildInfo)
	// is for a root that may run itself.
	if only == "" || only == rootAlone {
		root.Version = version()
	}
	// Before the completion command is made: it keeps the writer it finds.
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(flagError)
	root.SuggestionsMinimumDistance = 2
	// Flag help wrapped to the terminal's usual width, in every command.
	root.SetUsageTemplate(strings.ReplaceAll(root.UsageTemplate(), "Flags.FlagUsages |", "Flags.FlagUsagesWrapped 100 |"))
	root.SetVersionTemplate("rewind {{.Version}}\n")
	for _, c := range commandTable {
		if only == "" || c.name == only {
			root.AddCommand(c.new())
		}
	}
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
