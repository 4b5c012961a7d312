package tui

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/spinner"
	tea "github.com/charmbracelet/bubbletea"

	"rewind/engine"
	"rewind/engine/model"
	"rewind/engine/ticket"
	"rewind/themes"
	"rewind/tui/termtext"
)

// Deps are what the TUI works with: where it reads, how it runs, and a
// label for the store in the status bar.
type Deps struct {
	Backend    Backend
	Runner     Runner
	StoreLabel string
	// RunnerLabel says where runs happen, for the status bar (e.g.
	// "worker processes", or why they stay in-process).
	RunnerLabel string
}

// Settings are the user's choices for this session.
type Settings struct {
	Thread          string
	Theme           *themes.Theme
	InterruptBefore []string
	InterruptAfter  []string
	// AuthTTL is how long the authorization grant of a draft turn lasts
	// (default 1h).
	AuthTTL time.Duration
	// ConfigPath is the config file T saves the theme to ("" saves none).
	ConfigPath string
	// NoColor is NO_COLOR: the theme stays no-color, T cannot change it.
	NoColor bool
	// Keys rebinds keys of the thread view (the config's [keys]).
	Keys map[string][]string
	// Lessons, Prepare and Lesson are `rewind demo` (lessons.go).
	Lessons []Lesson
	Prepare PrepareFunc
	Lesson  string
}

type screen int

const (
	screenThread screen = iota
	screenThreads
	screenLessons
)

type focusID int

const (
	focusTimeline focusID = iota
	focusMain
	focusSide
)

// Content panes.
const (
	paneConv = iota
	paneState
	paneInsp
	paneCount
)

var paneNames = [paneCount]string{"Conversation", "State", "Inspector"}

// graphNodes are the ticket graph's nodes, for breakpoints.
var graphNodes = []string{ticket.NodePlanner, ticket.NodeExecutor, ticket.NodeCritic, ticket.NodeSummarizer, ticket.NodeReply}

// Model is the root model: it owns the screens and routes every message to
// the component it concerns. All I/O happens in tea.Cmds.
type Model struct {
	ctx  context.Context
	deps Deps

	theme    *themes.Theme
	themeGen int
	help     help.Model
	spin     spinner.Model
	keys     threadKeys

	w, h   int
	layout layout
	screen screen

	// The thread view.
	thread   string
	gen      int
	tree     *tree
	timeline timelinePane
	loading  bool
	cache    *cache
	cur      *detail
	leaf     int64
	focus    focusID
	content  contentPanes // conversation, state, inspector (panes.go)

	composer composer // the message line (composer.go)

	followNext bool
	breaks     map[string]bool

	// Drills, approval and streaming (drill.go; the live strip, live.go).
	authTTL time.Duration // of a draft's authorization grant
	armed   string        // kill point for the next run
	live    liveStrip     // the run under way and what the last one left
	follow  follower      // a run elsewhere, followed (follow.go)

	par parity // replay, edit state, compare, graph view (parity.go)

	threads threadList
	dialog  dialog
	pager   pager      // the help and the status log, over the screen
	status  statusLine // the status bar's message and the status log

	configPath string
	noColor    bool

	// Lessons (lessons.go, script.go) and the fidelity badge (fidelity.go).
	lesson       string // to prepare at start
	lessons      *lessonPicker
	script       *scriptPanel
	prepare      PrepareFunc
	fidelity     *lru[*fidelityBadge] // by checkpoint
	fidelityBusy bool                 // a check is under way

	quitting bool

	nav navState // nav.go: goto, search, zoom, pins
}

// New builds the root model.
func New(ctx context.Context, deps Deps, s Settings) *Model {
	th := s.Theme
	if th == nil {
		th = themes.Or(themes.Default)
	}
	m := &Model{
		ctx: ctx, deps: deps,
		keys: newThreadKeys(), threads: newThreadList(), pager: newPager(),
		help: help.New(), spin: spinner.New(spinner.WithSpinner(spinner.MiniDot)),
		tree: newTree(), cache: newCache(), breaks: map[string]bool{},
		content: newContentPanes(), thread: s.Thread, authTTL: s.AuthTTL,
		configPath: s.ConfigPath, noColor: s.NoColor,
	}
	if err := m.keys.rebind(s.Keys); err != nil {
		m.keys = newThreadKeys()
		m.logStatus("keys not rebound: "+err.Error(), true)
	}
	if m.authTTL <= 0 {
		m.authTTL = time.Hour
	}
	for _, n := range s.InterruptBefore {
		m.breaks["before:"+n] = true
	}
	for _, n := range s.InterruptAfter {
		m.breaks["after:"+n] = true
	}
	m.composer = newComposer()
	m.live = newLiveStrip(m.keys, m.canKill)
	m.timeline.keys = newTimelineKeys(m.keys)
	m.setTheme(th)
	if s.Thread == "" {
		m.screen = screenThreads
	}
	m.lessons, m.prepare, m.lesson = newLessonPicker(m.theme, s.Lessons), s.Prepare, s.Lesson
	if len(s.Lessons) > 0 && s.Thread == "" {
		m.screen = screenLessons
	}
	return m
}

func (m *Model) setTheme(th *themes.Theme) {
	m.theme = th
	m.content.setTheme(th)
	m.themeGen++
	m.help.Styles = help.Styles{
		Ellipsis: th.HelpSep, ShortKey: th.HelpKey, ShortDesc: th.HelpDesc, ShortSeparator: th.HelpSep,
		FullKey: th.HelpKey, FullDesc: th.HelpDesc, FullSeparator: th.HelpSep,
	}
	m.spin.Style = th.StatusRun
	if m.lessons != nil {
		m.lessons.setTheme(th)
	}
	if m.script != nil {
		m.script.render(th)
	}
	m.composer.setTheme(th)
	m.live.theme = th
	m.syncPanes()
	m.refreshLive()
}

// Init loads the threads and, when one was named, opens it.
func (m *Model) Init() tea.Cmd {
	cmds := []tea.Cmd{loadThreads(m.ctx, m.deps.Backend)}
	if m.thread != "" {
		cmds = append(cmds, m.openThread(m.thread))
	}
	if l, ok := m.lessons.find(m.lesson); ok {
		cmds = append(cmds, m.startLesson(l))
	}
	return tea.Batch(cmds...)
}

// Update routes messages.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.w, m.h = msg.Width, msg.Height
		m.relayout()
		// A taller list shows rows whose state is not read yet.
		return m, tea.Batch(m.wantWords(), m.loadThreadStates())
	case wordsMsg:
		return m, m.onWords(msg)
	case searchMsg:
		return m, m.onSearch(msg)
	case traceMsg:
		return m, m.onTrace(msg)
	case origMsg:
		return m, m.onOriginal(msg)
	case spinner.TickMsg:
		if m.live.run == nil && !m.live.starting {
			return m, nil
		}
		var cmd tea.Cmd
		m.spin, cmd = m.spin.Update(msg)
		return m, cmd
	case flashExpiredMsg:
		m.status.Update(msg)
		return m, nil
	case quitMsg:
		return m, tea.Quit
	case threadsMsg:
		m.threads.set(msg.threads, msg.err, m.thread)
		for _, t := range msg.threads {
			if t.ID == m.thread {
				m.timeline.total = t.Checkpoints
			}
		}
		return m, m.loadThreadStates()
	case fidelityMsg:
		return m, m.onFidelity(msg)
	case lessonProgressMsg, lessonDoneMsg:
		return m, m.onLessonMsg(msg)
	case historyMsg:
		return m, m.onHistory(msg)
	case detailMsg:
		return m, m.onDetail(msg)
	case runStartedMsg:
		return m, m.onRunStarted(msg)
	case runUpdatesMsg:
		return m, m.onRunUpdates(msg)
	case headMsg:
		return m, m.onHead(msg)
	case watchStartedMsg, watchWokeMsg, writerMsg, writerTickMsg:
		return m, m.onFollow(msg)
	case killSentMsg:
		if msg.err != nil {
			return m, m.setFlash(fmt.Sprintf("kill worker pid %d: %v", msg.pid, msg.err), true)
		}
		return m, nil
	case deletedMsg:
		return m, m.onDeleted(msg)
	case themeSavedMsg:
		if msg.err != nil {
			return m, m.setFlash(fmt.Sprintf("theme %s, not saved: %v", msg.name, msg.err), true)
		}
		return m, m.setFlash(fmt.Sprintf("theme %s (saved to %s)", msg.name, msg.path), false)
	case discardedMsg:
		if msg.err != nil {
			return m, m.setFlash(msg.err.Error(), true)
		}
		return m, tea.Batch(m.setFlash(fmt.Sprintf("discarded %d pending task(s) at @%d", len(msg.cp.Metadata.Discarded), msg.cp.ParentID), false), m.sync(true),
			m.reloadHead())
	case parityMsg:
		return m, m.onParityMsg(msg)
	case tea.MouseMsg:
		return m, m.onMouse(msg)
	case tea.KeyMsg:
		return m, m.onKey(msg)
	}
	// Other messages (cursor blinks) belong to whichever input has focus.
	var cmd tea.Cmd
	if m.dialog != nil {
		_, cmd = m.dialog.Update(msg)
	} else if m.composer.open {
		cmd = m.composer.updateOther(msg)
	} else if m.nav.prompt != nil {
		m.nav.prompt.in, cmd = m.nav.prompt.in.Update(msg)
	}
	return m, cmd
}

type (
	quitMsg       struct{}
	themeSavedMsg struct {
		name, path string
		err        error
	}
)

// saveTheme writes the theme into the config file, in a Cmd.
func (m *Model) saveTheme(name string) tea.Cmd {
	path := m.configPath
	if path == "" {
		return m.setFlash("theme "+name+" (not saved: no config file for this session)", false)
	}
	return func() tea.Msg { return themeSavedMsg{name: name, path: path, err: SaveTheme(path, name)} }
}

// cancelRun stops a run from a Cmd: for a worker it is a signal.
func cancelRun(r RunHandle) tea.Cmd {
	return func() tea.Msg {
		r.Cancel()
		return nil
	}
}

// setFlash shows a message in the status bar for a while; the status log
// keeps it in full.
func (m *Model) setFlash(text string, isErr bool) tea.Cmd { return m.status.set(text, isErr) }

// logStatus adds a line to the status log.
func (m *Model) logStatus(text string, isErr bool) { m.status.add(text, isErr) }

// clearFlash takes the last status off the bar (a new run starts): the
// status log still has it.
func (m *Model) clearFlash() { m.status.clear() }

// openThread switches the thread view to thread and starts loading it.
func (m *Model) openThread(thread string) tea.Cmd {
	m.screen = screenThread
	m.thread = thread
	m.gen++
	m.tree = newTree()
	m.timeline.reset()
	m.cur = nil
	m.timeline.position = [2]int{}
	m.leaf = 0
	m.timeline.branch = ""
	m.loading = true
	m.timeline.total = 0
	for _, t := range m.threads.threads {
		if t.ID == thread {
			m.timeline.total = t.Checkpoints
		}
	}
	m.cache.drop(thread)
	m.live.head, m.live.killed, m.live.phase, m.live.answer = nil, nil, nil, nil
	m.syncPanes()
	m.refreshLive()
	return tea.Batch(loadHistory(m.ctx, m.deps.Backend, m.gen, thread, 0, firstPage), m.reloadHead(),
		m.follow.start(m.ctx, m.deps.Backend, m.gen, thread))
}

// reloadHead reads the thread's newest checkpoint again (after a run, a
// kill, a discard, or on opening the thread).
func (m *Model) reloadHead() tea.Cmd {
	m.live.headLoading++
	return loadHead(m.ctx, m.deps.Backend, m.gen, m.thread)
}

func (m *Model) onHead(msg headMsg) tea.Cmd {
	m.live.headLoading = max(m.live.headLoading-1, 0)
	if msg.gen != m.gen || msg.thread != m.thread {
		return nil
	}
	if msg.err != nil {
		return m.setFlash("read the newest checkpoint: "+msg.err.Error(), true)
	}
	m.live.head = msg.head
	m.refreshLive()
	m.syncPanes() // the inspector's header shows the head's costs
	return nil
}

// sync reads the thread's newest checkpoints into the timeline.
func (m *Model) sync(follow bool) tea.Cmd {
	if m.thread == "" {
		return nil
	}
	if follow {
		m.followNext = true
	}
	t := m.tree
	// The tree is read on the Cmd's goroutine; hand it a snapshot of ids.
	known := make(map[int64]bool, 64)
	for id := t.maxID; id > 0 && id > t.maxID-syncPage*4; id-- {
		if _, ok := t.nodes[id]; ok {
			known[id] = true
		}
	}
	empty := t.len() == 0
	return syncHead(m.ctx, m.deps.Backend, m.gen, m.thread, func(id int64) bool { return empty || known[id] })
}

func (m *Model) onHistory(msg historyMsg) tea.Cmd {
	if msg.gen != m.gen || msg.thread != m.thread {
		return nil
	}
	if msg.err != nil {
		m.loading = false
		return m.setFlash(msg.err.Error(), true)
	}
	wasEmpty := m.tree.len() == 0
	head := m.tree.maxID
	added := m.tree.merge(msg.nodes)
	var cmds []tea.Cmd
	moved := false
	if !msg.sync && msg.more {
		cmds = append(cmds, loadHistory(m.ctx, m.deps.Backend, m.gen, m.thread, msg.before, nextPage))
	} else if !msg.sync {
		m.loading = false
	}
	if wasEmpty && m.tree.len() > 0 && !m.followNext {
		moved = m.tree.jump(m.tree.maxID)
	}
	if msg.sync {
		// Follow a run: its first checkpoint, then every new child of the
		// checkpoint under the cursor while the cursor is at the head.
		for _, id := range added {
			n := m.tree.nodes[id]
			atHead := m.tree.cursor == head && n.parent == m.tree.cursor
			if m.followNext || atHead || m.tree.cursor == 0 {
				m.tree.jump(id)
				m.followNext = false
				moved = true
			}
			head = max(head, id)
		}
		// A run changes the stored writes of the checkpoints it starts from.
		m.cache.dropPending(m.thread)
		if !moved && m.cur != nil && len(m.cur.cp.Tasks) > 0 {
			moved = true
		}
	}
	if m.timeline.total < m.tree.len() {
		m.timeline.total = m.tree.len()
	}
	m.afterTreeChange()
	cmds = append(cmds, m.wantWords())
	if moved {
		// The checkpoint to show comes before older pages of the timeline.
		cmds = append([]tea.Cmd{m.cursorMoved()}, cmds...)
	}
	return tea.Batch(cmds...)
}

// afterTreeChange refreshes what is derived from the tree and cursor.
func (m *Model) afterTreeChange() {
	m.leaf = m.tree.leaf()
	m.timeline.follow(m.tree)
}

// cursorMoved shows the checkpoint under the cursor, loading it if needed.
func (m *Model) cursorMoved() tea.Cmd {
	m.afterTreeChange()
	id := m.tree.cursor
	if id == 0 {
		return nil
	}
	if d, ok := m.cache.detail(m.thread, id); ok {
		m.cur = d
		m.syncPanes()
		return tea.Batch(m.checkFidelity(), m.wantWords(), m.wantOriginal())
	}
	return tea.Batch(loadDetail(m.ctx, m.deps.Backend, m.cache, m.gen, m.thread, id), m.wantWords())
}

func (m *Model) onDetail(msg detailMsg) tea.Cmd {
	if msg.gen != m.gen || msg.thread != m.thread {
		return nil
	}
	if msg.err != nil {
		return m.setFlash(msg.err.Error(), true)
	}
	if msg.version != m.cache.version(msg.thread) {
		// Built before the stored writes changed: read it again.
		if msg.id == m.tree.cursor {
			return m.cursorMoved()
		}
		return nil
	}
	if msg.id == m.tree.cursor {
		m.cur = msg.d
		m.syncPanes()
		return tea.Batch(m.checkFidelity(), m.wantOriginal())
	}
	return nil
}

// --- runs ---

// liveThread is the thread the live strip shows: none off the thread view.
func (m *Model) liveThread() string {
	if m.screen != screenThread {
		return ""
	}
	return m.thread
}

// refreshLive re-renders the live strip and relays out when its height
// changed.
func (m *Model) refreshLive() {
	before := m.live.Height()
	m.live.render(m.liveThread())
	if m.live.Height() != before {
		m.relayout()
	}
}

func (m *Model) runSettings() RunSettings {
	var rs RunSettings
	keys := make([]string, 0, len(m.breaks))
	for k := range m.breaks {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		when, node, _ := strings.Cut(k, ":")
		if when == "before" {
			rs.InterruptBefore = append(rs.InterruptBefore, node)
		} else {
			rs.InterruptAfter = append(rs.InterruptAfter, node)
		}
	}
	if m.canKill() {
		rs.KillAt = m.armed
	}
	return rs
}

func (m *Model) busy() bool { return m.live.run != nil || m.live.starting }

// startRun launches a run in a Cmd; kind is "run", "resume" or "fork".
func (m *Model) startRun(kind string, from int64, in Input) tea.Cmd {
	if m.busy() {
		return m.setFlash("a run is under way: wait for it, or stop it with x", true)
	}
	m.live.starting = true
	m.live.kind = kind
	m.clearFlash()
	ctx, runner, b, thread, rs, gen := m.ctx, m.deps.Runner, m.deps.Backend, m.thread, m.runSettings(), m.gen
	if in.Text != "" {
		in.AuthTTL = m.authTTL
	}
	m.refreshLive()
	start := func() tea.Msg {
		var r RunHandle
		var err error
		var head *headInfo
		switch kind {
		case "resume":
			// What is stored before the resume starts tells which tasks it
			// will reuse and which it redispatches.
			rs.At = from
			head, _ = readHeadAt(ctx, b, thread, from)
			r, err = runner.Resume(ctx, thread, rs)
		case "fork":
			r, err = runner.Fork(ctx, thread, from, in, rs)
		default:
			r, err = runner.Start(ctx, thread, in, rs)
		}
		return runStartedMsg{gen: gen, thread: thread, kind: kind, run: r, err: err, rs: rs, head: head}
	}
	return tea.Batch(start, m.spin.Tick)
}

func (m *Model) onRunStarted(msg runStartedMsg) tea.Cmd {
	m.live.starting = false
	if msg.err != nil {
		m.refreshLive()
		return m.setFlash(msg.err.Error(), true)
	}
	m.followNext = msg.gen == m.gen
	if msg.rs.KillAt != "" && msg.rs.KillAt == m.armed {
		m.armed = "" // a kill point is armed for one run
	}
	m.live.start(msg, msg.gen == m.gen)
	m.refreshLive()
	return waitRun(msg.run)
}

func (m *Model) onRunUpdates(msg runUpdatesMsg) tea.Cmd {
	if msg.run != m.live.run || m.live.run == nil {
		return nil
	}
	var cmds []tea.Cmd
	saved, finished, final := m.live.apply(msg.updates)
	if saved || finished {
		cmds = append(cmds, m.sync(false))
	}
	if !finished {
		m.refreshLive()
		return tea.Batch(append(cmds, waitRun(m.live.run))...)
	}
	if m.live.progress.checkpoints == 0 {
		m.followNext = false // nothing was written: there is nothing to follow
	}
	m.live.end(final)
	// The run stored writes for checkpoints it did not finish (a kill, a
	// failure): what was shown of them is out of date.
	m.cache.dropPending(m.thread)
	if m.cur != nil && len(m.cur.cp.Tasks) > 0 {
		m.cur = nil // "loading…" rather than writes that may be out of date
		cmds = append(cmds, m.cursorMoved())
	}
	m.refreshLive()
	cmds = append(cmds, m.reloadHead())
	cmds = append(cmds, m.setFlash(m.describeEnd(final), final.Err != nil && !errors.Is(final.Err, context.Canceled)))
	if m.quitting {
		cmds = append(cmds, tea.Quit)
	}
	return tea.Batch(cmds...)
}

func (m *Model) describeEnd(u RunUpdate) string {
	res := u.Result
	calls := model.Counts(res.ModelCalls)
	var ke *KilledError
	if errors.As(u.Err, &ke) {
		return ke.Error() + ": the screen shows what is stored; r resumes in a new worker"
	}
	unreached := ""
	if m.live.killAt != "" {
		unreached = " · kill point " + m.live.killAt + " was not reached"
	}
	if u.Err != nil {
		if errors.Is(u.Err, context.Canceled) {
			return fmt.Sprintf("stopped at @%d: finished tasks are stored, r resumes the rest", res.Checkpoint)
		}
		var pe *engine.PendingError
		if errors.As(u.Err, &pe) {
			return fmt.Sprintf("@%d has %d pending task(s) (%s): r resumes them, f forks, D discards them", pe.Checkpoint, len(pe.Tasks), engine.DescribeTasks(pe.Tasks))
		}
		return "run failed: " + u.Err.Error()
	}
	if res.Status == "awaiting-approval" && res.Interrupt != nil {
		return fmt.Sprintf("waiting for approval at @%d: operation %s · a answers%s", res.Checkpoint, res.Interrupt.Operation, unreached)
	}
	if res.Status == "interrupted" && res.Interrupt != nil {
		return fmt.Sprintf("paused %s %s at @%d with %d pending task(s): r resumes%s", res.Interrupt.When, res.Interrupt.Node, res.Checkpoint, len(res.Pending), unreached)
	}
	verb := "done"
	switch m.live.kind {
	case "approve":
		verb = "approved, done"
	case "reject":
		verb = "rejected, done"
	}
	return fmt.Sprintf("%s at @%d · %d model call(s) (%s) · messages %d → %d%s", verb, res.Checkpoint, calls.Sum(), calls, res.MessagesBefore, res.MessagesAfter, unreached)
}

// send continues the current branch with a new message: on the thread's
// newest checkpoint that is a new turn; on an older branch it forks from the
// branch's end, so the message lands where the user is looking.
func (m *Model) send(text string) tea.Cmd {
	if m.thread == "" {
		return m.setFlash("open or create a thread first (t)", true)
	}
	in := Input{Text: text, Draft: m.composer.draft}
	if m.tree.len() == 0 {
		return m.startRun("run", 0, in)
	}
	leaf := m.tree.nodes[m.leaf]
	if leaf == nil || leaf.id == m.tree.maxID {
		return m.startRun("run", 0, in)
	}
	if leaf.pending > 0 {
		return m.setFlash(fmt.Sprintf("this branch ends at @%d with pending tasks: f forks from it with new input (resume works on the newest checkpoint, @%d)", leaf.id, m.tree.maxID), true)
	}
	return m.startRun("fork", leaf.id, in)
}

func (m *Model) onDeleted(msg deletedMsg) tea.Cmd {
	if msg.err != nil {
		return m.setFlash(msg.err.Error(), true)
	}
	cmds := []tea.Cmd{m.setFlash("deleted thread "+msg.thread, false), loadThreads(m.ctx, m.deps.Backend)}
	if msg.thread == m.thread {
		m.thread = ""
		m.follow.stop()
		m.gen++
		m.tree = newTree()
		m.cur = nil
		m.cache.drop(msg.thread)
		m.afterTreeChange()
		m.syncPanes()
	}
	return tea.Batch(cmds...)
}

// askQuit quits at once when no run is under way; during one it asks
// first, saying the run stays resumable.
func (m *Model) askQuit() tea.Cmd {
	if !m.busy() {
		return m.quit()
	}
	m.dialog = m.quitDialog()
	return nil
}

// quitDialog asks before quitting during a run.
func (m *Model) quitDialog() dialog {
	q := "A run is under way. Quit now? The run is stopped: what it finished is stored, and the thread stays resumable (r here, or `rewind resume " + termtext.Name(m.thread) + "`)."
	return &confirmDialog{title: "Quit during a run", question: q, keys: newQuitKeys(), onYes: m.quit}
}

// quit stops a run under way first (its finished tasks stay stored).
func (m *Model) quit() tea.Cmd {
	if m.live.run == nil {
		return tea.Quit
	}
	if !m.quitting {
		m.quitting = true
		return tea.Batch(cancelRun(m.live.run), m.setFlash("stopping the run, then quitting…", false),
			tea.Tick(3*time.Second, func(time.Time) tea.Msg { return quitMsg{} }))
	}
	return tea.Quit
}

// Shutdown stops a run under way and waits (up to timeout) for it to end,
// so the store is not closed under its feet.
func (m *Model) Shutdown(timeout time.Duration) {
	m.lessons.stop(timeout)
	m.follow.stop()
	r := m.live.run
	if r == nil {
		return
	}
	r.Cancel()
	deadline := time.After(timeout)
	for {
		select {
		case _, ok := <-r.Updates():
			if !ok {
				return
			}
		case <-deadline:
			return
		}
	}
}

// --- keys ---

func (m *Model) onKey(msg tea.KeyMsg) tea.Cmd {
	if m.pager.shown() {
		return m.onPagerKey(msg)
	}
	if m.dialog != nil {
		done, cmd := m.dialog.Update(msg)
		if done {
			m.dialog = nil
		}
		return cmd
	}
	if m.composer.open {
		return m.onComposerKey(msg)
	}
	if m.nav.prompt != nil {
		return m.onPromptKey(msg)
	}
	// Bubble Tea v1 may deliver several fast-typed keys as one message
	// ("ll]"); outside text fields each rune is its own command.
	if msg.Type == tea.KeyRunes && len(msg.Runes) > 1 && !msg.Paste {
		cmds := make([]tea.Cmd, 0, len(msg.Runes))
		for i, r := range msg.Runes {
			cmds = append(cmds, m.onKey(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}, Alt: msg.Alt}))
			if m.nav.prompt != nil && i+1 < len(msg.Runes) {
				// ":80" typed fast: the rest is the prompt's text.
				cmds = append(cmds, m.onPromptKey(tea.KeyMsg{Type: tea.KeyRunes, Runes: msg.Runes[i+1:]}))
				break
			}
			if m.dialog != nil || m.composer.open || m.nav.prompt != nil {
				break // the rest would be typed into what just opened
			}
		}
		return tea.Batch(cmds...)
	}
	if m.screen == screenThreads {
		return m.onThreadsKey(msg)
	}
	if m.screen == screenLessons {
		return m.onLessonsKey(msg)
	}
	return m.onThreadKey(msg)
}

func (m *Model) onComposerKey(msg tea.KeyMsg) tea.Cmd {
	out, cmd := m.composer.Update(msg)
	switch {
	case out.cleared != "":
		return m.setFlash("message cleared (ctrl+c again closes the composer); it was: "+out.cleared, false)
	case out.refused != "":
		return m.setFlash(out.refused, true)
	case out.resized:
		m.relayout()
	case key.Matches(msg, m.composer.keys.Send):
		if out.send == "" {
			return nil
		}
		if m.busy() {
			return m.setFlash("a run is under way: your text is kept, send it when the run ends (x stops it)", true)
		}
		cmd := m.send(out.send)
		m.composer.sent()
		m.relayout()
		return cmd
	}
	return cmd
}

func (m *Model) onThreadKey(msg tea.KeyMsg) tea.Cmd {
	k := m.keys
	if cmd, ok := m.onParityKey(msg); ok {
		return cmd
	}
	if cmd, ok := m.onNavKey(msg); ok {
		return cmd
	}
	defer m.afterNavKey()
	if moved, ok := m.timeline.Update(msg, m.tree); ok {
		if moved {
			return m.cursorMoved()
		}
		return nil
	}
	switch {
	case key.Matches(msg, k.Quit):
		return m.askQuit()
	case key.Matches(msg, k.Help):
		m.openPager(true)
	case key.Matches(msg, k.Log):
		m.openPager(false)
	case key.Matches(msg, k.Up):
		return m.scrollFocused(-1)
	case key.Matches(msg, k.Down):
		return m.scrollFocused(1)
	case key.Matches(msg, k.PageUp):
		return m.scrollFocused(-max(m.layout.bodyH-3, 1))
	case key.Matches(msg, k.PageDown):
		return m.scrollFocused(max(m.layout.bodyH-3, 1))
	case key.Matches(msg, k.FocusNext):
		m.cycleFocus(1)
	case key.Matches(msg, k.FocusPrev):
		m.cycleFocus(-1)
	case key.Matches(msg, k.TabConv):
		m.showPane(paneConv)
	case key.Matches(msg, k.TabState):
		m.showPane(paneState)
	case key.Matches(msg, k.TabInsp):
		m.showPane(paneInsp)
	case key.Matches(msg, k.Compose):
		if m.thread == "" {
			return m.setFlash("open or create a thread first (t)", true)
		}
		return m.composer.Focus()
	case key.Matches(msg, k.Fork):
		return m.openFork()
	case key.Matches(msg, k.Resume):
		return m.resume()
	case key.Matches(msg, k.Stop):
		if m.live.run == nil {
			return m.setFlash("no run is under way", false)
		}
		return tea.Batch(cancelRun(m.live.run), m.setFlash("stopping the run…", false))
	case key.Matches(msg, k.Kill):
		return m.askKill()
	case key.Matches(msg, k.Drill):
		return m.openDrill()
	case key.Matches(msg, k.Dismiss):
		return m.dismiss()
	case key.Matches(msg, k.Discard):
		return m.openDiscard()
	case key.Matches(msg, k.Approve):
		return m.openApproval()
	case key.Matches(msg, k.Breaks):
		m.dialog = &breakDialog{nodes: graphNodes, on: m.breaks, keys: newToggleKeys()}
	case key.Matches(msg, k.Threads):
		m.screen = screenThreads
		return loadThreads(m.ctx, m.deps.Backend)
	case key.Matches(msg, k.Fold):
		m.content.unfold = !m.content.unfold
		m.syncPanes()
	case key.Matches(msg, k.Script):
		return m.toggleScript()
	case key.Matches(msg, k.Theme):
		if m.noColor {
			return m.setFlash("NO_COLOR is set: colours stay off (unset NO_COLOR to choose a theme)", false)
		}
		m.setTheme(themes.Or(themes.Next(m.theme.Name)))
		return m.saveTheme(m.theme.Name)
	}
	return nil
}

func (m *Model) resume() tea.Cmd {
	if m.thread == "" || m.tree.len() == 0 {
		return m.setFlash("nothing to resume here", true)
	}
	// What is on screen comes first: a paused checkpoint under the cursor
	// (say, one a fork branched from) or the paused end of the branch on
	// screen resumes where it stopped; the engine refuses one already
	// continued.
	for _, id := range []int64{m.tree.cursor, m.tree.leaf()} {
		if n := m.tree.nodes[id]; n != nil && id != m.tree.maxID && n.pending > 0 {
			return m.startRun("resume", id, Input{})
		}
	}
	latest := m.tree.nodes[m.tree.maxID]
	if latest == nil || latest.pending == 0 {
		return m.setFlash(fmt.Sprintf("nothing to resume: the newest checkpoint @%d has no pending tasks", m.tree.maxID), true)
	}
	return m.startRun("resume", 0, Input{})
}

func (m *Model) openFork() tea.Cmd {
	id := m.tree.cursor
	if id == 0 {
		return m.setFlash("no checkpoint under the cursor to fork from", true)
	}
	if m.busy() {
		return m.setFlash("a run is under way: wait for it, or stop it with x", true)
	}
	note := fmt.Sprintf("A new branch starts at @%d with this message; nothing is deleted, the old branch stays.", id)
	if n := m.tree.nodes[id]; n != nil && n.pending > 0 {
		note += fmt.Sprintf(" Its %d pending task(s) (%s) are superseded on the new branch.", n.pending, n.next)
	}
	f := newForm(m.theme, fmt.Sprintf("Fork at @%d", id), note, func(v []string) (tea.Cmd, error) {
		var attach []string
		if v[1] != "" {
			attach = []string{v[1]}
		}
		return m.startRun("fork", id, Input{Text: v[0], Attach: attach}), nil
	}, newField("Message", "", "the new input for this branch", true), newField("Attachment reference", "", "e.g. s3://tickets/photo.jpg", false))
	m.dialog = f
	return f.fields[0].input.Focus()
}

func (m *Model) openDiscard() tea.Cmd {
	latest := m.tree.nodes[m.tree.maxID]
	if latest == nil || latest.pending == 0 {
		return m.setFlash("the newest checkpoint has no pending tasks to discard", true)
	}
	if m.busy() {
		return m.setFlash("a run is under way", true)
	}
	ctx, b, thread, gen := m.ctx, m.deps.Backend, m.thread, m.gen
	m.dialog = &confirmDialog{title: "Discard pending tasks",
		question: fmt.Sprintf("Drop the %d pending task(s) of @%d (%s)? This writes an update checkpoint; nothing is deleted.", latest.pending, latest.id, latest.next),
		keys:     newConfirmKeys(),
		onYes: func() tea.Cmd {
			return func() tea.Msg {
				cp, err := b.DiscardPending(ctx, thread)
				return discardedMsg{gen: gen, thread: thread, cp: cp, err: err}
			}
		}}
	return nil
}

func (m *Model) onThreadsKey(msg tea.KeyMsg) tea.Cmd {
	switch m.threads.Update(msg) {
	case listQuit:
		return m.askQuit()
	case listHelp:
		m.openPager(true)
	case listLog:
		m.openPager(false)
	case listRefresh:
		return loadThreads(m.ctx, m.deps.Backend)
	case listBack:
		if m.thread != "" {
			m.screen = screenThread
		}
	case listOpen:
		t, ok := m.threads.selected()
		if !ok {
			return nil
		}
		if t.ID == m.thread && m.tree.len() > 0 {
			m.screen = screenThread
			return m.sync(false)
		}
		return m.openThread(t.ID)
	case listNew:
		return m.openNewThread()
	case listDelete:
		t, ok := m.threads.selected()
		if !ok {
			return nil
		}
		if t.ID == m.thread && m.busy() {
			return m.setFlash("a run is under way on this thread", true)
		}
		ctx, b, id := m.ctx, m.deps.Backend, t.ID
		m.dialog = &confirmDialog{title: "Delete thread",
			question: fmt.Sprintf("Delete thread %s and all its %d checkpoints, writes and events? This cannot be undone.", termtext.Name(id), t.Checkpoints),
			keys:     newConfirmKeys(),
			onYes: func() tea.Cmd {
				return func() tea.Msg { return deletedMsg{thread: id, err: b.DeleteThread(ctx, id)} }
			}}
	}
	return m.loadThreadStates()
}

func (m *Model) openNewThread() tea.Cmd {
	if m.busy() {
		return m.setFlash("a run is under way: wait for it first", true)
	}
	name := ""
	for i := len(m.threads.threads) + 1; ; i++ {
		name = fmt.Sprintf("ticket-%d", i)
		if !m.threads.find(name) {
			break
		}
	}
	f := newForm(m.theme, "New thread", "The first message starts the thread: the graph runs at once.", func(v []string) (tea.Cmd, error) {
		if strings.ContainsFunc(v[0], func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			return nil, errors.New("the thread name has control characters")
		}
		if m.threads.find(v[0]) {
			return nil, fmt.Errorf("thread %s exists: open it from the list", v[0])
		}
		var attach []string
		if v[2] != "" {
			attach = []string{v[2]}
		}
		open := m.openThread(v[0])
		return tea.Sequence(open, m.startRun("run", 0, Input{Text: v[1], Attach: attach})), nil
	}, newField("Thread name", name, "ticket-1", true),
		newField("First message", "", "e.g. My order SO20260901 hasn't arrived: where is the parcel?", true),
		newField("Attachment reference", "", "e.g. s3://tickets/SO20260901/photo.jpg", false))
	m.dialog = f
	return f.fields[0].input.Focus()
}

// --- focus, panes, scrolling, mouse ---

func (m *Model) visiblePanes() (main, side int) { return m.content.visible() }

func (m *Model) showPane(p int) {
	m.focus = focusMain
	if m.content.show(p) {
		m.focus = focusSide
	}
	m.syncPanes()
}

// syncPanes re-renders the visible panes whose inputs changed.
func (m *Model) syncPanes() {
	in := paneInputs{cur: m.cur, theme: m.themeGen, badge: m.fidelityBadgeOf, pins: func(w int) int { return len(m.convPins(w)) }}
	if m.live.head != nil {
		in.costs = m.live.head.costs
	}
	m.content.sync(in)
}

func (m *Model) cycleFocus(d int) {
	n := 2
	if m.layout.wide {
		n = 3
	}
	m.focus = focusID(((int(m.focus)+d)%n + n) % n)
}

func (m *Model) focusedPane() int {
	main, side := m.visiblePanes()
	switch m.focus {
	case focusMain:
		return main
	case focusSide:
		return side
	}
	return -1
}

func (m *Model) scrollFocused(n int) tea.Cmd {
	if m.focus == focusTimeline {
		if m.tree.moveRow(n) {
			return m.cursorMoved()
		}
		return nil
	}
	m.content.scroll(m.focusedPane(), n)
	return nil
}

func (m *Model) onMouse(msg tea.MouseMsg) tea.Cmd {
	if msg.Action != tea.MouseActionPress || m.dialog != nil {
		return nil
	}
	if m.pager.shown() {
		switch msg.Button {
		case tea.MouseButtonWheelUp:
			m.pager.wheel(-3)
		case tea.MouseButtonWheelDown:
			m.pager.wheel(3)
		}
		return nil
	}
	wheel := 0
	switch msg.Button {
	case tea.MouseButtonWheelUp:
		wheel = -3
	case tea.MouseButtonWheelDown:
		wheel = 3
	case tea.MouseButtonLeft:
	default:
		return nil
	}
	if m.screen == screenThreads {
		if wheel != 0 {
			m.threads.move(wheel / 3)
		}
		return nil
	}
	if m.screen == screenLessons {
		m.lessons.wheel(wheel / 3)
		return nil
	}
	l := m.layout
	if msg.Y >= l.bodyH {
		return nil
	}
	var target focusID
	switch {
	case msg.X < l.tlW:
		target = focusTimeline
	case msg.X < l.tlW+l.mainW:
		target = focusMain
	default:
		target = focusSide
	}
	if wheel != 0 {
		if target == focusTimeline {
			m.timeline.scroll(m.tree, wheel)
			return m.wantWords()
		}
		main, side := m.visiblePanes()
		p := main
		if target == focusSide {
			p = side
		}
		if p >= 0 {
			m.content.panes[p].scroll.by(wheel)
		}
		return nil
	}
	m.focus = target
	if target == focusTimeline {
		if id, ok := m.timeline.at(m.tree, msg.Y-1); ok && m.tree.jump(id) {
			return m.cursorMoved()
		}
	}
	return nil
}
