package cli

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"rewind/engine"
	"rewind/engine/model/openai"
	"rewind/engine/model/replay"
	"rewind/engine/seal"
	"rewind/engine/ticket"
	"rewind/store/browse"
)

// The engine's fixes end the CLI's line as commands to type, in the
// engine's order, with the thread as the CLI prints ids.
func TestFixesAreWordedAsCommands(t *testing.T) {
	pending := fmt.Errorf("run: %w", &engine.PendingError{Thread: "my thread", Checkpoint: 4})
	want := "run: thread \"my thread\" has 0 pending task(s) at checkpoint 4 (): carry on with `rewind resume \"my thread\"`, " +
		"branch from an earlier checkpoint with `rewind fork \"my thread\" CHECKPOINT --input …`, or drop the pending tasks with `rewind discard \"my thread\"`"
	if got := withFixes(pending.Error(), pending); got != want {
		t.Errorf("pending:\n got %s\nwant %s", got, want)
	}
	fork := &engine.FixError{Thread: "t", Err: fmt.Errorf("already continued"), Fix: []engine.Fix{{Action: engine.FixFork, Thread: "t", At: 7}}}
	if got := withFixes(fork.Error(), fork); got != "already continued: fork from @7 with `rewind fork t 7 --input …`" {
		t.Errorf("fork: %s", got)
	}
	if got := withFixes("boom", fmt.Errorf("boom")); got != "boom" {
		t.Errorf("no fixes: %s", got)
	}
}

// What a node said would fix a failed run or a blocked side effect is
// data (issue 35): the CLI words it after the stored reason, in the
// error, the run's report, show and threads; a reason stored before,
// which names its command itself, reads as it was.
func TestNodeFixesAreWordedAfterTheReason(t *testing.T) {
	failed := fmt.Errorf("resume: %w", &engine.RunFailedError{Thread: "t", Checkpoint: 9, Node: "verify", Reason: "verification failed for op-1",
		Fix: []engine.Fix{engine.ShowFix("t"), engine.NewTurnFix("t")}})
	want := "resume: thread \"t\": verify failed the run, recorded at @9: verification failed for op-1: see `rewind show t`, or start a new turn with `rewind run --thread t --input …`"
	if got := withFixes(failed.Error(), failed); got != want {
		t.Errorf("failed run:\n got %s\nwant %s", got, want)
	}
	blocked := engine.Result{Thread: "my thread", Blocked: []engine.Blocked{{Operation: "op-1", Node: "create_draft", Checkpoint: 4, Reason: "grant expired",
		Fix: []engine.Fix{{Action: engine.FixFreshGrant, Thread: "my thread"}}}}}.BlockedErr()
	want = `thread "my thread": create_draft did not perform operation op-1 (recorded at @4): grant expired: fork it under a fresh grant with ` +
		"`rewind fork \"my thread\" CHECKPOINT --input … --draft --auth-ttl D`"
	if got := withFixes(blocked.Error(), blocked); got != want {
		t.Errorf("blocked:\n got %s\nwant %s", got, want)
	}
	old := "verification failed for op-1; review it (`rewind show t`)"
	if got := reasonWithFixes(old, nil); got != old {
		t.Errorf("a reason stored before fixes reads %q", got)
	}
	if got := reasonWithFixes("source changed", []engine.Fix{engine.NewTurnFix("t")}); got != "source changed: start a new turn with `rewind run --thread t --input …`" {
		t.Errorf("a stored reason with its fix reads %q", got)
	}
}

// The engine's sub-packages refuse with data (issue 35): the CLI words
// each as its flag or command, at the end of the line, whatever wraps it.
func TestSubPackageRefusalsAreWordedAsFlags(t *testing.T) {
	cases := []struct {
		err  error
		want string
	}{
		{&seal.Error{KeyID: "k1"}, "encrypted with key k1: give its key file with --key-file (or $REWIND_KEY_FILE)"},
		{&seal.Error{KeyID: "k1", Have: "k2"}, "encrypted with key k1, not with k2: give the file that holds key k1 (--key-file or $REWIND_KEY_FILE)"},
		{&openai.Error{Role: "planner", Host: "h", Model: "m", What: "was refused", Hint: "the server does not accept this response_format", Mode: "schema", Weaker: "object"},
			"planner call to h (model m) was refused: the server does not accept this response_format: leave --json-mode out to let rewind fall back, or force a weaker mode with --json-mode object"},
		{&replay.MismatchError{File: "r.json", Role: "critic", Call: 3, RoleCall: 1, Diff: "the prompt differs"},
			"replay: model call 3 (critic call 1) is not in the recording r.json: the prompt differs: replay the run the recording was made from (same thread history and input), or record a new one with --record"},
		{&replay.FileError{Op: replay.Replay, Path: "x.json", Err: fmt.Errorf("%w (EOF)", replay.ErrFormat)}, "replay x.json: not a rewind recording (EOF): pass a file written by --record"},
		{&replay.FileError{Op: replay.Replay, Path: "v1.json", Err: fmt.Errorf("%w (format %q %w)", replay.ErrFormat, "v1", replay.ErrOldFormat)},
			`replay v1.json: not a rewind recording (format "v1" recorded before requests carried the conversation): record it again with --record`},
		{&replay.FileError{Op: replay.Record, Path: "x.json", Err: fmt.Errorf("it exists and is %w, so it is left alone: pick another file name", replay.ErrFormat)},
			"record to x.json: it exists and is not a rewind recording, so it is left alone: pick another file name"},
		{&ticket.WantError{Err: fmt.Errorf("reject on thread \"t\" needs a reason"), Want: ticket.WantReason}, "reject on thread \"t\" needs a reason: --reason TEXT"},
		{&ticket.WantError{Err: fmt.Errorf("nothing was approved"), Want: ticket.WantNoGrant}, "nothing was approved: approve without --auth-ttl"},
		{&ticket.WantError{Err: fmt.Errorf("nothing was approved"), Want: ticket.WantFreshDraft}, "nothing was approved: fork the thread with a fresh one (--draft --auth-ttl D)"},
		{&ticket.WantError{Err: fmt.Errorf("no grant"), Want: ticket.WantGrantTTL}, "no grant: give --auth-ttl D with D > 0"},
		{&ticket.WantError{Err: fmt.Errorf("budgetRemaining is required"), Want: ticket.WantBudget, Value: 5}, "budgetRemaining is required: e.g. --value 5"},
		{&ticket.WantError{Err: fmt.Errorf("put them back"), Want: ticket.WantFidelity}, "put them back: `rewind check fidelity` lists them"},
		{engine.ErrEmptyThread, "thread id is empty: name the thread, e.g. --thread ticket-1"},
		{&browse.NotFound{Chain: browse.Chain{Thread: "t"}, Checkpoint: "1f0"}, `checkpoint "1f0" not found in thread "t": list its checkpoints with ` + "`rewind log`"},
	}
	for _, c := range cases {
		err := fmt.Errorf("wrapped: %w", c.err)
		if got := withFixes(err.Error(), err); got != "wrapped: "+c.want {
			t.Errorf("%T:\n got %s\nwant wrapped: %s", c.err, got, c.want)
		}
	}
}

// engineWords are the words of the command line that a string literal of
// engine/ or store/ (not a test) may hold, each with why: the engine says
// what is wrong as data and the front ends word it (issue 35), so
// anything else naming a flag or a `rewind` command fails
// TestEngineMessagesNameNoCommandLine.
var engineWords = map[string]string{
	// The store's own description of a spec's durability setting, printed
	// by `rewind stores` and bench under that name.
	"store/backend/backend.go": "the --sqlite-sync setting by its name",
}

// TestEngineMessagesNameNoCommandLine fails when a string literal in
// engine/ or store/ non-test code holds one of the CLI's flags (--name)
// or `rewind COMMAND`, outside engineWords. A literal that is a flag
// alone ("--store", "--kill-at=") is an argument the drill gives the
// binary it runs, not a message.
func TestEngineMessagesNameNoCommandLine(t *testing.T) {
	words := commandLineWords(t)
	used := map[string]bool{}
	fset := token.NewFileSet()
	for _, dir := range []string{"../engine", "../store"} {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			rel := strings.TrimPrefix(filepath.ToSlash(path), "../")
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			for _, lit := range stringLiterals(f) {
				says := words.in(lit.text)
				if _, ok := engineWords[rel]; ok && len(says) > 0 {
					used[rel] = true
				} else if len(says) > 0 {
					t.Errorf("%s: %q names %s: say what is wrong as data (a typed error, engine.Fix, a Want) and word it in cli/fixes.go", fset.Position(lit.pos), lit.text, strings.Join(says, ", "))
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for file := range engineWords {
		if !used[file] {
			t.Errorf("engineWords allows %s, which names no flag or command now: take it out", file)
		}
	}
}

// cliWords are the command tree's flags and commands.
type cliWords struct{ flags, commands map[string]bool }

var (
	flagRe = regexp.MustCompile(`--([a-z][a-z0-9-]*)`)
	cmdRe  = regexp.MustCompile(`\brewind ([a-z]+)\b`)
	argvRe = regexp.MustCompile(`^--[a-z0-9-]+=?$`)
)

func commandLineWords(t *testing.T) cliWords {
	root, _ := newRootFor(io.Discard, io.Discard, "")
	w := cliWords{map[string]bool{}, map[string]bool{}}
	for _, c := range root.Commands() {
		w.commands[c.Name()] = true
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) { w.flags[f.Name] = true })
		c.PersistentFlags().VisitAll(func(f *pflag.Flag) { w.flags[f.Name] = true })
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
	if !w.flags["key-file"] || !w.commands["show"] {
		t.Fatalf("the command tree lacks --key-file or show: %d flags, %d commands", len(w.flags), len(w.commands))
	}
	return w
}

// in are the flags and commands s names; none when s is a flag alone.
func (w cliWords) in(s string) []string {
	if argvRe.MatchString(s) {
		return nil
	}
	var says []string
	for _, m := range flagRe.FindAllStringSubmatch(s, -1) {
		if w.flags[m[1]] {
			says = append(says, "--"+m[1])
		}
	}
	for _, m := range cmdRe.FindAllStringSubmatch(s, -1) {
		if w.commands[m[1]] {
			says = append(says, "rewind "+m[1])
		}
	}
	return says
}

type literal struct {
	pos  token.Pos
	text string
}

// stringLiterals are f's string literals, unquoted.
func stringLiterals(f *ast.File) []literal {
	var out []literal
	ast.Inspect(f, func(n ast.Node) bool {
		if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			if s, err := strconv.Unquote(lit.Value); err == nil {
				out = append(out, literal{lit.Pos(), s})
			}
		}
		return true
	})
	return out
}
