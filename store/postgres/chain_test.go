package postgres

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"

	"rewind/store"
	"rewind/store/postgres/pgtest"
)

// TestTenantChainReadsItsOwnerInTheChainsQuery: a tenant's handle loads a
// chain in one round trip, the thread's owner read in the chain's
// statement (a query of its own before it was a round trip and a
// statement a new session plans cold). That it still finds no thread of
// another tenant, one claimed by another process after it opened too, is
// storetest's TenantChainOfAClaimMadeElsewhere.
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
