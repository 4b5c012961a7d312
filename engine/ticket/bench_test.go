package ticket_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"rewind/engine"
	"rewind/engine/ticket"
	"rewind/store"
	"rewind/store/memory"
	"rewind/store/sqlite"
)

// benchRun measures one whole ticket turn (planner, 3 executors, critic
// loop, reply: 8 model calls, 7 checkpoints) with the mock at zero latency.
func benchRun(b *testing.B, st store.Store) {
	ctx := context.Background()
	e, err := engine.New(st, ticket.NewGraph(), ticket.NewMock())
	if err != nil {
		b.Fatal(err)
	}
	in := ticket.Input(sentence, "blob://tickets/2026/att-1.png")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := e.Run(ctx, fmt.Sprintf("bench-%d", i), in, engine.RunConfig{}); err != nil {
			b.Fatal(err)
		}
	}
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
