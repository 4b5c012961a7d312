package tui

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"rewind/demo/research"
	"rewind/engine"
	"rewind/engine/ticket"
)

// listOpen opens thread id from the threads list (the list shown).
func (h *harness) listOpen(id string) {
	h.t.Helper()
	h.until("the threads list holds "+id, func() bool { return h.m.screen == screenThreads && h.m.threads.find(id) })
	h.key("home")
	for range len(h.m.threads.rows) {
		if t, _, ok := h.m.threads.selected(); ok && t.ID == id {
			h.key("enter")
			return
		}
		h.key("j")
	}
	h.t.Fatalf("%s is not a row of the threads list:\n%s", id, h.screen())
}

// twoGraphs is a store holding a ticket thread (tk, its first turn) and a
// research thread (rs, asked, approved and published), the ticket's
// engine on it, and the research graph's registry entry: what `rewind
// tui` opens on a store both demos wrote.
func twoGraphs(t *testing.T) (tk, rs *engine.Engine, graphs func(context.Context, string) (GraphDeps, error)) {
	t.Helper()
	ctx := context.Background()
	st := storeOnly{newStore()}
	tk = newClockedEngine(t, st, ticket.NewGraph(), ticket.NewMock())
	if _, err := tk.Run(ctx, "ticket-1", ticket.Input(firstInput), engine.RunConfig{}); err != nil {
		t.Fatal(err)
	}
	rs = newClockedEngine(t, st, research.Graph(), research.NewMock())
	in, err := rs.Graph().TurnInput()(engine.Input{Text: research.Question}, fixedClock())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rs.Run(ctx, "research-1", in, engine.RunConfig{}); err != nil {
		t.Fatal(err)
	}
	if _, err := rs.Answer(ctx, "research-1", research.Answer(research.Review{Decision: research.Approve}), engine.RunConfig{}); err != nil {
		t.Fatal(err)
	}
	graphs = func(_ context.Context, name string) (GraphDeps, error) {
		if name != research.Name {
			return GraphDeps{}, fmt.Errorf("graph %s: %w", name, ErrUnknownGraph)
		}
		return GraphDeps{Engine: rs, WorkerFlags: []string{"--graph=" + research.Name}}, nil
	}
	return tk, rs, graphs
}

// TestTheThreadsListOpensAThreadOnItsOwnGraph: `rewind tui` (no thread)
// lists every graph's threads; opening a research thread from a screen
// built on the ticket's graph reads it on research's own (its channels by
// shape, none of the ticket's panes), a turn sent there runs the research
// graph, and a ticket thread opened after reads as the ticket's again.
// Before, the research thread said "its panes misread it" and stayed on
// the ticket's graph.
func TestTheThreadsListOpensAThreadOnItsOwnGraph(t *testing.T) {
	t.Parallel()
	tk, _, graphs := twoGraphs(t)
	deps := depsOf(Options{Engine: tk, StoreLabel: "memory:", Extension: TicketExtension(), Graphs: graphs})
	h := newHarnessDeps(t, deps, Settings{}, 160, 45)
	h.until("the threads list", func() bool { return h.m.threads.find("research-1") && h.m.threads.find("ticket-1") })

	h.listOpen("research-1")
	h.until("research-1 opened on graph research", func() bool {
		return h.loaded() && h.m.sess.graph().Name == research.Name && strings.Contains(h.m.status.text, "on graph research")
	})
	h.key("2") // the State pane
	h.until("the State pane by research's shape", func() bool { return strings.Contains(h.paneText(paneState), research.ChanPublished) })
	st := h.paneText(paneState)
	for _, no := range append(ticketWords, "misread") {
		if strings.Contains(st, no) || strings.Contains(h.m.status.text, no) {
			t.Errorf("research-1's State pane or status shows the ticket's %q:\n%s\nstatus %q", no, st, h.m.status.text)
		}
	}
	if h.m.sess.deps.Extension != nil {
		t.Errorf("research-1 is read through the ticket's extension")
	}

	// A turn sent here runs the research graph: its listings say so.
	before := num(h.m.timeline.tree.maxID)
	h.key("i")
	h.typeText("What does a checkpoint in WAL mode do?")
	h.key("enter")
	h.until("the research turn's end", func() bool { return h.m.live.run == nil && num(h.m.timeline.tree.maxID) > before+1 })
	hs, err := tk.History(context.Background(), "research-1", 0, 1)
	if err != nil || len(hs) != 1 {
		t.Fatalf("research-1's head: %v, %v", hs, err)
	}
	if g := hs[0].Metadata.Graph; g != research.Name {
		t.Fatalf("the turn sent on research-1 was run on graph %q (status %q), want research", g, h.m.status.text)
	}

	// Back to the list: a ticket thread reads as the ticket's.
	h.key("t")
	h.listOpen("ticket-1")
	defer func() {
		if t.Failed() {
			for _, e := range h.m.status.log {
				t.Logf("status log: %+v", e)
			}
		}
	}()
	h.until("ticket-1 opened on graph ticket", func() bool {
		return h.loaded() && h.m.sess.graph().Name == ticket.GraphName
	})
	h.until("the ticket's State pane", func() bool { return strings.Contains(h.paneText(paneState), "review rounds") })
	if h.m.sess.deps.Extension == nil {
		t.Errorf("ticket-1 is read without the ticket's extension")
	}
	// Read on research before the switch, ticket-1's checkpoints failed
	// ("a newer schema") and the error flashed: the first read waits for
	// the graph.
	for _, e := range h.m.status.log {
		if e.isErr {
			t.Errorf("switching back to the ticket's graph flashed an error: %q", e.text)
		}
	}
}

// A graph opened through Options.Graphs runs in workers told its own
// flags (--graph=NAME), on the same store and binary, not the first
// graph's: a run there builds that graph.
func TestAnotherGraphsWorkersAreToldItsGraph(t *testing.T) {
	t.Parallel()
	tk, _, graphs := twoGraphs(t)
	deps := depsOf(Options{Engine: tk, StoreLabel: "sqlite:x.db", WorkerStore: "sqlite:x.db", Exe: "/usr/bin/rewind", WorkerFlags: []string{"--mock-latency", "1s"}, Graphs: graphs})
	d, err := deps.Graphs(context.Background(), research.Name)
	if err != nil {
		t.Fatal(err)
	}
	w, ok := d.Runner.(*workerRunner)
	if !ok {
		t.Fatalf("research's runs: %T (%s), want worker processes", d.Runner, d.RunnerLabel)
	}
	if got := strings.Join(w.args("run", RunSettings{}, nil), " "); got != "worker run --store sqlite:x.db --graph=research" {
		t.Fatalf("research's worker: rewind %s", got)
	}
	if _, err := deps.Graphs(context.Background(), "nosuch"); !errors.Is(err, ErrUnknownGraph) {
		t.Fatalf("a graph the registry does not build: %v, want ErrUnknownGraph", err)
	}
}

// Where the session can switch graphs, opening a thread reads which graph
// wrote it before anything else: its first page read on the wrong graph
// failed (to research, a ticket checkpoint is of a newer schema) and the
// error flashed as the screen went back to the ticket's graph.
func TestTheFirstReadWaitsForTheThreadsGraph(t *testing.T) {
	t.Parallel()
	tk, _, graphs := twoGraphs(t)
	for _, c := range []struct {
		name   string
		graphs func(context.Context, string) (GraphDeps, error)
		alone  bool
	}{{"with other graphs", graphs, true}, {"without", nil, true}} {
		t.Run(c.name, func(t *testing.T) {
			deps := depsOf(Options{Engine: tk, StoreLabel: "memory:", Extension: TicketExtension(), Graphs: c.graphs})
			h := newHarnessDeps(t, deps, Settings{}, 160, 45)
			h.until("the threads list", func() bool { return h.m.threads.find("ticket-1") })
			_, alone := h.m.openThread("ticket-1")().(graphOfMsg)
			if alone != c.alone {
				t.Errorf("the open's first message is the graph read alone: %v, want %v", alone, c.alone)
			}
		})
	}
}

// TestAThreadOfAGraphThisProgramCannotOpenSaysHowToOpenIt: a program that
// opens the TUI on its own graph (no Options.Graphs, as demo/yourgraph)
// cannot switch to the graph a listed thread records. Opening such a
// thread, the reads that fail say which graph wrote it and how to open
// it. Before, the status bar was left saying "checkpoint schema is newer
// than this rewind; upgrade rewind to open it", a fix that does nothing.
func TestAThreadOfAGraphThisProgramCannotOpenSaysHowToOpenIt(t *testing.T) {
	t.Parallel()
	_, rs, _ := twoGraphs(t)
	deps := depsOf(Options{Engine: rs, StoreLabel: "memory:"}) // research's own program
	h := newHarnessDeps(t, deps, Settings{}, 160, 45)
	h.until("the threads list", func() bool { return h.m.threads.find("ticket-1") })
	h.listOpen("ticket-1")
	defer func() {
		if t.Failed() {
			for _, e := range h.m.status.log {
				t.Logf("status log: %+v", e)
			}
		}
	}()
	// Its graph read, its history read, its head read: each says something.
	said := func(s string) bool {
		return slices.ContainsFunc(h.m.status.log, func(e logEntry) bool { return strings.Contains(e.text, s) })
	}
	h.until("ticket-1's graph, history and head read", func() bool {
		return said("misread") && said("newest checkpoint") && !h.m.timeline.loading && h.m.live.headLoading == 0
	})
	h.drain()
	got := h.m.status.text
	for _, want := range []string{"ticket-1", "graph ticket", "the program that defines graph ticket", "rewind tui ticket-1"} {
		if !strings.Contains(got, want) {
			t.Errorf("the status line %q does not say %q", got, want)
		}
	}
	for _, e := range h.m.status.log {
		if strings.Contains(e.text, "upgrade rewind") {
			t.Errorf("the status said to upgrade rewind: %q", e.text)
		}
	}
}

// TestANewThreadRunsOnTheGraphTheTUIWasStartedOn: after a research thread
// was opened (the session switched to research's graph) and the user went
// back to the threads list, n starts a thread on the graph the TUI was
// started on (`rewind tui`'s --graph, ticket by default), named for it,
// and its dialog says which graph it runs on. Before, it ran on the last
// thread's graph, named "research-3", and nothing said so.
func TestANewThreadRunsOnTheGraphTheTUIWasStartedOn(t *testing.T) {
	t.Parallel()
	tk, _, graphs := twoGraphs(t)
	deps := depsOf(Options{Engine: tk, StoreLabel: "memory:", Extension: TicketExtension(), Graphs: graphs})
	h := newHarnessDeps(t, deps, Settings{}, 160, 45)
	h.listOpen("research-1")
	h.until("research-1 opened on graph research", func() bool { return h.loaded() && h.m.sess.graph().Name == research.Name })
	h.key("t")
	h.until("the threads list", func() bool { return h.m.screen == screenThreads })
	h.key("n")
	if !h.contains("New thread") || !h.contains("ticket-3") || !h.contains("on graph ticket") || h.contains("research-3") {
		t.Fatalf("n on the list should offer ticket-3, on graph ticket, and say so:\n%s", h.screen())
	}
	h.key("tab")
	h.typeText(firstInput)
	h.key("enter")
	h.until("ticket-3's first turn", func() bool {
		return h.m.sess.thread == "ticket-3" && h.loaded() && h.m.live.run == nil && num(h.m.timeline.tree.maxID) > 1
	})
	hs, err := tk.History(context.Background(), "ticket-3", 0, 1)
	if err != nil || len(hs) != 1 {
		t.Fatalf("ticket-3's head: %v, %v", hs, err)
	}
	if g := hs[0].Metadata.Graph; g != ticket.GraphName {
		t.Fatalf("ticket-3 was run on graph %q (status %q), want ticket", g, h.m.status.text)
	}
	if h.m.sess.graph().Name != ticket.GraphName || h.m.sess.deps.Extension == nil {
		t.Errorf("ticket-3 is shown on graph %s (extension %v), want the ticket's", h.m.sess.graph().Name, h.m.sess.deps.Extension)
	}
}
