package storetest_test

import (
	"testing"

	"rewind/store"
	"rewind/store/memory"
	"rewind/store/storetest"
)

// noDrafts is the memory store without its drafts table (its transaction
// hook kept): a backend that lacks the Drafts capability.
type noDrafts struct {
	store.Store
	store.Tenancy
	hook interface{ SetTxHook(func(string)) }
}

func (n noDrafts) SetTxHook(h func(string)) { n.hook.SetTxHook(h) }

func openNoDrafts(t *testing.T) store.Store {
	m := memory.New()
	t.Cleanup(func() { m.Close() })
	return noDrafts{Store: m, Tenancy: m, hook: m}
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
