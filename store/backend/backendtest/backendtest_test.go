package backendtest_test

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"rewind/cli/rewindbin"
	"rewind/store"
	"rewind/store/backend"
	"rewind/store/backend/backendtest"
	"rewind/store/postgres/pgtest"
)

// TestMain drops the migrated template and the pooled copies of it.
func TestMain(m *testing.M) { rewindbin.Exit(pgtest.Run(m)) }

// A backend store/backend opens that All lacks would get none of the
// suites that run on every store: All holds every one of backend.Kinds,
// each under its name.
func TestAllIsEveryKind(t *testing.T) {
	var names []string
	for _, b := range backendtest.All {
		names = append(names, b.Name)
	}
	if !slices.Equal(names, backend.Kinds) {
		t.Fatalf("backendtest.All is %v, store/backend opens %v: add the missing one to All", names, backend.Kinds)
	}
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		spec := b.Spec(t, "kinds")
		if k := backend.Kind(spec); k != b.Name {
			t.Fatalf("%s's spec %q is a %q store to store/backend", b.Name, spec, k)
		}
		reopen := b.Reopener(t, "kinds")
		if err := reopen().PutCheckpoint(context.Background(), checkpoint(), nil); err != nil {
			t.Fatal(err)
		}
		if _, err := reopen().Get(context.Background(), "t", 1); err != nil {
			t.Fatalf("a new handle does not see what the first wrote: %v", err)
		}
	})
}

// A test that names the stores itself (t.Run("sqlite", …), a list or map
// of them, a switch on their names) is how a new backend silently loses
// coverage: every test outside the stores' own packages ranges over
// backendtest.All instead. What a store's own package tests is its own,
// and so is a line marked `// backendtest:own: why` (a case of one store
// only, such as its own bad specs).
func TestNoHelperListsItsOwnStores(t *testing.T) {
	root := moduleRoot(t)
	kinds := map[string]bool{}
	for _, k := range backend.Kinds {
		kinds[strconv.Quote(k)] = true
	}
	var found []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || rel == "store") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution|parser.ParseComments)
		if err != nil {
			return err
		}
		own := map[int]bool{} // lines marked backendtest:own
		for _, g := range f.Comments {
			for _, c := range g.List {
				if strings.Contains(c.Text, "backendtest:own") {
					own[fset.Position(c.Pos()).Line] = true
				}
			}
		}
		for _, lit := range storeNames(f, kinds) {
			if pos := fset.Position(lit.Pos()); !own[pos.Line] {
				found = append(found, pos.String()+": "+lit.Value)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) > 0 {
		t.Errorf("these tests name the stores themselves; range over backendtest.All (Each, EachShared) instead:\n%s", strings.Join(found, "\n"))
	}
}

// storeNames are the string literals naming a backend that f uses as a
// subtest's name, an element or key of a list or map, a case's name
// field, or a switch case.
func storeNames(f *ast.File, kinds map[string]bool) []*ast.BasicLit {
	var out []*ast.BasicLit
	add := func(e ast.Expr) {
		if lit, ok := e.(*ast.BasicLit); ok && lit.Kind == token.STRING && kinds[lit.Value] {
			out = append(out, lit)
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Run" && len(n.Args) > 0 {
				add(n.Args[0])
			}
		case *ast.CompositeLit:
			for _, e := range n.Elts {
				if kv, ok := e.(*ast.KeyValueExpr); ok {
					add(kv.Key) // a map's key; a struct's field is an identifier
					if id, ok := kv.Key.(*ast.Ident); ok && strings.EqualFold(id.Name, "name") {
						add(kv.Value) // a case's name
					}
					continue
				}
				add(e)
			}
		case *ast.CaseClause:
			for _, e := range n.List {
				add(e)
			}
		}
		return true
	})
	return out
}

func moduleRoot(t *testing.T) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

func checkpoint() store.Checkpoint {
	return store.Checkpoint{ThreadID: "t", ID: 1, State: []byte(`{"v":1}`), Base: true}
}
