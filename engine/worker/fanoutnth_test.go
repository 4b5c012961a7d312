package worker_test

import (
	"sync"
	"testing"
	"time"

	"rewind/engine"
	"rewind/engine/ticket"
	"rewind/engine/worker"
)

// The ticket's mid-fanout@2 lets the first executor fan-out run whole and
// kills in the second, once its first executor finished: it held the
// first fan-out's other executors for good, and the run hung there (the
// kill it waited for counted finishes that the hold stopped). The bound
// only guards against that hang; it times nothing.
func TestTicketMidFanoutAtNLetsTheEarlierFanOutsRun(t *testing.T) {
	t.Parallel()
	p, nth, err := worker.Parse("mid-fanout@2")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var kills []string
	trig := worker.NewTrigger(p, nth, func(point worker.KillPoint) {
		mu.Lock()
		defer mu.Unlock()
		kills = append(kills, string(point))
	})
	task := func(id string) *engine.Task { return &engine.Task{ID: id, Node: ticket.NodeExecutor} }
	killed := func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), kills...) }
	done := make(chan struct{})
	go func() {
		defer close(done)
		// The first fan-out, from checkpoint 2: both executors run.
		for _, id := range []string{"a", "b"} {
			trig.Hook(engine.HookBeforeModelCall, engine.HookInfo{Checkpoint: 2, Task: task(id), Role: "executor"})
		}
		for _, id := range []string{"a", "b"} {
			trig.Hook(engine.HookTaskFinished, engine.HookInfo{Checkpoint: 2, Task: task(id)})
		}
		if k := killed(); len(k) > 0 {
			t.Errorf("mid-fanout@2 killed in the first fan-out: %v", k)
		}
		// The second, from checkpoint 4: its first executor is let run,
		// and its finish is the kill.
		trig.Hook(engine.HookBeforeModelCall, engine.HookInfo{Checkpoint: 4, Task: task("c"), Role: "executor"})
		trig.Hook(engine.HookTaskFinished, engine.HookInfo{Checkpoint: 4, Task: task("c")})
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("mid-fanout@2 still holds an executor of the first fan-out 30 s on: the run hangs there")
	}
	if k := killed(); len(k) != 1 || k[0] != string(worker.MidFanout) {
		t.Errorf("kills = %v, want one mid-fanout, at the second fan-out's first finish", k)
	}
}
