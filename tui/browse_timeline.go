package tui

// The browser's timeline: a chain's checkpoints as a tree. A fork point
// (a checkpoint with two children or more) is marked ⑂; the child
// leading to the newest checkpoint continues the column, after the other
// branches, which start one column in (└) right under the fork point. update_state checkpoints are marked ✎, an input ○, a fork's copy
// ◇. Ids show as their shortest unique prefix (the inspector has them
// whole; : goes to one by prefix). A checkpoint whose task ran a subgraph
// says ⤷ and its node: enter descends into that run. Works from listings
// only.

import (
	"fmt"
	"sort"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"rewind/store/browse"
	"rewind/themes"
	"rewind/tui/termtext"
)

type browseTimelineKeys struct {
	Up, Down, Prev, Next, First, Last, PageUp, PageDown key.Binding
	Descend, Back, Goto                                 key.Binding
}

func newBrowseTimelineKeys() browseTimelineKeys {
	return browseTimelineKeys{
		Up:       bind("previous row", "up", "k"),
		Down:     bind("next row", "down", "j"),
		Prev:     bind("previous checkpoint", "left", "h"),
		Next:     bind("next checkpoint", "right", "l"),
		First:    bind("first", "home", "g"),
		Last:     bind("last", "end", "G"),
		PageUp:   bind("page up", "pgup", "ctrl+u"),
		PageDown: bind("page down", "pgdown"),
		Descend:  bind("into the subgraph run (⤷)", "enter"),
		Back:     bind("back out of a subgraph", "esc", "backspace"),
		Goto:     bind("go to checkpoint by id prefix", ":"),
	}
}

func (k browseTimelineKeys) ShortHelp() []key.Binding {
	return []key.Binding{k.Down, k.Up, k.Descend, k.Goto}
}
func (k browseTimelineKeys) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Up, k.Down, k.Prev, k.Next, k.First, k.Last, k.PageUp, k.PageDown}, {k.Descend, k.Back, k.Goto}}
}

// timelineRow is one checkpoint in the tree's order.
type timelineRow struct {
	l     browse.Listing
	depth int
	// branch marks the first row of a branch (a later child of a fork).
	branch   bool
	children int
}

// browseTimeline is one chain's tree.
type browseTimeline struct {
	theme *themes.Theme
	keys  browseTimelineKeys
	// order is the listings oldest first (as the source orders them).
	order []browse.Listing
	rows  []timelineRow
	byID  map[string]int
	cur   int
	top   int
	// short is the length of the unique id prefixes.
	short int
	head  string
	// subs are the subgraph runs by the checkpoint whose task runs them.
	subs   map[string][]browse.Namespace
	marked string
	// read says the listings came (an empty chain is no longer being read).
	read  bool
	w, h  int
	cache string
	dirty bool
}

func newBrowseTimeline(th *themes.Theme) *browseTimeline {
	return &browseTimeline{theme: th, keys: newBrowseTimelineKeys(), byID: map[string]int{}, w: 30, h: 10, dirty: true}
}

// KeyMap is the timeline's keys.
func (t *browseTimeline) KeyMap() browseTimelineKeys { return t.keys }

// SetSize sets the pane's size.
func (t *browseTimeline) SetSize(w, h int) { t.w, t.h, t.dirty = max(1, w), max(1, h), true }

// SetSubgraphs sets the subgraph runs hanging off this chain.
func (t *browseTimeline) SetSubgraphs(subs map[string][]browse.Namespace) {
	t.subs, t.dirty = subs, true
}

// SetMark marks a row (the diff's mark; "" for none).
func (t *browseTimeline) SetMark(id string) { t.marked, t.dirty = id, true }

// SetListings shows the chain (listings oldest first). The cursor stays
// on its checkpoint, unless it was at the head (or nowhere yet): then it
// goes to the new head.
func (t *browseTimeline) SetListings(order []browse.Listing) {
	at := t.CurrentID()
	follow := at == "" || at == t.head
	t.order, t.read = order, true
	t.build()
	if i, ok := t.byID[at]; ok && !follow {
		t.cur = i
	} else {
		t.cur = t.byID[t.head]
	}
	t.dirty = true
}

// Listings are the chain's listings, oldest first.
func (t *browseTimeline) Listings() []browse.Listing { return t.order }

// Current is the listing under the cursor.
func (t *browseTimeline) Current() (browse.Listing, bool) {
	if t.cur < len(t.rows) {
		return t.rows[t.cur].l, true
	}
	return browse.Listing{}, false
}

// CurrentID is the id under the cursor ("" when the chain is empty).
func (t *browseTimeline) CurrentID() string {
	l, _ := t.Current()
	return l.ID
}

// Subgraphs are the runs of subgraphs from checkpoint id.
func (t *browseTimeline) Subgraphs(id string) []browse.Namespace { return t.subs[id] }

// Short is id's unique prefix in this chain.
func (t *browseTimeline) Short(id string) string {
	if len(id) <= t.short {
		return termtext.Name(id)
	}
	return termtext.Name(id[:t.short])
}

// build lays the listings out as a tree: depth-first, oldest child first.
func (t *browseTimeline) build() {
	n := len(t.order)
	index := make(map[string]int, n)
	for i, l := range t.order {
		index[l.ID] = i
	}
	kids := make([][]int, n)
	var roots []int
	for i, l := range t.order {
		if p, ok := index[l.Parent]; ok && l.Parent != "" && p != i {
			kids[p] = append(kids[p], i)
		} else {
			roots = append(roots, i)
		}
	}
	// newest is the newest checkpoint under each (children come after
	// their parent in the source's order).
	newest := make([]int, n)
	for i := n - 1; i >= 0; i-- {
		newest[i] = max(newest[i], i)
		if p, ok := index[t.order[i].Parent]; ok && p != i {
			newest[p] = max(newest[p], newest[i])
		}
	}
	t.head = ""
	if n > 0 {
		t.head = t.order[n-1].ID
	}
	t.walk(roots, kids, newest)
	t.short = uniquePrefix(t.order)
}

// walk lays the rows out depth-first from the roots, oldest child first;
// the child whose subtree holds the newest checkpoint continues the
// column, after the other branches (each one column in).
func (t *browseTimeline) walk(roots []int, kids [][]int, newest []int) {
	n := len(t.order)
	t.rows = make([]timelineRow, 0, n)
	clear(t.byID)
	type item struct {
		i, depth int
		branch   bool
	}
	var stack []item
	for r := len(roots) - 1; r >= 0; r-- {
		stack = append(stack, item{roots[r], 0, r > 0})
	}
	seen := make([]bool, n)
	for next := 0; len(stack) > 0 || next < n; {
		if len(stack) == 0 {
			// A parent cycle has no root to walk down from: its oldest
			// checkpoint not shown yet starts a branch of its own.
			if !seen[next] {
				stack = append(stack, item{next, 0, len(t.rows) > 0})
			}
			next++
			continue
		}
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[it.i] {
			continue
		}
		seen[it.i] = true
		t.byID[t.order[it.i].ID] = len(t.rows)
		t.rows = append(t.rows, timelineRow{l: t.order[it.i], depth: it.depth, branch: it.branch, children: len(kids[it.i])})
		// The child whose subtree holds the newest checkpoint continues
		// the column, after the other branches (each one column in).
		k := kids[it.i]
		main := -1
		for j, c := range k {
			if main < 0 || newest[c] > newest[k[main]] {
				main = j
			}
		}
		if main >= 0 {
			stack = append(stack, item{k[main], it.depth, false})
		}
		for j := len(k) - 1; j >= 0; j-- {
			if j != main {
				stack = append(stack, item{k[j], it.depth + 1, true})
			}
		}
	}
}

// uniquePrefix is the shortest length at which the ids' prefixes differ
// (an id shorter than it shows whole).
func uniquePrefix(ls []browse.Listing) int {
	ids := make([]string, len(ls))
	for i, l := range ls {
		ids[i] = l.ID
	}
	sort.Strings(ids)
	n := 1
	for i := 1; i < len(ids); i++ {
		a, b := ids[i-1], ids[i]
		c := 0
		for c < len(a) && c < len(b) && a[c] == b[c] {
			c++
		}
		n = max(n, c+1)
	}
	return n
}

// Goto moves to the checkpoint whose id starts with prefix; the error says
// why not (none, or several: type more).
func (t *browseTimeline) Goto(prefix string) error {
	prefix = strings.TrimPrefix(strings.TrimSpace(prefix), "@")
	if prefix == "" {
		return fmt.Errorf("give an id prefix: the timeline shows the shortest unique one")
	}
	if i, ok := t.byID[prefix]; ok {
		t.cur, t.dirty = i, true
		return nil
	}
	var hits []int
	for i, r := range t.rows {
		if strings.HasPrefix(strings.ToLower(r.l.ID), strings.ToLower(prefix)) {
			hits = append(hits, i)
		}
	}
	switch len(hits) {
	case 0:
		return fmt.Errorf("no checkpoint of this chain starts with %s: type a prefix the timeline shows", termtext.Name(prefix))
	case 1:
		t.cur, t.dirty = hits[0], true
		return nil
	}
	return fmt.Errorf("%d checkpoints start with %s: type more of the id", len(hits), termtext.Name(prefix))
}

// MoveTo moves the cursor to checkpoint id, if the chain has it.
func (t *browseTimeline) MoveTo(id string) bool {
	i, ok := t.byID[id]
	if ok {
		t.cur, t.dirty = i, true
	}
	return ok
}

// Update moves the cursor; it reports whether it took the key. enter,
// esc and : are the root's (they change chains or open a prompt).
func (t *browseTimeline) Update(msg tea.Msg) bool {
	k, ok := msg.(tea.KeyMsg)
	if !ok || len(t.rows) == 0 {
		return false
	}
	switch {
	case key.Matches(k, t.keys.Up), key.Matches(k, t.keys.Prev):
		t.cur--
	case key.Matches(k, t.keys.Down), key.Matches(k, t.keys.Next):
		t.cur++
	case key.Matches(k, t.keys.PageUp):
		t.cur -= t.h - 1
	case key.Matches(k, t.keys.PageDown):
		t.cur += t.h - 1
	case key.Matches(k, t.keys.First):
		t.cur = 0
	case key.Matches(k, t.keys.Last):
		t.cur = len(t.rows) - 1
	default:
		return false
	}
	t.cur = max(0, min(t.cur, len(t.rows)-1))
	t.dirty = true
	return true
}

// View draws the rows around the cursor.
func (t *browseTimeline) View() string {
	if !t.dirty {
		return t.cache
	}
	t.dirty = false
	if len(t.rows) == 0 {
		t.cache = t.theme.Muted.Render("reading the chain…")
		if t.read {
			t.cache = t.theme.Muted.Render("no checkpoint in this chain")
		}
		return t.cache
	}
	if t.cur < t.top {
		t.top = t.cur
	}
	if t.cur >= t.top+t.h {
		t.top = t.cur - t.h + 1
	}
	t.top = max(0, min(t.top, len(t.rows)-t.h))
	out := make([]string, 0, t.h)
	for i := t.top; i < len(t.rows) && len(out) < t.h; i++ {
		out = append(out, t.row(i))
	}
	t.cache = strings.Join(out, "\n")
	return t.cache
}

func (t *browseTimeline) row(i int) string {
	r := t.rows[i]
	th := t.theme
	indent := ""
	if d := min(r.depth, 8); d > 0 { // deeper branches stay in column 8
		indent = strings.Repeat(" ", d-1)
		if r.branch {
			indent += th.Rail.Render("└")
		} else {
			indent += " "
		}
	}
	glyph, style := "●", th.SourceLoop
	switch r.l.Source {
	case browse.SourceInput:
		glyph, style = "○", th.SourceInput
	case browse.SourceUpdate:
		glyph, style = "✎", th.SourceUpdate
	case browse.SourceFork:
		glyph, style = "◇", th.SourceFork
	}
	if r.children > 1 {
		glyph = "⑂"
	}
	var b strings.Builder
	b.WriteString(indent)
	b.WriteString(style.Render(glyph))
	b.WriteString(" ")
	id := t.Short(r.l.ID)
	if r.l.ID == t.marked {
		id = th.Accent.Render(id + "*")
	}
	b.WriteString(id)
	fmt.Fprintf(&b, " %2d", r.l.Step)
	if r.l.Source != browse.SourceLoop {
		b.WriteString(" " + style.Render(termtext.Name(r.l.Source)))
	}
	if next := describeNext(r.l.Next); next != "—" {
		b.WriteString(" " + th.Muted.Render(next))
	}
	for _, s := range t.subs[r.l.ID] {
		b.WriteString(" " + th.Accent.Render("⤷"+termtext.Name(s.Node)))
	}
	if r.l.Counts.Errors > 0 {
		b.WriteString(" " + th.Error.Render("✗"))
	}
	if r.l.Counts.Interrupts > 0 {
		b.WriteString(" " + th.Paused.Render("⏸"))
	}
	if r.l.Damaged != "" {
		b.WriteString(" " + th.Error.Render("damaged"))
	}
	line := ansi.Truncate(b.String(), t.w-2, "…")
	if i == t.cur {
		return th.Cursor.Render("▸ ") + line
	}
	return "  " + line
}
