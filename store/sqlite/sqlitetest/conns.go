// Package sqlitetest holds what tests of SQLite stores share: counting
// the connections the driver opens on a file.
package sqlitetest

import (
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	msqlite "modernc.org/sqlite"
)

// connections counts the SQLite connections opened on each database file
// by its escaped path, as every URI of rewind's names it (the store's and
// the detection's alike).
var connections = struct {
	once sync.Once
	mu   sync.Mutex
	n    map[string]int
}{n: map[string]int{}}

// CountConnections has the driver count the connections opened on path
// from now on (one hook for the process, registered once); it returns
// them so far.
func CountConnections(t testing.TB, path string) func() int {
	t.Helper()
	connections.once.Do(func() {
		msqlite.RegisterConnectionHook(func(_ msqlite.ExecQuerierContext, dsn string) error {
			connections.mu.Lock()
			defer connections.mu.Unlock()
			connections.n[strings.TrimPrefix(strings.SplitN(dsn, "?", 2)[0], "file:")]++
			return nil
		})
	})
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	key := (&url.URL{Path: abs}).EscapedPath()
	return func() int {
		connections.mu.Lock()
		defer connections.mu.Unlock()
		return connections.n[key]
	}
}
