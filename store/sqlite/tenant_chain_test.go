package sqlite_test

import (
	"context"
	"errors"
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
// process's first load paid a tenth of its CPU for it), and still finds
// no thread of another tenant, one added and claimed by another process
// after the handle was opened too: in the range read (checkpoint 2 of u)
// and in the parents' walk (checkpoint 3, whose parent is before the
// range).
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

	// Another process adds a tenant and claims thread u.
	other := open(t, path)
	if err := other.AddTenant(ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	acme, err := store.ForTenant(ctx, other, "acme")
	if err != nil {
		t.Fatal(err)
	}
	u := func(id, parent int64, base bool) store.Checkpoint {
		c := cp(id, parent)
		c.ThreadID, c.Base = "u", base
		return c
	}
	for _, c := range []store.Checkpoint{u(1, 0, true), u(2, 1, true), u(3, 1, false)} {
		if err := acme.PutCheckpoint(ctx, c, nil); err != nil {
			t.Fatal(err)
		}
	}
	for id, want := range map[int64][]int64{2: {2}, 3: {3, 1}} {
		if _, err := def.Chain(ctx, "u", id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("the default tenant's Chain of checkpoint %d of acme's thread = %v; want ErrNotFound", id, err)
		}
		acmeHere, err := store.ForTenant(ctx, mine, "acme")
		if err != nil {
			t.Fatal(err)
		}
		chain, err := acmeHere.Chain(ctx, "u", id)
		var ids []int64
		for _, c := range chain {
			ids = append(ids, c.ID)
		}
		if err != nil || len(ids) != len(want) || ids[0] != want[0] || ids[len(ids)-1] != want[len(want)-1] {
			t.Errorf("acme's Chain of checkpoint %d of its thread = %v, %v; want %v", id, ids, err, want)
		}
		if _, err := acmeHere.Chain(ctx, "t", 1); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("acme's Chain of the default tenant's thread = %v; want ErrNotFound", err)
		}
	}
}
