package cli_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"rewind/cli/rewindbin"
)

// batchEnv names the file of command lines a batch child runs
// (cli/internal/batchchild): it runs each through cli.Run, as main does,
// one after another, and prints the results as JSON. Hundreds of bad
// inputs then cost a few processes, not a process each (a process's start
// was most of TestEveryCommandFailsOnOneLine's CPU: 785 of them).
const batchEnv = "REWIND_CLI_TEST_BATCH"

// batchResult is one command line's outcome in a batch child.
type batchResult struct {
	Code           int
	Stdout, Stderr string
}

// inBatches runs each command line through cli.Run in batch children
// (twice as many as cores, their lines shared out evenly), with env and a
// home of their own, and returns the results in the order given. A child
// is cli/internal/batchchild built without -race, as rewind is: raced
// copies of this test binary made it 14 s of CPU, 8 s now. Lines for which
// together gives the same non-empty key run in one child, one after
// another: two SQLite readers of one WAL file closing at once each leave
// its -wal and -shm behind (each sees the other still open), which a test
// of "nothing left beside the file" took for a command's doing. A child
// that fails (a crash, a command that exits the process) fails the test
// with its stderr.
func inBatches(t *testing.T, env []string, lines [][]string, together func([]string) string) []result {
	t.Helper()
	exe := rewindbin.Tool(t, "rewind/cli/internal/batchchild")
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
		cmd := exec.Command(exe)
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
