package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"testing"

	"rewind/cli"
)

// batchEnv, when set, makes this test binary a batch child: it runs each
// command line of the file the variable names through cli.Run, as main
// does, one after another, and prints the results as JSON. Hundreds of bad
// inputs then cost a few processes, not a process each (a process's start
// was most of TestEveryCommandFailsOnOneLine's CPU: 785 of them).
const batchEnv = "REWIND_CLI_TEST_BATCH"

// batchResult is one command line's outcome in a batch child.
type batchResult struct {
	Code           int
	Stdout, Stderr string
}

// runBatchChild is TestMain in a batch child: it runs the batch and
// exits. In any other process it returns at once.
func runBatchChild() {
	path := os.Getenv(batchEnv)
	if path == "" {
		return
	}
	if err := batchChild(path); err != nil {
		fmt.Fprintln(os.Stderr, "batch child:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

func batchChild(path string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var cases [][]string
	if err := json.Unmarshal(raw, &cases); err != nil {
		return err
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
			return err
		}
		os.Setenv("HOME", caseHome)
		o, e, err := caseFiles(home, i)
		if err != nil {
			return err
		}
		os.Stdout, os.Stderr = o, e
		code := runCase(args, o, e)
		os.Stdout, os.Stderr = stdout, stderr
		r := batchResult{Code: code}
		r.Stdout, r.Stderr = readBack(o), readBack(e)
		if err := out.Encode(r); err != nil {
			return err
		}
	}
	return nil
}

func caseFiles(dir string, i int) (*os.File, *os.File, error) {
	o, err := os.Create(filepath.Join(dir, fmt.Sprintf("%d.out", i)))
	if err != nil {
		return nil, nil, err
	}
	e, err := os.Create(filepath.Join(dir, fmt.Sprintf("%d.err", i)))
	if err != nil {
		o.Close()
		return nil, nil, err
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

// inBatches runs each command line through cli.Run in batch children of
// this test binary (twice as many as cores, their lines shared out
// evenly), with env and a home of their own, and returns the results in
// the order given. Lines for which together gives the same non-empty key
// run in one child, one after another: two SQLite readers of one WAL file
// closing at once each leave its -wal and -shm behind (each sees the
// other still open), which a test of "nothing left beside the file"
// took for a command's doing. A child that fails (a crash, a data race,
// a command that exits the process) fails the test with its stderr.
func inBatches(t *testing.T, env []string, lines [][]string, together func([]string) string) []result {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	n := min(2*runtime.GOMAXPROCS(0), len(lines))
	results := make([]result, len(lines))
	var wg sync.WaitGroup
	errs := make([]error, n)
	batchOf, keyed, next := make([]int, len(lines)), map[string]int{}, 0
	for i, l := range lines {
		k := together(l)
		if b, ok := keyed[k]; ok && k != "" {
			batchOf[i] = b
			continue
		}
		batchOf[i], next = next, (next+1)%n
		keyed[k] = batchOf[i]
	}
	for b := range n {
		var mine [][]string
		var at []int
		for i := range lines {
			if batchOf[i] == b {
				mine = append(mine, lines[i])
				at = append(at, i)
			}
		}
		dir := t.TempDir()
		path := filepath.Join(dir, "cases.json")
		raw, _ := json.Marshal(mine)
		if err := os.WriteFile(path, raw, 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, batchEnv + "=" + path}, env...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := cmd.Run(); err != nil {
				errs[b] = fmt.Errorf("batch child %d: %v\n%s", b, err, errb.String())
				return
			}
			dec := json.NewDecoder(&out)
			for k, i := range at {
				var r batchResult
				if err := dec.Decode(&r); err != nil {
					errs[b] = fmt.Errorf("batch child %d: result %d of %d: %v\nstderr: %s", b, k, len(at), err, errb.String())
					return
				}
				results[i] = result{r.Code, r.Stdout, r.Stderr}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return results
}
