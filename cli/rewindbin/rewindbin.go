// Package rewindbin gives the tests that drive rewind as a user would (the
// CLI's, the workers', the drills', the lessons' and the TUI's in tmux)
// the binary: the go command's cached executable of the module's main
// package, so the packages of one `go test ./...` (and the runs after it,
// until the code changes) share one link instead of one link each.
package rewindbin

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// Build returns the path of the rewind binary of the code as it is now.
// `go run -exec=echo` prints the executable's path instead of running it:
// an executable it finds in the build cache (content-keyed: it changes
// with any file the binary is built from) is shared and outlives the
// test; the cache's own trimming removes it, never a test. The first link
// of new code is left in go run's work folder, removed as go run exits,
// and stored in the cache: the second call gives the cached one.
//
// Test binaries of one `go test ./...` call it at once (the CLI's and the
// lessons' TestMains start together); the go command does not share a
// build between processes, so each compiled and linked the same binary.
// A lock file makes them take turns: the first builds, the others find
// it cached.
func Build() (string, error) { return build("rewind") }

// build is Build of the main package pkg.
func build(pkg string) (string, error) {
	unlock, err := lockBuild()
	if err != nil {
		return "", err
	}
	defer unlock()
	for range 2 {
		cmd := exec.CommandContext(context.Background(), "go", "run", "-exec=echo", pkg)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return "", fmt.Errorf("go run -exec=echo %s: %w\n%s", pkg, err, stderr.Bytes())
		}
		path := string(bytes.TrimSpace(out))
		if _, err := os.Stat(path); err == nil {
			return path, nil
		} else if !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("the built %s binary %s: %w", pkg, path, err)
		}
	}
	return "", fmt.Errorf("go run -exec=echo %s printed a path gone twice: is GOCACHE off? (go env GOCACHE)", pkg)
}

// lockBuild takes an exclusive flock on a file of this user's in the
// temporary folder, shared by every checkout (a build is CPU either way);
// the kernel drops it if the process dies.
func lockBuild() (func(), error) {
	path := filepath.Join(os.TempDir(), fmt.Sprintf("rewind-build-%d.lock", os.Getuid()))
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open the build lock %s: %w (remove it if another user owns it)", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() { f.Close() }, nil // closing drops the flock
}

var built struct {
	once sync.Once
	path string
	err  error
}

// Path is the binary, looked up at the first call of the test process; a
// build that failed fails every test that asks.
func Path(t testing.TB) string {
	t.Helper()
	built.once.Do(func() { built.path, built.err = Build() })
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.path
}

// Tool is the binary of the module's main package pkg (an import path),
// built as Build builds rewind: without -race, whatever the test binary's
// flags. For a test's helper processes that are CPU (a raced copy of the
// test binary doing a store's writes was 7 times the CPU): build the
// code the test checks into them, as rewind does.
//
// A process asks the go command once a package: each ask was half a
// second of its CPU, cached or not, and a test that asks for each case
// (the read-only tests' copies) asked a dozen times.
func Tool(t testing.TB, pkg string) string {
	t.Helper()
	v, _ := tools.LoadOrStore(pkg, &tool{})
	tl := v.(*tool)
	tl.once.Do(func() { tl.path, tl.err = build(pkg) })
	if tl.err != nil {
		t.Fatal(tl.err)
	}
	return tl.path
}

// tools are the packages Tool built in this process, by import path.
var tools sync.Map

type tool struct {
	once sync.Once
	path string
	err  error
}

// TestBinary is the test binary of the module's package pkg (an import
// path) built without -race, for a test whose helper processes are that
// binary again (a worker its TestMain serves) and mostly CPU: raced, the
// graph drill's workers were 33 of its 35 s. It is built into a folder
// of this user's keyed by the module's directory, so a checkout's runs
// relink it only when the code changed (go build leaves an up-to-date
// output alone) and no other checkout's build replaces it mid-run.
func TestBinary(t testing.TB, pkg string) string {
	t.Helper()
	path, err := buildTest(pkg)
	if err != nil {
		t.Fatal(err)
	}
	return path
}

func buildTest(pkg string) (string, error) {
	unlock, err := lockBuild()
	if err != nil {
		return "", err
	}
	defer unlock()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		return "", fmt.Errorf("go list -m (the module's directory): %w", err)
	}
	sum := sha256.Sum256(bytes.TrimSpace(out))
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("rewind-tests-%d", os.Getuid()), hex.EncodeToString(sum[:8]))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("a folder for the test binary of %s: %w", pkg, err)
	}
	path := filepath.Join(dir, strings.ReplaceAll(pkg, "/", "_")+".test")
	cmd := exec.CommandContext(context.Background(), "go", "test", "-c", "-o", path, pkg)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go test -c %s: %w\n%s", pkg, err, stderr.Bytes())
	}
	return path, nil
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
