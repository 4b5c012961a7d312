package postgres

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"rewind/store"
	"rewind/store/storetest"
)

func TestConformance(t *testing.T) {
	t.Parallel()
	storetest.Run(t, storetest.Backend{
		Open: func(t *testing.T) store.Store {
			s, _ := openFresh(t)
			return s
		},
		// Not Erasure: a deleted row stays in the table's pages until
		// VACUUM reuses them, and in the server's WAL (store.Erasing).
		Caps: slices.DeleteFunc(slices.Clone(storetest.Capabilities), func(c storetest.Capability) bool { return c == storetest.Erasure }),
		Fresh: func(t *testing.T) (store.Store, string) {
			s, dbURL := openFresh(t)
			return s, dbURL
		},
		Reopen: func(ctx context.Context, dbURL string) (store.Store, error) { return Open(ctx, dbURL) },
		// Inside the killed writer's transaction another session sees it
		// holding both tables it inserted into.
		InsideTx: func(s store.Store) error {
			var locked int
			err := s.(*Store).pool.QueryRow(context.Background(), `select count(distinct c.relname) from pg_locks l join pg_class c on c.oid = l.relation
where c.relname in ('graph_checkpoints', 'graph_events') and l.mode = 'RowExclusiveLock' and l.pid <> pg_backend_pid()`).Scan(&locked)
			if err != nil || locked != 2 {
				return fmt.Errorf("another session sees the open transaction holding %d of its 2 tables (%v)", locked, err)
			}
			return nil
		},
	})
}

func BenchmarkStore(b *testing.B) {
	storetest.Bench(b, func(b *testing.B) store.Store {
		s, _ := openFresh(b)
		return s
	})
}

// BenchmarkRoundTrip is the floor under every call: one empty statement.
func BenchmarkRoundTrip(b *testing.B) {
	s, _ := openFresh(b)
	ctx := context.Background()
	for b.Loop() {
		var one int
		if err := s.pool.QueryRow(ctx, `select $1::int`, 1).Scan(&one); err != nil {
			b.Fatal(err)
		}
	}
}
