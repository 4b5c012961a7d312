package storetest_test

import (
	"context"
	"testing"

	"rewind/store"
	"rewind/store/memory"
	"rewind/store/storetest"
)

// noDrafts is the memory store without its drafts table (its transaction
// hook, Reseal, CountSize and tenants, which every store has, kept): a backend that lacks the
// Drafts capability.
type noDrafts struct {
	store.Store
	store.Tenancy
	m *memory.Store
}

func (n noDrafts) SetTxHook(h func(string)) { n.m.SetTxHook(h) }

func (n noDrafts) Reseal(ctx context.Context, thread string, fn func(store.DocKind, string, []byte) ([]byte, error)) (int, error) {
	return n.m.Reseal(ctx, thread, fn)
}

func (n noDrafts) CountSize(ctx context.Context, thread string) (int64, error) {
	return n.m.CountSize(ctx, thread)
}

func openNoDrafts(t *testing.T) store.Store {
	m := memory.New()
	t.Cleanup(func() { m.Close() })
	return noDrafts{Store: m, Tenancy: m, m: m}
}

// A backend that does not declare a capability passes without it: the
// clauses that need it are skipped (they would fail on this store, which is
// no store.Drafts). Declaring it without having it fails: the mutant
// "drafts declared but missing".
func TestCapabilityNotDeclaredIsSkipped(t *testing.T) {
	if _, ok := openNoDrafts(t).(store.Drafts); ok {
		t.Fatal("the test store has a drafts table")
	}
	storetest.Run(t, storetest.Backend{Open: openNoDrafts, Caps: []storetest.Capability{storetest.Fencing, storetest.TxHook}})
}
