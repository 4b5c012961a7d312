package tui

import (
	"context"

	tea "github.com/charmbracelet/bubbletea"

	"rewind/store/browse"
)

// session is what every Cmd of the thread view works with: the context,
// the backend and runner, and the chain open (thread, ns) with its
// generation. The root owns it and changes the open chain; components
// that start reads or runs hold a pointer to it and only read it (but
// for numbering the threads list's reads, in Update), so
// they always see the chain open now and can drop a stale answer by gen.
type session struct {
	ctx  context.Context
	deps Deps
	// thread's chain ns (a LangGraph subgraph's namespace; "" the root
	// graph's, and always on a rewind store).
	thread string
	ns     string
	// gen counts the chains opened: an answer for an older one is stale.
	gen int
	// graphs are the graphs deps were, or can be, built for: the root
	// sets deps to another's when the thread open is its (othergraph.go).
	graphs graphSet
	// threadReads counts the threads list's reads: an answer older than
	// the newest applied is stale (reads run at once and may end out of
	// order).
	threadReads int
}

// readThreads reads the threads list (a Cmd), numbered.
func (s *session) readThreads() tea.Cmd {
	s.threadReads++
	return loadThreads(s.ctx, s.deps.Source, s.threadReads)
}

// chain is the chain open in the thread view.
func (s *session) chain() browse.Chain { return browse.Chain{Thread: s.thread, NS: s.ns} }
