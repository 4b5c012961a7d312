package tui

import (
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"math"
	"strings"

	"rewind/engine"
	"rewind/themes"
)

// contentPanes are the conversation, state and inspector panes as one
// component: which pane each column shows, folding (z), the renderer, and
// each pane's rendered lines (pane.go: re-rendered only when what they
// show, their width, the folding or the theme changed). The root keeps the
// focus and lays the columns out.
type contentPanes struct {
	panes    [paneCount]contentPane
	mainTab  int  // narrow layout: which pane the main column shows
	sideTab  int  // wide layout: which pane the side column shows
	unfold   bool // summaries and long values shown whole
	renderer *renderer
	wide     bool // the layout has a side column
	keys     contentKeys
}

func newContentPanes(keys contentKeys) contentPanes {
	return contentPanes{mainTab: paneConv, sideTab: paneInsp, keys: keys}
}

// refocus keeps the focused pane on screen after SetSize: widened, the
// pane the main column showed moves to the side column (with the focus);
// narrowed, the side column's pane moves to the main one. It returns the
// focus.
func (c *contentPanes) refocus(f focusID) focusID {
	switch {
	case c.wide && f == focusMain && c.mainTab != paneConv:
		c.sideTab = c.mainTab
		return focusSide
	case !c.wide && f == focusSide:
		c.mainTab = c.sideTab
		return focusMain
	}
	return f
}

// scrolled is how far down pane p is scrolled, in percent; ok is false
// when it fits (nothing to scroll).
func (c *contentPanes) scrolled(p int) (pct int, ok bool) {
	sc := &c.panes[p].scroll
	if sc.maxOff() <= 0 {
		return 0, false
	}
	return 100 * sc.off / sc.maxOff(), true
}

// toEnd scrolls pane p to its last line.
func (c *contentPanes) toEnd(p int) { c.panes[p].scroll.off = c.panes[p].scroll.maxOff() }

// invalidate makes pane p render again at the next sync (an input it
// reads beside paneInputs changed).
func (c *contentPanes) invalidate(p int) { c.panes[p].key = paneKey{} }

// toggleFold shows summaries and long values whole, or folds them again.
func (c *contentPanes) toggleFold() { c.unfold = !c.unfold }

// contentKeys scroll and switch the content panes: the thread view's bindings
// (rebindable), copied when the model is built.
type contentKeys struct {
	Up, Down, PageUp, PageDown, Top, Bottom, TabConv, TabState, TabInsp, Fold key.Binding
}

// newContentKeys: a pane with the focus takes the timeline's first/last
// letter keys (g, G, as rebound) to its own top and bottom; home and end
// go on jumping the timeline from any focus, as h/l scrub.
func newContentKeys(k threadKeys) contentKeys {
	return contentKeys{Up: k.Up, Down: k.Down, PageUp: k.PageUp, PageDown: k.PageDown,
		Top: letterKeys(k.First, "top of the pane"), Bottom: letterKeys(k.Last, "bottom of the pane"),
		TabConv: k.TabConv, TabState: k.TabState, TabInsp: k.TabInsp, Fold: k.Fold}
}

// letterKeys is b without home and end, described as desc.
func letterKeys(b key.Binding, desc string) key.Binding {
	var keys []string
	for _, k := range b.Keys() {
		if k != "home" && k != "end" {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return key.NewBinding(key.WithDisabled())
	}
	return key.NewBinding(key.WithKeys(keys...), key.WithHelp(strings.Join(keys, "/"), desc))
}

// contentKeyTable: every binding is the thread view's (newContentKeys
// copies them); the table gives their columns and footer.
var contentKeyTable = keyTable[contentKeys]{
	helpRow(0, nil, "", func(k *contentKeys) *key.Binding { return &k.Up }),
	helpRow(0, nil, "", func(k *contentKeys) *key.Binding { return &k.Down }).inFooter(1, "scroll"),
	helpRow(0, nil, "", func(k *contentKeys) *key.Binding { return &k.PageUp }),
	helpRow(0, nil, "", func(k *contentKeys) *key.Binding { return &k.PageDown }),
	helpRow(0, nil, "", func(k *contentKeys) *key.Binding { return &k.Top }),
	helpRow(0, nil, "", func(k *contentKeys) *key.Binding { return &k.Bottom }),
	helpRow(1, nil, "", func(k *contentKeys) *key.Binding { return &k.TabConv }),
	helpRow(1, nil, "", func(k *contentKeys) *key.Binding { return &k.TabState }),
	helpRow(1, nil, "", func(k *contentKeys) *key.Binding { return &k.TabInsp }),
	helpRow(1, nil, "", func(k *contentKeys) *key.Binding { return &k.Fold }).inFooter(2, "fold"),
}

// ShortHelp is a focused pane's part of the footer.
func (k contentKeys) ShortHelp() []key.Binding  { return contentKeyTable.footer(k) }
func (k contentKeys) FullHelp() [][]key.Binding { return contentKeyTable.fullHelp(k, 2, nil) }

func (c *contentPanes) ShortHelp() []key.Binding  { return c.keys.ShortHelp() }
func (c *contentPanes) FullHelp() [][]key.Binding { return c.keys.FullHelp() }

func (c *contentPanes) setTheme(th *themes.Theme) { c.renderer = newRenderer(th) }

// setWide says whether the layout has a side column (the root decides it
// from the screen's width, before SetSize).
func (c *contentPanes) setWide(wide bool) { c.wide = wide }

// SetSize takes the room right of the timeline, w wide and h tall, frames
// included: wide, the conversation is the main column and the state and
// the inspector share the side one; narrow, the main column shows one of
// the three.
func (c *contentPanes) SetSize(w, h int) {
	mainW, sideW := columns(w, c.wide)
	inner := max(h-2, 0)
	if c.wide {
		c.panes[paneConv].SetSize(mainW-2, inner)
		c.panes[paneState].SetSize(sideW-2, inner)
		c.panes[paneInsp].SetSize(sideW-2, inner)
		return
	}
	for p := range c.panes {
		c.panes[p].SetSize(mainW-2, inner)
	}
}

// zoom gives pane p the room of the whole body, w wide and h tall inside
// its frame (+).
func (c *contentPanes) zoom(p, w, h int) { c.panes[p].SetSize(w, h) }

// visible are the panes the main and side columns show (side -1: none).
func (c *contentPanes) visible() (main, side int) {
	if c.wide {
		return paneConv, c.sideTab
	}
	return c.mainTab, -1
}

// shows is whether pane p is on screen.
func (c *contentPanes) shows(p int) bool {
	main, side := c.visible()
	return p == main || p == side
}

// show puts pane p on screen; side is whether it went to the side column.
func (c *contentPanes) show(p int) (side bool) {
	if !c.wide {
		c.mainTab = p
		return false
	}
	if p == paneConv {
		return false
	}
	c.sideTab = p
	return true
}

// paneKeyMsg is a key for the focused pane, pane (the root keeps the
// focus).
type paneKeyMsg struct {
	tea.KeyMsg
	pane int
}

// Update scrolls the focused pane by a key (a page is its height but a
// line): handled is whether the key was the panes'.
func (c *contentPanes) Update(m tea.Msg) (handled bool, cmd tea.Cmd) {
	pk, ok := m.(paneKeyMsg)
	if !ok || pk.pane < 0 {
		return false, nil
	}
	msg, p, k := pk.KeyMsg, pk.pane, c.keys
	page := max(c.panes[p].h-1, 1)
	switch {
	case key.Matches(msg, k.Up):
		c.scroll(p, -1)
	case key.Matches(msg, k.Down):
		c.scroll(p, 1)
	case key.Matches(msg, k.PageUp):
		c.scroll(p, -page)
	case key.Matches(msg, k.PageDown):
		c.scroll(p, page)
	case key.Matches(msg, k.Top):
		c.scroll(p, math.MinInt/2)
	case key.Matches(msg, k.Bottom):
		c.scroll(p, math.MaxInt/2)
	default:
		return false, nil
	}
	return true, nil
}

// scroll moves pane p by n lines.
func (c *contentPanes) scroll(p, n int) {
	if p >= 0 {
		c.panes[p].scroll.by(n)
	}
}

// View is pane p's visible lines.
func (c *contentPanes) View(p int) []string { return c.panes[p].scroll.view() }

// paneInputs are what the panes render from.
type paneInputs struct {
	cur   *detail       // the checkpoint shown
	costs *engine.Costs // the thread's, in the inspector's header
	theme int           // the theme's generation
	badge func(*detail) *fidelityBadge
	pins  func(w int) int // rows pinned above the conversation (nav.go)
}

// sync re-renders the visible panes whose inputs changed.
func (c *contentPanes) sync(in paneInputs) {
	if c.renderer == nil {
		return
	}
	main, side := c.visible()
	for _, p := range []int{main, side} {
		if p < 0 {
			continue
		}
		pane := &c.panes[p]
		k := paneKey{d: in.cur, w: pane.w, unfold: c.unfold, theme: in.theme}
		if p == paneInsp {
			k.costs = in.costs
		}
		if p == paneConv { // the pinned lines (nav.go) come off its height
			pane.scroll.h = max(pane.h-in.pins(pane.w), 1)
		}
		if k == pane.key && pane.scroll.lines != nil {
			continue
		}
		var lines []string
		switch p {
		case paneConv:
			lines = c.renderer.conversation(in.cur, pane.w, c.unfold)
		case paneState:
			lines = append(c.renderer.fidelityHeader(in.cur, in.badge(in.cur), pane.w), c.renderer.stateOf(in.cur, pane.w, c.unfold)...)
		case paneInsp:
			lines = append(c.renderer.costsHeader(k.costs, pane.w), c.renderer.inspectorOf(in.cur, pane.w, c.unfold)...)
		}
		sameCheckpoint := pane.key.d == in.cur && pane.key.d != nil
		off := 0
		switch {
		case sameCheckpoint && p == paneConv && pane.key.unfold != c.unfold:
			// z: unfolding shows the summary it opened, at the top;
			// folding goes back to the tail.
			if c.unfold && in.cur.stateErr == nil && unfoldsAtTop(in.cur) {
				off = 0
			} else {
				off = len(lines)
			}
		case sameCheckpoint && p == paneConv && pane.scroll.atBottom():
			off = len(lines)
		case sameCheckpoint:
			off = pane.scroll.off
		case p == paneConv:
			// The newest messages are what a checkpoint added: show the end.
			off = len(lines)
		}
		pane.key = k
		pane.scroll.set(lines, off)
	}
}
