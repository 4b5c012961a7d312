package tui

import (
	"fmt"
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"rewind/engine"
	"rewind/themes"
	"rewind/tui/termtext"
)

// The graph view (v): a small drawing of the graph's declaration (its
// nodes, edges and routes: engine.Graph.Links) with the node(s) that wrote
// the checkpoint under the cursor lit and the pending ones marked. It fits
// 60 columns.

// graphLayout is a graph's declaration as the view draws it: its nodes top
// to bottom, from the entry, each after the nodes that lead to it (a link
// back up is a loop), then any node no link reaches.
type graphLayout struct {
	order []string
	rows  map[string]*layoutRow
}

// layoutRow is what a node's row says of its links.
type layoutRow struct {
	next      bool     // it leads to the row below (drawn │)
	fan       bool     // a Send reaches it, not as a loop: a task per packet
	loops     []string // back up to these (⟲)
	jumps     []string // down to these, past the row below (→)
	undecided bool     // a router that declared no targets
}

// layoutGraph orders g's nodes: the reverse postorder of a depth-first
// walk from the entry, a node's links walked last-declared first so that
// siblings come out in the order declared.
func layoutGraph(g *engine.Graph) graphLayout {
	out := map[string][]engine.Link{}
	roots := []string{}
	for _, l := range g.Links() {
		if l.From == "" {
			roots = append(roots, l.To)
			continue
		}
		out[l.From] = append(out[l.From], l)
	}
	roots = append(roots, g.Nodes()...)
	lay := graphLayout{rows: map[string]*layoutRow{}}
	state := map[string]int{} // 1: on the walk's path, 2: done
	loop := map[engine.Link]bool{}
	var post []string
	var walk func(n string)
	walk = func(n string) {
		state[n] = 1
		for i := len(out[n]) - 1; i >= 0; i-- {
			l := out[n][i]
			switch {
			case !g.HasNode(l.To):
			case state[l.To] == 0:
				walk(l.To)
			case state[l.To] == 1:
				loop[l] = true
			}
		}
		state[n], post = 2, append(post, n)
	}
	for _, r := range roots {
		if g.HasNode(r) && state[r] == 0 {
			post = post[:0]
			walk(r)
			slices.Reverse(post)
			lay.order = append(lay.order, post...)
		}
	}
	pos := map[string]int{}
	for i, n := range lay.order {
		pos[n], lay.rows[n] = i, &layoutRow{}
	}
	for _, n := range lay.order {
		row := lay.rows[n]
		for _, l := range out[n] {
			switch {
			case l.Routed && l.To == "":
				row.undecided = true
			case !g.HasNode(l.To): // End
			case loop[l]:
				row.loops = appendNew(row.loops, l.To)
			case pos[l.To] == pos[n]+1:
				row.next = true
			default:
				row.jumps = appendNew(row.jumps, l.To)
			}
			if l.Send && !loop[l] && g.HasNode(l.To) {
				lay.rows[l.To].fan = true
			}
		}
	}
	return lay
}

// graphNodes are g's nodes, for breakpoints, in the order the graph view
// draws them (nil without a graph).
func graphNodes(g *engine.Graph) []string {
	if g == nil {
		return nil
	}
	return layoutGraph(g).order
}

func appendNew(s []string, v string) []string {
	if slices.Contains(s, v) {
		return s
	}
	return append(s, v)
}

type graphKeys struct{ Prev, Next, Close key.Binding }

// graphKeyTable: prev and next have no keys of their own, newGraphKeys
// copies them from the thread view's.
var graphKeyTable = keyTable[graphKeys]{
	helpRow(0, nil, "", func(k *graphKeys) *key.Binding { return &k.Prev }).inFooter(1, "prev"),
	helpRow(0, nil, "", func(k *graphKeys) *key.Binding { return &k.Next }).inFooter(2, "next"),
	helpRow(0, []string{"esc", "q", "v", "enter"}, "close", func(k *graphKeys) *key.Binding { return &k.Close }).inFooter(3, ""),
}

// newGraphKeys: the thread view's prev/next (as rebound) scrub under the
// drawing.
func newGraphKeys(tk threadKeys) graphKeys {
	k := graphKeyTable.bind()
	k.Prev, k.Next = tk.Prev, tk.Next
	return k
}

func (k graphKeys) ShortHelp() []key.Binding { return graphKeyTable.footer(k) }

// FullHelp is the footer's keys as the footer shows them.
func (k graphKeys) FullHelp() [][]key.Binding { return [][]key.Binding{k.ShortHelp()} }

// graphNode is one node as the view draws it.
type graphNode struct {
	name    string
	label   string // "executor ×3", "critic ⟲ executor"
	wrote   int    // tasks of it that wrote the checkpoint
	pending int    // tasks of it due
	paused  string // "before", "after" or "approval" when the run waits at it
	next    bool   // it leads to the node drawn below it
}

// graphDialog is the drawing for the checkpoint under the cursor: h/l
// scrub (it asks the root to, with a scrubMsg), and it follows the
// checkpoint shown (the root passes it in: followCursor).
type graphDialog struct {
	dialogSize         // SetSize: the room the root gives it
	from       *detail // what it was drawn from
	id         string
	source     string
	layout     graphLayout // the graph's declaration, in drawing order
	nodes      []graphNode
	cursor     string // the checkpoint under the cursor (loading while ≠ id)
	keys       graphKeys
}

// newGraphDialog draws d, the loaded checkpoint under the cursor, on the
// graph laid out as lay.
func newGraphDialog(d *detail, lay graphLayout, keys graphKeys) *graphDialog {
	g := &graphDialog{keys: keys, cursor: d.id, layout: lay}
	g.draw(d)
	return g
}

// followCursor takes the checkpoint under the cursor and what is shown
// of it: the drawing is of the cursor's checkpoint once it has loaded.
func (g *graphDialog) followCursor(cur *detail, cursor string) {
	g.cursor = cursor
	if cur != nil && cur != g.from && cur.id == cursor {
		g.draw(cur)
	}
}

// draw reads what the drawing needs from a loaded checkpoint.
func (g *graphDialog) draw(d *detail) {
	g.from, g.id, g.source, g.nodes = d, d.id, d.cp.Source, nil
	wrote := map[string]int{}
	for _, n := range d.cp.Metadata.Nodes {
		wrote[n]++
	}
	due := map[string]int{}
	for _, t := range d.cp.Tasks {
		due[t.Node]++
	}
	paused := map[string]string{}
	if in := d.cp.Metadata.Interrupt; in != nil && len(d.cp.Tasks) > 0 {
		paused[in.Node] = in.When
	}
	if d.cp.Metadata.Status == engine.RunAwaitingApproval { // a gate (Graph.Gate) waits for an answer
		for _, t := range d.cp.Tasks {
			paused[t.Node] = "approval"
		}
	}
	for _, name := range g.layout.order {
		row := g.layout.rows[name]
		n := graphNode{name: name, label: name, wrote: wrote[name], pending: due[name], paused: paused[name], next: row.next}
		if row.fan {
			if k := max(n.pending, n.wrote); k > 0 {
				n.label += fmt.Sprintf(" ×%d", k)
			} else {
				n.label += " ×N"
			}
		}
		if len(row.loops) > 0 {
			n.label += " ⟲ " + strings.Join(row.loops, ", ")
		}
		if len(row.jumps) > 0 {
			n.label += " → " + strings.Join(row.jumps, ", ")
		}
		if row.undecided {
			n.label += " → ? (decided at run time)"
		}
		g.nodes = append(g.nodes, n)
	}
}

func (g *graphDialog) Update(msg tea.Msg) (bool, tea.Cmd) {
	if keys := splitRunes(msg); keys != nil {
		return eachKey(keys, g.Update)
	}
	k, ok := msg.(tea.KeyMsg)
	if !ok {
		return false, nil
	}
	switch {
	case key.Matches(k, g.keys.Close):
		return true, nil
	case key.Matches(k, g.keys.Prev):
		return false, scrub(-1)
	case key.Matches(k, g.keys.Next):
		return false, scrub(1)
	}
	return false, nil
}

func (g *graphDialog) View(th *themes.Theme, h help.Model) string {
	w := min(g.maxW, 56)
	inner := w - 4
	room := g.maxH - 3 // the box's borders and its top margin
	n := len(g.nodes)
	// What goes in when there is room: connectors between the nodes, the
	// legend, the reading note; on a short screen, a window of the nodes
	// around the first lit one.
	links := room >= 2*n-1+5
	legend := room >= n+5
	note := !links && room >= n+6
	var rows []string
	first := -1
	for i, nd := range g.nodes {
		mark, st, what := "·", th.Muted, ""
		switch {
		case nd.wrote > 0:
			mark, st, what = "●", th.Success, "wrote @"+fmt.Sprint(g.id)
			if nd.wrote > 1 {
				what += fmt.Sprintf(" (×%d)", nd.wrote)
			}
		case nd.pending > 0:
			mark, st, what = "◌", th.StatusPending, "due"
			if nd.pending > 1 {
				what += fmt.Sprintf(" ×%d", nd.pending)
			}
		}
		if nd.paused != "" {
			what += " ⏸ " + nd.paused
		}
		if first < 0 && mark != "·" {
			first = len(rows)
		}
		left := fmt.Sprintf("%s %-22s", mark, nd.label)
		rows = append(rows, st.Render(trunc(left+" "+what, inner)))
		if links && i < n-1 {
			rows = append(rows, th.Rail.Render(map[bool]string{true: "│"}[nd.next]))
		}
	}
	if fit := max(room-2, 1); len(rows) > fit {
		start := min(max(first-1, 0), len(rows)-fit)
		rows = rows[start : start+fit]
	}
	var lines []string
	if legend {
		lines = append(lines, th.Muted.Render(trunc("● wrote it  ◌ due next  ⏸ the run waits there", inner)), "")
	}
	lines = append(lines, rows...)
	if note {
		lines = append(lines, th.Muted.Render(trunc("(top to bottom; each row runs after the one above)", inner)))
	}
	h.Width = inner
	if room > len(lines)+1 {
		lines = append(lines, "")
	}
	lines = append(lines, h.View(g.keys))
	title := fmt.Sprintf("Graph · @%s (%s)", g.id, termtext.Line(strings.TrimSpace(g.source)))
	if g.id != g.cursor {
		title += fmt.Sprintf(" · loading @%s…", g.cursor)
	}
	return box(th, title, lines, w)
}

// openGraph shows the graph for the checkpoint under the cursor.
func (p *parity) openGraph(msg parKeyMsg) parOutcome {
	if msg.cur == nil || msg.cur.id != msg.cursor {
		return say("the checkpoint under the cursor is still loading: press "+p.keys.Graph.Help().Key+" again in a moment", true)
	}
	g := p.sess.graph()
	if g == nil {
		return say("the graph view needs the graph's declaration, which this source does not carry", true)
	}
	return parOutcome{handled: true, open: newGraphDialog(msg.cur, layoutGraph(g), p.keys.graph)}
}

// scrubMsg asks the root to step the cursor along its branch (a dialog's
// h/l: the graph view's).
type scrubMsg struct{ by int }

func scrub(by int) tea.Cmd { return func() tea.Msg { return scrubMsg{by: by} } }
