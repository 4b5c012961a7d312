package ticket_test

import (
	"context"
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"rewind/engine"
	"rewind/engine/bench"
	"rewind/engine/ticket"
	"rewind/store"
	"rewind/store/backend/backendtest"
	"rewind/store/memory"
	"rewind/store/postgres"
	"rewind/store/postgres/pgtest"
	"rewind/store/sqlite"
)

// benchRun measures one whole ticket turn (planner, 3 executors, critic
// loop, reply: 8 model calls, 7 checkpoints) with the mock at zero latency.
// Besides wall time it reports this process's CPU time a turn (cpu-ns/op),
// which a shared machine disturbs less.
func benchRun(b *testing.B, st store.Store) {
	ctx := context.Background()
	e, err := engine.New(st, ticket.NewGraph(), ticket.NewMock())
	if err != nil {
		b.Fatal(err)
	}
	in := ticket.Input(sentence, "blob://tickets/2026/att-1.png")
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cpuTime()
	for i := 0; i < b.N; i++ {
		if _, err := e.Run(ctx, fmt.Sprintf("bench-%d", i), in, engine.RunConfig{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
}

// cpuTime is the CPU time (user and system) this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func BenchmarkTicketRunMemory(b *testing.B) { benchRun(b, memory.New()) }

func BenchmarkTicketRunSQLite(b *testing.B) {
	st, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	benchRun(b, st)
}

// BenchmarkTicketRunPostgres is a whole turn on a real PostgreSQL (skipped
// without REWIND_TEST_POSTGRES): cpu-ns/op is the client's share only.
func BenchmarkTicketRunPostgres(b *testing.B) {
	st, err := postgres.Open(context.Background(), pgtest.Fresh(b, "rewind_bench"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	benchRun(b, st)
}

// longThread runs turns turns of the bench conversation on one thread.
func longThread(b *testing.B, st store.Store, turns int) (*engine.Engine, int64) {
	b.Helper()
	ctx := context.Background()
	// As every command opens it: through the default tenant's checks.
	st, err := store.ForTenant(ctx, st, "")
	if err != nil {
		b.Fatal(err)
	}
	e, err := ticket.NewEngine(st, ticket.NewMock())
	if err != nil {
		b.Fatal(err)
	}
	var last int64
	for n := 1; n <= turns; n++ {
		res, err := e.Run(ctx, "long", ticket.Input(fmt.Sprintf(bench.Sentences[(n-1)%len(bench.Sentences)], 20260000+n)), engine.RunConfig{})
		if err != nil {
			b.Fatal(err)
		}
		last = res.Checkpoint
	}
	return e, last
}

// BenchmarkLongThread reads a 125-turn (1,000-checkpoint) thread: loading
// its newest and a middle checkpoint's values (cold: rebuilt from the
// store; warm: this process has them cached), listing it, and one more
// turn on it.
func BenchmarkLongThread(b *testing.B) {
	backendtest.Each(b, func(b *testing.B, be backendtest.Backend) {
		e, last := longThread(b, be.Open(b, "long"), 125)
		ctx := context.Background()
		b.Run("GetLatest", func(b *testing.B) {
			for b.Loop() {
				if _, err := e.Get(ctx, "long", last); err != nil {
					b.Fatal(err)
				}
			}
		})
		// Cold: a new engine has nothing cached, as in a new process.
		for _, at := range []struct {
			name string
			id   int64
		}{{"GetLatestCold", last}, {"GetMiddleCold", last / 2}} {
			// Building the engine is a process's once, not the load's:
			// it is not timed (as in rewind bench). They are built a
			// batch at a time, since stopping the timer for each costs
			// more than the load.
			b.Run(at.name, func(b *testing.B) {
				var fresh []*engine.Engine
				for i := 0; i < b.N; i++ {
					if len(fresh) == 0 {
						b.StopTimer()
						for range min(b.N-i, 100) {
							f, err := ticket.NewEngine(e.Store(), ticket.NewMock())
							if err != nil {
								b.Fatal(err)
							}
							fresh = append(fresh, f)
						}
						b.StartTimer()
					}
					if _, err := fresh[0].Get(ctx, "long", at.id); err != nil {
						b.Fatal(err)
					}
					fresh = fresh[1:]
				}
			})
		}
		b.Run("GetMiddle", func(b *testing.B) {
			for b.Loop() {
				if _, err := e.Get(ctx, "long", last/2); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("History", func(b *testing.B) {
			for b.Loop() {
				if cps, err := e.History(ctx, "long", 0, 0); err != nil || int64(len(cps)) != last {
					b.Fatal(len(cps), err)
				}
			}
		})
		// Transcript: every original message of the thread (the check
		// of a summary against what it folded in reads a range of them).
		b.Run("Transcript", func(b *testing.B) {
			n := int64(0)
			for {
				ms, err := e.Store().MessagesAt(ctx, "long", n+1)
				if err != nil {
					b.Fatal(err)
				}
				if len(ms) == 0 {
					break
				}
				n++
			}
			for b.Loop() {
				if got, err := e.Transcript(ctx, "long", 0, 1, n); err != nil || int64(len(got)) != n {
					b.Fatal(len(got), err)
				}
			}
			b.ReportMetric(float64(n), "messages")
		})
		b.Run("Turn", func(b *testing.B) {
			n := 0
			for b.Loop() {
				n++
				if _, err := e.Run(ctx, "long", ticket.Input(fmt.Sprintf(bench.Sentences[n%len(bench.Sentences)], n)), engine.RunConfig{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
}
