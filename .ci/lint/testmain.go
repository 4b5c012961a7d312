package main

import (
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// endsThroughRewindbin is a TestMain that ends through rewindbin.Main or
// rewindbin.Exit (in rewindbin's own tests, a bare Main(m)).
var endsThroughRewindbin = regexp.MustCompile(`(?s)func TestMain\(m \*testing\.M\).*?(rewindbin\.Main\(m\)|rewindbin\.Exit\(|[^.\w]Main\(m\))`)

// testMain checks AGENTS.md's rule that every package with tests has a
// TestMain that ends through rewindbin (Main or Exit): under -race a
// binary that ends through os.Exit sleeps a second as it passes, once a
// test binary, ~45 of them in `go test -race ./...`.
func testMain(args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("testmain", flag.ContinueOnError)
	flags.SetOutput(stderr)
	if err := flags.Parse(args); err != nil {
		return 2
	}
	root := "."
	if flags.NArg() > 0 {
		root = flags.Arg(0)
	}
	missing, n, err := packagesWithoutTestMain(root)
	if err != nil {
		fmt.Fprintf(stderr, "testmain: %v\n", err)
		return 2
	}
	if len(missing) > 0 {
		fmt.Fprintf(stderr, "testmain: %s: no TestMain that ends through rewindbin (AGENTS.md): add `func TestMain(m *testing.M) { rewindbin.Main(m) }`, or end yours with rewindbin.Exit(code)\n", strings.Join(missing, ", "))
		return 1
	}
	fmt.Fprintf(stdout, "testmain: %d packages with tests, each ends through rewindbin\n", n)
	return 0
}

// packagesWithoutTestMain walks root's module (not testdata, hidden
// folders or other modules) and returns the folders with _test.go files
// of which none holds such a TestMain, and how many have tests.
func packagesWithoutTestMain(root string) (missing []string, withTests int, err error) {
	has := map[string]bool{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			if path != root {
				if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		dir := filepath.Dir(path)
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		has[dir] = has[dir] || endsThroughRewindbin.Match(b)
		return nil
	})
	for dir, ok := range has {
		if !ok {
			rel, _ := filepath.Rel(root, dir)
			missing = append(missing, rel)
		}
	}
	slices.Sort(missing)
	return missing, len(has), err
}
