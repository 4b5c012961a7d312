package tui

// A read-only source (Deps.Backend nil: a LangGraph database) takes no
// writes: the thread view's keys that would write, and those that read
// what only rewind's own store keeps, are refused with one line saying
// why, listed as off in ?, and left out of the footer.

import (
	"fmt"
	"slices"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"rewind/engine/ticket"
	"rewind/store/browse"
	"rewind/tui/termtext"
)

// readOnlyWhy is why a writing key is off.
const readOnlyWhy = "this LangGraph database is opened read-only: rewind never writes to it"

// readOnly is whether the source takes no writes.
func (m *Model) readOnly() bool { return m.sess.deps.Backend == nil }

// offKeys are the keys of the screen shown that are off on a read-only
// source, from the model's own bindings (so a rebound key is refused
// under its new name): the threads list's (n, d) are not the thread
// view's (n is its next match).
func (m *Model) offKeys() []offKey {
	if m.screen == screenThreads {
		return bound(threadListKeyTable.offKeys(m.threads.keys))
	}
	return bound(threadKeyTable.offKeys(m.keys))
}

// bound is off less the keys the screen shown does not bind.
func bound(off []offKey) []offKey {
	return slices.DeleteFunc(off, func(o offKey) bool { return len(o.b.Keys()) == 0 })
}

// onReadOnlyKey refuses a key that is off, saying why in the status line.
func (m *Model) onReadOnlyKey(msg tea.KeyMsg) (tea.Cmd, bool) {
	if !m.readOnly() {
		return nil, false
	}
	for _, o := range m.offKeys() {
		if key.Matches(msg, o.b) {
			return m.setFlash(o.what+" is off: "+readOnlyWhy, true), true
		}
	}
	return nil, false
}

// markOff is groups as ? lists them on a read-only source: a key that is
// off says so.
func (m *Model) markOff(groups [][]key.Binding) [][]key.Binding {
	if !m.readOnly() {
		return groups
	}
	off := m.offKeys()
	out := make([][]key.Binding, len(groups))
	for i, g := range groups {
		out[i] = make([]key.Binding, len(g))
		for j, b := range g {
			out[i][j] = b
			if isOff(b, off) {
				out[i][j] = key.NewBinding(key.WithKeys(b.Keys()...), key.WithHelp(b.Help().Key, "off: "+b.Help().Desc))
			}
		}
	}
	return out
}

// withoutOff is bs less the keys that are off on a read-only source.
func (m *Model) withoutOff(bs []key.Binding) []key.Binding {
	if !m.readOnly() {
		return bs
	}
	off := m.offKeys()
	out := bs[:0:0]
	for _, b := range bs {
		if !isOff(b, off) {
			out = append(out, b)
		}
	}
	return out
}

func isOff(b key.Binding, off []offKey) bool {
	for _, o := range off {
		if len(b.Keys()) > 0 && len(o.b.Keys()) > 0 && b.Keys()[0] == o.b.Keys()[0] {
			return true
		}
	}
	return false
}

// gotoPrefix puts the cursor on the loaded checkpoint given names: its
// id, a prefix of it, or a short form shown ("1f1ed296…a089").
func (m *Model) gotoPrefix(given string) tea.Cmd {
	id, err := browse.One("checkpoint", given, browse.Match(given, m.timeline.tree.rows), "thread "+m.sess.thread, "rewind log "+m.sess.thread)
	if err != nil {
		return m.setFlash(termtext.Line(err.Error()), true)
	}
	m.timeline.jump(id)
	return m.cursorMoved()
}

// sourceSearch finds q's words in the thread's messages through the
// Source (browse.Search: what `rewind search` scans on a LangGraph
// database), in a Cmd.
func (m *Model) sourceSearch(q string) tea.Cmd {
	ctx, src, gen, ch := m.sess.ctx, m.sess.deps.Source, m.sess.gen, m.chain()
	thread := ch.Thread
	return tea.Batch(m.setFlash(fmt.Sprintf("searching %s for %q…", termtext.Name(thread), termtext.Line(q)), false), func() tea.Msg {
		found, more, err := browse.Search(ctx, src, ch, q, maxHits)
		hits := make([]searchHit, 0, len(found))
		for _, f := range found {
			h := ticket.Hit{Text: f.Text, Matches: f.Matches}
			hits = append(hits, searchHit{id: f.Checkpoint, short: lgShortID(f.Checkpoint),
				where: fmt.Sprintf("#%d %s", f.Message.Index+1, termtext.Line(f.Speaker)), text: f.Text, parts: hitParts(h)})
		}
		return searchMsg{gen: gen, thread: thread, query: q, hits: hits, more: more, err: err}
	})
}

// sourcePollEvery is how often the open chain of a read-only source is
// read for checkpoints another process wrote (a running LangGraph app):
// it has no watch to wake the TUI, as rewind's stores do.
const sourcePollEvery = 2 * time.Second

// sourcePollMsg: time to read the newest checkpoints of chain generation
// gen.
type sourcePollMsg struct{ gen int }

// armSourcePoll arms the next poll of a read-only source's open chain.
func (m *Model) armSourcePoll() tea.Cmd {
	if !m.readOnly() || m.sess.thread == "" {
		return nil
	}
	gen := m.sess.gen
	return tea.Tick(sourcePollEvery, func(time.Time) tea.Msg { return sourcePollMsg{gen} })
}

// onSourcePoll reads the newest checkpoints into the timeline (the cursor
// follows the head when it was on it, as for a rewind store's watch) and
// arms the next poll; a poll of a chain no longer open stops.
func (m *Model) onSourcePoll(msg sourcePollMsg) tea.Cmd {
	if msg.gen != m.sess.gen {
		return nil
	}
	return tea.Batch(m.sync(false), m.armSourcePoll())
}

// offKey is a key that is off on a read-only source and what it would do
// (keyRow.off).
type offKey struct {
	b    key.Binding
	what string
}
