package ticket_test

import (
	"testing"

	"rewind/store"
	"rewind/store/backend/backendtest"
)

// eachStore runs f on every store (backendtest.All: PostgreSQL skipped
// without REWIND_TEST_POSTGRES, failed in CI). reopen gives a new handle
// on the same data.
func eachStore(t *testing.T, f func(t *testing.T, st store.Store, reopen func() store.Store)) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		open := b.Reopener(t, "ticket")
		f(t, open(), open)
	})
}
