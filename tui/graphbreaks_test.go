package tui

import (
	"slices"
	"strings"
	"testing"

	"rewind/demo/research"
	"rewind/engine/ticket"
)

// breakOn toggles the break dialog's first row ("before" the graph's
// first node) and closes it; it returns that row.
func (h *harness) breakOn() string {
	h.t.Helper()
	h.key("b")
	bd, ok := h.m.dialog.(*breakDialog)
	if !ok {
		h.t.Fatalf("b opened no break dialog:\n%s", h.screen())
	}
	row := bd.items()[0]
	h.key(" ")
	h.key("esc")
	return row
}

// breaks are the next run's breakpoints, as "before:node".
func (h *harness) breaks() []string {
	rs := h.m.runs.settings()
	var out []string
	for _, n := range rs.InterruptBefore {
		out = append(out, "before:"+n)
	}
	for _, n := range rs.InterruptAfter {
		out = append(out, "after:"+n)
	}
	return out
}

// TestEachGraphKeepsItsBreakpoints: breakpoints set on a ticket thread
// are the ticket graph's; a research thread opened after has research's
// own (none until set), and back on a ticket thread the ticket's are set
// again, research's not. Before, switching to research dropped the
// ticket's breakpoints for good.
func TestEachGraphKeepsItsBreakpoints(t *testing.T) {
	t.Parallel()
	tk, _, graphs := twoGraphs(t)
	deps := depsOf(Options{Engine: tk, StoreLabel: "memory:", Extension: TicketExtension(), Graphs: graphs})
	h := newHarnessDeps(t, deps, Settings{}, 160, 45)

	h.listOpen("ticket-1")
	h.until("ticket-1 opened", func() bool { return h.loaded() && h.m.sess.graph().Name == ticket.GraphName })
	tkBreak := h.breakOn()
	if got := h.breaks(); !slices.Equal(got, []string{tkBreak}) {
		t.Fatalf("on ticket-1 the breakpoints are %v, want [%s]", got, tkBreak)
	}

	h.key("t")
	h.listOpen("research-1")
	h.until("research-1 opened on graph research", func() bool { return h.loaded() && h.m.sess.graph().Name == research.Name })
	if got := h.breaks(); len(got) != 0 {
		t.Fatalf("on research-1 the ticket's breakpoints %v are set", got)
	}
	rsBreak := h.breakOn()
	if rsBreak == tkBreak {
		t.Fatalf("the graphs' first rows are both %s: the test cannot tell them apart", rsBreak)
	}

	h.key("t")
	h.listOpen("ticket-1")
	h.until("ticket-1 opened on graph ticket again", func() bool { return h.loaded() && h.m.sess.graph().Name == ticket.GraphName })
	if got := h.breaks(); !slices.Equal(got, []string{tkBreak}) {
		t.Errorf("back on ticket-1 the breakpoints are %v, want the ticket's [%s]", got, tkBreak)
	}
	h.key("b")
	if !h.contains("[x] before") {
		t.Errorf("the break dialog shows none set:\n%s", h.screen())
	}
	h.key("esc")

	h.key("t")
	h.listOpen("research-1")
	h.until("research-1 opened on graph research again", func() bool { return h.loaded() && h.m.sess.graph().Name == research.Name })
	if got := h.breaks(); !slices.Equal(got, []string{rsBreak}) {
		t.Errorf("back on research-1 the breakpoints are %v, want research's [%s]", got, rsBreak)
	}
	if !slices.ContainsFunc(h.m.status.log, func(e logEntry) bool { return strings.Contains(e.text, "breakpoints") }) {
		t.Errorf("no status line said what became of the breakpoints")
	}
}
