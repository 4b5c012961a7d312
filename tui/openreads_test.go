package tui

import (
	"context"
	"runtime/debug"
	"strings"
	"sync"
	"testing"

	"rewind/demo/research"
	"rewind/engine"
	"rewind/engine/ticket"
	"rewind/store"
)

// listingReads is a store that counts the pages of each thread's listings
// read (History).
type listingReads struct {
	store.Store
	mu    sync.Mutex
	reads map[string]int
}

func (s *listingReads) History(ctx context.Context, thread string, before int64, limit int) ([]store.Checkpoint, error) {
	// The threads list's own reads of its rows (their state, their graph)
	// are not the open's, and a limit of 0 is Engine.Runs' whole-thread
	// read for the runs strip: a page is what is counted.
	if limit > 0 && !strings.Contains(string(debug.Stack()), "(*threadList)") {
		s.mu.Lock()
		s.reads[thread]++
		s.mu.Unlock()
	}
	return s.Store.History(ctx, thread, before, limit)
}

func (s *listingReads) of(thread string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reads[thread]
}

// TestOpeningAThreadReadsItsListingsOnce: opening a thread from the
// threads list reads its listings once, the first page, which also
// says which graph wrote it, on the graph the session runs and on
// another's alike. Before, which graph wrote it was a read of its own
// (and, switching graphs, read again once switched) before the page.
func TestOpeningAThreadReadsItsListingsOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := &listingReads{Store: newStore(), reads: map[string]int{}}
	tk := newClockedEngine(t, st, ticket.NewGraph(), ticket.NewMock())
	if _, err := tk.Run(ctx, "ticket-1", ticket.Input(firstInput), engine.RunConfig{}); err != nil {
		t.Fatal(err)
	}
	rs := newClockedEngine(t, st, research.Graph(), research.NewMock())
	in, err := rs.Graph().TurnInput()(engine.Input{Text: research.Question}, fixedClock())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rs.Run(ctx, "research-1", in, engine.RunConfig{}); err != nil {
		t.Fatal(err)
	}
	graphs := func(_ context.Context, name string) (GraphDeps, error) {
		return GraphDeps{Engine: rs}, nil
	}
	deps := depsOf(Options{Engine: tk, StoreLabel: "memory:", Extension: TicketExtension(), Graphs: graphs})
	h := newHarnessDeps(t, deps, Settings{}, 160, 45)

	for _, c := range []struct{ thread, graph string }{{"ticket-1", ticket.GraphName}, {"research-1", research.Name}} {
		h.until("the threads list", func() bool { return h.m.screen == screenThreads && h.m.threads.find(c.thread) })
		h.drain()
		before := st.of(c.thread)
		h.listOpen(c.thread)
		h.until(c.thread+" opened on graph "+c.graph, func() bool {
			return h.loaded() && h.m.sess.graph().Name == c.graph && !h.m.timeline.loading
		})
		h.drain()
		if got := st.of(c.thread) - before; got != 1 {
			t.Errorf("opening %s read its listings %d times, want once", c.thread, got)
		}
		h.key("t")
	}
}
