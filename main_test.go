package main

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"rewind/cli/rewindbin"
)

// A run stopped by Ctrl-C or SIGTERM (main's context) ends as a failed
// run that says how to carry on, with the finished tasks' writes stored,
// and the resume it names finishes the turn; without main's signal
// handling the process dies mid-write and says nothing. This package
// sorts first, so its line is also the suite's first result.
func TestASignalStopsARunThatResumes(t *testing.T) {
	bin := rewindbin.Path(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(),
				"REWIND_STORE=sqlite:" + filepath.Join(t.TempDir(), "r.db")}
			cmd := exec.Command(bin, "run", "--thread", "c", "--input", "Where is the parcel for SO20260901 and can I get a refund?", "--mock-latency", "2s")
			cmd.Env = env
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			sc := bufio.NewScanner(stdout)
			for sc.Scan() && !strings.Contains(sc.Text(), "▸ executor") { // the fan-out's model calls are under way
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			for sc.Scan() {
			}
			err = cmd.Wait()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(stderr.String(), "carry on with `rewind resume c`") {
				t.Fatalf("the run after %v: %v, want exit 1 naming the resume\n%s", sig, err, stderr.String())
			}
			resume := exec.Command(bin, "resume", "c")
			resume.Env = env
			out, err := resume.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "done at checkpoint") {
				t.Fatalf("rewind resume c after %v: %v\n%s", sig, err, out)
			}
		})
	}
}
