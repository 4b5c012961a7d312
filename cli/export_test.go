package cli

import (
	"maps"
	"slices"
	"testing"
)

// For the tests that drive the built binary (package cli_test).

// FreshPostgres is freshPostgres.
func FreshPostgres(t *testing.T) string { return freshPostgres(t) }

// SharedStores is sharedStores.
func SharedStores(prefix string) map[string]func(t *testing.T) string { return sharedStores(prefix) }

// CommandPaths is every command's words after `rewind` ("" for rewind
// alone), sorted.
func CommandPaths() []string {
	return slices.Sorted(maps.Keys(commands()))
}

// SetBenchExe makes a bench's new processes run path (the built rewind),
// not the test binary.
func SetBenchExe(path string) { benchExe = func() (string, error) { return path, nil } }
