package tui

import (
	"context"
	"errors"
	"fmt"
	"maps"

	tea "github.com/charmbracelet/bubbletea"

	"rewind/engine"
	"rewind/engine/recorded"
	"rewind/store"
	"rewind/store/browse"
	"rewind/tui/termtext"
)

// Opening a thread another graph wrote (the threads list holds every
// graph's threads): its first page of listings, read once, names its
// graph (readFirstPage: a listing reads alike on every graph, where the
// head's state may not), the session builds that graph's deps through
// Deps.Graphs, in a Cmd, once per graph, and the root switches to them
// (model.go: onGraphOf, onGraphBuilt, useGraph), taking the page read. A
// graph opened before, the first one included, is reused.

// graphSet is the graphs the session has run threads on, by name, and
// how it builds another.
type graphSet struct {
	build    func(name string) tea.Cmd // nil: no other graph is built
	built    map[string]Deps
	building map[string]bool
	// home is the graph the session was started on: a new thread runs
	// on it, whichever thread was opened last.
	home string
	// wanted is the graph the open thread records, once read ("": not
	// read, or it records none).
	wanted string
	// stray says how to open the open thread when it is read on this
	// graph, not wanted, its own ("": it reads on its own).
	stray string
	// held is the first page of the chain open at heldGen, read, waiting
	// for its graph to be built: taken on the wrong graph, its checkpoint's
	// read fails (to the research graph a ticket checkpoint is of a newer
	// schema), and the error flashed before the switch read it again.
	held    *historyMsg
	heldGen int
}

// hold keeps page, the first page of the chain open at gen, until its
// graph is built.
func (g *graphSet) hold(gen int, page *historyMsg) { g.held, g.heldGen = page, gen }

// release gives the page held for gen (nil: none), once.
func (g *graphSet) release(gen int) *historyMsg {
	if g.held == nil || g.heldGen != gen {
		return nil
	}
	page := g.held
	g.held = nil
	return page
}

// take is a Cmd that delivers page, read already (nil: none).
func take(page *historyMsg) tea.Cmd {
	if page == nil {
		return nil
	}
	p := *page
	return func() tea.Msg { return p }
}

// graphBuiltMsg is graph name's deps built (err: not built). The root
// switches to them if the thread open then is that graph's.
type graphBuiltMsg struct {
	name string
	deps Deps
	err  error
}

func newGraphSet(s *session) graphSet {
	gs := graphSet{built: map[string]Deps{}, building: map[string]bool{}}
	if g := s.graph(); g != nil {
		gs.built[g.Name], gs.home = s.deps, g.Name
	}
	if open := s.deps.Graphs; open != nil {
		ctx := s.ctx
		gs.build = func(name string) tea.Cmd {
			return func() tea.Msg {
				d, err := open(ctx, name)
				return graphBuiltMsg{name: name, deps: d, err: err}
			}
		}
	}
	return gs
}

// started is the deps of the graph the session was started on (ok
// false: it runs none).
func (g *graphSet) started() (name string, d Deps, ok bool) {
	d, ok = g.built[g.home]
	return g.home, d, ok && g.home != ""
}

// snapshot is a copy of the deps built, by graph name, for a Cmd to read
// (Update changes the map).
func (g *graphSet) snapshot() map[string]Deps { return maps.Clone(g.built) }

// want is the deps of graph name when built (ok), else the Cmd that
// builds them (nil: none is built, or it is under way: pending).
func (g *graphSet) want(name string) (d Deps, ok bool, cmd tea.Cmd) {
	if d, ok := g.built[name]; ok {
		return d, true, nil
	}
	if g.build == nil || g.building[name] {
		return Deps{}, false, nil
	}
	g.building[name] = true
	return Deps{}, false, g.build(name)
}

// took keeps what a build brought; can says whether the session may
// switch to it (built, and no error).
func (g *graphSet) took(msg graphBuiltMsg) (can bool) {
	delete(g.building, msg.name)
	if msg.err != nil {
		return false
	}
	g.built[msg.name] = msg.deps
	return true
}

// keep takes the graphs built to read the threads list's rows, each one
// the session has neither built nor is building (a build under way
// brings its own).
func (g *graphSet) keep(made map[string]Deps) {
	for name, d := range made {
		if _, ok := g.built[name]; !ok && !g.building[name] {
			g.built[name] = d
		}
	}
}

// pending says whether graph name is being built.
func (g *graphSet) pending(name string) bool { return g.building[name] }

// misread is the warning for thread, which graph rec wrote, read on graph
// open; how says how to open it (openHint).
func misread(thread, rec, open, how string) string {
	return fmt.Sprintf("%s was run on graph %s, not %s: its panes misread it; %s", termtext.Name(thread), termtext.Name(rec), termtext.Name(open), how)
}

// openHint says how to open thread, which graph rec wrote, where this
// session cannot (err: why its graph was not built). A graph the registry
// does not build (err wraps ErrUnknownGraph) is opened by the program
// that defines it: `rewind tui T` refuses that thread too. With no
// registry (canBuild false: a program on its own graph) which of the two
// it is, is not known here: both are said.
func openHint(thread, rec string, canBuild bool, err error) string {
	t, r := termtext.Name(thread), termtext.Name(rec)
	switch {
	case errors.Is(err, ErrUnknownGraph):
		return "open it with the program that defines graph " + r
	case !canBuild:
		return "open it with the program that defines graph " + r + " (rewind tui " + t + " if rewind builds it)"
	case err != nil:
		return "rewind tui " + t + " opens it on its own graph (" + termtext.Line(err.Error()) + ")"
	}
	return "rewind tui " + t + " opens it on its own graph"
}

// strayRead is err, a read of thread that failed, said while the thread is
// read on graph open, not rec, its own (the session could not switch):
// which graph wrote it and how to open it (how). A schema "newer than
// this rewind" is rec's schema, so its "upgrade rewind" is not said.
func strayRead(err error, thread, rec, open, how string) string {
	wrote := "it was written by graph " + termtext.Name(rec) + "; " + how
	if errors.Is(err, engine.ErrNewerSchema) {
		return termtext.Name(thread) + " does not read on graph " + termtext.Name(open) + ": " + wrote
	}
	return err.Error() + " (" + wrote + ")"
}

// graphOfMsg is the graph thread (open at gen) records ("": none), and
// the first page of its listings, which said it.
type graphOfMsg struct {
	gen          int
	thread, name string
	err          error
	page         *historyMsg
}

// readFirstPage reads chain c's first page of listings (open at gen) and
// which graph the thread records from it: its newest listing that names
// one. A full page that names none reads on (recorded.Graph: a run longer
// than the page, or a thread stored before graphs were recorded); one
// that holds the whole thread says it records none.
func readFirstPage(ctx context.Context, src browse.Source, b Backend, gen int, c browse.Chain) tea.Cmd {
	load := loadHistory(ctx, src, gen, c, "", firstPage)
	return func() tea.Msg {
		page, _ := load().(historyMsg)
		msg := graphOfMsg{gen: gen, thread: c.Thread, name: page.graph, page: &page}
		if page.err == nil && page.graph == "" && page.more {
			name, err := recorded.Graph(ctx, b, c.Thread)
			if errors.Is(err, store.ErrNotFound) {
				err = nil // a new thread: its first run records it
			}
			msg.name, msg.err = name, err
		}
		return msg
	}
}
