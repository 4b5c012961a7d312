package cli

import (
	"sort"
	"testing"
)

// For the tests that drive the built binary (package cli_test).

// FreshPostgres is freshPostgres.
func FreshPostgres(t *testing.T) string { return freshPostgres(t) }

// CommandPaths is every command's words after `rewind` ("" for rewind
// alone), sorted.
func CommandPaths() []string {
	var out []string
	for p := range commands() {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}
