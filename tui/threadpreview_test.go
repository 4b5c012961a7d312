package tui

import (
	"testing"

	"rewind/demo/research"
)

// The threads list holds every graph's threads, and each row's last input
// is read on the row's own graph once the session has built it: back on
// the list after a research thread was opened, the ticket's rows kept
// their message and the research row showed its question. Before, every
// row was read on the graph shown last, so the ticket's rows lost their
// message (read on research, a ticket checkpoint is of a newer schema).
func TestTheThreadsListReadsEachRowOnItsOwnGraph(t *testing.T) {
	t.Parallel()
	tk, _, graphs := twoGraphs(t)
	deps := depsOf(Options{Engine: tk, StoreLabel: "memory:", Extension: TicketExtension(), Graphs: graphs})
	h := newHarnessDeps(t, deps, Settings{}, 200, 45)
	h.listOpen("research-1")
	h.until("research-1 opened on graph research", func() bool { return h.loaded() && h.m.sess.graph().Name == research.Name })
	before := h.m.threads.gen
	h.key("t") // lists again, and reads the rows' states again
	h.until("the threads list with both rows' states read again", func() bool {
		return h.m.screen == screenThreads && h.m.threads.gen > before && h.m.threads.states["ticket-1"].gen == h.m.threads.gen &&
			h.m.threads.states["research-1"].gen == h.m.threads.gen && h.m.threads.inFlight == 0
	})
	if got := h.m.threads.states["ticket-1"].lastInput; got != firstInput {
		t.Errorf("ticket-1's row shows %q, want its message %q (read on its own graph):\n%s", got, firstInput, h.screen())
	}
	if got := h.m.threads.states["research-1"].lastInput; got != research.Question {
		t.Errorf("research-1's row shows %q, want its question %q:\n%s", got, research.Question, h.screen())
	}
}
