package tui

import (
	"context"
	"strings"
	"sync"
	"testing"

	"rewind/engine"
	"rewind/engine/model"
	"rewind/engine/ticket"
)

// stallingModel is the mock, but every executor call waits until its run
// is stopped.
type stallingModel struct {
	inner   model.Model
	once    *sync.Once
	stalled chan struct{}
}

func (s stallingModel) Complete(ctx context.Context, req model.Request) (model.Response, error) {
	if req.Role != model.RoleExecutor {
		return s.inner.Complete(ctx, req)
	}
	s.once.Do(func() { close(s.stalled) })
	<-ctx.Done()
	return model.Response{}, ctx.Err()
}

// Issue 33, item 4: a run stopped with x leaves its newest checkpoint
// saying running (a process cannot record that it stopped); the threads
// list shows it stopped, from the thread's lock, and running while it
// runs.
func TestARunStoppedWithXReadsStoppedInTheList(t *testing.T) {
	m := stallingModel{inner: ticket.NewMock(), once: &sync.Once{}, stalled: make(chan struct{})}
	e := newClockedEngine(t, newStore(), ticket.NewGraph(), m) // a memory store names its lock's holder
	h := newHarness(t, e, Settings{Thread: "x"}, 120, 40)
	h.until("the empty thread", func() bool { return !h.m.timeline.loading })
	h.key("i")
	h.typeText(firstInput)
	h.key("enter")
	h.until("the executors", func() bool {
		select {
		case <-m.stalled:
			return h.m.live.run != nil
		default:
			return false
		}
	})
	row := func() string {
		for _, l := range strings.Split(h.screen(), "\n") {
			if strings.Contains(l, " x ") && strings.Contains(l, "checkpoints") {
				return l
			}
		}
		return ""
	}
	listed := func() {
		t.Helper()
		gen := h.m.threads.gen
		h.key("t")
		h.until("the list's states read anew", func() bool {
			return h.m.threads.gen > gen && h.m.threads.states["x"].gen == h.m.threads.gen
		})
	}
	listed()
	if r := row(); !strings.Contains(r, " running ") {
		t.Fatalf("while the run goes on the row should say running: %q\n%s", r, h.screen())
	}
	h.key("esc")
	h.until("the thread view", func() bool { return h.m.screen == screenThread })
	h.key("x")
	h.until("the run to stop", func() bool { return !h.m.busy() && strings.Contains(h.m.status.text, "stopped at @") })
	if st, err := e.Status(context.Background(), "x"); err != nil || st.Status != engine.RunRunning {
		t.Fatalf("the stored status: %+v %v; this test wants a listing that still says running", st, err)
	}
	listed()
	if r := row(); !strings.Contains(r, " stopped ") {
		t.Fatalf("a stopped run's row should say stopped: %q\n%s", r, h.screen())
	}
}
