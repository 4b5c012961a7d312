package rewindbin

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// The helper child ends through Main, the code under test; this binary
// itself through os.Exit, so that a Main that lost a failure cannot also
// hide its own test's.
func TestMain(m *testing.M) {
	if os.Getenv(exitHelperEnv) != "" {
		Main(m)
	}
	os.Exit(m.Run())
}

const exitHelperEnv = "REWIND_EXIT_HELPER"

// TestExitHelper is the child TestMainKeepsTheOutcome runs: it passes,
// fails, or (under -race) races, as the environment says.
func TestExitHelper(t *testing.T) {
	switch os.Getenv(exitHelperEnv) {
	case "":
		t.Skip("run by TestMainKeepsTheOutcome")
	case "fail":
		t.Fatal("failed on purpose")
	case "race":
		var n int
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() { n++ })
		}
		wg.Wait()
		_ = n
	}
}

// A passing binary ends 0, and one with a failed test or a data race
// ends 1: Main's early exit under -race keeps the outcome `go test`
// reads from the code.
func TestMainKeepsTheOutcome(t *testing.T) {
	type outcome struct {
		mode, says string
		code       int
	}
	cases := []outcome{{"pass", "PASS", 0}, {"fail", "failed on purpose", 1}}
	if raced {
		cases = append(cases, outcome{"race", "race detected during execution of test", 1})
	}
	for _, c := range cases {
		t.Run(c.mode, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestExitHelper$", "-test.count=1")
			cmd.Env = append(os.Environ(), exitHelperEnv+"="+c.mode)
			out, err := cmd.CombinedOutput()
			code := 0
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				code = exit.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != c.code || !strings.Contains(string(out), c.says) {
				t.Fatalf("a %s run ended %d, want %d, saying %q:\n%s", c.mode, code, c.code, c.says, out)
			}
		})
	}
}
