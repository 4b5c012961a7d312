package postgres

import (
	"context"
	"testing"

	"rewind/store"
	"rewind/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		s, _ := openFresh(t)
		return s
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
