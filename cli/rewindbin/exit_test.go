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
	cases := []struct{ mode, says string }{{"pass", "PASS"}, {"fail", "failed on purpose"}}
	if raced {
		cases = append(cases, struct{ mode, says string }{"race", "race detected during execution of test"})
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
			want := 1
			if c.mode == "pass" {
				want = 0
			}
			if code != want || !strings.Contains(string(out), c.says) {
				t.Fatalf("a %s run ended %d, want %d, saying %q:\n%s", c.mode, code, want, c.says, out)
			}
		})
	}
}
