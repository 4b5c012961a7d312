package cli

import (
	"bytes"
	"context"
	"maps"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"rewind/engine/ticket"
)

// run is Run in this process, for what fails or finishes before a store is
// opened (flags, help, usage).
func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// refuser runs command lines that are refused before any command starts
// (a flag or a value given wrong) as Run would, but on one tree for each
// root Run would build (rootFor), not a new tree each: such a line changes
// nothing in the tree. Thousands of new trees, most of them whole (the
// root's flags, help, completion), took half a minute under -race. A line
// that starts its command fails the test.
func refuser(t *testing.T) func(args ...string) (code int, stdout, stderr string) {
	type tree struct {
		root      *cobra.Command
		started   *bool
		out, errb bytes.Buffer
	}
	trees := map[string]*tree{}
	return func(args ...string) (int, string, string) {
		t.Helper()
		only := rootFor(args)
		tr := trees[only]
		if tr == nil {
			tr = &tree{}
			tr.root, tr.started = newRootFor(&tr.out, &tr.errb, only)
			trees[only] = tr
		}
		tr.out.Reset()
		tr.errb.Reset()
		code := execute(t.Context(), tr.root, tr.started, args, &tr.errb)
		if *tr.started {
			t.Fatalf("rewind %s: the command started", strings.Join(args, " "))
		}
		return code, tr.out.String(), tr.errb.String()
	}
}

// commands is every command of the tree with its words after `rewind`,
// cobra's own completion requests aside.
func commands() map[string]*cobra.Command {
	root, _ := newRoot(&bytes.Buffer{}, &bytes.Buffer{})
	all := map[string]*cobra.Command{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if strings.HasPrefix(c.Name(), "__") {
			return
		}
		all[strings.TrimPrefix(strings.TrimPrefix(c.CommandPath(), "rewind"), " ")] = c
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return all
}

// Each command declares only its own flags: every flag any other command
// has is refused with the usage exit code, and names the flag.
func TestEveryCommandRejectsFlagsNotItsOwn(t *testing.T) {
	t.Parallel()
	all := commands()
	flags := map[string]bool{}
	for _, c := range all {
		c.Flags().VisitAll(func(f *pflag.Flag) { flags[f.Name] = true })
	}
	names := slices.Sorted(maps.Keys(flags))
	if len(names) < 20 {
		t.Fatalf("only %d flags in the tree: %v", len(names), names)
	}
	refuse := refuser(t)
	tried := 0
	for path, c := range all {
		for _, name := range names {
			if c.Flags().Lookup(name) != nil {
				continue
			}
			args := append(strings.Fields(path), "--"+name)
			code, _, stderr := refuse(args...)
			if code != ExitUsage || !strings.Contains(stderr, "flag provided but not defined: --"+name) || strings.Count(stderr, "\n") != 1 {
				t.Errorf("rewind %s: exit %d, want %d with one line naming the flag; stderr %q", strings.Join(args, " "), code, ExitUsage, stderr)
			}
			tried++
		}
	}
	if tried < 100 {
		t.Fatalf("only %d foreign flags tried", tried)
	}
	// The issue's own example, spelled out, through Run.
	if code, _, stderr := run(t, "threads", "--draft"); code != ExitUsage {
		t.Errorf("rewind threads --draft: exit %d (%s), want %d", code, stderr, ExitUsage)
	}
}

// A command's own flags are accepted where they apply: the flags a worker
// gets from the TUI and the drills parse.
func TestSharedFlagsApplyWhereTheyShould(t *testing.T) {
	all := commands()
	for path, want := range map[string][]string{
		"":              {"store", "theme", "thread", "provider", "mock-latency", "mock-fail", "record", "replay", "interrupt-before", "interrupt-after", "auth-ttl", "no-mouse", "version"},
		"tui":           {"store", "theme", "thread", "provider", "mock-latency", "mock-fail", "record", "replay", "interrupt-before", "interrupt-after", "auth-ttl", "no-mouse"},
		"run":           {"store", "json", "provider", "mock-latency", "mock-fail", "record", "replay", "thread", "input", "attach", "draft", "auth-ttl", "interrupt-before", "interrupt-after", "kill-at", "take-over"},
		"resume":        {"store", "json", "provider", "mock-latency", "kill-at", "take-over", "interrupt-before", "plan"},
		"fork":          {"store", "json", "provider", "input", "attach", "draft", "auth-ttl", "kill-at"},
		"approve":       {"store", "json", "provider", "kill-at"},
		"reject":        {"store", "json", "provider", "kill-at", "reason"},
		"log":           {"store", "json"},
		"show":          {"store", "json", "message"},
		"events":        {"store", "json"},
		"threads":       {"store", "json"},
		"rm":            {"store", "json"},
		"rekey":         {"store", "json", "key-file", "old-key-file"},
		"discard":       {"store", "json"},
		"prune":         {"store", "json", "keep-last", "older-than", "all", "dry-run"},
		"bench":         {"store", "json", "turns", "inline-bytes"},
		"drill":         {"store", "json", "kill-at", "mock-latency"},
		"selftest":      {"store", "json"},
		"worker run":    {"store", "thread", "input", "attach", "draft", "auth-ttl", "kill-at", "mock-latency", "interrupt-before", "take-over"},
		"worker resume": {"store", "kill-at", "mock-latency", "take-over"},
		"worker fork":   {"store", "input", "kill-at"},
		"worker reject": {"store", "reason", "kill-at"},
	} {
		c := all[path]
		if c == nil {
			t.Errorf("no command %q", path)
			continue
		}
		for _, name := range want {
			if c.Flags().Lookup(name) == nil {
				t.Errorf("rewind %s has no --%s", path, name)
			}
		}
	}
}

// Every public command explains itself: --help exits 0 with its usage and
// examples.
func TestEveryCommandHasHelpWithExamples(t *testing.T) {
	for path, c := range commands() {
		args := append(strings.Fields(path), "--help")
		code, stdout, stderr := run(t, args...)
		if code != ExitOK || stderr != "" {
			t.Errorf("rewind %s: exit %d, stderr %q", strings.Join(args, " "), code, stderr)
			continue
		}
		public := c.IsAvailableCommand() && c.HasParent() && !c.Parent().HasParent() && c.Name() != "help"
		if public && (!strings.Contains(stdout, "Usage:\n  rewind "+c.Name()) || !strings.Contains(stdout, "Examples:\n")) {
			t.Errorf("rewind %s --help lacks usage or examples:\n%s", path, stdout)
		}
	}
	if code, stdout, _ := run(t, "log", "--help"); code != ExitOK || !strings.Contains(stdout, "rewind log T [flags]") {
		t.Errorf("rewind log --help: exit %d\n%s", code, stdout)
	}
}

func TestUsageErrorsExit2(t *testing.T) {
	for _, args := range [][]string{
		{"frobnicate"}, {"lgo"}, {"log"}, {"log", "a", "b"}, {"threads", "x"}, {"tui", "a", "b"},
		{"completion"}, {"completion", "tcsh"}, {"worker"}, {"worker", "explode"}, {"man"},
		{"run", "--thread", "t", "--input", "hi", "--auth-ttl", "1h"},
		{"run", "--thread", "t", "--input", "hi", "--kill-at", "nowhere"},
		{"drill", "--store", "memory:"},
	} {
		code, _, stderr := run(t, args...)
		if code != ExitUsage || !strings.HasPrefix(stderr, "rewind: ") || strings.Count(stderr, "\n") != 1 {
			t.Errorf("rewind %s: exit %d, stderr %q; want 2 and one line", strings.Join(args, " "), code, stderr)
		}
	}
	if _, _, stderr := run(t, "lgo"); !strings.Contains(stderr, `did you mean "log"`) {
		t.Errorf("no suggestion for a typo: %q", stderr)
	}
}

func TestVersionAndCompletion(t *testing.T) {
	code, stdout, _ := run(t, "--version")
	if code != ExitOK || !strings.HasPrefix(stdout, "rewind ") || !strings.Contains(stdout, "revision") {
		t.Errorf("--version: exit %d %q", code, stdout)
	}
	for _, sh := range []string{"bash", "zsh", "fish"} {
		code, stdout, stderr := run(t, "completion", sh)
		if code != ExitOK || !strings.Contains(stdout, "rewind") || len(stdout) < 1000 {
			t.Errorf("completion %s: exit %d, %d bytes, %s", sh, code, len(stdout), stderr)
		}
	}
}

// `rewind man DIR` writes a page per visible command, the hidden worker
// not among them.
func TestManPages(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "man1")
	if code, _, stderr := run(t, "man", dir); code != ExitOK {
		t.Fatalf("man: %d %s", code, stderr)
	}
	for _, page := range []string{"rewind.1", "rewind-log.1", "rewind-run.1", "rewind-prune.1", "rewind-completion-bash.1"} {
		b, err := os.ReadFile(filepath.Join(dir, page))
		if err != nil {
			t.Errorf("%s: %v", page, err)
			continue
		}
		if !bytes.Contains(b, []byte(".TH \"REWIND\"")) {
			t.Errorf("%s is not a man page:\n%.200s", page, b)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "rewind-log.1")); !bytes.Contains(b, []byte(`\fB--store\fP`)) {
		t.Errorf("rewind-log.1 does not document --store")
	}
	// Plain text stays whole: a Markdown reader took <task id> for HTML
	// and dropped it.
	if b, _ := os.ReadFile(filepath.Join(dir, "rewind-log.1")); !bytes.Contains(b, []byte("review:<task id>")) {
		t.Errorf("rewind-log.1 lost the <task id> of --ns's usage")
	}
	if matches, _ := filepath.Glob(filepath.Join(dir, "rewind-worker*")); len(matches) > 0 {
		t.Errorf("man pages for the hidden worker: %v", matches)
	}
}

func TestDescribeBuild(t *testing.T) {
	bi := &debug.BuildInfo{Main: debug.Module{Version: "v0.3.0"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "3905483c0ffee1234567890abcdef"}, {Key: "vcs.time", Value: "2026-09-01T10:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	if got, want := describeBuild(bi), "v0.3.0, revision 3905483c0ffe of 2026-09-01T10:00:00Z, with uncommitted changes"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := describeBuild(&debug.BuildInfo{}); got != "(devel), revision unknown (built without VCS stamping)" {
		t.Errorf("unstamped build: %q", got)
	}
}

// --interrupt-before's help names every node of the graph a run can pause
// at: it listed them without verify.
func TestInterruptHelpNamesEveryNode(t *testing.T) {
	nodes := ticket.NewGraph().Nodes()
	for path, c := range commands() {
		f := c.Flags().Lookup("interrupt-before")
		if f == nil {
			continue
		}
		for _, n := range nodes {
			if !strings.Contains(f.Usage, n) {
				t.Errorf("rewind %s --interrupt-before's help %q lacks node %s", path, f.Usage, n)
			}
		}
	}
	if !slices.Equal(slices.Sorted(slices.Values(ticket.Nodes)), nodes) {
		t.Errorf("ticket.Nodes = %v; the graph's are %v", ticket.Nodes, nodes)
	}
}

// Run builds only the command a command line names: what the line prints
// and its exit code are those of the whole tree's, for every command.
func TestOneCommandRootIsTheWhole(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	for _, c := range commandTable {
		if c.name == "man" {
			if rootFor([]string{"man", t.TempDir()}) != "" {
				t.Error("rewind man, which writes every command's page, builds a root of one command")
			}
			continue
		}
		for _, args := range [][]string{{c.name, "--help"}, {c.name, "--no-such-flag"}, {c.name, "-h", "--store", "memory:"}} {
			if got := rootFor(args); got != c.name {
				t.Fatalf("rootFor(%q) = %q, want %q", args, got, c.name)
			}
			var wholeOut, wholeErr, oneOut, oneErr bytes.Buffer
			whole := runRoot(t.Context(), args, &wholeOut, &wholeErr, "")
			one := runRoot(t.Context(), args, &oneOut, &oneErr, c.name)
			if whole != one || wholeOut.String() != oneOut.String() || wholeErr.String() != oneErr.String() {
				t.Errorf("rewind %s: alone exit %d, %q %q; in the whole tree exit %d, %q %q",
					strings.Join(args, " "), one, clipText(oneOut.String()), oneErr.String(), whole, clipText(wholeOut.String()), wholeErr.String())
			}
		}
	}
	if rootFor([]string{"--store", "memory:", "log"}) != "" || rootFor(nil) != "" || rootFor([]string{"lgo"}) != "" || rootFor([]string{"--version", "log"}) != "" {
		t.Error("a command line that does not begin with a command's name builds a root of one command")
	}
	// --version alone builds no command, and prints what the whole tree does.
	for _, args := range [][]string{{"--version"}, {"-v"}} {
		if got := rootFor(args); got != rootAlone {
			t.Fatalf("rootFor(%q) = %q, want the root alone", args, got)
		}
		var wholeOut, wholeErr, aloneOut, aloneErr bytes.Buffer
		whole := runRoot(t.Context(), args, &wholeOut, &wholeErr, "")
		alone := runRoot(t.Context(), args, &aloneOut, &aloneErr, rootAlone)
		if whole != alone || wholeOut.String() != aloneOut.String() || wholeErr.String() != aloneErr.String() || !strings.HasPrefix(aloneOut.String(), "rewind ") {
			t.Errorf("rewind %s: alone exit %d, %q %q; in the whole tree exit %d, %q %q", args[0], alone, aloneOut.String(), aloneErr.String(), whole, wholeOut.String(), wholeErr.String())
		}
	}
}

func clipText(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}
