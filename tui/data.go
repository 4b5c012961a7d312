package tui

import (
	"context"
	"errors"
	"fmt"
	"sync"

	tea "github.com/charmbracelet/bubbletea"

	"rewind/engine"
	"rewind/store"
	"rewind/store/browse"
)

// Backend is what the TUI reads and the few direct writes it makes. Every
// call runs inside a tea.Cmd, never in Update.
type Backend interface {
	History(ctx context.Context, thread string, before int64, limit int) ([]engine.Checkpoint, error)
	Get(ctx context.Context, thread string, id int64) (engine.Checkpoint, error)
	Events(ctx context.Context, thread string, id int64) ([]engine.Event, error)
	PendingWrites(ctx context.Context, thread string, id int64) ([]engine.TaskWrites, error)
	DiscardPending(ctx context.Context, thread string) (engine.Checkpoint, error)
	DeleteThread(ctx context.Context, thread string) error
}

// EngineBackend reads through the engine (so migrations apply) and deletes
// through its store.
func EngineBackend(e *engine.Engine) Backend { return engineBackend{e} }

type engineBackend struct{ *engine.Engine }

// draftLister is a Backend that can list the drafts table, the side
// effects an approval lets happen.
type draftLister interface {
	ListDrafts(ctx context.Context, thread string) ([]store.Draft, error)
}

// ListDrafts lists a thread's rows in the store's drafts table.
func (b engineBackend) ListDrafts(ctx context.Context, thread string) ([]store.Draft, error) {
	d, ok := b.Store().(store.Drafts)
	if !ok {
		return nil, errors.New("this store has no drafts table")
	}
	return d.ListDrafts(ctx, thread)
}

// DeleteThread deletes as the thread's writer: a thread a run holds is
// refused, not deleted under it.
func (b engineBackend) DeleteThread(ctx context.Context, thread string) error {
	err := b.Engine.DeleteThread(ctx, thread, false)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("thread %v is already gone", store.Name(thread))
	}
	return err
}

// detail is everything shown about one checkpoint, loaded in a tea.Cmd.
type detail struct {
	// id is cp's id as the tree keys it.
	id string
	cp engine.Checkpoint
	// ext is the graph's extension (nil: its channels shown by shape);
	// value, stateErr and pvalue are its reading of cp and of the parent
	// (Extension.Decode; pvalue nil when the parent did not decode), nil
	// without one.
	ext      Extension
	value    any
	stateErr error
	parent   *engine.Checkpoint
	pvalue   any
	events   []engine.Event
	writes   []engine.TaskWrites
	diff     []engine.ChannelDiff
	// run is the run that wrote it (Engine.Runs), when the backend tells.
	run *engine.RunSummary
	// src is the checkpoint as a read-only source gives it (Deps.Backend
	// nil: a LangGraph database), shown in place of the fields above.
	src *sourceDetail
}

// sourceDetail is a checkpoint read through Deps.Source alone: its
// values, and the writes of the superstep that runs from it.
type sourceDetail struct {
	cp     browse.Checkpoint
	writes []browse.TaskWrites
	// diff is how the channels changed from cp's parent in its own chain
	// (a subgraph's first checkpoint has none there: no diff, never the
	// parent graph's); diffErr says why the parent did not read.
	diff    []engine.ChannelDiff
	diffErr string
}

// detailFrom reads checkpoint id of chain ch: through the engine on a
// rewind store (b), else through the source alone.
func detailFrom(ctx context.Context, src browse.Source, b Backend, c *cache, ch browse.Chain, id string, version int) (*detail, error) {
	if b == nil {
		return readSourceDetail(ctx, src, c, ch, id, version)
	}
	return buildDetail(ctx, b, c, ch.Thread, id, version)
}

// readSourceDetail reads checkpoint id of chain ch through the source. The
// cache keys it by thread and id: a thread's cache is dropped when the
// view opens another of its chains.
func readSourceDetail(ctx context.Context, src browse.Source, c *cache, ch browse.Chain, id string, version int) (*detail, error) {
	thread := ch.Thread
	if d, ok := c.detail(thread, id); ok {
		return d, nil
	}
	cp, err := src.Checkpoint(ctx, ch, id)
	if err != nil {
		return nil, err
	}
	ws, err := src.Writes(ctx, ch, id)
	if err != nil {
		return nil, err
	}
	sd := &sourceDetail{cp: cp, writes: ws}
	if cp.Parent != "" {
		if parent, err := src.Checkpoint(ctx, ch, cp.Parent); err != nil {
			sd.diffErr = err.Error()
		} else {
			sd.diff = engine.Diff(engine.Values(parent.State()), engine.Values(cp.State()))
		}
	}
	d := &detail{id: id, src: sd}
	c.putDetail(thread, d, version)
	return d, nil
}

// runLister is a Backend that can tell a thread's runs (the engine's).
type runLister interface {
	Runs(ctx context.Context, thread string) (engine.Runs, error)
}

// cache keeps recently loaded checkpoints and details. Cmds run on other
// goroutines, hence the lock.
type cache struct {
	mu      sync.Mutex
	details *lru[*detail]
	raw     *lru[rawCP]
	// stale counts, by thread, the times details were dropped: a detail
	// built before a drop may hold stored writes that have changed since,
	// and must be neither kept nor shown.
	stale map[string]int
	// runs is, by thread, its runs as read under a detail version: every
	// listing of the thread is read to tell them, so once a version, not
	// once a scrub step.
	runs map[string]runsAt
	// prefetching: a prefetch (thread.go) is under way. Read and set on
	// the Update goroutine only.
	prefetching bool
	// wanted is, by thread, the checkpoint whose load the cursor waits
	// for: a load that starts after the cursor moved on skips its reads
	// (keys typed or repeated faster than loads do not pile them up).
	wanted map[string]string
	// ext reads each checkpoint's values for the graph's extension (nil:
	// none, nothing decoded beyond the channels).
	ext Extension
}

type runsAt struct {
	version int
	runs    engine.Runs
}

// runsOf is thread's runs, read through rl unless read already under
// version.
func (c *cache) runsOf(ctx context.Context, rl runLister, thread string, version int) (engine.Runs, error) {
	c.mu.Lock()
	at, ok := c.runs[thread]
	c.mu.Unlock()
	if ok && at.version == version {
		return at.runs, nil
	}
	runs, err := rl.Runs(ctx, thread)
	if err != nil {
		return engine.Runs{}, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stale[thread] == version {
		c.runs[thread] = runsAt{version, runs}
	}
	return runs, nil
}

// rawCP is a read checkpoint with its decoded state: a checkpoint never
// changes once written, and decoding is the costly part of a scrub step.
type rawCP struct {
	cp       engine.Checkpoint
	value    any
	stateErr error
}

func newCache(ext Extension) *cache {
	return &cache{details: newLRU[*detail](64), raw: newLRU[rawCP](256), stale: map[string]int{}, runs: map[string]runsAt{}, wanted: map[string]string{}, ext: ext}
}

// want says the cursor now waits for checkpoint id of thread.
// prefetch marks a prefetch started (on) or done (Update goroutine only).
func (c *cache) prefetch(on bool) { c.prefetching = on }

func (c *cache) want(thread, id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.wanted[thread] = id
}

// isWanted is whether the cursor still waits for checkpoint id of thread.
func (c *cache) isWanted(thread, id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.wanted[thread] == id
}

func (c *cache) detail(thread, id string) (*detail, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.details.get(ckey{thread, id})
}

// putDetail keeps d unless the thread's details were dropped since
// version (from version) was read.
func (c *cache) putDetail(thread string, d *detail, version int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stale[thread] == version {
		c.details.put(ckey{thread, d.id}, d)
	}
}

// version is the thread's detail version (see stale).
func (c *cache) version(thread string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stale[thread]
}

func (c *cache) drop(thread string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stale[thread]++
	c.details.dropIf(func(k ckey) bool { return k.thread == thread })
	c.raw.dropIf(func(k ckey) bool { return k.thread == thread })
}

// dropPending forgets details of checkpoints with pending tasks: a run may
// have stored writes for them since.
func (c *cache) dropPending(thread string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stale[thread]++
	for k, it := range c.details.items {
		if k.thread == thread && len(it.v.cp.Tasks) > 0 {
			delete(c.details.items, k)
		}
	}
}

func (c *cache) checkpoint(ctx context.Context, b Backend, thread, id string) (rawCP, error) {
	c.mu.Lock()
	r, ok := c.raw.get(ckey{thread, id})
	c.mu.Unlock()
	if ok {
		return r, nil
	}
	cp, err := b.Get(ctx, thread, num(id))
	if err != nil {
		return rawCP{}, err
	}
	r = rawCP{cp: cp}
	if c.ext != nil {
		r.value, r.stateErr = c.ext.Decode(cp.Values)
	}
	c.mu.Lock()
	c.raw.put(ckey{thread, id}, r)
	c.mu.Unlock()
	return r, nil
}

type ckey struct {
	thread string
	id     string
}

// lru is a small least-recently-used map.
type lru[V any] struct {
	cap   int
	tick  int
	items map[ckey]*lruItem[V]
}

type lruItem[V any] struct {
	v    V
	used int
}

func newLRU[V any](n int) *lru[V] { return &lru[V]{cap: n, items: map[ckey]*lruItem[V]{}} }

func (l *lru[V]) get(k ckey) (V, bool) {
	it, ok := l.items[k]
	if !ok {
		var zero V
		return zero, false
	}
	l.tick++
	it.used = l.tick
	return it.v, true
}

func (l *lru[V]) put(k ckey, v V) {
	l.tick++
	if it, ok := l.items[k]; ok {
		it.v, it.used = v, l.tick
		return
	}
	if len(l.items) >= l.cap {
		var oldest ckey
		first := true
		least := 0
		for k2, it := range l.items {
			if first || it.used < least {
				oldest, least, first = k2, it.used, false
			}
		}
		delete(l.items, oldest)
	}
	l.items[k] = &lruItem[V]{v: v, used: l.tick}
}

func (l *lru[V]) dropIf(f func(ckey) bool) {
	for k := range l.items {
		if f(k) {
			delete(l.items, k)
		}
	}
}

// Messages from Cmds. gen ties a reply to the thread view that asked, so a
// late answer for a thread the user already left is dropped.
type (
	threadsMsg struct {
		threads []browse.Thread
		err     error
		// current: the chain shown, which the list selects when it had no
		// selection (the root sets it as it routes the message).
		current browse.Chain
		// read numbers the read (session.readThreads).
		read int
	}
	historyMsg struct {
		gen    int
		thread string
		nodes  []*timelineNode
		// before is the oldest id of this page (the next page reads below it).
		before string
		more   bool
		sync   bool
		err    error
		// graph is the graph the page's newest listing that names one
		// names ("": none does).
		graph string
	}
	// prefetchedMsg: a prefetch (thread.go) put its details in the cache.
	prefetchedMsg struct{ gen int }
	detailMsg     struct {
		gen    int
		thread string
		id     string
		d      *detail
		err    error
		// version is the cache's detail version the load began under.
		version int
		// skipped: the cursor had moved on before the load began.
		skipped bool
	}
	runStartedMsg struct {
		gen    int
		thread string
		kind   string
		run    RunHandle
		err    error
		rs     RunSettings
		// head is the thread's newest checkpoint read just before a resume.
		head *headInfo
		// answer is the approval answer this run carries out.
		answer *answerInfo
		// shown: the run is on the thread shown (the root sets it as it
		// routes the message to the live strip).
		shown bool
	}
	runUpdatesMsg struct {
		run     RunHandle
		updates []RunUpdate
	}
	deletedMsg struct {
		thread string
		err    error
	}
	discardedMsg struct {
		gen    int
		thread string
		cp     engine.Checkpoint
		err    error
	}
)

const (
	firstPage = 200
	nextPage  = 2000
	syncPage  = 32
)

func loadThreads(ctx context.Context, src browse.Source, read int) tea.Cmd {
	return func() tea.Msg {
		ts, err := src.Threads(ctx)
		return threadsMsg{threads: ts, err: err, read: read}
	}
}

func loadHistory(ctx context.Context, src browse.Source, gen int, ch browse.Chain, before string, limit int) tea.Cmd {
	return func() tea.Msg {
		cps, err := readListings(ctx, src, ch, before, limit)
		msg := historyMsg{gen: gen, thread: ch.Thread, err: err}
		if err != nil {
			return msg
		}
		msg.nodes = make([]*timelineNode, len(cps))
		for i, cp := range cps {
			msg.nodes[i] = nodeFrom(cp)
			if msg.graph == "" {
				msg.graph = cp.Graph
			}
		}
		if n := len(cps); n > 0 {
			msg.before = cps[n-1].ID
			msg.more = n == limit
		}
		return msg
	}
}

// readListings reads a page of chain ch's listings; a thread with none yet
// (a new one, or one deleted meanwhile) is an empty page.
func readListings(ctx context.Context, src browse.Source, ch browse.Chain, before string, limit int) ([]browse.Listing, error) {
	ls, err := src.History(ctx, ch, before, limit)
	if errors.Is(err, browse.ErrNotFound) {
		return nil, nil
	}
	return ls, err
}

// syncHead reads the newest checkpoints until it meets one already known
// (known reports that), so a run's new checkpoints join the timeline.
func syncHead(ctx context.Context, src browse.Source, gen int, ch browse.Chain, known func(string) bool) tea.Cmd {
	return func() tea.Msg {
		msg := historyMsg{gen: gen, thread: ch.Thread, sync: true}
		before := ""
		for {
			cps, err := readListings(ctx, src, ch, before, syncPage)
			if err != nil {
				msg.err = err
				return msg
			}
			met := false
			for _, cp := range cps {
				if known(cp.ID) {
					met = true
				}
				msg.nodes = append(msg.nodes, nodeFrom(cp))
			}
			if met || len(cps) < syncPage {
				return msg
			}
			before = cps[len(cps)-1].ID
		}
	}
}

func loadDetail(ctx context.Context, src browse.Source, b Backend, c *cache, gen int, ch browse.Chain, id string) tea.Cmd {
	thread := ch.Thread
	return func() tea.Msg {
		version := c.version(thread)
		if !c.isWanted(thread, id) {
			return detailMsg{gen: gen, thread: thread, id: id, version: version, skipped: true}
		}
		d, err := detailFrom(ctx, src, b, c, ch, id, version)
		return detailMsg{gen: gen, thread: thread, id: id, d: d, err: err, version: version}
	}
}

func buildDetail(ctx context.Context, b Backend, c *cache, thread, id string, version int) (*detail, error) {
	if d, ok := c.detail(thread, id); ok {
		return d, nil
	}
	r, err := c.checkpoint(ctx, b, thread, id)
	if err != nil {
		return nil, err
	}
	cp := r.cp
	d := &detail{id: id, cp: cp, ext: c.ext, value: r.value, stateErr: r.stateErr}
	if cp.ParentID != 0 {
		if p, err := c.checkpoint(ctx, b, thread, idOf(cp.ParentID)); err == nil {
			d.parent = &p.cp
			if p.stateErr == nil {
				d.pvalue = p.value
			}
		}
	}
	if d.events, err = b.Events(ctx, thread, cp.ID); err != nil {
		return nil, err
	}
	if len(cp.Tasks) > 0 {
		if d.writes, err = b.PendingWrites(ctx, thread, cp.ID); err != nil {
			return nil, err
		}
	}
	var parentValues engine.Values
	if d.parent != nil {
		parentValues = d.parent.Values
	}
	d.diff = engine.Diff(parentValues, cp.Values)
	if rl, ok := b.(runLister); ok {
		if runs, err := c.runsOf(ctx, rl, thread, version); err == nil {
			if s, ok := runs.Of(cp.ID); ok {
				d.run = &s
			}
		}
	}
	c.putDetail(thread, d, version)
	return d, nil
}

// waitRun waits for the next updates of a run, taking whatever else is
// already queued so a burst of events costs one render.
func waitRun(r RunHandle) tea.Cmd {
	return func() tea.Msg {
		u, ok := <-r.Updates()
		if !ok {
			return runUpdatesMsg{run: r, updates: []RunUpdate{{Done: true, Err: errors.New("the run ended without a result")}}}
		}
		batch := []RunUpdate{u}
		for !u.Done && len(batch) < 256 {
			select {
			case u, ok = <-r.Updates():
				if !ok {
					return runUpdatesMsg{run: r, updates: batch}
				}
				batch = append(batch, u)
			default:
				return runUpdatesMsg{run: r, updates: batch}
			}
		}
		return runUpdatesMsg{run: r, updates: batch}
	}
}
