package tui

import (
	"context"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"rewind/engine"
	"rewind/engine/recorded"
	"rewind/store/browse"
	"rewind/tui/termtext"
)

// The threads list with state: each row shows where the thread's run
// stands (Engine.LiveStatus) and its last input (the newest user message),
// read lazily, in a Cmd, for the rows on screen.

// statuser is a Backend that reads a thread's run status as it stands
// now: Engine.LiveStatus, which shows a run nobody runs any more (its
// lock is free, its listing says running) as stopped.
type statuser interface {
	LiveStatus(ctx context.Context, thread string) (engine.RunStatus, error)
}

// threadState is what a row shows of a thread beyond its listing.
type threadState struct {
	status    string // running, stopped, paused, awaiting-approval, done, failed, cancelled
	lastInput string // sanitized, one line
	err       bool
	gen       int // the listing it was read for (asked: the one asked)
	asked     int
}

// threadStateMsg carries the states read for some threads; gen is the
// listing they were read for.
type threadStateMsg struct {
	gen    int
	states map[string]threadState
	// made is the graphs built to read rows of a graph the session had
	// not built: the session keeps them, as if it had opened one.
	made map[string]Deps
}

// statesWanted are the visible rows whose state is neither read nor being
// read for the current listing (gen); they are marked as being read.
func (l *threadList) statesWanted() (ids []string, gen int) {
	if !l.loaded || l.err != nil {
		return nil, 0
	}
	if l.states == nil {
		l.states = map[string]threadState{}
	}
	for i := l.off; i < len(l.rows) && i < l.off+max(l.h, 1); i++ {
		id := l.rows[i].id
		if st := l.states[id]; st.gen != l.gen && st.asked != l.gen {
			ids = append(ids, id)
			st.asked = l.gen // in flight
			l.states[id] = st
		}
	}
	if len(ids) > 0 {
		l.inFlight++
	}
	return ids, l.gen
}

// loadStates reads the state of the visible rows not read yet, through
// the session's store.
func (l *threadList) loadStates(s *session) tea.Cmd {
	ids, gen := l.statesWanted()
	if len(ids) == 0 {
		return nil
	}
	ctx, b, src, ext := s.ctx, s.deps.Backend, s.deps.Source, s.deps.Extension
	// The list holds every graph's threads: a row is read on its own
	// graph (read on another, its state may be of a newer schema), built
	// here if the session has not (s.deps.Graphs). A copy: the Cmd must
	// not read the map Update changes.
	own := rowGraphs{built: s.graphs.snapshot(), open: s.deps.Graphs}
	if g := s.graph(); g != nil {
		own.shown = g.Name
	}
	ts := make([]browse.Thread, len(ids))
	for i, id := range ids {
		ts[i] = l.thread(id)
	}
	return func() tea.Msg {
		out := make(map[string]threadState, len(ids))
		for i, id := range ids {
			var st threadState
			if b == nil {
				st = readSourceState(ctx, src, ts[i])
			} else {
				rb, rext := b, ext
				if d, ok := own.of(ctx, b, id); ok {
					rb, rext = d.Backend, d.Extension
				}
				st = readThreadState(ctx, rb, rext, id)
			}
			st.gen, st.asked = gen, gen
			out[id] = st
		}
		return threadStateMsg{gen: gen, states: out, made: own.made}
	}
}

// rowGraphs is, for one read of the list's rows, the graphs a row may
// be read on: the session's built ones, and those open builds for rows
// of a graph not built yet (made).
type rowGraphs struct {
	shown string // the graph the session shows, b's
	built map[string]Deps
	open  func(ctx context.Context, name string) (Deps, error) // nil: none other
	made  map[string]Deps
}

// of is the deps of the graph thread records, when that is not shown, the
// graph b runs, and is built or can be (ok false: read it on b).
func (r *rowGraphs) of(ctx context.Context, b Backend, thread string) (Deps, bool) {
	if len(r.built) < 2 && r.open == nil {
		return Deps{}, false // one graph: nothing to choose, no read
	}
	name, err := recorded.Graph(ctx, b, thread)
	if err != nil || name == "" || name == r.shown {
		return Deps{}, false
	}
	if d, ok := r.built[name]; ok {
		return d, d.Backend != nil
	}
	if d, ok := r.made[name]; ok {
		return d, true
	}
	if r.open == nil {
		return Deps{}, false
	}
	d, err := r.open(ctx, name)
	if err != nil || d.Backend == nil {
		return Deps{}, false // a graph not built reads as before, on b
	}
	if r.made == nil {
		r.made = map[string]Deps{}
	}
	r.made[name] = d
	return d, true
}

// readSourceState is a read-only source's thread's status as `rewind
// threads` words it (browse.ThreadStatus: "interrupted before review",
// "error at worker") and the newest human message of its latest
// checkpoint.
func readSourceState(ctx context.Context, src browse.Source, t browse.Thread) threadState {
	s, err := browse.ThreadStatus(ctx, src, t)
	if err != nil {
		return threadState{status: "unreadable", err: true}
	}
	st := threadState{status: s.Text()}
	if t.Latest == "" {
		return st
	}
	if cp, err := src.Checkpoint(ctx, browse.Chain{Thread: t.ID}, t.Latest); err == nil {
		v, _ := cp.Value("messages")
		st.lastInput, _ = newestHuman(v)
	}
	return st
}

// readThreadState reads one thread's status and last input: its newest
// user message through the graph's extension (ext) or, with none, of its
// conversation by shape.
func readThreadState(ctx context.Context, b Backend, ext Extension, thread string) threadState {
	var st threadState
	if s, ok := b.(statuser); ok {
		rs, err := s.LiveStatus(ctx, thread)
		if err != nil {
			return threadState{status: "unreadable", err: true}
		}
		st.status = rs.Status
	}
	rows, err := b.History(ctx, thread, 0, 1)
	if err != nil || len(rows) == 0 {
		return st
	}
	cp, err := b.Get(ctx, thread, rows[0].ID)
	if err != nil {
		return st
	}
	var text string
	var ok bool
	if ext != nil {
		text, ok, err = ext.Input(cp.Values)
	} else {
		text, ok = shapeLast(cp.Values)
	}
	if err == nil && ok {
		text, _ = clipRunes(text, 400)
		st.lastInput = termtext.Line(strings.Join(strings.Fields(text), " "))
	}
	return st
}

// takeStates keeps states read (an older answer never undoes a newer one).
func (l *threadList) takeStates(states map[string]threadState) {
	l.inFlight = max(l.inFlight-1, 0)
	if l.states == nil {
		return
	}
	// Two listings close together (the one the open asked for and a
	// refresh) ask twice; their answers may come back in either order, and
	// an older answer must not undo a newer one (the row would wait for a
	// read nobody asks for again).
	for id, st := range states {
		cur := l.states[id]
		if cur.gen >= st.gen {
			continue
		}
		st.asked = max(st.asked, cur.asked)
		l.states[id] = st
	}
}

// stateText is the status column of a row.
func (s threadState) text() string {
	if s.gen == 0 {
		return "…"
	}
	return strings.ReplaceAll(s.status, "-", " ")
}

// quoteInput writes the last input for a row ("" when there is none).
func quoteInput(s string) string {
	if s == "" {
		return ""
	}
	return "“" + s + "”"
}
