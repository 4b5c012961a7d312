package tui

import (
	"context"
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"rewind/engine"
	"rewind/themes"
	"rewind/tui/termtext"
)

// Compare: m marks the checkpoint under the cursor, = diffs the cursor
// against the mark (engine.Diff, any two checkpoints, also on different
// branches) in a scrollable box that says how the two stand.

// relater is a Backend that says how two checkpoints stand
// (Engine.Relation).
type relater interface {
	Relation(ctx context.Context, thread string, a, b int64) (string, error)
}

type compareKeys struct{ Up, Down, PageUp, PageDown, Top, Bottom, Close key.Binding }

var compareKeyTable = keyTable[compareKeys]{
	helpRow(0, []string{"up", "k"}, "scroll up", func(k *compareKeys) *key.Binding { return &k.Up }).inFooter(3, "up"),
	helpRow(0, []string{"down", "j"}, "scroll down", func(k *compareKeys) *key.Binding { return &k.Down }).inFooter(2, "down"),
	helpRow(0, []string{"pgup", "ctrl+u"}, "page up", func(k *compareKeys) *key.Binding { return &k.PageUp }),
	helpRow(0, []string{"pgdown", "ctrl+d", " "}, "page down", func(k *compareKeys) *key.Binding { return &k.PageDown }).inFooter(4, "page"),
	helpRow(0, []string{"home", "g"}, "top", func(k *compareKeys) *key.Binding { return &k.Top }),
	helpRow(0, []string{"end", "G"}, "bottom", func(k *compareKeys) *key.Binding { return &k.Bottom }),
	helpRow(0, []string{"esc", "q", "="}, "close", func(k *compareKeys) *key.Binding { return &k.Close }).inFooter(1, "close"),
}

func newCompareKeys() compareKeys               { return compareKeyTable.bind() }
func (k compareKeys) ShortHelp() []key.Binding  { return compareKeyTable.footer(k) }
func (k compareKeys) FullHelp() [][]key.Binding { return compareKeyTable.fullHelp(k, 1, nil) }

// compareDialog shows how the state changed from checkpoint a (the mark)
// to b (the cursor).
type compareDialog struct {
	dialogSize // SetSize: the room the root gives it
	a, b       string
	loading    bool
	err        error
	rel        string
	diffs      []engine.ChannelDiff
	off        int
	room       int // body rows at the last view
	keys       compareKeys

	// The body rendered for the last width and theme (View stays cheap).
	wrapW   int
	wrapTh  *themes.Theme
	wrapped []string
}

// compareMsg carries what the compare read.
type compareMsg struct {
	dlg   *compareDialog
	rel   string
	diffs []engine.ChannelDiff
	err   error
}

// loadCompare reads both checkpoints and how they stand, in a Cmd.
func loadCompare(ctx context.Context, b Backend, thread string, d *compareDialog) tea.Cmd {
	a, bb := d.a, d.b
	return func() tea.Msg {
		from, err := b.Get(ctx, thread, num(a))
		if err != nil {
			return compareMsg{dlg: d, err: err}
		}
		to, err := b.Get(ctx, thread, num(bb))
		if err != nil {
			return compareMsg{dlg: d, err: err}
		}
		rel := ""
		if r, ok := b.(relater); ok {
			if rel, err = r.Relation(ctx, thread, num(a), num(bb)); err != nil {
				return compareMsg{dlg: d, err: err}
			}
		}
		return compareMsg{dlg: d, rel: rel, diffs: engine.Diff(from.Values, to.Values)}
	}
}

func (d *compareDialog) Update(msg tea.Msg) (bool, tea.Cmd) {
	if keys := splitRunes(msg); keys != nil {
		return eachKey(keys, d.Update)
	}
	switch msg := msg.(type) {
	case compareMsg:
		if msg.dlg == d {
			d.loading, d.err, d.rel, d.diffs, d.wrapped = false, msg.err, msg.rel, msg.diffs, nil
		}
		return false, nil
	case tea.KeyMsg:
		k := d.keys
		page := max(d.room-1, 1)
		switch {
		case key.Matches(msg, k.Close):
			return true, nil
		case key.Matches(msg, k.Up):
			d.off--
		case key.Matches(msg, k.Down):
			d.off++
		case key.Matches(msg, k.PageUp):
			d.off -= page
		case key.Matches(msg, k.PageDown):
			d.off += page
		case key.Matches(msg, k.Top):
			d.off = 0
		case key.Matches(msg, k.Bottom):
			d.off = len(d.wrapped)
		}
		d.off = min(max(d.off, 0), max(len(d.wrapped)-d.room, 0))
	}
	return false, nil
}

// body renders the diff for width w.
func (d *compareDialog) body(th *themes.Theme, w int) []string {
	if d.wrapped != nil && d.wrapW == w && d.wrapTh == th {
		return d.wrapped
	}
	d.wrapW, d.wrapTh = w, th
	var out []string
	for _, c := range d.diffs {
		out = append(out, th.DiffHunk.Render(trunc("@@ "+termtext.Line(c.Channel)+": "+termtext.Line(c.Summary), w)))
		for _, l := range c.Lines {
			st := th.Text
			switch {
			case strings.HasPrefix(l, "+"):
				st = th.DiffAdd
			case strings.HasPrefix(l, "-"):
				st = th.DiffDel
			}
			for _, wl := range wrap(termtext.Line(l), w-2) {
				out = append(out, st.Render("  "+wl))
			}
		}
		if c.More > 0 {
			out = append(out, th.Fold.Render(fmt.Sprintf("  … %d more line(s) (rewind diff --json has them all)", c.More)))
		}
	}
	if out == nil {
		out = []string{th.Muted.Render("no channel differs")}
	}
	d.wrapped = out
	return out
}

func (d *compareDialog) View(th *themes.Theme, h help.Model) string {
	w := min(d.maxW, 110)
	inner := w - 4
	title := fmt.Sprintf("Compare @%s (mark) → @%s (cursor)", d.a, d.b)
	var head []string
	switch {
	case d.loading:
		head = append(head, th.Muted.Render("reading both checkpoints…"))
	case d.err != nil:
		head = append(head, wrapStyled(th.Error, termtext.Error(d.err.Error()), inner)...)
	default:
		rel := d.rel
		if rel != "" {
			rel += " · "
		}
		head = append(head, wrapStyled(th.Strong, fmt.Sprintf("%s%d channel(s) changed", rel, len(d.diffs)), inner)...)
	}
	head = append(head, "")
	h.Width = inner
	foot := []string{"", h.View(d.keys)}
	var body []string
	if !d.loading && d.err == nil {
		body = d.body(th, inner)
	}
	d.room = max(d.maxH-len(head)-len(foot)-3, 1)
	if len(body) > d.room {
		off := min(max(d.off, 0), len(body)-d.room)
		title += fmt.Sprintf(" · %d–%d of %d", off+1, off+d.room, len(body))
		body = body[off : off+d.room]
	}
	lines := append(append(append([]string{}, head...), body...), foot...)
	return box(th, title, lines, w)
}

// --- the parity component's side ---

// toggleMark marks the checkpoint under the cursor (again: unmarks it).
func (p *parity) toggleMark(cursor string) parOutcome {
	if cursor == "" {
		return say("no checkpoint under the cursor to mark", true)
	}
	if p.mark == cursor && p.markThread == p.sess.thread {
		p.mark = ""
		return say(fmt.Sprintf("mark on @%s removed", cursor), false)
	}
	p.mark, p.markThread = cursor, p.sess.thread
	return say(fmt.Sprintf("marked @%s: move to another checkpoint (any branch) and press %s to compare", cursor, p.keys.Compare.Help().Key), false)
}

// openCompare diffs the cursor against the mark.
func (p *parity) openCompare(cursor string) (parOutcome, tea.Cmd) {
	s := p.sess
	if p.mark == "" || p.markThread != s.thread {
		return say("mark a checkpoint first: "+p.keys.Mark.Help().Key+" marks the one under the cursor", true), nil
	}
	if cursor == "" {
		return say("no checkpoint under the cursor to compare", true), nil
	}
	d := &compareDialog{a: p.mark, b: cursor, loading: true, keys: newCompareKeys()}
	return parOutcome{handled: true, open: d}, loadCompare(s.ctx, s.deps.Backend, s.thread, d)
}
