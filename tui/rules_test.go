package tui

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/charmbracelet/bubbles/help"
	tea "github.com/charmbracelet/bubbletea"
)

// Every field of the root Model is one of three kinds (AGENTS.md: the
// component contract), and TestEveryRootFieldIsAComponentOrListed holds
// each new field to saying which:
//
// components hold a component (the `component` type: SetSize and keys,
// with its own Update and View). The root calls their methods; it never
// assigns their parts, so what a component holds changes only where it is
// kept.
var components = map[string]bool{
	"timeline": true, "live": true, "content": true, "composer": true, "threads": true,
	"pager": true, "lessons": true, "dialog": true,
}

// features own state the root acts on but have no keys or room of their
// own (their keys are the thread view's, in threadKeyTable): like a
// component, the root only calls their methods.
var features = map[string]string{
	"script":   "the lesson's panel: drawn beside the panes (draw), its key s is the thread view's",
	"status":   "the status bar's message and the status log (set, add, clear)",
	"next":     "breakpoints, kill point and grant of the next run (runs.go, drill.go)",
	"follow":   "a run elsewhere, followed (follow.go)",
	"par":      "replay, edit state, compare, graph view (parity.go)",
	"nav":      "goto, search, zoom, pins (nav.go, search.go, trace.go)",
	"fidelity": "the State pane's badges (fidelity.go)",
	"opening":  "what waits for the thread's first screen (thread.go)",
	"cache":    "checkpoints read, by id (data.go)",
}

// plain is the data the root owns itself, each for a reason: what it
// routes and lays out by, and what it passes to components.
var plain = map[string]string{
	"ctx":         "the session's context, for every Cmd",
	"deps":        "the backend and runner every Cmd works with",
	"theme":       "passed to each component (setTheme)",
	"themeGen":    "the theme's generation, part of the panes' render key",
	"painted":     "View's last painted screen (themes.Painted remembers it)",
	"themeConfig": "where T saves the theme, NO_COLOR: read only",
	"help":        "the bubbles help renderer the footer and dialogs draw keys with",
	"spin":        "the status bar's spinner during a run",
	"keys":        "the thread view's bindings (threadKeyTable), copied into components",
	"w":           "the screen's size, given to relayout",
	"h":           "the screen's size, given to relayout",
	"layout":      "where relayout put the columns",
	"screen":      "which screen shows: the root routes keys by it",
	"focus":       "which column has the focus: the root routes keys by it",
	"thread":      "the open thread's id, for every Cmd",
	"ns":          "the open chain's namespace (a LangGraph subgraph's run; \"\" the root graph), read with thread by every read of the Source",
	"openAt":      "the checkpoint to open on, once the history holds it",
	"gen":         "the open thread's generation: a stale answer is dropped",
	"cur":         "the checkpoint shown, passed to the panes (paneInputs)",
	"window":      "the models' context window, for the prompt view",
}

// owned is whether the root field name holds state the root may only
// change through methods: a component or a feature.
func owned(name string) bool { return components[name] || features[name] != "" }

// Each field of Model is a component, a feature or plain data, and only
// one: a new field says which (and why, for the last two).
func TestEveryRootFieldIsAComponentOrListed(t *testing.T) {
	rt := reflect.TypeOf(Model{})
	seen := map[string]bool{}
	for i := range rt.NumField() {
		f := rt.Field(i)
		seen[f.Name] = true
		kinds := 0
		for _, in := range []bool{components[f.Name], features[f.Name] != "", plain[f.Name] != ""} {
			if in {
				kinds++
			}
		}
		if kinds != 1 {
			t.Errorf("Model.%s is in %d of components, features and plain (rules_test.go): put it in one, with its reason", f.Name, kinds)
			continue
		}
		if components[f.Name] {
			if why := notComponent(f.Type); why != "" {
				t.Errorf("Model.%s (%s) is listed as a component but is not one: %s", f.Name, f.Type, why)
			}
		}
	}
	for _, list := range []map[string]bool{components, setOf(features), setOf(plain)} {
		for name := range list {
			if !seen[name] {
				t.Errorf("%q is listed in rules_test.go but Model has no such field", name)
			}
		}
	}
}

// notComponent says why t (or *t) is not a component[O] for any O: the
// Update(tea.Msg) (O, tea.Cmd), SetSize(w, h int) and help.KeyMap it
// lacks; "" when it is one.
func notComponent(t reflect.Type) string {
	if t.Kind() != reflect.Interface && t.Kind() != reflect.Pointer {
		t = reflect.PointerTo(t)
	}
	recv := 1 // a method of a concrete type takes its receiver first
	if t.Kind() == reflect.Interface {
		recv = 0
	}
	msgT, cmdT, intT := reflect.TypeOf((*tea.Msg)(nil)).Elem(), reflect.TypeOf(tea.Cmd(nil)), reflect.TypeOf(0)
	var lacks []string
	if u, ok := t.MethodByName("Update"); !ok || u.Type.NumIn() != recv+1 || u.Type.In(recv) != msgT || u.Type.NumOut() != 2 || u.Type.Out(1) != cmdT {
		lacks = append(lacks, "Update(tea.Msg) (O, tea.Cmd)")
	}
	if s, ok := t.MethodByName("SetSize"); !ok || s.Type.NumIn() != recv+2 || s.Type.In(recv) != intT || s.Type.In(recv+1) != intT || s.Type.NumOut() != 0 {
		lacks = append(lacks, "SetSize(w, h int)")
	}
	if !t.Implements(reflect.TypeOf((*help.KeyMap)(nil)).Elem()) {
		lacks = append(lacks, "ShortHelp and FullHelp")
	}
	if len(lacks) == 0 {
		return ""
	}
	return "it lacks " + strings.Join(lacks, ", ")
}

func setOf(m map[string]string) map[string]bool {
	out := map[string]bool{}
	for k := range m {
		out[k] = true
	}
	return out
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

// componentPart is "live.starting" when e assigns into a component or a
// feature held by the root (recv.live.starting, recv.content.panes[0].scroll.off), "" when
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
			if x.Name != recv || len(path) < least || !owned(path[len(path)-1]) {
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
