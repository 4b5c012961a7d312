package ticket_test

import (
	"os"
	"testing"

	"rewind/store/postgres/pgtest"
)

// TestMain names the PostgreSQL tests it skipped, once, even without -v.
func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }
