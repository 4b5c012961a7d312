package app_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// Only the app opens stores: the TUI and the engine link no store backend
// (AGENTS.md, "Layout and layering"). The engine's own tests may.
func TestOnlyTheAppLinksStoreBackends(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", "rewind/tui", "rewind/engine/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		// rewind/store/browse is the read interface both sources
		// implement, not a backend (checked below).
		if strings.HasPrefix(pkg, "rewind/store/") && pkg != "rewind/store/browse" {
			t.Errorf("%s is linked into the TUI or the engine: open stores through rewind/cli/app", pkg)
		}
	}
	out, err = exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "rewind/store/browse").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	if got := strings.Fields(string(out)); !slices.Equal(got, []string{"rewind/store", "rewind/store/browse"}) {
		t.Errorf("rewind/store/browse links %v: it holds the read interface and its types only (the standard library and the store contract's names)", got)
	}
	out, err = exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", "rewind/cli/app").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "rewind/store/backend\n") {
		t.Fatalf("the app should open stores through rewind/store/backend: %v\n%s", err, out)
	}
}
