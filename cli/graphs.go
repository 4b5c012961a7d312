package cli

import (
	"slices"
	"strings"

	"rewind/cli/app"
	"rewind/demo/research"
	"rewind/tui"
)

// graphEntry is a graph `rewind tui --graph NAME` opens: how the app
// builds its engine (nil: the ticket's, the app's own) and what the TUI
// shows beyond its channels by shape (nil: nothing, any graph's panes).
type graphEntry struct {
	app *app.Graph
	ext tui.Extension
}

// defaultGraph is the graph every command opens unless told otherwise.
const defaultGraph = "ticket"

// graphs are the graphs the TUI opens by name. A graph added here needs
// no code in tui: the panes read its channels by shape and draw its
// declared nodes and edges.
var graphs = map[string]graphEntry{
	defaultGraph:  {ext: tui.TicketExtension()},
	research.Name: {app: &app.Graph{Name: research.Name, New: research.Graph, Mock: research.NewMock}},
}

// graphNames lists the graphs' names, sorted, for flags and errors.
func graphNames() string {
	names := make([]string, 0, len(graphs))
	for n := range graphs {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// graphNamed is the graph name names, or a usage error naming the graphs.
func graphNamed(name string) (graphEntry, error) {
	g, ok := graphs[strings.TrimSpace(name)]
	if !ok {
		return graphEntry{}, usagef("--graph %s: no such graph; choose %s", idText(name), graphNames())
	}
	return g, nil
}
