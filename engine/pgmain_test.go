package engine

import (
	"testing"

	"rewind/cli/rewindbin"
	"rewind/store/backend/backendtest"
	"rewind/store/postgres/pgtest"
)

// TestMain names the PostgreSQL tests it skipped, once, even without -v.
// No engine test is about a commit surviving an OS crash, so the SQLite
// stores the tests open do not fsync each commit (a killed process still
// loses nothing: see sqlite.SyncNormal).
func TestMain(m *testing.M) {
	backendtest.SyncNormal()
	rewindbin.Exit(pgtest.Run(m))
}
