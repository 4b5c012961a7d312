package tui

import (
	"context"
	"testing"

	"rewind/demo/research"
	"rewind/engine"
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

// A graph the session has not opened yet is built for the list's rows
// it wrote: on a TUI started on the ticket, the research row shows its
// question from the first listing (it showed nothing until a research
// thread was opened), and the graph built for it is the one a later
// open switches to.
func TestTheThreadsListReadsARowOfAGraphNotOpenedYet(t *testing.T) {
	t.Parallel()
	tk, rs, graphs := twoGraphs(t)
	// A research thread paused at its review, as `rewind run --graph
	// research` leaves one: read on the ticket's graph it shows nothing.
	in, err := rs.Graph().TurnInput()(engine.Input{Text: "What does a checkpoint hold?"}, fixedClock())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rs.Run(context.Background(), "research-2", in, engine.RunConfig{}); err != nil {
		t.Fatal(err)
	}
	deps := depsOf(Options{Engine: tk, StoreLabel: "memory:", Extension: TicketExtension(), Graphs: graphs})
	h := newHarnessDeps(t, deps, Settings{}, 200, 45)
	h.until("the first listing with every row's state read", func() bool {
		return h.m.screen == screenThreads && h.m.threads.gen > 0 && h.m.threads.states["ticket-1"].gen == h.m.threads.gen &&
			h.m.threads.states["research-1"].gen == h.m.threads.gen && h.m.threads.states["research-2"].gen == h.m.threads.gen && h.m.threads.inFlight == 0
	})
	if got := h.m.threads.states["research-1"].lastInput; got != research.Question {
		t.Errorf("research-1's row shows %q, want its question %q:\n%s", got, research.Question, h.screen())
	}
	if got := h.m.threads.states["research-2"].lastInput; got != "What does a checkpoint hold?" {
		t.Errorf("research-2's row (paused at its review) shows %q, want its question:\n%s", got, h.screen())
	}
	if got := h.m.threads.states["ticket-1"].lastInput; got != firstInput {
		t.Errorf("ticket-1's row shows %q, want its message %q:\n%s", got, firstInput, h.screen())
	}
	if _, ok := h.m.sess.graphs.built[research.Name]; !ok {
		t.Errorf("the research graph built for the row is not kept for the session to open it on")
	}
}
