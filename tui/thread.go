package tui

// Reading the open chain (the thread view's loading): its history into
// the timeline page by page, its newest checkpoints after a run or
// another writer, and the checkpoint under the cursor with its
// neighbours (data.go holds the Cmds). The loader reads and keeps what
// waits for the first screen; the root opens a chain (it owns the
// session) and routes what the loader read to the timeline and the panes
// (model.go: openChain, onLoaded, takeHistory, cursorMoved).

import (
	tea "github.com/charmbracelet/bubbletea"

	"rewind/store/browse"
)

// threadLoader reads the chain open in its session: the history's pages,
// the checkpoint under the cursor (through the cache) and the ones a
// scrub step reaches next (prefetch). Its Update takes the reads'
// answers (in a loadMsg, with the tree it reads) and returns loadNews.
type threadLoader struct {
	sess    *session
	cache   *cache // the root's: a run's end drops what it changed too
	opening opening
}

func newThreadLoader(s *session, c *cache) threadLoader { return threadLoader{sess: s, cache: c} }

// useCache reads through c from now on (the root's, made anew for
// another graph's extension).
func (l *threadLoader) useCache(c *cache) { l.cache = c }

// loadMsg is an answer of a read with what of the root the loader reads:
// the timeline's tree (read only) and the checkpoint shown.
type loadMsg struct {
	tea.Msg
	tree *tree
	cur  *detail
}

// loadNews is what a read brings the root: page a page of the history to
// take into the timeline (its next page comes in the Cmd, after the
// checkpoint shown); failed the history could not be read; show the
// checkpoint under the cursor, read (read: from the store, not the
// cache, so the thread's costs may have changed); reread the checkpoint
// under the cursor to read again (the stored writes changed meanwhile); opened the
// first screen shows, so what waited for it starts; say a status line;
// err the read that failed (say is its text), which the root says again
// when the thread is read on another graph than its own.
type loadNews struct {
	page   *historyMsg
	failed bool
	show   *detail
	read   bool
	reread bool
	opened bool
	say    string
	sayErr bool
	err    error
}

// open starts reading chain c, which the session has just opened: its
// first page, and nothing else until its first screen shows.
func (l *threadLoader) open(c browse.Chain) tea.Cmd {
	l.cache.drop(c.Thread)
	l.opening.begin()
	return loadHistory(l.sess.ctx, l.sess.deps.Source, l.sess.gen, c, "", firstPage)
}

// withThreads reads the threads list too once the first screen shows (a
// thread named at start).
func (l *threadLoader) withThreads() { l.opening.withThreads() }

// shown is the first screen shown: opened whether what waited for it
// starts now (once); the Cmd reads the threads list when it waited too.
func (l *threadLoader) shown() (opened bool, cmd tea.Cmd) {
	due, threads := l.opening.shown()
	if due && threads {
		cmd = l.sess.readThreads()
	}
	return due, cmd
}

// Update takes a history page, a checkpoint read and a prefetch's end.
func (l *threadLoader) Update(msg tea.Msg) (loadNews, tea.Cmd) {
	in, ok := msg.(loadMsg)
	if !ok {
		return loadNews{}, nil
	}
	switch msg := in.Msg.(type) {
	case historyMsg:
		return l.onHistory(msg)
	case detailMsg:
		return l.onDetail(msg, in)
	case prefetchedMsg:
		l.cache.prefetch(false)
		if msg.gen != l.sess.gen {
			return loadNews{}, nil
		}
		return loadNews{}, l.prefetch(in.tree, in.cur) // the cursor may have moved on meanwhile
	}
	return loadNews{}, nil
}

// onHistory takes a page of the open chain's history: the root takes it
// into the timeline; an older page is read next, after the checkpoint
// shown.
func (l *threadLoader) onHistory(msg historyMsg) (loadNews, tea.Cmd) {
	if msg.gen != l.sess.gen || msg.thread != l.sess.thread {
		return loadNews{}, nil
	}
	if msg.err != nil {
		opened, cmd := l.shown()
		return loadNews{failed: true, say: msg.err.Error(), err: msg.err, sayErr: true, opened: opened}, cmd
	}
	var next tea.Cmd
	if !msg.sync && msg.more {
		next = loadHistory(l.sess.ctx, l.sess.deps.Source, l.sess.gen, l.sess.chain(), msg.before, nextPage)
	}
	return loadNews{page: &msg}, next
}

// load reads the checkpoint under t's cursor: from the cache at once
// (news.show, and its neighbours next), or in the Cmd (a read for where
// the cursor was is not waited for).
func (l *threadLoader) load(t *tree) (loadNews, tea.Cmd) {
	id, thread := t.cursor, l.sess.thread
	l.cache.want(thread, id)
	if d, ok := l.cache.detail(thread, id); ok {
		opened, cmd := l.shown()
		return loadNews{show: d, opened: opened}, tea.Batch(l.prefetch(t, d), cmd)
	}
	return loadNews{}, loadDetail(l.sess.ctx, l.sess.deps.Source, l.sess.deps.Backend, l.cache, l.sess.gen, l.sess.chain(), id)
}

// onDetail takes the checkpoint read for the cursor: shown when the
// cursor is still there, read again when built before the stored writes
// changed; its neighbours are read next.
func (l *threadLoader) onDetail(msg detailMsg, in loadMsg) (loadNews, tea.Cmd) {
	if msg.gen != l.sess.gen || msg.thread != l.sess.thread || msg.skipped {
		return loadNews{}, nil
	}
	if msg.err != nil {
		opened, cmd := l.shown()
		return loadNews{say: msg.err.Error(), err: msg.err, sayErr: true, opened: opened}, cmd
	}
	if msg.id != in.tree.cursor {
		return loadNews{}, nil
	}
	if msg.version != l.cache.version(msg.thread) {
		return loadNews{reread: true}, nil // built before the stored writes changed
	}
	opened, cmd := l.shown()
	return loadNews{show: msg.d, read: true, opened: opened}, tea.Batch(l.prefetch(in.tree, msg.d), cmd)
}

// prefetch loads, into the cache, the checkpoints a scrub step reaches
// from cur, the one shown (its parent and the branch's next), so that
// step shows its checkpoint at once instead of "loading" until a read
// returns. It starts once the checkpoint under the cursor is shown (it
// never competes with the read the screen waits for), one at a time; when
// it ends, the cursor's neighbours then get theirs.
func (l *threadLoader) prefetch(t *tree, cur *detail) tea.Cmd {
	if l.cache.prefetching || l.sess.thread == "" || cur == nil || cur.id != t.cursor {
		return nil
	}
	var ids []string
	for _, id := range []string{t.parentOf(t.cursor), t.preferred(t.cursor)} {
		if _, ok := l.cache.detail(l.sess.thread, id); id != "" && !ok {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	l.cache.prefetch(true)
	ctx, src, b, c, gen, ch := l.sess.ctx, l.sess.deps.Source, l.sess.deps.Backend, l.cache, l.sess.gen, l.sess.chain()
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

// sync reads the open chain's newest checkpoints, for the timeline's
// tree t.
func (l *threadLoader) sync(t *tree) tea.Cmd {
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
	return syncHead(l.sess.ctx, l.sess.deps.Source, l.sess.gen, l.sess.chain(), func(id string) bool { return empty || known[id] })
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
