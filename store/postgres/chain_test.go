package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"

	"rewind/store"
	"rewind/store/postgres/pgtest"
)

// TestTenantChainReadsItsOwnerInTheChainsQuery: a tenant's handle loads a
// chain in one round trip, the thread's owner read in the chain's
// statement (a query of its own before it was a round trip and a
// statement a new session plans cold), and still finds no thread of
// another tenant, one claimed by another process after the handle was
// opened too: in the range read (checkpoint 2 of u) and in the parents'
// walk (checkpoint 3, whose parent is before the range).
func TestTenantChainReadsItsOwnerInTheChainsQuery(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	writer, dbURL := openFresh(t)
	if err := writer.PutCheckpoint(ctx, store.Checkpoint{ThreadID: "t", ID: 1, State: []byte(`{}`)}, nil); err != nil {
		t.Fatal(err)
	}
	writes, dials := new(atomic.Int64), new(atomic.Int64)
	mine, err := open(ctx, dbURL, pgtest.Counting(writes, dials))
	if err != nil {
		t.Fatal(err)
	}
	defer mine.Close()
	def, err := store.ForTenant(ctx, mine, "")
	if err != nil {
		t.Fatal(err)
	}
	before := writes.Load()
	if chain, err := def.Chain(ctx, "t", 1); err != nil || len(chain) != 1 {
		t.Fatalf("the default tenant's Chain of its thread = %d rows, %v; want 1", len(chain), err)
	}
	if n := writes.Load() - before; n != 1 {
		t.Errorf("the default tenant's Chain took %d round trips; want 1, the owner read in the chain's statement", n)
	}

	// Another process adds a tenant and claims thread u.
	if err := writer.AddTenant(ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	acme, err := store.ForTenant(ctx, writer, "acme")
	if err != nil {
		t.Fatal(err)
	}
	u := func(id, parent int64, base bool) store.Checkpoint {
		return store.Checkpoint{ThreadID: "u", ID: id, ParentID: parent, Base: base, State: []byte(`{}`)}
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

// TestChainReadsOneRangeOfTheKey: a chain whose branch forks nowhere
// reads as one range of the primary key (chainRangeSQL), a fraction of
// the pages the recursive walk's descent a row touches (chainSQL); on a
// new session each page is a first touch, the costliest kind.
func TestChainReadsOneRangeOfTheKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, dbURL := openFresh(t)
	for id := int64(1); id <= 40; id++ {
		cp := store.Checkpoint{ThreadID: "t", ID: id, ParentID: id - 1, State: []byte(`{"n":1}`), Base: id == 1 || id == 9}
		if err := s.PutCheckpoint(ctx, cp, nil); err != nil {
			t.Fatal(err)
		}
	}
	chain, err := s.Chain(ctx, "t", 40)
	if err != nil || len(chain) != 32 || chain[0].ID != 40 || chain[31].ID != 9 {
		t.Fatalf("Chain(40) = %d rows, %v; want 40 down to its base 9", len(chain), err)
	}
	adminExec(t, dbURL, `analyze`)
	pages := func(sql string) float64 {
		t.Helper()
		out := query(t, dbURL, `explain (analyze, buffers, format json) `+sql, "t", int64(40))
		var plan []struct {
			Plan struct {
				Hit float64 `json:"Shared Hit Blocks"`
			}
		}
		if len(out) != 1 || json.Unmarshal([]byte(out[0]), &plan) != nil || len(plan) != 1 {
			t.Fatalf("explain: %v", out)
		}
		return plan[0].Plan.Hit
	}
	rng, walk := pages(chainRangeSQL), pages(chainSQL)
	if rng*3 > walk {
		t.Errorf("the range read of a 32-row chain touched %v pages, the recursive walk %v: want a third or less", rng, walk)
	}
}

// TestAChainLongerThanTheRangeIsWalked: a chain of more rows than
// chainRangeSQL reads (no base for 200 rows) is read whole, by the
// recursive walk.
func TestAChainLongerThanTheRangeIsWalked(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := openFresh(t)
	const n = 200
	for id := int64(1); id <= n; id++ {
		cp := store.Checkpoint{ThreadID: "t", ID: id, ParentID: id - 1, State: []byte(`{"n":1}`), Base: id == 1}
		if err := s.PutCheckpoint(ctx, cp, nil); err != nil {
			t.Fatal(err)
		}
	}
	chain, err := s.Chain(ctx, "t", n)
	if err != nil || len(chain) != n || chain[0].ID != n || chain[n-1].ID != 1 {
		t.Fatalf("Chain(%d) = %d rows, %v; want %d down to its base 1", n, len(chain), err, n)
	}
	for i, cp := range chain {
		if cp.ID != int64(n-i) || string(cp.State) != `{"n":1}` {
			t.Fatalf("row %d of the chain is checkpoint %d with state %s", i, cp.ID, cp.State)
		}
	}
}
