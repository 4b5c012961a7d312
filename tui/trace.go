package tui

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"rewind/engine"
	"rewind/themes"
	"rewind/tui/termtext"
)

// Drills leave a trace (issue 12, item 7): a run that stopped with pending
// tasks (a kill, a failure) and a resume that finished them reusing stored
// writes are marked on the timeline for good, from what the listings store:
// ⟲ on the checkpoint the resume completed (Metadata.Reused), ✝ on the one
// it carried on from. o opens what the resume reused and redispatched
// (engine.PlanFrom on the stopped checkpoint and its stored writes).

type traceMsg struct {
	gen      int
	thread   string
	from, to string
	plan     engine.ResumePlan
	reused   []string
	err      error
}

// openTrace reads the resume around the cursor.
func (n *navState) openTrace(t *tree) (navNews, tea.Cmd) {
	node := t.nodes[t.cursor]
	if node == nil {
		return navNews{handled: true}, nil
	}
	var child *timelineNode
	switch {
	case len(node.reused) > 0:
		child = node
	case node.resumed:
		for _, k := range node.kids {
			if c := t.nodes[k]; len(c.reused) > 0 {
				child = c
				break
			}
		}
	}
	if child == nil || t.parentOf(child.id) == "" {
		return said(fmt.Sprintf("no resume at @%s: ✝ marks where a run stopped and a resume carried on, ⟲ the checkpoint that resume finished", node.id), false), nil
	}
	ctx, b, gen, thread, from, to, reused := n.sess.ctx, n.sess.deps.Backend, n.sess.gen, n.sess.thread, child.parent, child.id, child.reused
	n.tracing = true
	return navNews{handled: true}, func() tea.Msg {
		plan, err := readPlan(ctx, b, thread, num(from))
		return traceMsg{gen: gen, thread: thread, from: from, to: to, plan: plan, reused: reused, err: err}
	}
}

func readPlan(ctx context.Context, b Backend, thread string, id int64) (engine.ResumePlan, error) {
	cp, err := b.Get(ctx, thread, id)
	if err != nil {
		return engine.ResumePlan{}, err
	}
	ws, err := b.PendingWrites(ctx, thread, id)
	if err != nil {
		return engine.ResumePlan{}, err
	}
	return engine.PlanFrom(cp, ws), nil
}

// onTrace takes a trace's plan: its dialog opens.
func (n *navState) onTrace(msg traceMsg) navNews {
	n.tracing = false
	if msg.gen != n.sess.gen || msg.thread != n.sess.thread {
		return navNews{handled: true}
	}
	if msg.err != nil {
		return said("read the resume's plan: "+msg.err.Error(), true)
	}
	return navNews{handled: true, dialog: &traceDialog{msg: msg, keys: newTraceKeys()}}
}

// traceDialog shows what a resume reused and redispatched.
type traceDialog struct {
	dialogSize // SetSize: the room the root gives it
	msg        traceMsg
	keys       traceKeys
}

type traceKeys struct{ Close key.Binding }

var traceKeyTable = keyTable[traceKeys]{
	helpRow(0, []string{"esc", "enter", "q", "o"}, "close", func(k *traceKeys) *key.Binding { return &k.Close }).labelled("esc").inFooter(1, ""),
}

func newTraceKeys() traceKeys                 { return traceKeyTable.bind() }
func (k traceKeys) ShortHelp() []key.Binding  { return traceKeyTable.footer(k) }
func (k traceKeys) FullHelp() [][]key.Binding { return traceKeyTable.fullHelp(k, 1, nil) }

func (d *traceDialog) Update(msg tea.Msg) (bool, tea.Cmd) {
	if keys := splitRunes(msg); keys != nil { // a burst of keys, one by one
		return eachKey(keys, d.Update)
	}
	if k, ok := msg.(tea.KeyMsg); ok && key.Matches(k, d.keys.Close) {
		return true, nil
	}
	return false, nil
}

// lines are the dialog's text, apart from its keys.
func (d *traceDialog) lines(th *themes.Theme, inner int) []string {
	reused := map[string]bool{}
	for _, id := range d.msg.reused {
		reused[id] = true
	}
	var re, rd []string
	for _, t := range d.msg.plan.Tasks {
		line := termtext.Line(t.Node) + " " + termtext.Name(t.ID)
		var args struct {
			Task struct {
				ID string `json:"id"`
			} `json:"task"`
		}
		if json.Unmarshal(t.Args, &args) == nil && args.Task.ID != "" {
			line = termtext.Name(args.Task.ID) + " (" + line + ")"
		}
		if len(t.Channels) > 0 {
			line += " wrote " + termtext.Line(strings.Join(t.Channels, ", "))
		}
		if reused[t.ID] {
			re = append(re, line)
		} else {
			rd = append(rd, line)
		}
	}
	out := wrapStyled(th.Text, fmt.Sprintf("A run stopped at @%s with %s; a resume finished them at @%s, reusing the writes the stopped run had stored.",
		d.msg.from, plural(len(d.msg.plan.Tasks), "pending task", "pending tasks"), d.msg.to), inner)
	out = append(out, "", th.Accent.Render(fmt.Sprintf("⟲ reused (stored writes, not run again): %d", len(re))))
	for _, l := range re {
		out = append(out, th.Text.Render("  "+trunc(l, inner-2)))
	}
	out = append(out, "", th.Warning.Render(fmt.Sprintf("↻ redispatched (run again): %d", len(rd))))
	for _, l := range rd {
		out = append(out, th.Text.Render("  "+trunc(l, inner-2)))
	}
	return out
}

func (d *traceDialog) View(th *themes.Theme, h help.Model) string {
	w := min(d.maxW, 76)
	lines := d.lines(th, w-4)
	if room := d.maxH - 6; len(lines) > room && room > 0 {
		lines = append(lines[:room-1], th.Muted.Render("…"))
	}
	lines = append(lines, "")
	h.Width = w - 4
	lines = append(lines, h.View(d.keys))
	return box(th, fmt.Sprintf("Resume @%s → @%s", d.msg.from, d.msg.to), lines, w)
}
