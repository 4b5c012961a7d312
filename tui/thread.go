package tui

// The thread view's loading, for the root model: opening a thread, reading
// its history into the tree page by page, following new checkpoints, and
// loading the checkpoint under the cursor (data.go holds the Cmds).

import (
	"errors"

	tea "github.com/charmbracelet/bubbletea"

	"rewind/store"
	"rewind/store/browse"
	"rewind/tui/termtext"
)

// openThread switches the thread view to thread's root chain and starts
// loading it.
func (m *Model) openThread(thread string) tea.Cmd { return m.openChain(browse.Chain{Thread: thread}) }

// chain is the chain the thread view shows.
func (m *Model) chain() browse.Chain { return m.sess.chain() }

// openChain switches the thread view to chain c (a thread's root graph,
// or a subgraph's run in it: its own checkpoints, state and writes) and
// starts loading it.
func (m *Model) openChain(c browse.Chain) tea.Cmd {
	thread := c.Thread
	m.screen = screenThread
	m.sess.thread, m.sess.ns = thread, c.NS
	m.openAt = ""
	m.sess.gen++
	m.timeline.reset(thread) // loading, at no checkpoint
	m.cur = nil
	if n, ok := m.threads.checkpoints(c); ok {
		m.timeline.setTotal(n)
	}
	m.cache.drop(thread)
	m.live.forget()
	m.follow.stop()
	m.opening.begin()
	m.syncPanes()
	m.refreshLive()
	return loadHistory(m.sess.ctx, m.sess.deps.Source, m.sess.gen, c, "", firstPage)
}

// opening is a thread's open until its first screen shows. That screen
// waits for the timeline's first page and the checkpoint under the cursor
// only; what it does not show starts once it does (opened): the head's
// run state and drafts (the live strip), the watch for other writers and,
// for a thread named at start, the threads list. On a 1,000-turn thread
// they took the store (and the machine's cores) from the two reads the
// screen waits for.
type opening struct {
	pending bool // the first screen is not shown yet
	threads bool // read the threads list then too
}

// begin starts an open: its first screen is not shown yet.
func (o *opening) begin() { o.pending = true }

// withThreads reads the threads list too once the first screen shows (a
// thread named at start).
func (o *opening) withThreads() { o.threads = true }

// shown is the first screen shown: due is whether what waited for it
// starts now (once), threads whether the threads list is read too.
func (o *opening) shown() (due, threads bool) {
	if !o.pending {
		return false, false
	}
	due, threads = true, o.threads
	o.pending, o.threads = false, false
	return due, threads
}

// opened starts what the first screen did not wait for, once.
func (m *Model) opened() tea.Cmd {
	due, threads := m.opening.shown()
	if !due {
		return nil
	}
	cmds := []tea.Cmd{m.reloadHead(), m.follow.start(m.sess.ctx, m.sess.deps.Backend, m.sess.gen, m.sess.thread), m.armSourcePoll()}
	if threads {
		cmds = append(cmds, loadThreads(m.sess.ctx, m.sess.deps.Source))
	}
	return tea.Batch(cmds...)
}

// reloadHead reads the thread's newest checkpoint again (after a run, a
// kill, a discard, or on opening the thread).
func (m *Model) reloadHead() tea.Cmd {
	m.live.readingHead()
	return loadHead(m.sess.ctx, m.sess.deps.Backend, m.sess.gen, m.sess.thread)
}

func (m *Model) onHead(msg headMsg) tea.Cmd {
	current := msg.gen == m.sess.gen && msg.thread == m.sess.thread
	m.live.headRead(msg.head, current && msg.err == nil)
	if !current {
		return nil
	}
	if msg.err != nil {
		if m.follow.gone || errors.Is(msg.err, store.ErrNotFound) {
			return nil // deleted: the history's reload says so
		}
		return m.setFlash("read the newest checkpoint: "+msg.err.Error(), true)
	}
	m.refreshLive()
	return m.wantCosts()
}

// sync reads the thread's newest checkpoints into the timeline.
func (m *Model) sync(follow bool) tea.Cmd {
	if m.sess.thread == "" {
		return nil
	}
	if follow {
		m.timeline.followNextRun(true)
	}
	t := m.timeline.tree
	// The tree is read on the Cmd's goroutine; hand it a snapshot of ids.
	known := make(map[string]bool, 64)
	for n, newest := num(t.maxID), num(t.maxID); n > 0 && n > newest-syncPage*4; n-- {
		if _, ok := t.nodes[idOf(n)]; ok {
			known[idOf(n)] = true
		}
	}
	if num(t.maxID) == 0 { // LangGraph's UUIDs: no run of numbers to take
		for id := range t.nodes {
			known[id] = true
		}
	}
	empty := t.len() == 0
	return syncHead(m.sess.ctx, m.sess.deps.Source, m.sess.gen, m.chain(), func(id string) bool { return empty || known[id] })
}

func (m *Model) onHistory(msg historyMsg) tea.Cmd {
	if msg.gen != m.sess.gen || msg.thread != m.sess.thread {
		return nil
	}
	if msg.err != nil {
		m.timeline.loadFailed()
		return tea.Batch(m.setFlash(msg.err.Error(), true), m.opened())
	}
	if msg.sync {
		switch {
		case len(msg.nodes) == 0 && m.timeline.tree.len() > 0:
			// Every thread has a checkpoint: another process deleted it.
			if !m.follow.deleted() {
				return nil
			}
			return m.setFlash("thread "+termtext.Name(m.sess.thread)+" was deleted by another process: what is shown is what it held; the view reloads if the id is written again", true)
		case m.follow.gone || !m.timeline.holds(msg.nodes):
			// Written again under the same id (a checkpoint the timeline
			// knows by id is another row): nothing of the old one may
			// show, so the thread is opened from scratch.
			return tea.Batch(m.setFlash("thread "+termtext.Name(m.sess.thread)+" was deleted and written again by another process: reloaded", true), m.openThread(m.sess.thread))
		}
	}
	moved := m.timeline.takePage(msg.nodes, msg.sync, !msg.more)
	if at := m.openAt; at != "" && !msg.sync {
		// A lesson opens on a checkpoint of its own, once a page holds it.
		if m.timeline.jump(at) {
			m.openAt, moved = "", true
		} else if !msg.more {
			m.openAt = ""
		}
	}
	var cmds []tea.Cmd
	if !msg.sync && msg.more {
		cmds = append(cmds, loadHistory(m.sess.ctx, m.sess.deps.Source, m.sess.gen, m.chain(), msg.before, nextPage))
	} else if !msg.sync && m.timeline.tree.len() == 0 {
		cmds = append(cmds, m.opened()) // no checkpoint to wait for
	}
	if msg.sync {
		// A run changes the stored writes of the checkpoints it starts from.
		m.cache.dropPending(m.sess.thread)
		if !moved && m.cur != nil && len(m.cur.cp.Tasks) > 0 {
			moved = true
		}
	}
	m.afterTreeChange()
	cmds = append(cmds, m.timeline.wantWords(m.sess))
	if moved {
		// The checkpoint to show comes before older pages of the timeline:
		// they are read once it is (on opening a long thread, the first
		// screen waits for one page and one checkpoint only).
		return tea.Sequence(m.cursorMoved(), tea.Batch(cmds...))
	}
	return tea.Batch(cmds...)
}

// afterTreeChange refreshes what is derived from the tree and cursor.
func (m *Model) afterTreeChange() {
	m.timeline.follow()
	m.dialogFollows()
}

// cursorMoved shows the checkpoint under the cursor, loading it if needed.
func (m *Model) cursorMoved() tea.Cmd {
	m.afterTreeChange()
	id := m.timeline.tree.cursor
	if id == "" {
		return nil
	}
	m.cache.want(m.sess.thread, id) // a load for where the cursor was is not waited for
	if d, ok := m.cache.detail(m.sess.thread, id); ok {
		m.cur = d
		m.syncPanes()
		return tea.Batch(m.checkFidelity(), m.timeline.wantWords(m.sess), m.nav.wantOriginal(m.cur), m.prefetch(), m.opened())
	}
	return tea.Batch(loadDetail(m.sess.ctx, m.sess.deps.Source, m.sess.deps.Backend, m.cache, m.sess.gen, m.chain(), id), m.timeline.wantWords(m.sess))
}

func (m *Model) onDetail(msg detailMsg) tea.Cmd {
	if msg.gen != m.sess.gen || msg.thread != m.sess.thread || msg.skipped {
		return nil
	}
	if msg.err != nil {
		return tea.Batch(m.setFlash(msg.err.Error(), true), m.opened())
	}
	if msg.version != m.cache.version(msg.thread) {
		// Built before the stored writes changed: read it again.
		if msg.id == m.timeline.tree.cursor {
			return m.cursorMoved()
		}
		return nil
	}
	if msg.id == m.timeline.tree.cursor {
		m.cur = msg.d
		m.syncPanes()
		return tea.Batch(m.checkFidelity(), m.nav.wantOriginal(m.cur), m.prefetch(), m.wantCosts(), m.opened())
	}
	return nil
}

// prefetch loads, into the cache, the checkpoints a scrub step reaches
// from the one shown (its parent and the branch's next), so that step
// shows its checkpoint at once instead of "loading" until a read returns.
// It starts once the checkpoint under the cursor is shown (it never
// competes with the read the screen waits for), one at a time; when it
// ends, the cursor's neighbours then get theirs.
func (m *Model) prefetch() tea.Cmd {
	t := m.timeline.tree
	if m.cache.prefetching || m.sess.thread == "" || m.cur == nil || m.cur.id != t.cursor {
		return nil
	}
	var ids []string
	for _, id := range []string{t.parentOf(t.cursor), t.preferred(t.cursor)} {
		if _, ok := m.cache.detail(m.sess.thread, id); id != "" && !ok {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	m.cache.prefetch(true)
	ctx, src, b, c, gen, ch := m.sess.ctx, m.sess.deps.Source, m.sess.deps.Backend, m.cache, m.sess.gen, m.chain()
	return func() tea.Msg {
		version := c.version(ch.Thread)
		for _, id := range ids {
			// An error is left to the step that reaches id: its own
			// load reports it.
			_, _ = detailFrom(ctx, src, b, c, ch, id, version)
		}
		return prefetchedMsg{gen: gen}
	}
}

func (m *Model) onPrefetched(msg prefetchedMsg) tea.Cmd {
	m.cache.prefetch(false)
	if msg.gen != m.sess.gen {
		return nil
	}
	return m.prefetch() // the cursor may have moved on meanwhile
}
