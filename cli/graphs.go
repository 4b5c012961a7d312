package cli

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"rewind/cli/app"
	"rewind/demo/research"
	"rewind/engine"
	"rewind/engine/ticket"
	"rewind/engine/worker"
	"rewind/store/backend"
	"rewind/tui"
	"rewind/tui/ticketview"
)

// graphEntry is a graph `rewind tui --graph NAME` opens: how the app
// builds its engine (nil: the ticket's, the app's own) and what the TUI
// shows beyond its channels by shape (nil: nothing, any graph's panes).
type graphEntry struct {
	app *app.Graph
	ext tui.Extension
	// drill is how `rewind drill --graph NAME` drives it (nil: the
	// ticket's own drill, drill.Run).
	drill *graphDrill
	// input is what a turn's text is on it, for help and errors.
	input string
}

// graphDrill is a graph's generic drill (drill.RunGraph): the turn's text,
// and the person's answer where a run waits for one.
type graphDrill struct {
	input  string
	answer func(head engine.Checkpoint) ([]engine.Write, error)
}

// defaultGraph is the graph every command opens unless told otherwise.
const defaultGraph = ticket.GraphName

// graphs are the graphs the TUI opens by name. A graph added here needs
// no code in tui: the panes read its channels by shape and draw its
// declared nodes and edges.
var graphs = map[string]graphEntry{
	defaultGraph: {ext: ticketview.Extension(), input: "the customer's message"},
	research.Name: {input: "the question", app: &app.Graph{Name: research.Name, New: research.Graph, Mock: research.NewMock, Roles: research.Roles},
		drill: &graphDrill{input: research.Question, answer: research.Answer(research.Review{Decision: research.Approve})}},
}

// drillGraphEnv names the graph a `rewind drill --graph` worker builds:
// the drill starts this binary again with it set (drill.MainIfWorker).
const drillGraphEnv = "REWIND_DRILL_GRAPH"

// buildDrilled is the engine of the graph $REWIND_DRILL_GRAPH names on the
// store spec, with its offline mock: what a drill's worker and the drill
// itself run.
func buildDrilled(ctx context.Context, spec string) (*engine.Engine, error) {
	return buildGraph(ctx, os.Getenv(drillGraphEnv), spec)
}

// buildGraph is the engine of graph name on the store spec, with its
// offline mock.
func buildGraph(ctx context.Context, name, spec string) (*engine.Engine, error) {
	g, ok := graphs[name]
	if !ok || g.app == nil {
		return nil, fmt.Errorf("$%s=%q: no graph of rewind's with a generic drill; choose %s", drillGraphEnv, name, graphNames())
	}
	st, err := backend.Open(ctx, spec)
	if err != nil {
		return nil, err
	}
	e, err := engine.New(st, g.app.New(), g.app.Mock())
	if err != nil {
		_ = st.Close()
		return nil, err
	}
	return e, nil
}

// graphNames lists the graphs' names, sorted, for flags and errors.
func graphNames() string { return strings.Join(graphList(), ", ") }

// graphList is the names of the graphs rewind builds, sorted.
func graphList() []string { return slices.Sorted(maps.Keys(graphs)) }

// perGraph is "NAME: what" for each graph, by name, for words that
// differ by graph (help written before the graph is known).
func perGraph(what func(g graphEntry) string) string {
	names := graphList()
	for i, n := range names {
		names[i] = n + ": " + what(graphs[n])
	}
	return strings.Join(names, "; ")
}

// turnText is what a turn's text is on the graph given names, or on
// each graph when none is given.
func turnText(given string) string {
	if g, ok := graphs[given]; ok {
		return g.input
	}
	return "the turn's text (" + perGraph(func(g graphEntry) string { return g.input }) + ")"
}

// nodeNames are g's nodes, in the ticket's pipeline order for the ticket.
func (g graphEntry) nodeNames() string {
	if g.app == nil {
		return strings.Join(ticket.Nodes, ", ")
	}
	return strings.Join(g.app.New().Nodes(), ", ")
}

// graphNamed is the graph name names, or a usage error naming the graphs.
func graphNamed(name string) (graphEntry, error) {
	g, ok := graphs[strings.TrimSpace(name)]
	if !ok {
		return graphEntry{}, usagef("--graph %s: no such graph; choose %s", idText(name), graphNames())
	}
	return g, nil
}

// takes refuses what only the ticket's graph takes, on another: its
// approval answers, and a turn's attachments, draft and scenario. It names
// the graph, not --graph: the thread may record it, no flag given.
func (g graphEntry) takes(req worker.Request) error {
	if g.app == nil {
		return nil
	}
	name := g.app.Name
	switch {
	case req.Op == worker.OpApprove || req.Op == worker.OpReject:
		return usagef("graph %s: %s answers the ticket's approval gate; on this graph edit the state its gate waits on (rewind tui: e) and resume", name, req.Op)
	case len(turnOf(req).Attach) > 0 || turnOf(req).Draft || turnOf(req).Scenario != "":
		return usagef("graph %s takes --input alone: --attach, --draft, --auth-ttl and --scenario are the ticket's", name)
	}
	return nil
}

// turnOf is req's turn as the CLI's flags made it (a ticket.Turn, on
// every graph: its text is any graph's typed input); zero when none.
func turnOf(req worker.Request) ticket.Turn {
	t, _ := req.Turn.(ticket.Turn)
	return t
}

// graphInput is text as a turn's writes through g's declared Input.
func graphInput(g *engine.Graph, text string) ([]engine.Write, error) {
	in := g.TurnInput()
	if in == nil {
		return nil, usagef("graph %s takes no typed input: resume, replay or edit its state instead", g.Name)
	}
	ws, err := in(engine.Input{Text: text}, time.Now())
	if err != nil {
		return nil, fmt.Errorf("graph %s's input: %w", g.Name, err)
	}
	return ws, nil
}

// graphKey carries graphChoice, what a command that reads or writes a
// thread knows of its graph, to the app it opens (openReader, openApp).
type graphKey struct{}

// graphChoice is the thread a command opens ("" for none: the threads
// list, a new thread) and --graph as the command line gave it ("" when
// not given).
type graphChoice struct {
	thread, flag string
	// listings: a command that reads a thread's listings and events
	// (events, stats) reads one of a graph rewind does not build as the
	// ticket's, as it did before threads recorded graphs, not refused.
	listings bool
}

// forListings is forThread for a command that reads thread's events and
// listings: the graph the thread records when rewind builds it, else the
// ticket's.
func forListings(ctx context.Context, thread string) context.Context {
	return context.WithValue(ctx, graphKey{}, graphChoice{thread: thread, listings: true})
}

// forThread is ctx for a command that opens thread: its app builds the
// graph the thread records (app.RecordedGraph), or,
// for a thread that records none (a new one, or one stored before graphs
// were recorded), the one flag names (--graph as given, "" when not: the
// ticket's). A flag naming no graph is a usage error naming the graphs.
func forThread(ctx context.Context, thread, flag string) (context.Context, error) {
	flag = strings.TrimSpace(flag)
	if flag != "" {
		if _, err := graphNamed(flag); err != nil {
			return ctx, err
		}
	}
	return context.WithValue(ctx, graphKey{}, graphChoice{thread: thread, flag: flag}), nil
}

// givenGraph is --graph's value when the command line gave it, else "".
func givenGraph(c *cobra.Command, value string) string {
	if c == nil || !c.Flags().Changed("graph") {
		return ""
	}
	return value
}

// graphConfig sets cfg's graph as ctx's choice says (none: the ticket's).
func graphConfig(ctx context.Context, cfg *app.Config) {
	ch, _ := ctx.Value(graphKey{}).(graphChoice)
	if ch.flag != "" {
		cfg.Graph = graphs[ch.flag].app
	}
	if ch.thread != "" {
		cfg.Thread, cfg.Choose = ch.thread, ch.choose
	}
}

// choose is the graph of a thread that records recorded ("" for none).
// --graph naming another is refused (exit 2) before anything is read
// as that graph, or written; a graph rewind does not build (a thread a
// user's own program wrote) is named with the graphs it builds.
func (ch graphChoice) choose(recorded string) (*app.Graph, error) {
	if recorded == "" {
		return graphs[cmp.Or(ch.flag, defaultGraph)].app, nil
	}
	if ch.flag != "" && ch.flag != recorded {
		return nil, usagef("--graph %s: thread %s was run on graph %s, which it records: drop --graph (or give --graph %s), or run graph %s on a new thread", idText(ch.flag), idText(ch.thread), idText(recorded), idText(recorded), idText(ch.flag))
	}
	g, ok := graphs[recorded]
	if !ok && ch.listings {
		return graphs[defaultGraph].app, nil
	}
	if !ok {
		return nil, fmt.Errorf("thread %s was run on graph %s, which this rewind does not build (it builds %s): open it with the program that defines that graph (its engine and tui.Run); rewind log, runs and events read its listings", idText(ch.thread), idText(recorded), graphNames())
	}
	return g.app, nil
}

// withThreadEngine is withEngine on the graph thread records (or, for
// one that records none, the graph given names: --graph as given).
func withThreadEngine(ctx context.Context, store, thread, given string, fn func(*engine.Engine) error) error {
	ctx, err := forThread(ctx, thread, given)
	if err != nil {
		return err
	}
	return withEngine(ctx, store, fn)
}

// entryOf is the registry's entry of the graph an app runs.
func entryOf(g *app.Graph) graphEntry {
	if g == nil {
		return graphs[defaultGraph]
	}
	return graphs[g.Name]
}

// addGraphFlag is --graph on a command that reads or edits threads.
func addGraphFlag(c *cobra.Command, name *string) {
	c.Flags().StringVar(name, "graph", defaultGraph, "the graph `NAME` of a thread that does not record its own (stored before rewind recorded it): "+graphNames())
}

// anyGraph is nil when check passes on the graph given names, or, when
// none is given, on any of rewind's graphs (the thread's is not read
// yet); else the ticket's refusal, or given's.
func anyGraph(given string, check func(graphEntry) error) error {
	if given != "" {
		return check(graphs[given])
	}
	for _, g := range graphs {
		if check(g) == nil {
			return nil
		}
	}
	return check(graphs[defaultGraph])
}

// graphArg is " --graph NAME" for a hint's command line on another graph
// than the ticket's ("" on the ticket's).
func graphArg(name string) string {
	if name == "" || name == defaultGraph {
		return ""
	}
	return " --graph " + idText(name)
}

// killPoint refuses a --kill-at the graph has no such point for (the
// ticket's own and generic points; another graph's generic ones).
func (g graphEntry) killPoint(spec string) error {
	if spec == "" {
		return nil
	}
	var err error
	if g.app == nil {
		_, _, err = worker.Parse(spec)
	} else {
		_, _, err = worker.ParseFor(g.app.New(), spec)
	}
	if err != nil {
		return usageOf(err)
	}
	return nil
}

// startFails refuses, for the TUI started on graph start (no thread), a
// --mock-fail role that graph's mock does not play: the flag is checked
// against the graph the TUI starts on, and the words name the graph whose
// role it is.
func startFails(start string, roles []string) error {
	start = cmp.Or(start, defaultGraph)
	for _, role := range roles {
		if slices.Contains(graphs[start].app.MockRoles(), role) {
			continue
		}
		msg := fmt.Sprintf("--mock-fail %q: not a model role of graph %s, the graph the TUI starts on (a thread opened from the list must play it too)", role, start)
		for _, n := range graphList() {
			if slices.Contains(graphs[n].app.MockRoles(), role) {
				return usagef("%s: start on graph %s (--graph %s), whose mock plays it", msg, n, n)
			}
		}
		return usagef("%s, and no graph's mock plays it; graph %s's mock plays %s", msg, start, strings.Join(graphs[start].app.MockRoles(), ", "))
	}
	return nil
}
