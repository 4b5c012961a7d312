package sqlite_test

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"

	"rewind/store"
	"rewind/store/sqlite"
)

// ownerCounted is a SQLite store that counts the queries of a thread's
// owner alone (ThreadTenant).
type ownerCounted struct {
	*sqlite.Store
	reads atomic.Int32
}

func (o *ownerCounted) ThreadTenant(ctx context.Context, thread string) (string, error) {
	o.reads.Add(1)
	return o.Store.ThreadTenant(ctx, thread)
}

// TestTenantChainReadsItsOwnerInTheChainsQuery: a tenant's handle on a
// SQLite store loads a chain with no query of the owner alone (a new
// process's first load paid a tenth of its CPU for it). That it still
// finds no thread of another tenant, one claimed by another process after
// it opened too, is storetest's TenantChainOfAClaimMadeElsewhere.
func TestTenantChainReadsItsOwnerInTheChainsQuery(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "rewind.db")
	mine := &ownerCounted{Store: open(t, path)}
	def, err := store.ForTenant(ctx, mine, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := def.PutCheckpoint(ctx, cp(1, 0), nil); err != nil {
		t.Fatal(err)
	}
	def, err = store.ForTenant(ctx, mine, "") // a new handle: it knows no owner yet
	if err != nil {
		t.Fatal(err)
	}
	mine.reads.Store(0)
	if chain, err := def.Chain(ctx, "t", 1); err != nil || len(chain) != 1 {
		t.Fatalf("the default tenant's Chain of its thread = %d rows, %v; want 1", len(chain), err)
	}
	if n := mine.reads.Load(); n != 0 {
		t.Errorf("the default tenant's Chain read the owner in %d queries of its own; want it read in the chain's", n)
	}

}
