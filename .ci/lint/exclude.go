package main

import (
	"go/ast"
	"go/token"
	"go/types"

	"github.com/jingyugao/rowserrcheck/passes/rowserr"
	"github.com/ryanrolds/sqlclosecheck/pkg/analyzer"
	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/ast/astutil"
)

// sqlclose is sqlclosecheck (defer-only, golangci-lint's mode) without its
// reports on statements a cache holds. A *sql.Stmt prepared into a map or
// slice element (sqlite's pool and writer) belongs to that cache, which
// closes them all together (Store.Close, the writer's release); one read
// back through a function that only indexes the cache (sqlite's `tx.in(q)`)
// is the cache's too. Closing either at the call would break its next use.
// Every other report stands.
var sqlclose = func() *analysis.Analyzer {
	inner := analyzer.NewDeferOnlyAnalyzer()
	a := *inner
	a.Run = func(pass *analysis.Pass) (any, error) {
		p := *pass
		p.Report = func(d analysis.Diagnostic) {
			if !cached(pass, d.Pos) {
				pass.Report(d)
			}
		}
		return inner.Run(&p)
	}
	return &a
}()

// cached says whether the statement made by the call at pos belongs to a
// statement cache (see sqlclose).
func cached(pass *analysis.Pass, pos token.Pos) bool {
	for _, f := range pass.Files {
		if pos < f.Pos() || pos > f.End() {
			continue
		}
		path, _ := astutil.PathEnclosingInterval(f, pos, pos)
		call, fn := callAt(path, pos)
		if call == nil {
			return false
		}
		return readsCache(pass, call) || (fn != nil && preparedIntoCache(pass, call, fn))
	}
	return false
}

// callAt is the call whose parenthesis is at pos (where SSA places a
// call) and the function declaring it.
func callAt(path []ast.Node, pos token.Pos) (*ast.CallExpr, *ast.FuncDecl) {
	var call *ast.CallExpr
	for _, n := range path {
		if c, ok := n.(*ast.CallExpr); ok && call == nil && c.Lparen == pos {
			call = c
		}
		if fn, ok := n.(*ast.FuncDecl); ok {
			return call, fn
		}
	}
	return call, nil
}

// readsCache: the callee is declared in this package and its body is
// `return x[k]`.
func readsCache(pass *analysis.Pass, call *ast.CallExpr) bool {
	var id *ast.Ident
	switch fun := call.Fun.(type) {
	case *ast.Ident:
		id = fun
	case *ast.SelectorExpr:
		id = fun.Sel
	default:
		return false
	}
	obj, ok := pass.TypesInfo.Uses[id].(*types.Func)
	if !ok || obj.Pkg() != pass.Pkg {
		return false
	}
	for _, f := range pass.Files {
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || pass.TypesInfo.Defs[fn.Name] != obj || fn.Body == nil || len(fn.Body.List) != 1 {
				continue
			}
			ret, ok := fn.Body.List[0].(*ast.ReturnStmt)
			if !ok || len(ret.Results) != 1 {
				return false
			}
			_, ok = ast.Unparen(ret.Results[0]).(*ast.IndexExpr)
			return ok
		}
	}
	return false
}

// preparedIntoCache: the call's result is assigned to a variable that
// fn then stores into an element (`cache[k] = st`).
func preparedIntoCache(pass *analysis.Pass, call *ast.CallExpr, fn *ast.FuncDecl) bool {
	v := assigned(pass, call, fn)
	if v == nil {
		return false
	}
	stored := false
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		as, ok := n.(*ast.AssignStmt)
		if !ok || len(as.Lhs) != len(as.Rhs) {
			return !stored
		}
		for i, r := range as.Rhs {
			id, ok := ast.Unparen(r).(*ast.Ident)
			if !ok || pass.TypesInfo.Uses[id] != v {
				continue
			}
			if _, ok := as.Lhs[i].(*ast.IndexExpr); ok {
				stored = true
			}
		}
		return !stored
	})
	return stored
}

// assigned is the variable fn assigns call's (first) result to, if any.
func assigned(pass *analysis.Pass, call *ast.CallExpr, fn *ast.FuncDecl) types.Object {
	var v types.Object
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		as, ok := n.(*ast.AssignStmt)
		if !ok || len(as.Rhs) != 1 || ast.Unparen(as.Rhs[0]) != call || len(as.Lhs) == 0 {
			return v == nil
		}
		if id, ok := as.Lhs[0].(*ast.Ident); ok {
			v = pass.TypesInfo.ObjectOf(id)
		}
		return false
	})
	return v
}

// rowserr is rowserrcheck on pgx and database/sql without its reports on
// rows handed to pgx's row helpers (ForEachRow, CollectRows, …), which
// close the rows and return rows.Err() themselves: rowserrcheck follows a
// call only into this package's functions, so it cannot see that.
var rowsErr = func() *analysis.Analyzer {
	inner := rowserr.NewAnalyzer("github.com/jackc/pgx/v5", "database/sql")
	a := *inner
	a.Run = func(pass *analysis.Pass) (any, error) {
		p := *pass
		p.Report = func(d analysis.Diagnostic) {
			if !toPgxHelper(pass, d.Pos) {
				pass.Report(d)
			}
		}
		return inner.Run(&p)
	}
	return &a
}()

// pgxHelpers are pgx's functions documented to close the rows and return
// rows.Err().
var pgxHelpers = map[string]bool{"ForEachRow": true, "CollectRows": true, "CollectOneRow": true, "CollectExactlyOneRow": true, "AppendRows": true}

// toPgxHelper says whether the rows made by the call at pos go, as a
// variable, to one of pgxHelpers in the same function.
func toPgxHelper(pass *analysis.Pass, pos token.Pos) bool {
	for _, f := range pass.Files {
		if pos < f.Pos() || pos > f.End() {
			continue
		}
		path, _ := astutil.PathEnclosingInterval(f, pos, pos)
		call, fn := callAt(path, pos)
		if call == nil || fn == nil {
			return false
		}
		v := assigned(pass, call, fn)
		if v == nil {
			return false
		}
		handed := false
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			c, ok := n.(*ast.CallExpr)
			if !ok || len(c.Args) == 0 || handed {
				return !handed
			}
			fun := ast.Unparen(c.Fun)
			if ix, ok := fun.(*ast.IndexExpr); ok { // CollectRows[T]
				fun = ix.X
			}
			sel, ok := fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			obj, ok := pass.TypesInfo.Uses[sel.Sel].(*types.Func)
			arg, isID := ast.Unparen(c.Args[0]).(*ast.Ident)
			handed = ok && obj.Pkg() != nil && obj.Pkg().Path() == "github.com/jackc/pgx/v5" &&
				pgxHelpers[obj.Name()] && isID && pass.TypesInfo.Uses[arg] == v
			return !handed
		})
		return handed
	}
	return false
}
