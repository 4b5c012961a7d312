// Package rewindbin builds the rewind binary for the tests that drive it
// as a user would (the CLI's, the workers', the drills', the lessons' and
// the TUI's in tmux): one link a test process, into a folder of its own
// that TestMain removes.
package rewindbin

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"testing"
)

// Build links rewind (the module's main package) into a new temporary
// folder and returns the binary's path and what removes the folder.
func Build() (path string, remove func(), err error) {
	dir, err := os.MkdirTemp("", "rewind-bin-")
	if err != nil {
		return "", func() {}, err
	}
	remove = func() { _ = os.RemoveAll(dir) }
	path = filepath.Join(dir, "rewind")
	if out, err := exec.Command("go", "build", "-o", path, "rewind").CombinedOutput(); err != nil {
		remove()
		return "", func() {}, fmt.Errorf("go build rewind: %v\n%s", err, out)
	}
	return path, remove, nil
}

var built struct {
	once   sync.Once
	path   string
	remove func()
	err    error
}

// Path is the binary, built at the first call of the test process; a
// build that failed fails every test that asks.
func Path(t testing.TB) string {
	t.Helper()
	built.once.Do(func() { built.path, built.remove, built.err = Build() })
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.path
}

// Remove deletes what Path built, if it built: call it from TestMain once
// the tests ran.
func Remove() {
	if built.remove != nil {
		built.remove()
	}
}

// WaitMostly is for a TestMain whose parallel tests mostly wait (for the
// binary's processes, their fsyncs, tmux's frames): it runs twice as many
// at once as there are cores, unless -parallel says how many. Call it
// before m.Run.
func WaitMostly() {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		_ = flag.Set("test.parallel", strconv.Itoa(2*runtime.GOMAXPROCS(0)))
	}
}

// Cases runs each case as a subtest of t, all at once, inside t's own
// parallel slot, and returns when all have ended. As parallel subtests
// (t.Parallel) each would wait for a slot behind every test of the
// package not yet started, so a test's long cases (the CLI's reads on
// PostgreSQL in the binary's processes) ran last, alone, at the end of
// the package's run (issue 33). Only for cases that mostly wait on other
// processes: cases that are CPU in this process (cli.Run's LangGraph
// reads) took 3x as long 4 at once in one slot (103 s against 29-37 s,
// load 15-20).
func Cases[C any](t *testing.T, cases []C, name func(C) string, run func(*testing.T, C)) {
	t.Helper()
	var wg sync.WaitGroup
	for _, c := range cases {
		wg.Go(func() { t.Run(name(c), func(t *testing.T) { run(t, c) }) })
	}
	wg.Wait()
}
