package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The gate counts the package's own non-test files only, and fails on
// one line naming the rule once they pass the limit.
func TestEngineSize(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, lines int) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(strings.Repeat("//\n", lines)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.go", 4)
	write("b.go", 3)
	write("a_test.go", 50)
	write("sub/c.go", 50)
	write("notes.md", 50)
	var out, errb bytes.Buffer
	if code := engineSize([]string{"-max", "7", dir}, &out, &errb); code != 0 || !strings.Contains(out.String(), "7 lines") {
		t.Fatalf("7 lines against a max of 7: exit %d, %q %q; want 0 counting 7", code, out.String(), errb.String())
	}
	out.Reset()
	if code := engineSize([]string{"-max", "6", dir}, &out, &errb); code != 1 || strings.Count(errb.String(), "\n") != 1 || !strings.Contains(errb.String(), "AGENTS.md's rule") {
		t.Fatalf("7 lines against a max of 6: exit %d, %q; want 1 and one line naming the rule", code, errb.String())
	}
}
