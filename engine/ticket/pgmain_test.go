package ticket_test

import (
	"testing"

	"rewind/cli/rewindbin"
	"rewind/store/postgres/pgtest"
)

// TestMain names the PostgreSQL tests it skipped, once, even without -v.
func TestMain(m *testing.M) { rewindbin.Exit(pgtest.Run(m)) }
