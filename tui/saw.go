package tui

import (
	"context"
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"rewind/engine/event"
	"rewind/engine/model"
	"rewind/themes"
	"rewind/tui/termtext"
)

// What the model saw (P): each model call that made the checkpoint under
// the cursor, its request as sent (built again from the parent checkpoint
// by the engine and checked against the stored hash), its tokens by part
// with a bar against the context window, and its answer. h/l step through
// the calls, j/k scroll. A graph whose extension builds no request
// (Caller) shows what the engine stores of each call.

type sawMsg struct {
	gen    int
	thread string
	id     string
	calls  []Call
	err    error
}

// openSaw reads the calls of the checkpoint under the cursor.
func (p *parity) openSaw(cursor string) (parOutcome, tea.Cmd) {
	if cursor == "" {
		return parOutcome{handled: true}, nil
	}
	window := p.window
	if window <= 0 {
		window = model.DefaultWindow
	}
	s := p.sess
	ctx, b, gen, thread, id := s.ctx, s.deps.Backend, s.gen, s.thread, cursor
	c, builds := s.deps.Extension.(Caller)
	if !builds {
		c = storedCalls{}
	}
	return parOutcome{handled: true, open: newSawDialog(id, gen, thread, window, builds)}, func() tea.Msg {
		calls, err := c.Calls(ctx, b, thread, num(id))
		return sawMsg{gen: gen, thread: thread, id: id, calls: calls, err: err}
	}
}

// storedCalls are a checkpoint's model calls as the engine stores them
// (each task's model.called events), for a graph whose extension builds
// no request again: no request, the hash of the one sent, the tokens the
// server counted, the answer when the request asked to keep it.
type storedCalls struct{}

func (storedCalls) Calls(ctx context.Context, b Backend, thread string, id int64) ([]Call, error) {
	cp, err := b.Get(ctx, thread, id)
	if err != nil {
		return nil, fmt.Errorf("read @%d's model calls: %w", id, err)
	}
	var out []Call
	for _, g := range cp.Applied {
		rounds := map[string]int{}
		for _, ev := range g.Calls {
			d, derr := event.Decode[event.ModelCalled](ev.Type, ev.Data)
			rounds[d.Role]++
			c := Call{Node: g.Node, Task: g.Task, Role: d.Role, Round: rounds[d.Role], Hash: d.Request, Error: d.Error,
				Reported: model.Usage{PromptTokens: d.PromptTokens, CompletionTokens: d.CompletionTokens}, Answer: d.Answer}
			if derr != nil {
				c.Error = strings.TrimPrefix(c.Error+"; "+derr.Error(), "; ")
			}
			out = append(out, c)
		}
	}
	return out, nil
}

type sawKeys struct{ Prev, Next, Up, Down, PageUp, PageDown, Close key.Binding }

var sawKeyTable = keyTable[sawKeys]{
	helpRow(0, []string{"left", "h"}, "previous call", func(k *sawKeys) *key.Binding { return &k.Prev }).inFooter(1, "call"),
	helpRow(0, []string{"right", "l"}, "next call", func(k *sawKeys) *key.Binding { return &k.Next }).inFooter(2, "call"),
	helpRow(0, []string{"up", "k"}, "scroll up", func(k *sawKeys) *key.Binding { return &k.Up }),
	helpRow(0, []string{"down", "j"}, "scroll down", func(k *sawKeys) *key.Binding { return &k.Down }).inFooter(3, "scroll"),
	helpRow(0, []string{"pgup", "ctrl+u"}, "page up", func(k *sawKeys) *key.Binding { return &k.PageUp }),
	helpRow(0, []string{"pgdown", "ctrl+d", " "}, "page down", func(k *sawKeys) *key.Binding { return &k.PageDown }),
	helpRow(0, []string{"esc", "q", "P", "enter"}, "close", func(k *sawKeys) *key.Binding { return &k.Close }).inFooter(4, ""),
}

func newSawKeys() sawKeys                   { return sawKeyTable.bind() }
func (k sawKeys) ShortHelp() []key.Binding  { return sawKeyTable.footer(k) }
func (k sawKeys) FullHelp() [][]key.Binding { return sawKeyTable.fullHelp(k, 1, nil) }

// sawDialog shows one call at a time. Its body is rendered once per
// call and width (rendered), so View only windows it.
type sawDialog struct {
	dialogSize
	id      string
	gen     int    // the chain's opening it reads for
	thread  string // and its thread: a sawMsg for another is stale
	window  int
	builds  bool // the graph's extension builds the requests again
	loading bool
	err     error
	calls   []Call
	sel     int
	scroll  int
	keys    sawKeys

	rendered struct {
		sel, w int
		th     *themes.Theme
		lines  []string
	}
}

func newSawDialog(id string, gen int, thread string, window int, builds bool) *sawDialog {
	return &sawDialog{id: id, gen: gen, thread: thread, window: window, builds: builds, loading: true, keys: newSawKeys()}
}

func (d *sawDialog) ShortHelp() []key.Binding  { return d.keys.ShortHelp() }
func (d *sawDialog) FullHelp() [][]key.Binding { return d.keys.FullHelp() }

func (d *sawDialog) load(calls []Call, err error) {
	d.loading, d.calls, d.err, d.sel, d.scroll = false, calls, err, 0, 0
	d.rendered.lines = nil
}

func (d *sawDialog) Update(msg tea.Msg) (bool, tea.Cmd) {
	if keys := splitRunes(msg); keys != nil { // a burst of keys, one by one
		return eachKey(keys, d.Update)
	}
	if msg, ok := msg.(sawMsg); ok {
		if msg.gen == d.gen && msg.thread == d.thread && msg.id == d.id {
			d.load(msg.calls, msg.err)
		}
		return false, nil
	}
	k, ok := msg.(tea.KeyMsg)
	if !ok {
		return false, nil
	}
	page := max(d.maxH-12, 1)
	switch {
	case key.Matches(k, d.keys.Close):
		return true, nil
	case key.Matches(k, d.keys.Prev):
		if d.sel > 0 {
			d.sel, d.scroll = d.sel-1, 0
		}
	case key.Matches(k, d.keys.Next):
		if d.sel < len(d.calls)-1 {
			d.sel, d.scroll = d.sel+1, 0
		}
	case key.Matches(k, d.keys.Up):
		d.scroll = max(d.scroll-1, 0)
	case key.Matches(k, d.keys.Down):
		d.scroll++
	case key.Matches(k, d.keys.PageUp):
		d.scroll = max(d.scroll-page, 0)
	case key.Matches(k, d.keys.PageDown):
		d.scroll += page
	}
	return false, nil
}

// partStyles colours each part of a request the same in the bar and the
// messages.
func partStyle(th *themes.Theme, part string) styleT {
	switch part {
	case model.PartSummary:
		return th.SummaryTitle
	case model.PartFacts:
		return th.Warning
	case model.PartTail:
		return th.Accent
	case model.PartRounds:
		return th.ToolCall
	}
	return th.Muted
}

var sawParts = []string{model.PartInstructions, model.PartSummary, model.PartFacts, model.PartTail, model.PartRounds}

// header is the call's one-line title, its check and its bar.
func (d *sawDialog) header(th *themes.Theme, c Call, inner int) []string {
	if !c.Built {
		return storedHeader(th, c, inner)
	}
	var out []string
	check := th.Success.Render("exactly as sent (request " + c.Hash + ")")
	switch {
	case c.Hash == "":
		check = th.Muted.Render("built again (stored before requests were hashed: not checked)")
	case !c.Exact:
		check = th.Error.Render("built again, NOT as sent (" + c.Rebuilt + " ≠ " + c.Hash + ")")
	}
	out = append(out, trunc(check, inner))
	total := 0
	for _, p := range sawParts {
		total += c.Parts[p]
	}
	pct := total * 100 / max(d.window, 1)
	out = append(out, th.Text.Render(trunc(fmt.Sprintf("~%d of a %d-token window (%d%%)", total, d.window, pct), inner)))
	// The bar: the window's width, each part its share, the rest empty.
	bar := strings.Builder{}
	used := 0
	for _, p := range sawParts {
		n := c.Parts[p] * inner / max(d.window, 1)
		if c.Parts[p] > 0 {
			n = max(n, 1)
		}
		n = min(n, inner-used)
		used += n
		bar.WriteString(partStyle(th, p).Render(strings.Repeat("█", n)))
	}
	bar.WriteString(th.Muted.Render(strings.Repeat("░", max(inner-used, 0))))
	out = append(out, bar.String())
	var legend []string
	for _, p := range sawParts {
		if n := c.Parts[p]; n > 0 {
			legend = append(legend, partStyle(th, p).Render(fmt.Sprintf("■ %s %d", p, n)))
		}
	}
	out = append(out, trunc(strings.Join(legend, "  "), inner))
	if c.Error != "" {
		out = append(out, wrapStyled(th.Error, "error: "+termtext.Line(c.Error), inner)...)
	}
	return out
}

// storedHeader is a call's header when its request was not built again:
// what the engine stored of it.
func storedHeader(th *themes.Theme, c Call, inner int) []string {
	sent := "no hash of it stored"
	if c.Hash != "" {
		sent = "request " + c.Hash + " as sent"
	}
	out := wrapStyled(th.Muted, "not built again: no extension rebuilds this graph's model requests ("+termtext.Line(sent)+"); what the engine stores of the call follows.", inner)
	out = append(out, th.Text.Render(trunc(fmt.Sprintf("the server counted %d prompt + %d completion tokens", c.Reported.PromptTokens, c.Reported.CompletionTokens), inner)))
	if c.Error != "" {
		out = append(out, wrapStyled(th.Error, "error: "+termtext.Line(c.Error), inner)...)
	}
	return out
}

// body is the call's request and answer, rendered for width inner (the
// header is drawn apart, above it).
func (d *sawDialog) body(th *themes.Theme, inner int) []string {
	if d.rendered.lines != nil && d.rendered.sel == d.sel && d.rendered.w == inner && d.rendered.th == th {
		return d.rendered.lines
	}
	c := d.calls[d.sel]
	var out []string
	if len(c.Request.Tools) > 0 {
		names := make([]string, len(c.Request.Tools))
		for i, t := range c.Request.Tools {
			names[i] = t.Name
		}
		out = append(out, wrapStyled(th.Muted, "tools offered: "+termtext.Line(strings.Join(names, ", ")), inner)...)
	}
	if c.Request.JSON != nil {
		out = append(out, th.Muted.Render(trunc("answer held to the schema "+termtext.Line(c.Request.JSON.Name), inner)))
	}
	for _, m := range c.Request.Messages {
		head := "[" + m.Role
		if m.ToolCallID != "" {
			head += " ← " + m.ToolCallID
		}
		head += " · " + m.Part + "]"
		out = append(out, "", partStyle(th, m.Part).Render(trunc(termtext.Line(head), inner)))
		if m.Content != "" {
			out = append(out, wrapStyled(th.Text, termtext.Text(m.Content), inner)...)
		}
		for _, tc := range m.ToolCalls {
			out = append(out, wrapStyled(th.ToolCall, "→ "+termtext.Line(tc.Name+"("+tc.Arguments+")  "+tc.ID), inner)...)
		}
	}
	out = append(out, "", th.Heading.Render("answer"))
	if c.Answer == "" && !c.Built {
		out = append(out, wrapStyled(th.Muted, "(not kept: the request did not ask the engine to keep its answer)", inner)...)
	}
	if c.Answer != "" {
		out = append(out, wrapStyled(th.Text, termtext.Text(c.Answer), inner)...)
	}
	for _, tc := range c.ToolCalls {
		out = append(out, wrapStyled(th.ToolCall, "→ "+termtext.Line(tc.Name+"("+tc.Arguments+")  "+tc.ID), inner)...)
	}
	d.rendered.sel, d.rendered.w, d.rendered.th, d.rendered.lines = d.sel, inner, th, out
	return out
}

func (d *sawDialog) View(th *themes.Theme, h help.Model) string {
	w := min(d.maxW, 100)
	inner := w - 4
	title := fmt.Sprintf("What the model saw · @%s", d.id)
	var lines []string
	switch {
	case d.loading:
		lines = []string{th.Muted.Render("building the requests again from @" + fmt.Sprint(d.id) + "'s parent…")}
		if !d.builds {
			lines = []string{th.Muted.Render("reading @" + d.id + "'s model calls…")}
		}
	case d.err != nil:
		lines = wrapStyled(th.Error, "could not read the calls: "+termtext.Line(d.err.Error()), inner)
	case len(d.calls) == 0:
		lines = wrapStyled(th.Muted, fmt.Sprintf("@%s was made without a model call (an input, an update, or a step that called none); the calls of a superstep show at the checkpoint it made.", d.id), inner)
	default:
		c := d.calls[d.sel]
		task := c.Task
		if len(task) > 8 {
			task = task[:8]
		}
		title += fmt.Sprintf(" · call %d/%d: %s %d (task %s)", d.sel+1, len(d.calls), termtext.Line(c.Role), c.Round, termtext.Line(task))
		// The check and the bar stay put; the request scrolls under them.
		lines = append(lines, d.header(th, c, inner)...)
		lines = append(lines, th.Rail.Render(strings.Repeat("─", inner)))
		body := d.body(th, inner)
		room := max(d.maxH-7-len(lines), 3) // the box, its margin, the keys and the "more" line
		d.scroll = min(d.scroll, max(len(body)-room, 0))
		end := min(d.scroll+room, len(body))
		lines = append(lines, body[d.scroll:end]...)
		if end < len(body) {
			lines = append(lines, th.Muted.Render(fmt.Sprintf("… %d more lines (j/k, pgdown)", len(body)-end)))
		}
	}
	lines = append(lines, "")
	h.Width = inner
	lines = append(lines, h.View(d.keys))
	return box(th, trunc(title, w-4), lines, w)
}
