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
	"github.com/charmbracelet/lipgloss"

	"rewind/engine"
	"rewind/store"
	"rewind/store/browse"
	"rewind/themes"
	"rewind/tui/termtext"
)

// Search (/): the thread's original messages through the store's
// full-text index (every branch, compacted ones too: Engine.Search), and
// the state, events and listing of the checkpoint under the cursor and
// every checkpoint's listing (nodes, pending tasks, pauses). A hit holds,
// for each word of the query, a word that begins with it, without case
// (store.SearchQuery), and those words are drawn in the theme's Match. It
// runs in a Cmd; the results open in a list, enter jumps to a hit's
// checkpoint, n/N step through the hits afterwards, across branches.
// The prompt opens empty; ↑ and ↓ bring back earlier queries.

// searchState is the last search, where n/N are in its hits, and the
// queries asked before (oldest first).
type searchState struct {
	query   string
	hits    []searchHit
	at      int
	running bool
	history []string
}

// begin starts a search for q: no hits yet, n/N before the first.
func (s *searchState) begin(q string) {
	s.remember(q)
	s.query, s.hits, s.at, s.running = q, nil, -1, true
}

// ended takes a search's answer (its hits, none on an error).
func (s *searchState) ended(msg searchMsg) {
	s.running = false
	if msg.err == nil {
		s.hits, s.at = msg.hits, -1
	}
}

// step is the hit n (dir 1) or N (dir -1) goes to; ok is false with no
// hits.
func (s *searchState) step(dir int) (int, bool) {
	if len(s.hits) == 0 {
		return 0, false
	}
	at := s.at
	if at < 0 && dir < 0 {
		at = 0
	}
	return ((at+dir)%len(s.hits) + len(s.hits)) % len(s.hits), true
}

// goTo makes hit i the current one; ok is false when there is no hit i
// (a newer search came meanwhile).
func (s *searchState) goTo(i int) (searchHit, bool) {
	if i < 0 || i >= len(s.hits) {
		return searchHit{}, false
	}
	s.at = i
	return s.hits[i], true
}

// maxHistory bounds the queries ↑ brings back.
const maxHistory = 50

// remember adds q to the history, as its newest.
func (s *searchState) remember(q string) {
	s.history = slices.DeleteFunc(s.history, func(h string) bool { return h == q })
	s.history = append(s.history, q)
	if len(s.history) > maxHistory {
		s.history = s.history[len(s.history)-maxHistory:]
	}
}

// searchHit is one match: the checkpoint to go to (its id, shown as
// short when that is set: a LangGraph id's short form), where it was
// found, and the text around it (one line, sanitised), cut into parts, the
// matched words' marked.
type searchHit struct {
	id, short string
	where     string
	text      string
	parts     []hitPart
}

// hitPart is a piece of a hit's line: a matched word or the text between.
type hitPart struct {
	text  string
	match bool
}

// maxHits bounds a search's results.
const maxHits = 500

// hitWidth is how much of a hit's text its line keeps.
const hitWidth = 120

// messageIndex reads original messages by index (the store's MessagesIn).
type messageIndex interface {
	MessagesIn(ctx context.Context, thread string, from, to int64) ([]store.Message, error)
}

// MessagesIn reads the stored messages with an index in [from, to], on
// every branch, ordered by index, in one read.
func (b engineBackend) MessagesIn(ctx context.Context, thread string, from, to int64) ([]store.Message, error) {
	return b.Store().MessagesIn(ctx, thread, from, to)
}

// searcher finds a thread's messages through the store's full-text index
// (the engine's Search).
type searcher interface {
	Search(ctx context.Context, thread, query string, limit int) ([]store.Message, error)
}

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
	id   string
	text string
}

// startSearch searches for q (the / prompt's enter): on a read-only
// source the root scans the Source (news.sourceSearch, readonly.go).
func (n *navState) startSearch(q string, in navMsg) (navNews, tea.Cmd) {
	if n.search.running {
		return said("a search is under way", true), nil
	}
	switch words := len(store.SearchQuery(q)); {
	case words == 0:
		return said(fmt.Sprintf("nothing to search for in %q: give a word (letters or digits)", termtext.Line(q)), true), nil
	case words > store.MaxQueryWords:
		return said(fmt.Sprintf("the query has %d words: give at most %d", words, store.MaxQueryWords), true), nil
	}
	n.search.begin(q)
	if n.sess.deps.Backend == nil {
		return navNews{handled: true, sourceSearch: q}, nil
	}
	t := in.tree
	// Snapshots for the Cmd's goroutine: listings, the checkpoint under
	// the cursor.
	lists := make([]listed, 0, len(t.rows))
	for _, id := range t.rows {
		node := t.nodes[id]
		lists = append(lists, listed{id: id, text: strings.Join([]string{node.source, node.writer, node.next, node.interrupt}, " · ")})
	}
	var cur *engine.Checkpoint
	if in.cur != nil {
		cur = &in.cur.cp
	}
	ctx, b, gen, thread, x := n.sess.ctx, n.sess.deps.Backend, n.sess.gen, n.sess.thread, n.sess.deps.Extension
	return said(fmt.Sprintf("searching %s for %q…", termtext.Name(thread), termtext.Line(q)), false), func() tea.Msg {
		hits, more, err := runSearch(ctx, b, x, thread, q, lists, cur)
		return searchMsg{gen: gen, thread: thread, query: q, hits: hits, more: more, err: err}
	}
}

// runSearch looks for q's words in what the thread stores: its messages
// through the index, and the checkpoint cur's state and events and every
// listing as they are. A message is read by x's Searcher, else by its
// shape.
func runSearch(ctx context.Context, b Backend, x Extension, thread, q string, lists []listed, cur *engine.Checkpoint) ([]searchHit, bool, error) {
	words := store.SearchQuery(q)
	var hits []searchHit
	more := false
	add := func(id string, where string, text string) {
		if len(hits) >= maxHits {
			more = true
			return
		}
		hits = append(hits, searchHit{id: id, where: where, text: text, parts: hitParts(text, store.Matches(text, words))})
	}
	// find is whether each word of the query begins a word of text.
	find := func(text string) bool { return store.HasWords(store.Words(text), words) }
	if s, ok := b.(searcher); ok {
		found, err := s.Search(ctx, thread, q, maxHits+1)
		if err != nil {
			return nil, false, fmt.Errorf("search messages: %w", err)
		}
		for _, sm := range found {
			speaker, text := storedSaid(x, sm.Body)
			add(idOf(sm.CheckpointID), fmt.Sprintf("#%d %s", sm.Index, termtext.Line(speaker)), text)
		}
	}
	if cur != nil {
		at := idOf(cur.ID)
		// The state under the cursor, channel by channel.
		for _, name := range slices.Sorted(maps.Keys(cur.Values)) {
			if text := string(cur.Values[name]); find(text) {
				add(at, "state "+termtext.Line(name), text)
			}
		}
		// Its events (a read-only source has none).
		var evs []engine.Event
		var err error
		if b != nil {
			evs, err = b.Events(ctx, thread, cur.ID)
		}
		if err != nil {
			return hits, more, fmt.Errorf("search events of @%d: %w", cur.ID, err)
		}
		for _, ev := range evs {
			if text := ev.Type + " " + ev.Node + " " + ev.Task + " " + string(ev.Data); find(text) {
				add(at, "event "+termtext.Line(ev.Type), text)
			}
		}
	}
	// Listings: nodes that wrote, pending tasks, pauses.
	for _, l := range lists {
		if find(l.text) {
			add(l.id, "listing", l.text)
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return idLess(hits[i].id, hits[j].id) })
	return hits, more, nil
}

// storedSaid is who said a stored message and what it says, as x's
// Searcher reads it, else by its shape (browse.Said, as the Conversation
// pane reads a message list); a body neither reads is its text, said by
// no one.
func storedSaid(x Extension, body []byte) (speaker, text string) {
	if s, ok := x.(Searcher); ok {
		if speaker, text, ok := s.Said(body); ok {
			return speaker, text
		}
	}
	var v any
	if json.Unmarshal(body, &v) == nil {
		if msgs, ok := browse.Messages([]any{v}); ok {
			return browse.Said(msgs[0])
		}
	}
	return "", string(body)
}

// hitParts cuts a hit's text's snippet at its matches (byte spans of
// text), each part sanitised.
func hitParts(text string, matches [][2]int) []hitPart {
	snip, spans := browse.Snippet(text, matches, hitWidth)
	var out []hitPart
	at := 0
	for _, sp := range spans {
		if sp[0] > at {
			out = append(out, hitPart{text: termtext.Line(snip[at:sp[0]])})
		}
		out = append(out, hitPart{text: termtext.Line(snip[sp[0]:sp[1]]), match: true})
		at = sp[1]
	}
	if at < len(snip) {
		out = append(out, hitPart{text: termtext.Line(snip[at:])})
	}
	return out
}

// at is the hit's checkpoint as the list shows it.
func (h searchHit) at() string {
	if h.short != "" {
		return h.short
	}
	return h.id
}

// line is the hit's snippet, plain.
func (h searchHit) line() string {
	var b strings.Builder
	for _, p := range h.parts {
		b.WriteString(p.text)
	}
	return b.String()
}

// onSearch takes a search's answer: its hits open in a list.
func (n *navState) onSearch(msg searchMsg) navNews {
	if msg.gen != n.sess.gen || msg.thread != n.sess.thread {
		return navNews{handled: true}
	}
	n.search.ended(msg)
	if msg.err != nil {
		return said(msg.err.Error(), true)
	}
	if len(msg.hits) == 0 {
		return said(fmt.Sprintf("no match for %q in the messages of every branch, nor in this checkpoint's state, events or the listings", termtext.Line(msg.query)), true)
	}
	news := said(fmt.Sprintf("%d match(es) for %q: enter goes, n/N step through them", len(msg.hits), termtext.Line(msg.query)), false)
	news.dialog = &searchDialog{query: msg.query, hits: msg.hits, more: msg.more, keys: newSearchKeys()}
	return news
}

// nextHit goes to the next (dir 1) or previous search hit.
func (n *navState) nextHit(dir int, t *tree) navNews {
	i, ok := n.search.step(dir)
	if !ok {
		return said("no search results: / searches", false)
	}
	return n.goHit(i, t)
}

// goHit goes to search hit i, when the timeline holds its checkpoint.
func (n *navState) goHit(i int, t *tree) navNews {
	h, ok := n.search.goTo(i)
	if !ok {
		return navNews{handled: true} // a newer search came meanwhile
	}
	if _, ok := t.nodes[h.id]; !ok {
		return said(fmt.Sprintf("match %d/%d is at @%s, which the timeline has not loaded", i+1, len(n.search.hits), t.label(h.id)), true)
	}
	news := said(fmt.Sprintf("match %d/%d: @%s %s", i+1, len(n.search.hits), t.label(h.id), h.where), false)
	news.jump = h.id
	return news
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

var searchKeyTable = keyTable[searchKeys]{
	helpRow(0, []string{"up", "k"}, "up", func(k *searchKeys) *key.Binding { return &k.Up }).inFooter(2, ""),
	helpRow(0, []string{"down", "j"}, "down", func(k *searchKeys) *key.Binding { return &k.Down }).inFooter(1, ""),
	helpRow(0, []string{"pgup", "ctrl+u"}, "page up", func(k *searchKeys) *key.Binding { return &k.PageUp }).labelled("pgup"),
	helpRow(0, []string{"pgdown", "ctrl+d"}, "page down", func(k *searchKeys) *key.Binding { return &k.PageDown }).labelled("pgdn"),
	helpRow(0, []string{"enter"}, "go there", func(k *searchKeys) *key.Binding { return &k.Go }).inFooter(3, ""),
	helpRow(0, []string{"esc", "q", "/"}, "close", func(k *searchKeys) *key.Binding { return &k.Close }).labelled("esc").inFooter(4, ""),
}

func newSearchKeys() searchKeys                { return searchKeyTable.bind() }
func (k searchKeys) ShortHelp() []key.Binding  { return searchKeyTable.footer(k) }
func (k searchKeys) FullHelp() [][]key.Binding { return searchKeyTable.fullHelp(k, 1, nil) }

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
		head := fmt.Sprintf("@%-5s %-18s ", hit.at(), trunc(hit.where, 18))
		if i == d.sel {
			lines = append(lines, hitRow("▶ "+head, hit.parts, inner, th.Selected, th.Selected, th.Match.Inherit(th.Selected)))
		} else {
			lines = append(lines, hitRow("  "+head, hit.parts, inner, th.Accent, th.Text, th.Match))
		}
	}
	lines = append(lines, "", th.Muted.Render(fmt.Sprintf("%d–%d of %d · after enter, n/N step through them", d.off+1, min(d.off+d.rows(), len(d.hits)), len(d.hits))))
	h.Width = inner
	lines = append(lines, h.View(d.keys))
	return box(th, title, lines, w)
}

// hitRow is a hit's row, w cells wide: its head, then its snippet with the
// matched words in match.
func hitRow(head string, parts []hitPart, w int, headStyle, text, match lipgloss.Style) string {
	var b strings.Builder
	b.WriteString(headStyle.Render(head))
	left := w - width(head)
	for _, p := range parts {
		if left <= 0 {
			break
		}
		t := trunc(p.text, left)
		left -= width(t)
		if p.match {
			b.WriteString(match.Render(t))
		} else {
			b.WriteString(text.Render(t))
		}
	}
	if left > 0 {
		b.WriteString(text.Render(strings.Repeat(" ", left)))
	}
	return b.String()
}
