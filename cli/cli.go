// Package cli is rewind's command line, on cobra. Each command lives in a
// file of its own (run.go for `rewind run`, …) and declares only the flags
// it uses; the groups several commands share (--store, --json, the model
// flags, the run flags) are in flags.go. Run is the entry main calls and
// the tests drive.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"rewind/cli/app"
	"rewind/engine/bench"
	"rewind/engine/drill"
	"rewind/engine/worker"
	"rewind/store/browse"
	"rewind/tui/termtext"
)

// Exit codes.
const (
	ExitOK    = 0
	ExitFail  = 1
	ExitUsage = 2 // a command, flag or argument given wrong
	// ExitNotKilled is a run that never reached its --kill-at point: it
	// ended whole, and a crash drill must not take it for a kill.
	ExitNotKilled = 3
)

// Run runs rewind with args (without the program's name), writes to stdout
// and stderr, and returns the exit code. Every error is one line on stderr,
// through the sanitizer: ids and inputs in it cannot act on the terminal.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	drill.MainIfWorker(buildDrilled) // a `rewind drill --graph` worker: exits
	code := runRoot(ctx, args, stdout, stderr, rootFor(args))
	if f := os.Getenv(peakRSSEnv); f != "" {
		// bench's commands (commandTimes): a child's rusage says the
		// peak of the process that started it, whose memory it shared
		// until exec.
		_ = os.WriteFile(f, []byte(strconv.FormatInt(bench.PeakRSS(), 10)), 0o600)
	}
	return code
}

// peakRSSEnv names the file a command writes its peak resident memory
// into as it ends, for `rewind bench`.
const peakRSSEnv = "REWIND_BENCH_PEAK_RSS"

// runRoot is Run on a root of only the command named only ("": all).
func runRoot(ctx context.Context, args []string, stdout, stderr io.Writer, only string) int {
	root, started := newRootFor(stdout, stderr, only)
	return execute(ctx, root, started, args, stderr)
}

// execute runs args on a root newRootFor built, writing errors to stderr
// (the root's), and returns the exit code.
func execute(ctx context.Context, root *cobra.Command, started *bool, args []string, stderr io.Writer) int {
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	code, msg := ExitFail, err.Error()
	var ue usageError
	var unreached *worker.UnreachedError
	switch {
	case errors.As(err, &unreached):
		code = ExitNotKilled
	case errors.As(err, &ue):
		code, msg = ExitUsage, ue.msg
	case errors.Is(err, app.ErrUsage), errors.Is(err, browse.ErrAmbiguous), !*started:
		// Cobra refuses a command line before any command starts (an
		// argument a built-in command does not know): that is usage too,
		// and so is an id prefix that names several (browse.Resolve).
		code = ExitUsage
	}
	fmt.Fprintf(stderr, "rewind: %s\n", termtext.Error(withFixes(msg, err)))
	return code
}

// usageError is a command line given wrong: exit 2, its text the message.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return usageError{fmt.Sprintf(format, a...)} }

// usageOf is err given as usage (exit 2), its line ending with what would
// fix it (withFixes), which the flattened usageError would lose.
func usageOf(err error) error { return usageError{withFixes(err.Error(), err)} }

// failedChecks ends a selftest whose checks ran and some failed.
type failedChecks struct{ failed, total int }

func (f failedChecks) Error() string {
	return fmt.Sprintf("selftest: %d of %d checks failed", f.failed, f.total)
}

// clipIn cuts a long value given on the command line short in a library's
// message, quoted or not, as store.Name cuts ids: an error stays one
// readable line.
func clipIn(msg, v string) string {
	if len(v) <= 64 {
		return msg
	}
	msg = strings.ReplaceAll(msg, strconv.Quote(v), fmt.Sprintf("%q", named(v)))
	return strings.ReplaceAll(msg, v, fmt.Sprintf("%s", named(v)))
}

// flagError words pflag's refusals the way rewind words errors: what is
// wrong, and where to look.
func flagError(c *cobra.Command, err error) error {
	msg := err.Error()
	var notExist *pflag.NotExistError
	var invalid *pflag.InvalidValueError
	var syntax *pflag.InvalidSyntaxError
	switch {
	case errors.As(err, &notExist):
		msg = clipIn(msg, notExist.GetSpecifiedName())
	case errors.As(err, &invalid):
		msg = clipIn(msg, invalid.GetValue())
	case errors.As(err, &syntax):
		msg = clipIn(msg, syntax.GetSpecifiedFlag())
	}
	if name, ok := strings.CutPrefix(msg, "unknown flag: "); ok {
		msg = "flag provided but not defined: " + name
	} else if rest, ok := strings.CutPrefix(msg, "unknown shorthand flag: "); ok {
		msg = "flag provided but not defined: " + rest
	}
	if c.HasParent() {
		msg = strings.TrimPrefix(c.CommandPath(), c.Root().Name()+" ") + ": " + msg
	}
	return usagef("%s (see `%s --help`)", msg, c.CommandPath())
}
