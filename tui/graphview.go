package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"rewind/engine/ticket"
	"rewind/themes"
	"rewind/tui/termtext"
)

// The graph view (v): a small drawing of the ticket graph with the node(s)
// that wrote the checkpoint under the cursor lit and the pending ones
// marked. It fits 60 columns.

// graphOrder is the ticket graph top to bottom; loop says where a node
// goes back to.
var graphOrder = []struct{ node, loop string }{
	{ticket.NodePlanner, ""},
	{ticket.NodeExecutor, ""},
	{ticket.NodeCritic, ticket.NodeExecutor},
	{ticket.NodeSummarizer, ""},
	{ticket.NodeReply, ""},
	{ticket.NodeApproval, ""},
	{ticket.NodeDraft, ""},
	{ticket.NodeVerify, ""},
}

type graphKeys struct{ Close key.Binding }

func newGraphKeys() graphKeys {
	return graphKeys{Close: bind("close", "esc", "q", "v", "enter")}
}

func (k graphKeys) ShortHelp() []key.Binding  { return []key.Binding{k.Close} }
func (k graphKeys) FullHelp() [][]key.Binding { return [][]key.Binding{k.ShortHelp()} }

// graphNode is one node as the view draws it.
type graphNode struct {
	name    string
	label   string // "executor ×3", "critic ⟲ executor"
	wrote   int    // tasks of it that wrote the checkpoint
	pending int    // tasks of it due
	paused  string // "before", "after" or "approval" when the run waits at it
}

// graphDialog is the drawing for one checkpoint.
type graphDialog struct {
	id     int64
	source string
	nodes  []graphNode
	keys   graphKeys
}

// newGraphDialog reads what the drawing needs from a loaded checkpoint.
func newGraphDialog(d *detail) *graphDialog {
	g := &graphDialog{id: d.cp.ID, source: d.cp.Source, keys: newGraphKeys()}
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
	fan := len(d.state.Subtasks)
	for _, o := range graphOrder {
		n := graphNode{name: o.node, label: o.node, wrote: wrote[o.node], pending: due[o.node], paused: paused[o.node]}
		if o.node == ticket.NodeExecutor {
			if k := max(fan, n.pending, n.wrote); k > 0 {
				n.label += fmt.Sprintf(" ×%d", k)
			} else {
				n.label += " ×N"
			}
		}
		if o.loop != "" {
			n.label += " ⟲ " + o.loop
		}
		g.nodes = append(g.nodes, n)
	}
	return g
}

func (g *graphDialog) update(msg tea.Msg) (bool, tea.Cmd) {
	if keys := splitRunes(msg); keys != nil {
		return eachKey(keys, g.update)
	}
	if k, ok := msg.(tea.KeyMsg); ok && key.Matches(k, g.keys.Close) {
		return true, nil
	}
	return false, nil
}

func (g *graphDialog) view(th *themes.Theme, h help.Model, maxW, maxH int) string {
	w := min(maxW, 56)
	inner := w - 4
	lines := []string{th.Muted.Render(trunc("● wrote it  ◌ due next  ⏸ the run waits there", inner)), ""}
	// Connectors between the nodes when there is room for them.
	links := maxH >= len(g.nodes)*2+7
	for i, n := range g.nodes {
		mark, st, note := "·", th.Muted, ""
		switch {
		case n.wrote > 0:
			mark, st, note = "●", th.Success, "wrote @"+fmt.Sprint(g.id)
			if n.wrote > 1 {
				note += fmt.Sprintf(" (×%d)", n.wrote)
			}
		case n.pending > 0:
			mark, st, note = "◌", th.StatusPending, "due"
			if n.pending > 1 {
				note += fmt.Sprintf(" ×%d", n.pending)
			}
		}
		if n.paused != "" {
			note += " ⏸ " + n.paused
		}
		left := fmt.Sprintf("%s %-22s", mark, n.label)
		lines = append(lines, st.Render(trunc(left+" "+note, inner)))
		if links && i < len(g.nodes)-1 {
			lines = append(lines, th.Rail.Render("│"))
		}
	}
	if len(g.nodes) > 0 && !links {
		lines = append(lines, th.Muted.Render(trunc("(top to bottom; each row runs after the one above)", inner)))
	}
	lines = append(lines, "")
	h.Width = inner
	lines = append(lines, h.View(g.keys))
	title := fmt.Sprintf("Graph · @%d (%s)", g.id, termtext.Line(strings.TrimSpace(g.source)))
	return box(th, title, lines, w)
}

// openGraph shows the graph for the checkpoint under the cursor.
func (m *Model) openGraph() tea.Cmd {
	if m.cur == nil || m.cur.cp.ID != m.tree.cursor {
		return m.setFlash("the checkpoint under the cursor is still loading: press "+m.keys.Graph.Help().Key+" again in a moment", true)
	}
	m.dialog = newGraphDialog(m.cur)
	return nil
}
