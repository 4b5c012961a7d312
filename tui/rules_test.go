package tui

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
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
	"par": true, "fidelity": true, "status": true,
	"runs": true, "follow": true, "script": true,
	"nav": true,
}

// features own state the root acts on but have no keys or room of their
// own (their keys are the thread view's, in threadKeyTable): like a
// component, the root only calls their methods. Each says what it holds
// and why it is not a component (a feature whose type is one must be
// listed as one: TestEveryRootFieldIsAComponentOrListed).
var features = map[string]string{
	"loader": "reads the open chain: its history, the checkpoint under the cursor and its neighbours, what waits for the first screen (thread.go); not a component: no keys, no room, nothing to draw; its Update takes the reads' answers (loadMsg) and returns loadNews",
}

// featureFiles are the files of AGENTS.md's feature groups and the root
// field that holds each one's state between keys (a feature, or the
// dialog: replay asks in a confirm dialog, the draft edit is the approval
// dialog's, the graph view is a dialog): a new feature file says where
// its state lives.
var featureFiles = map[string]string{
	"replay.go": "dialog", "editstate.go": "par", "draftedit.go": "dialog", "compare.go": "par", "graphview.go": "dialog",
	"nav.go": "nav", "search.go": "nav", "trace.go": "nav", "follow.go": "follow", "drill.go": "runs", "script.go": "script",
}

// Each feature group's file holds state the root keeps in a component or
// a feature field.
func TestEveryFeatureGroupIsHeld(t *testing.T) {
	for file, field := range featureFiles {
		if _, err := os.Stat(file); err != nil {
			t.Errorf("featureFiles names %s, which is gone: %v", file, err)
		}
		if !owned(field) {
			t.Errorf("%s's state is held by Model.%s, which is neither a component nor a feature (rules_test.go)", file, field)
		}
	}
}

// plain is the data the root owns itself, each for a reason: what it
// routes and lays out by, and what it passes to components.
var plain = map[string]string{
	"sess":        "the session (session.go): context, backend, runner and the open chain with its generation; the root opens a chain, components only read it",
	"theme":       "passed to each component (setTheme)",
	"themeGen":    "the theme's generation, part of the panes' render key",
	"painted":     "View's last painted screen (themes.Painted remembers it)",
	"themeConfig": "where T saves the theme, NO_COLOR: read only",
	"help":        "the bubbles help renderer the footer and dialogs draw keys with",
	"spin":        "the status bar's spinner during a run",
	"keys":        "the thread view's bindings (threadKeyTable), copied into components",
	"readOnly":    "the keys a read-only source refuses (readonly.go: from the key tables once the keys are bound); the root consults it before routing a key and when listing keys in the footer and ?",
	"w":           "the screen's size, given to relayout",
	"h":           "the screen's size, given to relayout",
	"layout":      "where relayout put the columns",
	"screen":      "which screen shows: the root routes keys by it",
	"focus":       "which column has the focus: the root routes keys by it",
	"openAt":      "the checkpoint to open on, once the history holds it",
	"cache":       "checkpoints read, by id (data.go): data, no keys, no view; the loader fills it through the same pointer, a run's end drops what it changed",
	"cur":         "the checkpoint shown, passed to the panes (paneInputs)",
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
		if why := features[f.Name]; why != "" {
			if notComponent(f.Type) == "" {
				t.Errorf("Model.%s (%s) is a component: list it in components, not features", f.Name, f.Type)
			} else if !strings.Contains(why, "not a component: ") {
				t.Errorf("Model.%s is a feature: its entry in features should say why it is not a component (\"not a component: …\")", f.Name)
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

// partReaders are the methods the root may call on a part of a component
// or a feature: they read and change nothing (the timeline's tree's size,
// a checkpoint's label, the branch's leaf; the live strip's progress
// line; a pane's scroll at its bottom; a part's View and ShortHelp).
// Anything else goes through the component's own method
// (m.timeline.jump, m.nav.setTheme).
var partReaders = map[string]bool{"len": true, "label": true, "leaf": true, "line": true, "atBottom": true, "View": true, "ShortHelp": true}

// The root changes a component or a feature only through its methods: it
// never assigns its fields, takes their address, or calls a method on one
// of its parts that is not a reader.
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
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Body != nil && isRootMethod(fn) {
				found = append(found, partChanges(fset, fn)...)
			}
		}
	}
	if len(found) > 0 {
		t.Fatalf("the root changes a component's or a feature's parts (call a method of the component instead):\n%s", strings.Join(found, "\n"))
	}
}

// partChanges are where root method fn changes a component's or a
// feature's parts: assigns one, takes its address, or calls a method of a
// part that is not a reader.
func partChanges(fset *token.FileSet, fn *ast.FuncDecl) []string {
	var found []string
	recv := fn.Recv.List[0].Names[0].Name
	check := func(at ast.Node, e ast.Expr, whole bool, suffix string) {
		if c := componentPart(e, recv, whole); c != "" {
			found = append(found, fset.Position(at.Pos()).String()+": "+c+suffix)
		}
	}
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		switch s := n.(type) {
		case *ast.AssignStmt:
			for _, l := range s.Lhs {
				check(l, l, false, "")
			}
		case *ast.IncDecStmt:
			check(s.X, s.X, false, "")
		case *ast.UnaryExpr: // p := &m.timeline: an alias to assign through
			if s.Op == token.AND {
				check(s.X, s.X, true, "")
			}
		case *ast.CallExpr: // m.timeline.tree.jump(id): a change through a part
			if sel, ok := s.Fun.(*ast.SelectorExpr); ok && !partReaders[sel.Sel.Name] {
				check(s, sel.X, false, "."+sel.Sel.Name+"()")
			}
		}
		return true
	})
	return found
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

// rootFiles are where the root's own methods live: model.go routes every
// message and key to the component it concerns, view.go lays the
// components out and draws the frame around them. Anything else the root
// did (opening a thread, starting a run, navigating, refusing a writing
// key) belongs to a component or a feature with its own methods.
var rootFiles = map[string]bool{"model.go": true, "view.go": true}

// The root's methods live in rootFiles only.
func TestTheRootOnlyRoutesAndLaysOut(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || rootFiles[name] {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		var methods []string
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv != nil && isModelMethod(fn) {
				methods = append(methods, fn.Name.Name)
			}
		}
		if len(methods) > 0 {
			t.Errorf("%s holds root methods %v: the root only routes (model.go) and lays out (view.go); put them in the component or feature they concern", name, methods)
		}
	}
}

// isModelMethod says whether fn is a method of Model or *Model.
func isModelMethod(fn *ast.FuncDecl) bool {
	if len(fn.Recv.List) != 1 {
		return false
	}
	e := fn.Recv.List[0].Type
	if star, ok := e.(*ast.StarExpr); ok {
		e = star.X
	}
	id, ok := e.(*ast.Ident)
	return ok && id.Name == "Model"
}

// What is the ticket's is its extension's (rewind/tui/ticketview, issue
// 37): no file of the TUI's root imports the ticket's graph.
func TestTheTUINamesNoTicketCode(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, im := range f.Imports {
			if p := strings.Trim(im.Path.Value, `"`); p == "rewind/engine/ticket" || p == "rewind/tui/ticketview" {
				t.Errorf("%s imports %s: what only the ticket shows goes in its extension, rewind/tui/ticketview, through tui.Extension and the optional interfaces beside it", name, p)
			}
		}
	}
}

// Nothing the TUI links, however deep, is the ticket graph's code: a
// graph author's program that opens the TUI on their own graph builds no
// ticket (go list -deps; TestTheTUINamesNoTicketCode checks tui's own
// imports).
func TestTheTUILinksNoTicketCode(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", "rewind/tui").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps rewind/tui: %v\n%s", err, out)
	}
	for _, p := range strings.Fields(string(out)) {
		if p == "rewind/engine/ticket" || p == "rewind/tui/ticketview" {
			t.Errorf("rewind/tui depends on %s (go list -deps rewind/tui): what only the ticket runs goes in its own package, registered from there", p)
		}
	}
}
