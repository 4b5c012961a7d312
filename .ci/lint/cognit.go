package main

import (
	"bufio"
	"cmp"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/uudashr/gocognit"
)

// cognit checks every function's cognitive complexity (gocognit's score)
// under the root against the baseline file: its `threshold N` line, then
// one line per function over it, `SCORE DIR PKG.FUNC`. A function over
// the threshold that is not listed fails, and so does a listed one whose
// score grew, so new code meets the threshold; a listed one that shrank,
// fell under the threshold or is gone fails too until its line is
// lowered or removed (-update rewrites the file), so the list only
// shrinks. `//gocognit:ignore` is not honoured: the baseline is the only
// exception. Tests count: a test is code someone has to read.
func cognit(args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("cognit", flag.ContinueOnError)
	flags.SetOutput(stderr)
	baseline := flags.String("baseline", ".ci/lint/cognit.txt", "the baseline file")
	update := flags.Bool("update", false, "rewrite the baseline with today's offenders")
	if err := flags.Parse(args); err != nil {
		return 2
	}
	root := "."
	if flags.NArg() > 0 {
		root = flags.Arg(0)
	}
	threshold, listed, err := readBaseline(*baseline)
	if err != nil {
		fmt.Fprintf(stderr, "cognit: %v\n", err)
		return 2
	}
	found, err := scores(root)
	if err != nil {
		fmt.Fprintf(stderr, "cognit: %v\n", err)
		return 2
	}
	over := map[string]score{}
	for _, s := range found {
		if s.n > threshold {
			over[s.key] = s
		}
	}
	var grown, shrunk []string
	for _, s := range sorted(over) {
		allowed, ok := listed[s.key]
		switch {
		case !ok:
			grown = append(grown, fmt.Sprintf("%s: %s: cognitive complexity %d, over %d: split it", s.pos, s.fn, s.n, threshold))
		case s.n > allowed:
			grown = append(grown, fmt.Sprintf("%s: %s: cognitive complexity %d, the baseline allows %d: bring it back to %d or below", s.pos, s.fn, s.n, allowed, allowed))
		}
	}
	now := map[string]int{}
	for _, s := range found {
		now[s.key] = s.n
	}
	for _, key := range slices.Sorted(maps.Keys(listed)) {
		n, ok := now[key]
		switch {
		case !ok:
			shrunk = append(shrunk, fmt.Sprintf("%s: %s is gone: remove its line (lint.sh -update)", *baseline, key))
		case n < listed[key]:
			shrunk = append(shrunk, fmt.Sprintf("%s: %s is down to %d from %d: lower its line (lint.sh -update)", *baseline, key, n, listed[key]))
		}
	}
	// -update only lowers and removes lines (or writes the first list):
	// a function that is new over the threshold or grew still fails.
	if *update && (len(grown) == 0 || len(listed) == 0) {
		if err := writeBaseline(*baseline, threshold, over); err != nil {
			fmt.Fprintf(stderr, "cognit: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "cognit: %s lists %d functions over %d\n", *baseline, len(over), threshold)
		return 0
	}
	for _, b := range append(grown, shrunk...) {
		fmt.Fprintln(stderr, b)
	}
	if len(grown)+len(shrunk) > 0 {
		return 1
	}
	fmt.Fprintf(stdout, "cognit: %d functions, %d over %d, none new or grown\n", len(found), len(over), threshold)
	return 0
}

type score struct {
	key string // DIR PKG.FUNC: a function moved within its package keeps it
	fn  string
	pos token.Position
	n   int
}

// scores is the cognitive complexity of every function in the Go files
// under root, but for directories the go command ignores (., _, testdata).
func scores(root string) ([]score, error) {
	fset := token.NewFileSet()
	pkgs := map[[2]string][]*ast.File{} // by directory and package name
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		dir, _ := filepath.Rel(root, filepath.Dir(path))
		k := [2]string{filepath.ToSlash(dir), f.Name.Name}
		pkgs[k] = append(pkgs[k], f)
		return nil
	})
	if err != nil {
		return nil, err
	}
	var out []score
	for k, files := range pkgs {
		recursive := gocognit.RecursiveFuncs(files, nil)
		for _, f := range files {
			for _, d := range f.Decls {
				fn, ok := d.(*ast.FuncDecl)
				if !ok || fn.Body == nil {
					continue
				}
				name := funcName(fn)
				out = append(out, score{
					key: k[0] + " " + k[1] + "." + name,
					fn:  name,
					pos: fset.Position(fn.Pos()),
					n:   gocognit.ScanComplexityWithRecursion(fn, recursive[fn], false).Complexity,
				})
			}
		}
	}
	return out, nil
}

// funcName is gocognit's: Name, or (T).Name / (*T).Name for a method.
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	t := fn.Recv.List[0].Type
	star := ""
	if s, ok := t.(*ast.StarExpr); ok {
		star, t = "*", s.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	id, _ := t.(*ast.Ident)
	if id == nil {
		return fn.Name.Name
	}
	return "(" + star + id.Name + ")." + fn.Name.Name
}

func readBaseline(path string) (threshold int, listed map[string]int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, nil, fmt.Errorf("read the baseline: %w", err)
	}
	defer f.Close()
	listed = map[string]int{}
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		fields := strings.Fields(text)
		if len(fields) == 2 && fields[0] == "threshold" {
			if threshold, err = strconv.Atoi(fields[1]); err != nil || threshold < 1 {
				return 0, nil, fmt.Errorf("%s:%d: want `threshold N`, N ≥ 1", path, line)
			}
			continue
		}
		n, err := strconv.Atoi(fields[0])
		if len(fields) != 3 || err != nil {
			return 0, nil, fmt.Errorf("%s:%d: want `SCORE DIR PKG.FUNC`", path, line)
		}
		listed[fields[1]+" "+fields[2]] = n
	}
	if err := sc.Err(); err != nil {
		return 0, nil, fmt.Errorf("read the baseline: %w", err)
	}
	if threshold == 0 {
		return 0, nil, errors.New(path + ": no `threshold N` line")
	}
	return threshold, listed, nil
}

func writeBaseline(path string, threshold int, over map[string]score) error {
	var b strings.Builder
	b.WriteString(baselineHeader)
	fmt.Fprintf(&b, "threshold %d\n", threshold)
	for _, s := range sorted(over) {
		fmt.Fprintf(&b, "%d %s\n", s.n, s.key)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

const baselineHeader = `# Cognitive complexity (gocognit) gate: every function scores at most
# the threshold, but for those listed, each at most its score. The list
# only shrinks: lower a line when its function gets simpler, remove it
# when it drops under the threshold. .ci/lint/lint.sh runs the gate;
# .ci/lint/lint.sh -update rewrites this file (check the diff only
# lowers and removes).
`

func sorted(m map[string]score) []score {
	out := make([]score, 0, len(m))
	for _, s := range m {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b score) int { return cmp.Compare(a.key, b.key) })
	return out
}
