package tui

import (
	"context"
	"testing"
)

// BenchmarkThreadStateRow is one row's lazy read on the threads list (run
// status and last input) of the 10,000-checkpoint thread.
func BenchmarkThreadStateRow(b *testing.B) {
	e := bigThread(b)
	be := EngineBackend(e)
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if st := readThreadState(ctx, be, TicketExtension(), "big"); st.status == "" || st.lastInput == "" {
			b.Fatalf("no state read: %+v", st)
		}
	}
}

// BenchmarkCompareAcrossBranches is what = reads on the 10,000-checkpoint
// thread: two checkpoints far apart on different branches, their relation
// and the diff.
func BenchmarkCompareAcrossBranches(b *testing.B) {
	e := bigThread(b)
	be := EngineBackend(e)
	ctx := context.Background()
	latest, err := e.Latest(ctx, "big")
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d := &compareDialog{a: "499", b: idOf(latest.ID), loading: true}
		msg := loadCompare(ctx, be, "big", d)().(compareMsg)
		if msg.err != nil || msg.rel == "" {
			b.Fatalf("compare: %v %q", msg.err, msg.rel)
		}
	}
}
