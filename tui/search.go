package tui

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"rewind/engine"
	"rewind/engine/ticket"
	"rewind/store"
	"rewind/themes"
	"rewind/tui/termtext"
)

// Search (/): the thread's original messages (every branch, compacted ones
// too), the events of the branch on screen, the state of the checkpoint
// under the cursor and every checkpoint's listing (nodes, pending tasks,
// pauses). It runs in a Cmd; the results open in a list, enter jumps to a
// hit's checkpoint, n/N step through the hits afterwards.

// searchState is the last search and where n/N are in its hits.
type searchState struct {
	query   string
	hits    []searchHit
	at      int
	running bool
}

// searchHit is one match: the checkpoint to go to, where it was found,
// and the text around it (one line, sanitised).
type searchHit struct {
	id    int64
	where string
	text  string
}

// maxHits bounds a search's results.
const maxHits = 500

// messageIndex reads original messages by index (the store's MessagesIn).
type messageIndex interface {
	MessagesIn(ctx context.Context, thread string, from, to int64) ([]store.Message, error)
}

// MessagesIn reads the stored messages with an index in [from, to], on
// every branch, ordered by index, in one read.
func (b engineBackend) MessagesIn(ctx context.Context, thread string, from, to int64) ([]store.Message, error) {
	return b.Store().MessagesIn(ctx, thread, from, to)
}

// searchPage is how many message indexes a search reads at once.
const searchPage = 512

type searchMsg struct {
	gen    int
	thread string
	query  string
	hits   []searchHit
	more   bool
	err    error
}

// listed is what a search reads of a listing, snapshot in Update.
type listed struct {
	id   int64
	text string
}

func (m *Model) startSearch(q string) tea.Cmd {
	if m.nav.search.running {
		return m.setFlash("a search is under way", true)
	}
	m.nav.search = searchState{query: q, running: true}
	t := m.timeline.tree
	// Snapshots for the Cmd's goroutine: the branch on screen, listings,
	// the state under the cursor.
	var branch []int64
	for id := t.leaf(); id != 0; id = t.parentOf(id) {
		branch = append(branch, id)
	}
	lists := make([]listed, 0, len(t.rows))
	for _, id := range t.rows {
		n := t.nodes[id]
		lists = append(lists, listed{id: id, text: strings.Join([]string{n.source, n.writer, n.next, n.interrupt}, " · ")})
	}
	var cur *engine.Checkpoint
	if m.cur != nil {
		cur = &m.cur.cp
	}
	ctx, b, gen, thread := m.ctx, m.deps.Backend, m.gen, m.thread
	return tea.Batch(m.setFlash(fmt.Sprintf("searching %s for %q…", termtext.Name(thread), termtext.Line(q)), false), func() tea.Msg {
		hits, more, err := runSearch(ctx, b, thread, q, branch, lists, cur)
		return searchMsg{gen: gen, thread: thread, query: q, hits: hits, more: more, err: err}
	})
}

// runSearch looks for q, without case, in what the thread stores.
func runSearch(ctx context.Context, b Backend, thread, q string, branch []int64, lists []listed, cur *engine.Checkpoint) ([]searchHit, bool, error) {
	needle := strings.ToLower(q)
	var hits []searchHit
	more := false
	add := func(h searchHit) {
		if len(hits) >= maxHits {
			more = true
			return
		}
		hits = append(hits, h)
	}
	// Messages, as stored: every branch's, the summary's originals too,
	// from #1 to the first index none has, a page of indexes a read.
	if mi, ok := b.(messageIndex); ok {
		var page []store.Message
		for i := int64(1); len(hits) < maxHits; i++ {
			if len(page) == 0 || page[0].Index > i {
				if (i-1)%searchPage != 0 {
					break // the page read has no #i
				}
				var err error
				if page, err = mi.MessagesIn(ctx, thread, i, i+searchPage-1); err != nil {
					return hits, more, fmt.Errorf("search messages: %w", err)
				}
			}
			n := 0 // page[:n] are #i
			for n < len(page) && page[n].Index == i {
				n++
			}
			if n == 0 {
				break
			}
			ms := page[:n]
			page = page[n:]
			for _, sm := range ms {
				var msg ticket.Message
				text := string(sm.Body)
				if json.Unmarshal(sm.Body, &msg) == nil {
					text = msg.Content
					if msg.ToolCall != nil {
						text += " " + msg.ToolCall.Name + "(" + string(msg.ToolCall.Args) + ")"
					}
				}
				if at := strings.Index(strings.ToLower(text), needle); at >= 0 {
					add(searchHit{id: sm.CheckpointID, where: fmt.Sprintf("#%d %s", sm.Index, termtext.Line(msg.Speaker)), text: around(text, at, len(needle))})
				}
			}
		}
	}
	// The state under the cursor, channel by channel.
	if cur != nil {
		names := slices.Sorted(maps.Keys(cur.Values))
		for _, name := range names {
			v := string(cur.Values[name])
			if at := strings.Index(strings.ToLower(v), needle); at >= 0 {
				add(searchHit{id: cur.ID, where: "state " + termtext.Line(name), text: around(v, at, len(needle))})
			}
		}
	}
	// Listings: nodes that wrote, pending tasks, pauses.
	for _, l := range lists {
		if at := strings.Index(strings.ToLower(l.text), needle); at >= 0 {
			add(searchHit{id: l.id, where: "listing", text: around(l.text, at, len(needle))})
		}
	}
	// Events of the branch on screen.
	for _, id := range branch {
		if len(hits) >= maxHits {
			more = true
			break
		}
		evs, err := b.Events(ctx, thread, id)
		if err != nil {
			return hits, more, fmt.Errorf("search events of @%d: %w", id, err)
		}
		for _, ev := range evs {
			text := ev.Type + " " + ev.Node + " " + ev.Task + " " + string(ev.Data)
			if at := strings.Index(strings.ToLower(text), needle); at >= 0 {
				add(searchHit{id: id, where: "event " + termtext.Line(ev.Type), text: around(text, at, len(needle))})
			}
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].id < hits[j].id })
	return hits, more, nil
}

// around is the text near a match at byte at, one line.
func around(s string, at, n int) string {
	from := max(at-30, 0)
	for from > 0 && from < len(s) && !utf8Start(s[from]) {
		from--
	}
	to := min(at+n+90, len(s))
	for to < len(s) && !utf8Start(s[to]) {
		to++
	}
	out := strings.Join(strings.Fields(s[from:to]), " ")
	if from > 0 {
		out = "…" + out
	}
	if to < len(s) {
		out += "…"
	}
	return termtext.Line(out)
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

func (m *Model) onSearch(msg searchMsg) tea.Cmd {
	if msg.gen != m.gen || msg.thread != m.thread {
		return nil
	}
	m.nav.search.running = false
	if msg.err != nil {
		return m.setFlash(msg.err.Error(), true)
	}
	m.nav.search.hits, m.nav.search.at = msg.hits, -1
	if len(msg.hits) == 0 {
		return m.setFlash(fmt.Sprintf("no match for %q in messages, state or events", termtext.Line(msg.query)), true)
	}
	if m.dialog == nil {
		m.openDialog(&searchDialog{query: msg.query, hits: msg.hits, more: msg.more, keys: newSearchKeys()})
	}
	return m.setFlash(fmt.Sprintf("%d match(es) for %q: enter goes, n/N step through them", len(msg.hits), termtext.Line(msg.query)), false)
}

// nextHit goes to the next (dir 1) or previous search hit.
func (m *Model) nextHit(dir int) tea.Cmd {
	s := &m.nav.search
	if len(s.hits) == 0 {
		return m.setFlash("no search results: / searches", false)
	}
	if s.at < 0 && dir < 0 {
		s.at = 0
	}
	s.at = ((s.at+dir)%len(s.hits) + len(s.hits)) % len(s.hits)
	return m.goHit(s.at)
}

func (m *Model) goHit(i int) tea.Cmd {
	if i < 0 || i >= len(m.nav.search.hits) {
		return nil // a newer search came meanwhile
	}
	h := m.nav.search.hits[i]
	m.nav.search.at = i
	flash := m.setFlash(fmt.Sprintf("match %d/%d: @%d %s", i+1, len(m.nav.search.hits), h.id, h.where), false)
	if !m.timeline.tree.jump(h.id) {
		return m.setFlash(fmt.Sprintf("match %d/%d is at @%d, which the timeline has not loaded", i+1, len(m.nav.search.hits), h.id), true)
	}
	return tea.Batch(flash, m.cursorMoved())
}

// searchDialog lists a search's hits; enter asks the root to go to one
// (goHitMsg).
type searchDialog struct {
	dialogSize // SetSize: the room the root gives it
	query      string
	hits       []searchHit
	more       bool
	sel, off   int
	keys       searchKeys
}

type searchKeys struct{ Up, Down, PageUp, PageDown, Go, Close key.Binding }

func newSearchKeys() searchKeys {
	return searchKeys{
		Up:       key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:     key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		PageUp:   key.NewBinding(key.WithKeys("pgup", "ctrl+u"), key.WithHelp("pgup", "page up")),
		PageDown: key.NewBinding(key.WithKeys("pgdown", "ctrl+d"), key.WithHelp("pgdn", "page down")),
		Go:       key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "go there")),
		Close:    key.NewBinding(key.WithKeys("esc", "q", "/"), key.WithHelp("esc", "close")),
	}
}

func (k searchKeys) ShortHelp() []key.Binding  { return []key.Binding{k.Down, k.Up, k.Go, k.Close} }
func (k searchKeys) FullHelp() [][]key.Binding { return [][]key.Binding{k.ShortHelp()} }

// rows is how many hits the list shows at once: the room but the box's
// frame, margin, note and keys.
func (d *searchDialog) rows() int { return max(d.maxH-8, 3) }

// goHitMsg asks the root to go to search hit i (the dialog's enter).
type goHitMsg struct{ i int }

func (d *searchDialog) Update(msg tea.Msg) (bool, tea.Cmd) {
	k, ok := msg.(tea.KeyMsg)
	if !ok {
		return false, nil
	}
	switch {
	case key.Matches(k, d.keys.Up):
		d.sel--
	case key.Matches(k, d.keys.Down):
		d.sel++
	case key.Matches(k, d.keys.PageUp):
		d.sel -= d.rows()
	case key.Matches(k, d.keys.PageDown):
		d.sel += d.rows()
	case key.Matches(k, d.keys.Go):
		i := d.sel
		return true, func() tea.Msg { return goHitMsg{i: i} }
	case key.Matches(k, d.keys.Close):
		return true, nil
	}
	d.sel = min(max(d.sel, 0), len(d.hits)-1)
	if d.sel < d.off {
		d.off = d.sel
	}
	if d.sel >= d.off+d.rows() {
		d.off = d.sel - d.rows() + 1
	}
	return false, nil
}

func (d *searchDialog) View(th *themes.Theme, h help.Model) string {
	w := min(d.maxW, 110)
	inner := w - 4
	title := fmt.Sprintf("Search %q · %d match(es)", termtext.Line(d.query), len(d.hits))
	if d.more {
		title = fmt.Sprintf("Search %q · first %d matches", termtext.Line(d.query), len(d.hits))
	}
	var lines []string
	for i := d.off; i < len(d.hits) && i < d.off+d.rows(); i++ {
		hit := d.hits[i]
		head := fmt.Sprintf("@%-5d %-18s ", hit.id, trunc(hit.where, 18))
		row := head + hit.text
		if i == d.sel {
			lines = append(lines, th.Selected.Render(fit("▶ "+row, inner)))
		} else {
			lines = append(lines, th.Accent.Render("  "+head)+th.Text.Render(trunc(hit.text, max(inner-2-width(head), 1))))
		}
	}
	lines = append(lines, "", th.Muted.Render(fmt.Sprintf("%d–%d of %d · after enter, n/N step through them", d.off+1, min(d.off+d.rows(), len(d.hits)), len(d.hits))))
	h.Width = inner
	lines = append(lines, h.View(d.keys))
	return box(th, title, lines, w)
}
