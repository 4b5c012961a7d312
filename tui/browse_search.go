package tui

// The browser's search (/): the words typed on the footer's prompt are
// looked for in the chain's messages as `rewind search` looks on a
// LangGraph database (browse.Search: the newest checkpoint of each
// branch, a message once); the hits open in the thread view's list
// (searchDialog), enter goes to one and shows its conversation, n/N step
// through them afterwards (the thread view's searchState).

import (
	"fmt"

	tea "github.com/charmbracelet/bubbletea"

	"rewind/engine/ticket"
	"rewind/store"
	"rewind/store/browse"
	"rewind/tui/termtext"
)

// The prompt's labels: what enter does with its text.
const (
	promptGotoLabel   = "go to @"
	promptSearchLabel = "search "
)

// startSearch reads the hits of q in the chain on screen, in a Cmd.
func (m *Browser) startSearch(q string) tea.Cmd {
	switch n := len(store.SearchQuery(q)); {
	case m.search.running:
		m.status = "a search is under way"
		return nil
	case n == 0:
		m.errText = fmt.Sprintf("nothing to search for in %q: give a word (letters or digits)", termtext.Line(q))
		return nil
	case n > store.MaxQueryWords:
		m.errText = fmt.Sprintf("the query has %d words: give at most %d", n, store.MaxQueryWords)
		return nil
	}
	m.search.begin(q)
	m.status = fmt.Sprintf("searching %s for %q…", termtext.Name(m.chain.Thread), termtext.Line(q))
	m.inFlight++
	ctx, src, c, gen, short := m.ctx, m.src, m.chain, m.gen, m.timeline.Short
	return func() tea.Msg {
		found, more, err := browse.Search(ctx, src, c, q, maxHits)
		hits := make([]searchHit, 0, len(found))
		for _, f := range found {
			h := ticket.Hit{Text: f.Text, Matches: f.Matches}
			hits = append(hits, searchHit{id: f.Checkpoint, short: short(f.Checkpoint),
				where: fmt.Sprintf("#%d %s", f.Message.Index+1, termtext.Line(f.Speaker)), text: f.Text, parts: hitParts(h)})
		}
		return searchMsg{gen: gen, thread: c.Thread, query: q, hits: hits, more: more, err: err}
	}
}

// onSearch shows a search's hits in the list, or says there are none.
func (m *Browser) onSearch(msg searchMsg) {
	m.inFlight--
	if msg.gen != m.gen {
		m.search.ended(searchMsg{err: fmt.Errorf("the chain changed")})
		return
	}
	m.search.ended(msg)
	m.status = ""
	switch {
	case msg.err != nil:
		m.errText = "search: " + msg.err.Error()
	case len(msg.hits) == 0:
		m.status = fmt.Sprintf("no message of this chain holds %q (the newest checkpoint of every branch searched)", termtext.Line(msg.query))
	default:
		d := &searchDialog{query: msg.query, hits: msg.hits, more: msg.more, keys: newSearchKeys()}
		d.SetSize(dialogRoom(m.w, m.h))
		m.results = d
		m.status = fmt.Sprintf("%d match(es) for %q: enter goes, n/N step through them", len(msg.hits), termtext.Line(msg.query))
	}
}

// resultsKey gives a key to the hits' list; enter goes to a hit.
func (m *Browser) resultsKey(k tea.KeyMsg) tea.Cmd {
	done, cmd := m.results.Update(k)
	if done {
		m.results = nil
	}
	return cmd // enter: a goHitMsg
}

// nextHit goes to the next (dir 1) or previous search hit.
func (m *Browser) nextHit(dir int) tea.Cmd {
	i, ok := m.search.step(dir)
	if !ok {
		m.status = "no search results: / searches"
		return nil
	}
	return m.goHit(i)
}

// goHit moves the cursor to hit i's checkpoint and shows its conversation.
func (m *Browser) goHit(i int) tea.Cmd {
	h, ok := m.search.goTo(i)
	if !ok {
		return nil
	}
	if !m.timeline.MoveTo(h.id) {
		m.errText = fmt.Sprintf("match %d/%d is at @%s, which this chain does not list", i+1, len(m.search.hits), h.short)
		return nil
	}
	m.tab, m.focus = tabConv, bFocusDetail
	m.status = fmt.Sprintf("match %d/%d: @%s %s", i+1, len(m.search.hits), h.short, h.where)
	return m.load()
}
