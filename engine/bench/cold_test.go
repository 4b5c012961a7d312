package bench

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"

	"rewind/engine"
	"rewind/engine/ticket"
	"rewind/store/backend/backendtest"
)

// coldTurns is the length of the thread BenchmarkCold reads:
// REWIND_BENCH_TURNS, or 125 turns (1,000 checkpoints).
func coldTurns(b *testing.B) int {
	if s := os.Getenv("REWIND_BENCH_TURNS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			b.Fatalf("REWIND_BENCH_TURNS=%q is not a number of turns", s)
		}
		return n
	}
	return 125
}

// BenchmarkCold loads one checkpoint's values on a long thread the way a
// new process does: a new engine (nothing cached) reads and rebuilds its
// chain. NewEngine is what making that engine costs, timed apart (Cold
// excludes it); Warm is the engine that wrote the thread, from its cache.
//
//	go test -run x -bench Cold -count 6 ./engine/bench
//
// (with REWIND_TEST_POSTGRES for the PostgreSQL case).
func BenchmarkCold(b *testing.B) {
	backendtest.Each(b, func(b *testing.B, be backendtest.Backend) {
		ctx := context.Background()
		st := be.Open(b, "cold")
		writer, err := ticket.NewEngine(st, ticket.NewMock())
		if err != nil {
			b.Fatal(err)
		}
		var last int64
		for n := 1; n <= coldTurns(b); n++ {
			res, err := writer.Run(ctx, "long", ticket.Input(fmt.Sprintf(Sentences[(n-1)%len(Sentences)], 20260000+n)), engine.RunConfig{})
			if err != nil {
				b.Fatal(err)
			}
			last = res.Checkpoint
		}
		b.Run("NewEngine", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ticket.NewEngine(st, ticket.NewMock()); err != nil {
					b.Fatal(err)
				}
			}
		})
		for _, at := range []struct {
			name string
			id   int64
		}{{"Latest", last}, {"Middle", last / 2}} {
			b.Run("Cold"+at.name, func(b *testing.B) {
				engines := make([]*engine.Engine, b.N)
				for i := range engines {
					if engines[i], err = ticket.NewEngine(st, ticket.NewMock()); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportAllocs()
				b.ResetTimer()
				cpu := cpuTime()
				for i := 0; i < b.N; i++ {
					if _, err := engines[i].Get(ctx, "long", at.id); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
			})
		}
		b.Run("WarmLatest", func(b *testing.B) {
			b.ReportAllocs()
			cpu := cpuTime()
			for b.Loop() {
				if _, err := writer.Get(ctx, "long", last); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
		})
	})
}
