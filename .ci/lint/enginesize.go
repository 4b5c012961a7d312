package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// engineSize checks AGENTS.md's rule that the engine package (the graph
// runtime: the non-test .go files directly in engine/, not its
// sub-packages) stays at or under max lines, counted as `wc -l` does, so a
// concern that grows moves out into a sub-package instead.
func engineSize(args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("enginesize", flag.ContinueOnError)
	flags.SetOutput(stderr)
	limit := flags.Int("max", 6000, "the most lines engine/'s non-test files may total")
	if err := flags.Parse(args); err != nil {
		return 2
	}
	dir := "engine"
	if flags.NArg() > 0 {
		dir = flags.Arg(0)
	}
	n, err := packageLines(dir)
	if err != nil {
		fmt.Fprintf(stderr, "enginesize: %v\n", err)
		return 2
	}
	if n > *limit {
		fmt.Fprintf(stderr, "enginesize: %s/*.go (non-test) is %d lines, over the %d of AGENTS.md's rule (engine is the graph runtime): move a concern out whole into a sub-package\n", dir, n, *limit)
		return 1
	}
	fmt.Fprintf(stdout, "enginesize: %s/*.go (non-test) is %d lines (at most %d)\n", dir, n, *limit)
	return 0
}

// packageLines is the newline count of dir's non-test .go files.
func packageLines(dir string) (int, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range ents {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return 0, err
		}
		n += bytes.Count(b, []byte{'\n'})
	}
	return n, nil
}
