package tui

// The browser's diff pane: mark a checkpoint (m), move anywhere in the
// chain, also across a fork, and compare the mark with the cursor (=):
// how the graph's channels changed (engine.Diff, which `rewind diff`
// prints too) and how the two stand (browse.Relation).

import (
	"context"
	"fmt"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"rewind/engine"
	"rewind/store/browse"
	"rewind/themes"
	"rewind/tui/termtext"
)

type diffKeys struct {
	Mark, Compare key.Binding
}

func (k diffKeys) ShortHelp() []key.Binding  { return []key.Binding{k.Mark, k.Compare} }
func (k diffKeys) FullHelp() [][]key.Binding { return [][]key.Binding{k.ShortHelp()} }

// browseDiffMsg is a comparison read.
type browseDiffMsg struct {
	gen      int
	c        browse.Chain
	from, to string
	relation string
	diffs    []engine.ChannelDiff
	err      error
}

// browseDiff holds the mark and the last comparison.
type browseDiff struct {
	theme *themes.Theme
	keys  diffKeys
	pane  linePane
	// mark is the marked checkpoint of chain markChain.
	mark      string
	markChain browse.Chain
	// chain is the chain on screen: a comparison shows in its own only.
	chain   browse.Chain
	gen     int
	res     *browseDiffMsg
	loading bool
	drawnW  int
}

func newBrowseDiff(th *themes.Theme) *browseDiff {
	return &browseDiff{theme: th, pane: newLinePane(), keys: diffKeys{
		Mark: bind("mark for diff", "m"), Compare: bind("diff mark → cursor", "="),
	}}
}

// KeyMap is the diff's keys (the root routes them).
func (d *browseDiff) KeyMap() diffKeys { return d.keys }

// SetSize sets the pane's size and redraws for the width.
func (d *browseDiff) SetSize(w, h int) {
	d.pane.SetSize(w, h)
	if w != d.drawnW {
		d.draw(true)
	}
}

// Mark marks checkpoint id of chain c.
func (d *browseDiff) Mark(c browse.Chain, id string) { d.mark, d.markChain = id, c }

// SetChain says which chain is on screen: the pane shows the comparison
// made in it, if any (not a parent's, nor another thread's).
func (d *browseDiff) SetChain(c browse.Chain) {
	if c != d.chain {
		d.chain = c
		d.draw(false)
	}
}

// Marked is the mark in chain c ("" when none there).
func (d *browseDiff) Marked(c browse.Chain) string {
	if d.markChain != c {
		return ""
	}
	return d.mark
}

// Compare reads the mark and checkpoint to of chain c in a Cmd; chain
// is c's listings, for the relation. It returns nil when nothing is
// marked in c.
func (d *browseDiff) Compare(ctx context.Context, src browse.Source, c browse.Chain, to string, chain []browse.Listing, short func(string) string) tea.Cmd {
	from := d.Marked(c)
	if from == "" {
		return nil
	}
	d.gen++
	d.loading = true
	d.draw(false)
	gen := d.gen
	return func() tea.Msg {
		msg := browseDiffMsg{gen: gen, c: c, from: short(from), to: short(to), relation: browse.Relation(chain, from, to)}
		a, err := src.Checkpoint(ctx, c, from)
		if err != nil {
			msg.err = err
			return msg
		}
		b, err := src.Checkpoint(ctx, c, to)
		if err != nil {
			msg.err = err
			return msg
		}
		msg.diffs = engine.Diff(engine.Values(a.State()), engine.Values(b.State()))
		return msg
	}
}

// Update takes a comparison read, and scrolls.
func (d *browseDiff) Update(msg tea.Msg) bool {
	switch msg := msg.(type) {
	case browseDiffMsg:
		if msg.gen != d.gen {
			return true
		}
		d.loading, d.res = false, &msg
		d.draw(false)
		return true
	case tea.KeyMsg:
		return d.pane.Update(msg)
	}
	return false
}

// Loading says a comparison is being read.
func (d *browseDiff) Loading() bool { return d.loading }

// View is the visible part.
func (d *browseDiff) View() string { return d.pane.View() }

func (d *browseDiff) draw(keep bool) {
	d.drawnW = d.pane.w
	th := d.theme
	switch {
	case d.loading:
		d.pane.setLines([]string{th.Muted.Render("comparing…")}, false)
		return
	case d.res == nil || d.res.c != d.chain:
		d.pane.setLines(wrapText(th.Muted.Render("m marks the checkpoint under the cursor; move (across a fork too) and = compares the mark with the cursor."), d.pane.w, ""), false)
		return
	case d.res.err != nil:
		d.pane.setLines([]string{th.Error.Render("diff: " + termtext.Error(d.res.err.Error()))}, false)
		return
	}
	r := d.res
	out := []string{th.Strong.Render(fmt.Sprintf("@%s → @%s · %d channel(s) changed", r.from, r.to, len(r.diffs)))}
	out = append(out, wrapText(th.Muted.Render(termtext.Line(r.relation)), d.pane.w, "")...)
	for _, c := range r.diffs {
		out = append(out, th.DiffHunk.Render("@@ "+termtext.Line(c.Channel)+": "+termtext.Line(c.Summary)))
		for _, l := range c.Lines {
			style := th.Text
			switch {
			case len(l) > 0 && l[0] == '+':
				style = th.DiffAdd
			case len(l) > 0 && l[0] == '-':
				style = th.DiffDel
			}
			out = append(out, "  "+style.Render(termtext.Line(l)))
		}
		if c.More > 0 {
			out = append(out, th.Muted.Render(fmt.Sprintf("  … %d more line(s)", c.More)))
		}
	}
	d.pane.setLines(out, keep)
}
