package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// README's CLI table has a row for every command help lists.
func TestEveryCommandIsInREADME(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, l := range strings.Split(string(readme), "\n") {
		if strings.HasPrefix(l, "| `rewind ") {
			rows = append(rows, strings.SplitN(l, " | ", 2)[0])
		}
	}
	root, _ := newRoot(&bytes.Buffer{}, &bytes.Buffer{})
	for _, c := range root.Commands() {
		if !c.IsAvailableCommand() && c.Name() != "help" {
			continue
		}
		found := false
		for _, r := range rows {
			found = found || strings.Contains(r, "`rewind "+c.Name()+" ") || strings.Contains(r, "`rewind "+c.Name()+"`")
		}
		if !found {
			t.Errorf("README's CLI table has no row for `rewind %s`", c.Name())
		}
	}
}
