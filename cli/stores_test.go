package cli

import (
	"path/filepath"
	"rewind/store/postgres/pgtest"
	"testing"
)

// eachStore runs fn on a fresh sqlite file and a fresh PostgreSQL database
// (skipped without REWIND_TEST_POSTGRES, failed in CI).
func eachStore(t *testing.T, fn func(t *testing.T, spec string)) {
	t.Run("sqlite", func(t *testing.T) { fn(t, "sqlite:"+filepath.Join(t.TempDir(), "r.db")) })
	t.Run("postgres", func(t *testing.T) { fn(t, freshPostgres(t)) })
}

// freshPostgres is a new database on $REWIND_TEST_POSTGRES's server,
// dropped after the test.
func freshPostgres(t *testing.T) string {
	t.Helper()
	return pgtest.Fresh(t, "rewind_cli")
}
