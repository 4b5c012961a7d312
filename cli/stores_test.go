package cli

import (
	"rewind/store/backend/backendtest"
	"rewind/store/postgres/pgtest"
	"testing"
)

// eachStore runs fn on a fresh store of every backend that outlives a
// process (backendtest.EachShared: a command is a process of its own;
// PostgreSQL skipped without REWIND_TEST_POSTGRES, failed in CI).
func eachStore(t *testing.T, fn func(t *testing.T, spec string)) {
	backendtest.EachShared(t, func(t *testing.T, b backendtest.Backend) { fn(t, b.Spec(t, "cli")) })
}

// sharedStores is every backend that outlives a process, by name: what
// makes a fresh store of it and returns its spec.
func sharedStores(prefix string) map[string]func(t *testing.T) string {
	out := map[string]func(t *testing.T) string{}
	for _, b := range backendtest.All {
		if b.Shared {
			out[b.Name] = func(t *testing.T) string { return b.Spec(t, prefix) }
		}
	}
	return out
}

// freshPostgres is a new database on $REWIND_TEST_POSTGRES's server,
// dropped after the test.
func freshPostgres(t *testing.T) string {
	t.Helper()
	return pgtest.Fresh(t, "rewind_cli")
}
