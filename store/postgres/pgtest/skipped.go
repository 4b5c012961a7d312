package pgtest

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// howTo is how a skipped PostgreSQL test is made to run.
const howTo = "REWIND_TEST_POSTGRES is unset; to run them: source .ci/pg.sh; pg_start"

// skipped names the tests of this test binary that skipped PostgreSQL
// (all of a test, or its PostgreSQL part), for Run's summary.
var skipped struct {
	sync.Mutex
	names []string
}

func noteSkipped(name string) {
	skipped.Lock()
	defer skipped.Unlock()
	skipped.names = append(skipped.names, name)
}

// Available says whether the test server is there for a test that also
// runs without it (its PostgreSQL part left out, and named in Run's
// summary); in CI its absence fails the test.
func Available(t testing.TB) bool {
	t.Helper()
	if os.Getenv("REWIND_TEST_POSTGRES") != "" {
		return true
	}
	if os.Getenv("CI") != "" {
		t.Fatal("CI must provide PostgreSQL: REWIND_TEST_POSTGRES is unset")
	}
	noteSkipped(t.Name() + " (its PostgreSQL part)")
	t.Log("REWIND_TEST_POSTGRES is unset: the PostgreSQL part is SKIPPED")
	return false
}

// Run is m.Run for a package with PostgreSQL tests: it drops the
// templates and pooled copies FreshFrom kept (see Template). When some were
// skipped, it says which, once, in one line. `go test ./...` shows a
// passing package's output only with -v, so without -v the line goes to
// the go command's own terminal or pipe (Linux), where it is seen.
func Run(m *testing.M) int {
	running.Store(true)
	code := m.Run()
	dropPools()
	disown()
	skipped.Lock()
	names := skipped.names
	skipped.Unlock()
	if len(names) == 0 {
		return code
	}
	line := fmt.Sprintf("%s: %d PostgreSQL test(s) SKIPPED (%s): %s\n", packagePath(), len(names), howTo, byTest(names))
	w, done := goOutput()
	io.WriteString(w, line)
	done()
	return code
}

// byTest lists names by their top-level test (a test that skipped once
// by its own name, TestX/postgres), with how many of its subtests skipped,
// in the order they skipped.
func byTest(names []string) string {
	var order []string
	count := map[string]int{}
	only := map[string]string{}
	for _, n := range names {
		top, _, _ := strings.Cut(n, "/")
		if count[top] == 0 {
			order = append(order, top)
		}
		count[top]++
		only[top] = n
	}
	for i, top := range order {
		if count[top] > 1 {
			order[i] = fmt.Sprintf("%s (%d)", top, count[top])
		} else {
			order[i] = only[top]
		}
	}
	// One line a terminal can show: the first of many, then how many more.
	for n := len(order); ; n-- {
		if list := strings.Join(order[:n], ", "); len(list) <= 300 || n == 1 {
			if n < len(order) {
				list += fmt.Sprintf(" and %d more (-v names each)", len(order)-n)
			}
			return list
		}
	}
}

// goOutput is where a line is seen: this process's stderr under -v (or
// -json) and when not started by the go command; else the go command's
// stderr when it is a terminal or a pipe (a file's offset is the go
// command's own: a line appended there would be written over).
func goOutput() (io.Writer, func()) {
	if testing.Verbose() {
		return os.Stderr, func() {}
	}
	ppid := os.Getppid()
	if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", ppid)); err != nil || filepath.Base(exe) != "go" {
		return os.Stderr, func() {}
	}
	f, err := os.OpenFile(fmt.Sprintf("/proc/%d/fd/2", ppid), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return os.Stderr, func() {}
	}
	if fi, err := f.Stat(); err != nil || fi.Mode()&(os.ModeNamedPipe|os.ModeCharDevice) == 0 {
		f.Close()
		return os.Stderr, func() {}
	}
	return f, func() { f.Close() }
}

// packagePath is the import path of the package under test (go test runs
// its binary in the package's directory).
func packagePath() string {
	dir, err := os.Getwd()
	if err != nil {
		return filepath.Base(os.Args[0])
	}
	for root := dir; ; {
		if f, err := os.Open(filepath.Join(root, "go.mod")); err == nil {
			defer f.Close()
			s := bufio.NewScanner(f)
			for s.Scan() {
				if mod, ok := strings.CutPrefix(strings.TrimSpace(s.Text()), "module "); ok {
					rel, _ := filepath.Rel(root, dir)
					return filepath.ToSlash(filepath.Join(strings.TrimSpace(mod), rel))
				}
			}
			return dir
		}
		parent := filepath.Dir(root)
		if parent == root {
			return dir
		}
		root = parent
	}
}
