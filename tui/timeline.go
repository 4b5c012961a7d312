package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"rewind/themes"
)

// timelinePane draws the checkpoint tree: a window of display rows kept
// around the cursor. Rows are cached (see rowKey), so a scrub step renders
// only the rows whose look changed.
type timelinePane struct {
	// tree is the open thread's checkpoints as far as they are loaded,
	// with the cursor; thread is "" when none is open.
	tree   *tree
	thread string
	theme  *themes.Theme
	// themeGen changes with the theme: cached rows of another are stale.
	themeGen  int
	off, w, h int
	rows      map[rowKey]string
	// words are the customer's words of turn rows, loaded for the rows
	// on screen (nav.go); loadingWords are those asked for.
	words, loadingWords map[string]string
	// What the title and the status bar say of the tree: how many
	// checkpoints the thread has (the listing's, before they all load),
	// the cursor's place on its branch (n of m) and the branch.
	total    int
	position [2]int
	branch   string
	keys     timelineKeys
	// loading: the thread's history is still being read, page by page.
	loading bool
	// leaf is the end of the cursor's branch (where i continues).
	leaf string
	// followNext: the next checkpoint a sync brings gets the cursor (a
	// run's first).
	followNext bool
}

// timelineKeys scrub the tree: the thread view's bindings (rebindable).
type timelineKeys struct {
	Prev, Next, First, Last, BranchPrev, BranchNext key.Binding
}

func newTimelineKeys(k threadKeys) timelineKeys {
	return timelineKeys{Prev: k.Prev, Next: k.Next, First: k.First, Last: k.Last, BranchPrev: k.BranchPrev, BranchNext: k.BranchNext}
}

// timelineKeyTable: every binding is the thread view's (newTimelineKeys
// copies them); the table gives their columns and footer.
var timelineKeyTable = keyTable[timelineKeys]{
	helpRow(0, nil, "", func(k *timelineKeys) *key.Binding { return &k.Prev }).inFooter(1, "prev"),
	helpRow(0, nil, "", func(k *timelineKeys) *key.Binding { return &k.Next }).inFooter(2, "next"),
	helpRow(0, nil, "", func(k *timelineKeys) *key.Binding { return &k.First }),
	helpRow(0, nil, "", func(k *timelineKeys) *key.Binding { return &k.Last }),
	helpRow(1, nil, "", func(k *timelineKeys) *key.Binding { return &k.BranchPrev }),
	helpRow(1, nil, "", func(k *timelineKeys) *key.Binding { return &k.BranchNext }),
}

// ShortHelp is the timeline's part of the footer: h/l scrub from any focus.
func (k timelineKeys) ShortHelp() []key.Binding  { return timelineKeyTable.footer(k) }
func (k timelineKeys) FullHelp() [][]key.Binding { return timelineKeyTable.fullHelp(k, 2, nil) }

func (p *timelinePane) ShortHelp() []key.Binding  { return p.keys.ShortHelp() }
func (p *timelinePane) FullHelp() [][]key.Binding { return p.keys.FullHelp() }

// scrubbed is what a key did to the timeline: handled whether it is the
// timeline's, moved whether the cursor moved (the root then shows the
// checkpoint).
type scrubbed struct{ moved, handled bool }

// Update scrubs the tree by a key.
func (p *timelinePane) Update(m tea.Msg) (scrubbed, tea.Cmd) {
	msg, ok := m.(tea.KeyMsg)
	if !ok {
		return scrubbed{}, nil
	}
	k, t := p.keys, p.tree
	switch {
	case key.Matches(msg, k.Prev):
		return scrubbed{t.step(-1), true}, nil
	case key.Matches(msg, k.Next):
		return scrubbed{t.step(1), true}, nil
	case key.Matches(msg, k.First):
		return scrubbed{t.first(), true}, nil
	case key.Matches(msg, k.Last):
		return scrubbed{t.last(), true}, nil
	case key.Matches(msg, k.BranchPrev):
		return scrubbed{t.switchBranch(-1), true}, nil
	case key.Matches(msg, k.BranchNext):
		return scrubbed{t.switchBranch(1), true}, nil
	}
	return scrubbed{}, nil
}

// holds says whether every node of nodes the timeline knows by id is the
// row it holds (parent, step, source, time): false once the thread was
// deleted and written again under its id.
func (p *timelinePane) holds(nodes []*timelineNode) bool {
	for _, n := range nodes {
		if old, ok := p.tree.nodes[n.id]; ok && (old.parent != n.parent || old.step != n.step || old.source != n.source || !old.at.Equal(n.at)) {
			return false
		}
	}
	return true
}

// takePage merges a page of the thread's history into the tree: sync says
// it is the newest checkpoints, read after a run stored some; last that it
// ends the opening read. moved says whether the cursor moved: to the head
// on the first page, or following a run (its first checkpoint, then every
// new child of the checkpoint under the cursor while that is the head).
func (p *timelinePane) takePage(nodes []*timelineNode, sync, last bool) (moved bool) {
	t := p.tree
	wasEmpty, head := t.len() == 0, t.maxID
	added := t.merge(nodes)
	if !sync && last {
		p.loading = false
	}
	if wasEmpty && t.len() > 0 && !p.followNext {
		moved = t.jump(t.maxID)
	}
	if sync {
		for _, id := range added {
			n := t.nodes[id]
			atHead := t.cursor == head && n.parent == t.cursor
			if p.followNext || atHead || t.cursor == "" {
				t.jump(id)
				p.followNext = false
				moved = true
			}
			if idLess(head, id) {
				head = id
			}
		}
	}
	p.total = max(p.total, t.len())
	return moved
}

// loadFailed ends the loading of a history that did not read.
func (p *timelinePane) loadFailed() { p.loading = false }

// followNextRun says whether the next checkpoint a sync brings takes the
// cursor (a run's first).
func (p *timelinePane) followNextRun(follow bool) { p.followNext = follow }

// jump puts the cursor on checkpoint id, when the tree holds it.
func (p *timelinePane) jump(id string) bool { return p.tree.jump(id) }

// step moves the cursor along its branch (tree.step: -1 the parent, +1
// the preferred child).
func (p *timelinePane) step(dir int) bool { return p.tree.step(dir) }

// moveRow moves the cursor by n display rows.
func (p *timelinePane) moveRow(n int) bool { return p.tree.moveRow(n) }

// setTotal takes the thread's checkpoint count from its listing.
func (p *timelinePane) setTotal(n int) { p.total = n }

// title names the pane: how many checkpoints, or how far loading got.
func (p *timelinePane) title() string {
	n := p.tree.len()
	title := fmt.Sprintf("Timeline · %d", n)
	if p.loading && p.total > n {
		title = fmt.Sprintf("Timeline · loading %d/%d", n, p.total)
	} else if p.loading {
		title = "Timeline · loading…"
	}
	return title
}

// follow takes what the tree's cursor changed: its place, branch and
// leaf, and the rows scrolled to show it.
func (p *timelinePane) follow() {
	t := p.tree
	p.leaf = t.leaf()
	a, b := t.position()
	p.position = [2]int{a, b}
	p.branch = t.branchInfo()
	p.ensureVisible()
}

// rowKey is everything a row's look depends on.
type rowKey struct {
	n                            *timelineNode
	w, theme, nest, pending      int
	cursor, onBranch, head, fork bool
	source, writer, interrupt    string
	// nav.go: a turn's first row shows the customer's words; drill marks.
	turnStart, resumed bool
	reused             int
	preview            string
}

func (p *timelinePane) SetSize(w, h int) { p.w, p.h = max(w, 1), max(h, 0) }

// newTimelinePane is the pane of thread ("" for none), empty until Init
// opens the thread.
func newTimelinePane(keys timelineKeys, thread string) timelinePane {
	return timelinePane{keys: keys, tree: newTree(), thread: thread}
}

// setTheme takes the theme rows are drawn in; gen changes with it.
func (p *timelinePane) setTheme(th *themes.Theme, gen int) { p.theme, p.themeGen = th, gen }

// reset empties the pane for thread being opened ("" for none): its
// history loads.
func (p *timelinePane) reset(thread string) {
	*p = timelinePane{w: p.w, h: p.h, keys: p.keys, theme: p.theme, themeGen: p.themeGen,
		tree: newTree(), thread: thread, loading: thread != ""}
}

// ensureVisible scrolls so the cursor's row is on screen.
func (p *timelinePane) ensureVisible() {
	t := p.tree
	n := t.nodes[t.cursor]
	if n == nil || p.h <= 0 {
		return
	}
	if n.row < p.off {
		p.off = n.row
	}
	if n.row >= p.off+p.h {
		p.off = n.row - p.h + 1
	}
	// Turn headers take lines too (nav.go).
	for p.off < n.row && p.linesTo(n.row) > p.h {
		p.off++
	}
	p.scroll(0)
}

func (p *timelinePane) scroll(n int) {
	p.off = min(max(p.off+n, 0), p.maxOff())
}

// at is the checkpoint on inner line y, if any (a turn header is none).
func (p *timelinePane) at(y int) (string, bool) {
	t := p.tree
	if y < 0 || y >= p.h {
		return "", false
	}
	line := 0
	for r := p.off; r < len(t.rows) && line <= y; r++ {
		if t.nodes[t.rows[r]].turnStart {
			line++
		}
		if line == y {
			return t.rows[r], true
		}
		line++
	}
	return "", false
}

// rowLines renders the visible rows (rows are cached by what they show).
func (p *timelinePane) rowLines() []string {
	t, th, theme := p.tree, p.theme, p.themeGen
	leaf := t.leaf()
	out := make([]string, 0, p.h)
	if len(p.rows) > 8192 {
		p.rows = nil
	}
	if p.rows == nil {
		p.rows = map[rowKey]string{}
	}
	for r := p.off; r < len(t.rows) && len(out) < p.h; r++ {
		n := t.nodes[t.rows[r]]
		k := rowKey{n: n, w: p.w, theme: theme, cursor: n.id == t.cursor, onBranch: t.isAncestor(n.id, leaf), head: n.id == t.maxID,
			nest: n.nest, fork: n.fork, pending: n.pending, source: n.source, writer: n.writer, interrupt: n.interrupt,
			turnStart: n.turnStart, resumed: n.resumed, reused: len(n.reused), preview: p.words[n.id]}
		if n.turnStart {
			out = append(out, p.turnHeader(th, theme, n))
			if len(out) == p.h {
				break
			}
		}
		row, ok := p.rows[k]
		if !ok {
			row = renderRow(th, k)
			p.rows[k] = row
		}
		out = append(out, row)
	}
	return out
}

// renderRow draws one checkpoint: fork rails, a marker (▶ cursor, ● on the
// current branch, ○ off it), id, source, the nodes that wrote it, a pause
// mark, and the time when there is room.
func renderRow(th *themes.Theme, k rowKey) string {
	n, w := k.n, k.w
	var rail strings.Builder
	nest := k.nest
	if nest > 6 {
		rail.WriteString("┆")
		nest = 6
	}
	for i := 0; i < nest; i++ {
		if i == nest-1 && k.fork {
			rail.WriteString("├─")
		} else {
			rail.WriteString("│ ")
		}
	}
	marker := "○"
	if k.onBranch {
		marker = "●"
	}
	if k.cursor {
		marker = "▶"
	}
	src := trunc(k.source, 6)
	railS := rail.String()
	avail := max(w-width(railS), 1)
	right := ""
	if !n.at.IsZero() && avail >= 34 {
		right = " " + n.at.Local().Format("15:04:05")
	}
	writer := k.writer
	if k.turnStart {
		writer = turnWords(k)
	}
	if k.interrupt != "" {
		writer += " ⏸"
	} else if k.pending > 0 && k.head {
		writer += " …"
	}
	idPart := fmt.Sprintf("%s %-4s%s", marker, "@"+n.shown(), drillMark(k))
	srcPart := src + strings.Repeat(" ", max(6-width(src), 0)) + " "
	if k.turnStart && k.source == "input" {
		srcPart = "" // the customer's words say it
	}
	if right != "" {
		writer = fit(writer, max(avail-width(idPart)-width(srcPart)-width(right), 1))
	}
	plain := idPart + srcPart + writer + right
	switch {
	case k.cursor:
		return th.Rail.Render(railS) + th.Cursor.Render(fit(plain, avail))
	case !k.onBranch:
		return th.Rail.Render(railS) + th.OffBranch.Render(trunc(plain, avail))
	}
	srcStyle := th.SourceLoop
	switch k.source {
	case "input":
		srcStyle = th.SourceInput
	case "fork", "replay":
		srcStyle = th.SourceFork
	case "update":
		srcStyle = th.SourceUpdate
	}
	body := th.OnBranch.Render(idPart) + srcStyle.Render(srcPart)
	if strings.HasSuffix(writer, "⏸") {
		body += th.OnBranch.Render(strings.TrimSuffix(writer, "⏸")) + th.Paused.Render("⏸")
	} else {
		body += th.OnBranch.Render(writer)
	}
	body += th.Muted.Render(right)
	return th.Rail.Render(railS) + trunc(body, avail)
}

// View is the pane's lines: the visible rows, or what to say instead.
func (p *timelinePane) View() []string {
	th := p.theme
	switch {
	case p.thread == "":
		return []string{th.Muted.Render("No thread open."), th.Muted.Render("t lists threads.")}
	case p.tree.len() == 0 && p.loading:
		return []string{th.Muted.Render("loading…")}
	case p.tree.len() == 0:
		return append([]string{th.Text.Render("No checkpoints yet.")}, wrapStyled(th.Muted, "Press i and type the customer's message to start this thread.", p.w)...)
	}
	return p.rowLines()
}

// runAt is where a run may start from, as the timeline shows it: the
// checkpoint under the cursor, the end of the cursor's branch (i continues
// there; end is the tree's own reckoning, r resumes there) and the
// thread's newest; a node is nil when there is none.
type runAt struct {
	empty          bool   // no checkpoint yet
	cursor, newest string // ids
	cur, leaf, end *timelineNode
	head           *timelineNode // the newest
}

// runAt reads where a run may start from (the run control's keys).
func (p *timelinePane) runAt() runAt {
	t := p.tree
	return runAt{empty: t.len() == 0, cursor: t.cursor, newest: t.maxID,
		cur: t.nodes[t.cursor], leaf: t.nodes[p.leaf], end: t.nodes[t.leaf()], head: t.nodes[t.maxID]}
}
