package tui

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// components are the root's fields that hold a component (AGENTS.md: the
// component contract). The root calls their methods; it never assigns
// their parts, so what a component holds changes only where it is kept.
var components = map[string]bool{
	"timeline": true, "live": true, "content": true, "composer": true, "threads": true,
	"pager": true, "status": true, "lessons": true, "script": true,
}

func TestTheRootNeverAssignsAComponentsFields(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var found []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil || !isRootMethod(fn) {
				continue
			}
			recv := fn.Recv.List[0].Names[0].Name
			check := func(lhs ast.Expr, whole bool) {
				if c := componentPart(lhs, recv, whole); c != "" {
					found = append(found, fset.Position(lhs.Pos()).String()+": "+c)
				}
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				switch s := n.(type) {
				case *ast.AssignStmt:
					for _, l := range s.Lhs {
						check(l, false)
					}
				case *ast.IncDecStmt:
					check(s.X, false)
				case *ast.UnaryExpr: // p := &m.timeline: an alias to assign through
					if s.Op == token.AND {
						check(s.X, true)
					}
				}
				return true
			})
		}
	}
	if len(found) > 0 {
		t.Fatalf("the root assigns a component's fields (call a method of the component instead):\n%s", strings.Join(found, "\n"))
	}
}

// isRootMethod says whether fn is a method of *Model with a named receiver.
func isRootMethod(fn *ast.FuncDecl) bool {
	if fn.Recv == nil || len(fn.Recv.List) != 1 || len(fn.Recv.List[0].Names) != 1 {
		return false
	}
	star, ok := fn.Recv.List[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	id, ok := star.X.(*ast.Ident)
	return ok && id.Name == "Model"
}

// componentPart is "live.starting" when e assigns into a component held by
// the root (recv.live.starting, recv.content.panes[0].scroll.off), "" when
// it does not (recv.live itself, unless whole: its address is taken;
// recv.nav.zoom).
func componentPart(e ast.Expr, recv string, whole bool) string {
	var path []string
	for {
		switch x := e.(type) {
		case *ast.SelectorExpr:
			path = append(path, x.Sel.Name)
			e = x.X
			continue
		case *ast.IndexExpr:
			e = x.X
			continue
		case *ast.Ident:
			least := 2
			if whole {
				least = 1
			}
			if x.Name != recv || len(path) < least || !components[path[len(path)-1]] {
				return ""
			}
			for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
				path[i], path[j] = path[j], path[i]
			}
			return strings.Join(path, ".")
		}
		return ""
	}
}
