// Command batchchild is the batch child of cli's tests (inBatches,
// cli/batch_test.go): it runs each command line of the JSON file that
// REWIND_CLI_TEST_BATCH names through cli.Run, as main does, one after
// another, and prints each result as a JSON line. Built without -race
// (rewindbin.Tool), as rewind is: raced copies of the test binary were
// most of TestEveryCommandFailsOnOneLine's CPU, and cli.Run's code is
// raced in the test binary's own tests.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"rewind/cli"
)

// Env names the file of command lines (a JSON array of string arrays).
const Env = "REWIND_CLI_TEST_BATCH"

// result is one command line's outcome, as inBatches decodes it.
type result struct {
	Code           int
	Stdout, Stderr string
}

func main() {
	path := os.Getenv(Env)
	if path == "" {
		fmt.Fprintln(os.Stderr, "batch child: "+Env+" names no file of command lines; run it through cli's tests (inBatches)")
		os.Exit(1)
	}
	if err := batch(path); err != nil {
		fmt.Fprintln(os.Stderr, "batch child:", err)
		os.Exit(1)
	}
}

func batch(path string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("reading the command lines: %w", err)
	}
	var cases [][]string
	if err := json.Unmarshal(raw, &cases); err != nil {
		return fmt.Errorf("decoding the command lines of %s: %w", path, err)
	}
	out := json.NewEncoder(os.Stdout)
	stdout, stderr := os.Stdout, os.Stderr
	home := os.Getenv("HOME")
	env := os.Environ()
	for i, args := range cases {
		// The environment a process starts with (flags such as --tenant
		// set variables for the workers a command starts), and a home,
		// stdout and stderr of its own: what a command writes to
		// os.Stdout or os.Stderr directly is its output too.
		os.Clearenv()
		for _, kv := range env {
			k, v, _ := strings.Cut(kv, "=")
			os.Setenv(k, v)
		}
		caseHome := filepath.Join(home, fmt.Sprint(i))
		if err := os.Mkdir(caseHome, 0o700); err != nil {
			return fmt.Errorf("a home for line %d: %w", i, err)
		}
		os.Setenv("HOME", caseHome)
		o, e, err := caseFiles(home, i)
		if err != nil {
			return err
		}
		os.Stdout, os.Stderr = o, e
		code := runCase(args, o, e)
		os.Stdout, os.Stderr = stdout, stderr
		r := result{Code: code}
		r.Stdout, r.Stderr = readBack(o), readBack(e)
		if err := out.Encode(r); err != nil {
			return fmt.Errorf("writing line %d's result: %w", i, err)
		}
	}
	return nil
}

func caseFiles(dir string, i int) (*os.File, *os.File, error) {
	o, err := os.Create(filepath.Join(dir, fmt.Sprintf("%d.out", i)))
	if err != nil {
		return nil, nil, fmt.Errorf("line %d's stdout: %w", i, err)
	}
	e, err := os.Create(filepath.Join(dir, fmt.Sprintf("%d.err", i)))
	if err != nil {
		o.Close()
		return nil, nil, fmt.Errorf("line %d's stderr: %w", i, err)
	}
	return o, e, nil
}

func readBack(f *os.File) string {
	defer f.Close()
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return "reading the output back: " + err.Error()
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return "reading the output back: " + err.Error()
	}
	return string(b)
}

// runCase is main's body: a panic is printed as the runtime prints one,
// with exit 2, for the caller's "never panics" check.
func runCase(args []string, stdout, stderr io.Writer) (code int) {
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(stderr, "panic: %v\n\ngoroutine (recovered in the batch child)\n%s", p, debug.Stack())
			code = 2
		}
	}()
	return cli.Run(context.Background(), args, stdout, stderr)
}
