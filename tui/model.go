package tui

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/spinner"
	tea "github.com/charmbracelet/bubbletea"

	"rewind/store"
	"rewind/store/browse"
	"rewind/themes"
	"rewind/tui/termtext"
)

// Deps are what the TUI works with: where it reads, how it runs, and a
// label for the store in the status bar.
type Deps struct {
	// Source is what the timeline reads: a thread's checkpoint listings
	// (engine.Browse for a rewind store).
	Source browse.Source
	// Backend is a rewind store through its engine: what Source does not
	// carry (a checkpoint's ticket state, events, runs, costs) and the
	// writes.
	Backend    Backend
	Runner     Runner
	StoreLabel string
	// RunnerLabel says where runs happen, for the status bar (e.g.
	// "worker processes", or why they stay in-process).
	RunnerLabel string
	// Extension is what the graph shows beyond its channels by shape
	// (ticketview.Extension for the ticket graph); nil shows any graph's
	// channels by their shape.
	Extension Extension
	// Graphs builds the deps of another graph a thread records, on the
	// same store (Options.Graphs); nil: none is built. Called in a Cmd.
	Graphs func(ctx context.Context, name string) (Deps, error)
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
	// ContextWindow is the models' context window in tokens, what the
	// prompt view (P) measures a request against (0: the default).
	ContextWindow int
	// ConfigPath is the config file T saves the theme to ("" saves none).
	ConfigPath string
	// NoColor is NO_COLOR: the theme stays no-color, T cannot change it.
	NoColor bool
	// TerminalBackground is the terminal's background, #rrggbb, when it
	// told ("": unknown): T saves no theme too faint on it.
	TerminalBackground string
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

// Model is the root model: it owns the screens and routes every message to
// the component it concerns. All I/O happens in tea.Cmds.
type Model struct {
	// sess is the session every Cmd works with: context, backend and
	// runner, and the chain open in the thread view (session.go).
	sess *session

	theme    *themes.Theme
	painted  themes.Painted // the last screen View painted
	themeGen int
	help     help.Model
	spin     spinner.Model
	keys     threadKeys
	readOnly readOnlyPolicy // the keys a read-only source refuses (readonly.go)

	w, h   int
	layout layout
	screen screen

	// openAt is the checkpoint to put the cursor on once the history
	// holds it (a lesson that opens on another branch than the newest).
	openAt   string
	timeline timelinePane
	cache    *cache
	cur      *detail
	focus    focusID
	content  contentPanes // conversation, state, inspector (panes.go)
	loader   threadLoader // reads the open chain (thread.go)

	composer composer // the message line (composer.go)

	// Runs (runs.go), drills, approval and streaming (drill.go; the live
	// strip, live.go).
	runs   runControl // starts and stops runs: keys, dialogs, the next run's settings
	live   liveStrip  // the run under way and what the last one left
	follow follower   // a run elsewhere, followed (follow.go)

	par parity // replay, edit state, compare, graph view, what the model saw (parity.go)

	threads threadList
	dialog  dialog
	pager   pager      // the help and the status log, over the screen
	status  statusLine // the status bar's message and the status log

	themeConfig themeConfig // where T saves the theme, NO_COLOR (config.go)

	lessons  *lessonPicker  // the lessons and the one being prepared (lessons.go)
	script   *scriptPanel   // the lesson's panel (script.go)
	fidelity fidelityChecks // the State pane's badges (fidelity.go)

	nav navState // nav.go: goto, search, zoom, pins
}

// New builds the root model.
func New(ctx context.Context, deps Deps, s Settings) *Model {
	th := s.Theme
	if th == nil {
		th = themes.Or(themes.Default)
	}
	m := &Model{
		sess: &session{ctx: ctx, deps: deps, thread: s.Thread},
		keys: newThreadKeys(), threads: newThreadList(), pager: newPager(),
		help: help.New(), spin: spinner.New(spinner.WithSpinner(spinner.MiniDot)),
		cache:       newCache(deps.Extension),
		themeConfig: themeConfig{path: s.ConfigPath, noColor: s.NoColor, terminalBg: s.TerminalBackground},
	}
	if err := m.keys.rebind(s.Keys); err != nil {
		m.keys = newThreadKeys()
		m.logStatus("keys not rebound: "+err.Error(), true)
	}
	m.sess.graphs = newGraphSet(m.sess)
	m.threads.readOnly = m.sess.readOnly()
	m.readOnly = newReadOnlyPolicy(m.sess.readOnly(), m.keys, m.threads.keys).withoutInput(m.sess.noInput(), m.newThreadNoInput(), m.keys, m.threads.keys)
	m.par = newParity(m.sess, m.keys, s.ContextWindow)
	m.fidelity = newFidelityChecks(m.sess)
	m.composer = newComposer(draftReplies(deps.Extension))
	m.timeline = newTimelinePane(newTimelineKeys(m.keys), s.Thread)
	m.live = newLiveStrip(m.keys, m.timeline.keys, func() bool { return canKill(m.sess.deps.Runner) }, deps.Extension)
	m.runs = newRunControl(m.sess, &m.live, m.keys, s)
	m.follow = newFollower(m.sess, m.live.busy)
	m.content = newContentPanes(newContentKeys(m.keys))
	m.nav = newNavState(m.sess, m.keys)
	m.loader = newThreadLoader(m.sess, m.cache)
	m.setTheme(th)
	if s.Thread == "" {
		m.screen = screenThreads
	}
	m.lessons = newLessonPicker(ctx, m.theme, s.Lessons, s.Prepare, s.Lesson)
	if len(s.Lessons) > 0 && s.Thread == "" {
		m.screen = screenLessons
	}
	return m
}

func (m *Model) setTheme(th *themes.Theme) {
	m.theme = th
	m.content.setTheme(th)
	m.themeGen++
	m.timeline.setTheme(th, m.themeGen)
	m.nav.setTheme(th, m.themeGen)
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
	m.live.setTheme(th)
	m.runs.setTheme(th)
	m.syncPanes()
	m.refreshLive()
}

// Init opens the thread named, and reads the threads list once its first
// screen shows (thread.go: opening); with none named, it reads the list.
func (m *Model) Init() tea.Cmd {
	var cmds []tea.Cmd
	if m.sess.thread != "" {
		cmds = append(cmds, m.openThread(m.sess.thread))
		m.loader.withThreads()
	} else {
		cmds = append(cmds, m.sess.readThreads())
	}
	if l, ok := m.lessons.find(m.lessons.start); ok {
		cmds = append(cmds, m.applyLesson(m.lessons.choose(l)))
	}
	return tea.Batch(cmds...)
}

// Update routes messages.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.w, m.h = msg.Width, msg.Height
		m.relayout()
		// A taller list shows rows whose state is not read yet; a wider
		// screen may bring the State pane (and its badge) into view.
		return m, tea.Batch(m.timeline.wantWords(m.sess), m.threads.loadStates(m.sess), m.paneReads())
	case wordsMsg:
		return m, m.timeline.onWords(msg, m.sess)
	case searchMsg, goHitMsg, traceMsg, origMsg:
		return m, m.onNavNews(m.nav.Update(m.navMsg(msg)))
	case spinner.TickMsg:
		if m.live.run == nil && !m.live.starting {
			return m, nil
		}
		var cmd tea.Cmd
		m.spin, cmd = m.spin.Update(msg)
		return m, cmd
	case flashExpiredMsg, killSentMsg, themeSavedMsg, flashMsg:
		_, cmd := m.status.Update(msg)
		return m, cmd
	case quitMsg:
		return m, tea.Quit
	case sourcePollMsg:
		// The newest checkpoints of a read-only source's chain, if still
		// open (the cursor follows the head when it was on it), and the
		// next poll.
		if msg.gen != m.sess.gen {
			return m, nil
		}
		return m, tea.Batch(m.sync(false), m.sess.armSourcePoll())
	case threadsMsg:
		msg.current = m.chain()
		action, _ := m.threads.Update(msg)
		return m, m.onListAction(action)
	case fidelityMsg:
		if kept, _ := m.fidelity.Update(msg); kept && m.cur != nil && m.cur.id == msg.id {
			m.content.invalidate(paneState) // its badge changed: render it again
			m.syncPanes()
		}
		return m, m.checkFidelity() // the cursor may have moved on meanwhile
	case lessonProgressMsg, lessonDoneMsg:
		return m, m.applyLesson(m.lessons.Update(msg))
	case historyMsg:
		return m, m.onHistory(msg)
	case detailMsg, prefetchedMsg:
		return m, m.onLoaded(m.loader.Update(m.loadMsg(msg)))
	case runStartedMsg, runUpdatesMsg:
		return m, m.applyRun(m.runs.Update(msg))
	case runAskMsg:
		return m, m.applyRun(msg.out, nil)
	case newThreadStartMsg:
		// On the graph the TUI was started on, as its dialog said.
		if name, d, ok := m.sess.graphs.started(); ok && (m.sess.graph() == nil || m.sess.graph().Name != name) {
			m.takeDeps(name, d)
		}
		open := m.openThread(msg.thread)
		return m, tea.Sequence(open, m.applyRun(m.runs.Update(startRunMsg{kind: "run", in: msg.in})))
	case headMsg:
		return m, m.onHead(msg)
	case graphOfMsg:
		return m, m.onGraphOf(msg)
	case graphBuiltMsg:
		return m, m.onGraphBuilt(msg)
	case costsMsg:
		msg.current = msg.gen == m.sess.gen && msg.thread == m.sess.thread
		news, _ := m.live.Update(msg)
		if news.costs {
			m.syncPanes() // the inspector's header shows them
		}
		if news.costsAgain {
			return m, m.wantCosts() // the head moved on meanwhile
		}
		return m, nil
	case watchStartedMsg, watchWokeMsg, writerMsg, writerTickMsg, followReloadedMsg, followFloorMsg:
		return m, m.onFollow(msg)
	case deletedMsg:
		return m, m.onDeleted(msg)
	case discardedMsg:
		if msg.err != nil {
			return m, m.status.say(msg)
		}
		// The timeline and the head read the thread again for the update
		// checkpoint.
		return m, tea.Batch(m.status.say(msg), m.sync(true), m.reloadHead())
	case threadStateMsg: // the threads list's rows, read for it
		m.sess.graphs.keep(msg.made)
		_, cmd := m.threads.Update(msg)
		return m, cmd
	case parityMsg:
		return m, m.onParityMsg(msg)
	case scrubMsg:
		if m.screen != screenThread || !m.timeline.step(msg.by) {
			return m, nil
		}
		return m, m.cursorMoved()
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
		_, cmd = m.composer.Update(msg)
	} else if m.nav.prompting() {
		_, cmd = m.nav.Update(msg)
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

// saveTheme writes the theme into the config file, in a Cmd, when it
// reads on this terminal's background (when the terminal told it).
func (m *Model) saveTheme(name string) tea.Cmd {
	if bg := m.themeConfig.terminalBg; bg != "" {
		if err := m.theme.Readable(bg); err != nil {
			return m.setFlash(fmt.Sprintf("theme %s shown, not saved: %v; T picks the next", name, err), true)
		}
	}
	path := m.themeConfig.path
	if path == "" {
		return m.setFlash("theme "+name+" (not saved: no config file for this session)", false)
	}
	return func() tea.Msg { return themeSavedMsg{name: name, path: path, err: SaveTheme(path, name)} }
}

func (msg themeSavedMsg) say() (string, bool) {
	if msg.err != nil {
		return fmt.Sprintf("theme %s, not saved: %v", msg.name, msg.err), true
	}
	return fmt.Sprintf("theme %s (saved to %s)", msg.name, msg.path), false
}

// setFlash shows a message in the status bar for a while; the status log
// keeps it in full.
func (m *Model) setFlash(text string, isErr bool) tea.Cmd { return m.status.set(text, isErr) }

// logStatus adds a line to the status log.
func (m *Model) logStatus(text string, isErr bool) { m.status.add(text, isErr) }

// clearFlash takes the last status off the bar (a new run starts): the
// status log still has it.
func (m *Model) clearFlash() { m.status.clear() }

// onParityMsg routes what the parity features' Cmds answer, and the
// draft edits that share their route.
func (m *Model) onParityMsg(msg parityMsg) tea.Cmd {
	switch msg := msg.(type) {
	case draftFileMsg, draftEditedMsg, draftReadMsg:
		return m.onDraftMsg(msg)
	}
	return m.applyPar(m.par.Update(msg))
}

// applyPar does what the parity features ask: say, open their dialog,
// ask to replay, go to an edit stored.
func (m *Model) applyPar(out parOutcome, cmd tea.Cmd) tea.Cmd {
	cmds := []tea.Cmd{cmd, m.status.say(out.say)}
	if out.open != nil {
		m.openDialog(out.open)
	}
	if out.replay {
		cmds = append(cmds, m.askReplay())
	}
	if out.stored != "" {
		if m.timeline.jump(out.stored) {
			// The follow mode read it first (the store woke it before
			// this answer came): go to it all the same.
			m.afterTreeChange()
			cmds = append(cmds, m.cursorMoved(), m.reloadHead())
		} else {
			cmds = append(cmds, m.sync(true), m.reloadHead())
		}
	}
	return tea.Batch(cmds...)
}

// --- runs (runs.go) ---

// applyRun does what the run control asks (runAsk), in the order a run's
// end needs: the listings read again, what it left stale dropped, the
// live strip re-rendered, the head read, then the status line.
func (m *Model) applyRun(out runAsk, cmd tea.Cmd) tea.Cmd {
	cmds := []tea.Cmd{cmd}
	if out.clear {
		m.clearFlash()
	}
	if out.started {
		m.timeline.followNextRun(out.shown)
	}
	if out.sync {
		cmds = append(cmds, m.sync(false))
	}
	if out.ended {
		cmds = append(cmds, m.runEnded())
	}
	if out.unfollow {
		m.timeline.followNextRun(false)
	}
	if out.relive {
		m.refreshLive()
	}
	if out.ended {
		cmds = append(cmds, m.reloadHead())
	}
	if out.dialog != nil {
		m.openDialog(out.dialog)
	}
	if out.say != "" {
		cmds = append(cmds, m.setFlash(out.say, out.sayErr))
	}
	if out.spin {
		cmds = append(cmds, m.spin.Tick)
	}
	if out.quit {
		cmds = append(cmds, tea.Quit)
	}
	return tea.Batch(cmds...)
}

// runEnded: a question about the run (kill it?) has nothing left to ask,
// and the writes it stored for checkpoints it did not finish (a kill, a
// failure) make what was shown of them out of date.
func (m *Model) runEnded() tea.Cmd {
	if c, ok := m.dialog.(*confirmDialog); ok && c.ofRun {
		m.dialog = nil
		m.logStatus("the run ended before the kill was confirmed: no worker is left to kill", false)
	}
	m.cache.dropPending(m.sess.thread)
	if m.cur != nil && len(m.cur.cp.Tasks) > 0 {
		m.cur = nil // "loading…" rather than writes that may be out of date
		return m.cursorMoved()
	}
	return nil
}

// busy: a run is under way (or starting).
func (m *Model) busy() bool { return m.live.busy() }

// askQuit quits at once when no run is under way; during one it asks
// first, saying the run stays resumable.
func (m *Model) askQuit() tea.Cmd { return m.applyRun(m.runs.Update(askQuitMsg{})) }

// askReplay: p in the parity keys (parity.go).
func (m *Model) askReplay() tea.Cmd {
	return m.applyRun(m.runs.Update(replayAskMsg{m.timeline.runAt()}))
}

// Shutdown stops a lesson being prepared, the follow mode and a run under
// way, waiting up to timeout for the run to end, and removes the file of
// an edit left open (quitting at "Edit refused · edit it again?" left it
// in the temp folder, 64 KB and more each).
func (m *Model) Shutdown(timeout time.Duration) {
	m.lessons.stop(timeout)
	m.follow.stop()
	m.runs.shutdown(timeout)
	if ed := m.par.edit; ed != nil && ed.path != "" {
		_ = os.Remove(ed.path)
	}
}

// onDeleted: a thread deleted from the list; the open one closes.
func (m *Model) onDeleted(msg deletedMsg) tea.Cmd {
	if msg.err != nil {
		return m.setFlash(msg.err.Error(), true)
	}
	cmds := []tea.Cmd{m.setFlash("deleted thread "+msg.thread, false), m.sess.readThreads()}
	if msg.thread == m.sess.thread {
		m.sess.thread = ""
		m.follow.stop()
		m.sess.gen++
		m.timeline.reset("")
		m.cur = nil
		m.cache.drop(msg.thread)
		m.afterTreeChange()
		m.syncPanes()
	}
	return tea.Batch(cmds...)
}

// wantCosts asks the live strip for the head's costs while the inspector
// shows a checkpoint (live_head.go).
func (m *Model) wantCosts() tea.Cmd {
	return m.live.wantCosts(m.sess, m.cur != nil && m.content.shows(paneInsp))
}

// onDraftMsg routes a draft edit's step to the approval dialog it edits,
// open or not (draftedit.go).
func (m *Model) onDraftMsg(msg parityMsg) tea.Cmd {
	d, ok := msg.(draftMsg)
	if !ok {
		return nil
	}
	_, cmd := d.of().Update(msg)
	return cmd
}

// applyLesson does what the lesson picker asks (lessons.go): its keys'
// screens, the status, and a prepared lesson's thread with its script.
func (m *Model) applyLesson(out lessonAsk, cmd tea.Cmd) tea.Cmd {
	switch {
	case out.quit:
		return m.askQuit()
	case out.help, out.statusLog:
		m.openPager(out.help)
		return nil
	case out.threads:
		m.screen = screenThreads
		return m.sess.readThreads()
	case out.say != "":
		return m.setFlash(out.say, true)
	case out.preparing:
		m.screen = screenLessons
	}
	if r := out.ready; r != nil {
		m.script = newScriptPanel(r.lesson, r.verdict, m.keys.Script)
		m.script.render(m.theme)
		m.relayout()
	}
	if out.log != "" {
		m.logStatus(out.log, out.logErr)
	}
	if r := out.ready; r != nil {
		open := m.openThread(r.lesson.Thread)
		m.openAt = idOf(r.verdict.At) // once its page is loaded (onHistory)
		return tea.Batch(open, m.sess.readThreads())
	}
	return cmd
}

// onFollow routes the follow mode's messages and gives a reload's
// answers to the history and the head.
func (m *Model) onFollow(msg tea.Msg) tea.Cmd {
	news, cmd := m.follow.Update(msg)
	cmds := []tea.Cmd{cmd}
	if news.err != nil {
		cmds = append(cmds, m.setFlash("not following the thread: "+news.err.Error(), true))
	}
	if r := news.reloaded; r != nil {
		if h, ok := r.history.(historyMsg); ok {
			cmds = append(cmds, m.onHistory(h))
		}
		if h, ok := r.head.(headMsg); ok && m.follow.current(r.gen, r.thread) {
			cmds = append(cmds, m.onHead(h))
		}
		cmds = append(cmds, m.follow.applied(r.gen, r.thread))
	}
	if news.reload {
		cmds = append(cmds, m.follow.reloadWith(m.sync(false), m.reloadHead()))
	}
	return tea.Batch(cmds...)
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
	if m.nav.prompting() {
		return m.onNavNews(m.nav.Update(m.navMsg(msg)))
	}
	// Bubble Tea v1 may deliver several fast-typed keys as one message
	// ("ll]"); outside text fields each rune is its own command.
	if msg.Type == tea.KeyRunes && len(msg.Runes) > 1 && !msg.Paste {
		cmds := make([]tea.Cmd, 0, len(msg.Runes))
		for i, r := range msg.Runes {
			cmds = append(cmds, m.onKey(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}, Alt: msg.Alt}))
			if m.nav.prompting() && i+1 < len(msg.Runes) {
				// ":80" typed fast: the rest is the prompt's text.
				cmds = append(cmds, m.onNavNews(m.nav.Update(m.navMsg(tea.KeyMsg{Type: tea.KeyRunes, Runes: msg.Runes[i+1:]}))))
				break
			}
			if m.dialog != nil || m.composer.open || m.nav.prompting() {
				break // the rest would be typed into what just opened
			}
		}
		return tea.Batch(cmds...)
	}
	if m.screen == screenThreads {
		return m.onThreadsKey(msg)
	}
	if m.screen == screenLessons {
		return m.applyLesson(m.lessons.Update(msg))
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
		cmd := m.applyRun(m.runs.Update(sendMsg{text: out.send, draft: m.composer.draft, at: m.timeline.runAt()}))
		m.composer.sent()
		m.relayout()
		return cmd
	}
	return cmd
}

func (m *Model) onThreadKey(msg tea.KeyMsg) tea.Cmd {
	k := m.keys
	if why, off := m.readOnly.refuses(msg, m.screen); off {
		return m.setFlash(why, true)
	}
	if out, cmd := m.par.Update(parKeyMsg{msg, m.timeline.tree.cursor, m.cur, m.busy()}); out.handled {
		return m.applyPar(out, cmd)
	}
	if news, cmd := m.nav.Update(m.navMsg(msg)); news.handled {
		return m.onNavNews(news, cmd)
	}
	defer m.afterNavKey()
	if m.focus != focusTimeline {
		if handled, _ := m.content.Update(paneKeyMsg{msg, m.focusedPane()}); handled {
			return nil
		}
	}
	if s, _ := m.timeline.Update(msg); s.handled {
		if s.moved {
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
		return m.moveTimelineRow(-1)
	case key.Matches(msg, k.Down):
		return m.moveTimelineRow(1)
	case key.Matches(msg, k.PageUp):
		return m.moveTimelineRow(-max(m.layout.bodyH-3, 1))
	case key.Matches(msg, k.PageDown):
		return m.moveTimelineRow(max(m.layout.bodyH-3, 1))
	case key.Matches(msg, k.FocusNext):
		m.cycleFocus(1)
	case key.Matches(msg, k.FocusPrev):
		m.cycleFocus(-1)
	case key.Matches(msg, k.TabConv):
		return m.showPane(paneConv)
	case key.Matches(msg, k.TabState):
		return m.showPane(paneState)
	case key.Matches(msg, k.TabInsp):
		return m.showPane(paneInsp)
	case key.Matches(msg, k.Compose):
		if m.sess.thread == "" {
			return m.setFlash("open or create a thread first (t)", true)
		}
		return m.composer.Focus()
	case m.runs.owns(msg):
		return m.applyRun(m.runs.Update(runKeyMsg{msg, m.timeline.runAt()}))
	case key.Matches(msg, k.Threads):
		m.screen = screenThreads
		return m.sess.readThreads()
	case key.Matches(msg, k.Fold):
		m.content.toggleFold()
		m.syncPanes()
	case key.Matches(msg, k.Script):
		if relayout, cmd := m.script.Update(msg); !relayout {
			return cmd
		}
		m.relayout()
		return m.paneReads() // the panes may have widened into a side column
	case key.Matches(msg, k.Theme):
		if m.themeConfig.noColor {
			return m.setFlash("NO_COLOR is set: colours stay off (unset NO_COLOR to choose a theme)", false)
		}
		m.setTheme(themes.Or(themes.Next(m.theme.Name)))
		return m.saveTheme(m.theme.Name)
	}
	return nil
}

// --- the open chain (thread.go) ---

// openThread opens thread's root chain.
func (m *Model) openThread(thread string) tea.Cmd { return m.openChain(browse.Chain{Thread: thread}) }

// chain is the chain the thread view shows.
func (m *Model) chain() browse.Chain { return m.sess.chain() }

// openChain switches the thread view to chain c (a thread's root graph,
// or a subgraph's run in it: its own checkpoints, state and writes): the
// session opens it (a new generation), every component forgets the last
// one, and the loader reads its first page.
func (m *Model) openChain(c browse.Chain) tea.Cmd { return m.openChainWith(c, nil) }

// openChainWith opens chain c as openChain does; page, when given, is its
// first page, read already (before a switch of graphs: a listing reads
// alike on every graph), which the loader takes instead of reading it
// again.
func (m *Model) openChainWith(c browse.Chain, page *historyMsg) tea.Cmd {
	m.screen = screenThread
	m.sess.thread, m.sess.ns = c.Thread, c.NS
	m.openAt = ""
	m.sess.gen++
	m.timeline.reset(c.Thread) // loading, at no checkpoint
	m.cur = nil
	if n, ok := m.threads.checkpoints(c); ok {
		m.timeline.setTotal(n)
	}
	read := m.loader.open(c)
	m.live.forget()
	m.follow.stop()
	m.syncPanes()
	m.refreshLive()
	m.sess.graphs.wanted, m.sess.graphs.stray = "", ""
	switch {
	case page != nil:
		p := *page
		p.gen = m.sess.gen
		return take(&p)
	case m.sess.deps.Backend != nil && c.NS == "":
		// The first page says which graph wrote the thread: another's
		// opens on that graph (onGraphOf), and the page waits for the
		// answer: its checkpoint read on the wrong graph fails, and where
		// the session cannot switch its error must say which graph wrote
		// the thread.
		return readFirstPage(m.sess.ctx, m.sess.deps.Source, m.sess.deps.Backend, m.sess.gen, c)
	}
	return read
}

// loadMsg is msg for the loader, with the tree it reads and the
// checkpoint shown.
func (m *Model) loadMsg(msg tea.Msg) loadMsg {
	return loadMsg{Msg: msg, tree: m.timeline.tree, cur: m.cur}
}

// onHistory routes a page of the history (or of the newest checkpoints)
// to the loader.
func (m *Model) onHistory(msg historyMsg) tea.Cmd { return m.onLoaded(m.loader.Update(m.loadMsg(msg))) }

// onLoaded does what a read brings: a page into the timeline, the
// checkpoint read into the panes, what waited for the first screen.
func (m *Model) onLoaded(n loadNews, cmd tea.Cmd) tea.Cmd {
	if n.page != nil {
		return m.takeHistory(*n.page, cmd)
	}
	if n.err != nil {
		n.say = m.readErr(n.err)
	}
	cmds := []tea.Cmd{cmd}
	if n.say != "" {
		cmds = append(cmds, m.setFlash(n.say, n.sayErr))
	}
	switch {
	case n.failed:
		m.timeline.loadFailed()
	case n.reread:
		cmds = append(cmds, m.cursorMoved())
	case n.show != nil:
		m.cur = n.show
		m.syncPanes()
		cmds = append(cmds, m.checkFidelity(), m.nav.wantOriginal(m.cur))
		if n.read {
			cmds = append(cmds, m.wantCosts())
		}
	}
	if n.opened {
		cmds = append(cmds, m.whenOpened())
	}
	return tea.Batch(cmds...)
}

// whenOpened starts what the first screen did not wait for: the head's
// read, the watch for other writers, a read-only source's poll.
func (m *Model) whenOpened() tea.Cmd {
	return tea.Batch(m.reloadHead(), m.follow.start(m.sess.ctx, m.sess.deps.Backend, m.sess.gen, m.sess.thread), m.sess.armSourcePoll())
}

// takeHistory takes a page of the history into the timeline (next reads
// the page after it, once the checkpoint to show is read): a sync's page
// says whether another process deleted the thread or wrote it again.
func (m *Model) takeHistory(msg historyMsg, next tea.Cmd) tea.Cmd {
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
	cmds := []tea.Cmd{next}
	if !msg.sync && !msg.more && m.timeline.tree.len() == 0 {
		if due, threads := m.loader.shown(); due { // no checkpoint to wait for
			cmds = append(cmds, m.whenOpened(), threads)
		}
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

// sync reads the thread's newest checkpoints into the timeline (follow:
// the next one brought gets the cursor, a run's first).
func (m *Model) sync(follow bool) tea.Cmd {
	if m.sess.thread == "" {
		return nil
	}
	if follow {
		m.timeline.followNextRun(true)
	}
	return m.loader.sync(m.timeline.tree)
}

// afterTreeChange refreshes what is derived from the tree and cursor.
func (m *Model) afterTreeChange() {
	m.timeline.follow()
	m.dialogFollows()
}

// cursorMoved shows the checkpoint under the cursor, read by the loader.
func (m *Model) cursorMoved() tea.Cmd {
	m.afterTreeChange()
	if m.timeline.tree.cursor == "" {
		return nil
	}
	return tea.Batch(m.onLoaded(m.loader.load(m.timeline.tree)), m.timeline.wantWords(m.sess))
}

// reloadHead reads the thread's newest checkpoint again (after a run, a
// kill, a discard, or on opening the thread).
func (m *Model) reloadHead() tea.Cmd {
	m.live.readingHead()
	return loadHead(m.sess.ctx, m.sess.deps.Backend, m.sess.deps.Extension, m.sess.gen, m.sess.thread)
}

// onHead gives the live strip the head read; one of another chain is
// stale.
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
		return m.setFlash("read the newest checkpoint: "+m.readErr(msg.err), true)
	}
	m.refreshLive()
	return m.wantCosts()
}

// readErr is err, a read of the open thread that failed, said: on a
// graph not the thread's own, with which graph wrote it and how to open
// it rather than the read's own fix (strayRead).
func (m *Model) readErr(err error) string {
	gs := &m.sess.graphs
	if g := m.sess.graph(); gs.stray != "" && g != nil {
		return strayRead(err, m.sess.thread, gs.wanted, g.Name, gs.stray)
	}
	return err.Error()
}

// onGraphOf opens the thread on its own graph when it records another
// than the one this screen runs (the threads list holds every graph's
// threads): built before, at once; else once built (a Cmd). A graph not
// built says so: its panes read the thread as this graph's.
func (m *Model) onGraphOf(msg graphOfMsg) tea.Cmd {
	g := m.sess.graph()
	if msg.gen != m.sess.gen || msg.thread != m.sess.thread {
		return nil
	}
	held := take(msg.page)
	switch {
	case g == nil:
		return held
	case msg.err != nil:
		return tea.Batch(held, m.setFlash("read which graph "+termtext.Name(msg.thread)+" records: "+termtext.Line(msg.err.Error()), true))
	case msg.name == "" || msg.name == g.Name:
		return held
	}
	m.sess.graphs.wanted = msg.name
	d, ok, build := m.sess.graphs.want(msg.name)
	switch {
	case ok:
		return m.useGraph(msg.name, d, msg.page)
	case build != nil || m.sess.graphs.pending(msg.name):
		m.sess.graphs.hold(msg.gen, msg.page)
		return build // its answer switches (onGraphBuilt)
	}
	m.sess.graphs.stray = openHint(m.sess.thread, msg.name, false, nil)
	return tea.Batch(held, m.setFlash(misread(m.sess.thread, msg.name, g.Name, m.sess.graphs.stray), true))
}

// onGraphBuilt switches to the graph built when the thread open still
// records it, or says it was not built.
func (m *Model) onGraphBuilt(msg graphBuiltMsg) tea.Cmd {
	built := m.sess.graphs.took(msg)
	g := m.sess.graph()
	if g == nil || g.Name == msg.name || m.sess.graphs.wanted != msg.name {
		return nil // the thread open now is not that graph's
	}
	if !built {
		m.sess.graphs.stray = openHint(m.sess.thread, msg.name, true, msg.err)
		return tea.Batch(take(m.sess.graphs.release(m.sess.gen)), m.setFlash(misread(m.sess.thread, msg.name, g.Name, m.sess.graphs.stray), true))
	}
	return m.useGraph(msg.name, msg.deps, m.sess.graphs.release(m.sess.gen))
}

// useGraph runs graph name's deps from now on (its engine, extension and
// runner) and opens the thread shown again on them, taking page, its
// first page read (nil: read it again).
func (m *Model) useGraph(name string, d Deps, page *historyMsg) tea.Cmd {
	m.takeDeps(name, d)
	shown := m.screen // the threads list, if the user went back to it
	open := m.openChainWith(m.chain(), page)
	m.screen = shown
	return tea.Batch(open, m.setFlash(termtext.Name(m.sess.thread)+": opened on graph "+termtext.Name(name), false))
}

// newThreadNoInput is why n cannot start a thread: the graph it runs on,
// the one the session was started on, takes no typed input ("": it can).
func (m *Model) newThreadNoInput() string {
	if _, d, ok := m.sess.graphs.started(); ok {
		if g := graphOf(d); g != nil && g.TurnInput() == nil {
			return noInputWhy(g)
		}
		return ""
	}
	return m.sess.noInput()
}

// takeDeps runs graph name's deps from now on: its engine, extension and
// runner; what was set for the last graph and is not this one's is off.
func (m *Model) takeDeps(name string, d Deps) {
	from := m.sess.graph()
	m.sess.deps = d
	m.cache = newCache(d.Extension) // what the last graph decoded is not this one's
	m.loader.useCache(m.cache)
	m.composer.allowDrafts(draftReplies(d.Extension))
	m.live.useExtension(d.Extension)
	m.readOnly = newReadOnlyPolicy(m.sess.readOnly(), m.keys, m.threads.keys).withoutInput(m.sess.noInput(), m.newThreadNoInput(), m.keys, m.threads.keys)
	if say := m.runs.graphChanged(from, m.sess.graph()); say != "" {
		m.logStatus(say, false)
	}
}

// navMsg is msg for navigation, with the tree it reads and the
// checkpoint shown.
func (m *Model) navMsg(msg tea.Msg) navMsg {
	return navMsg{Msg: msg, tree: m.timeline.tree, loading: m.timeline.loading, cur: m.cur}
}

// onNavNews does what navigation asks of the root.
func (m *Model) onNavNews(n navNews, cmd tea.Cmd) tea.Cmd {
	cmds := []tea.Cmd{cmd}
	if n.say != "" {
		cmds = append(cmds, m.setFlash(n.say, n.sayErr))
	}
	switch {
	case n.jump != "" && m.timeline.jump(n.jump):
		cmds = append(cmds, m.cursorMoved())
	case n.byPrefix:
		if err := m.timeline.jumpPrefix(n.prefix, m.sess.thread); err != nil {
			cmds = append(cmds, m.setFlash(termtext.Line(err.Error()), true))
		} else {
			cmds = append(cmds, m.cursorMoved())
		}
	case n.sourceSearch != "":
		q := n.sourceSearch
		cmds = append(cmds, m.setFlash(fmt.Sprintf("searching %s for %q…", termtext.Name(m.sess.thread), termtext.Line(q)), false), sourceSearch(m.sess, q))
	case n.zoomed:
		m.relayout()
		cmds = append(cmds, m.timeline.wantWords(m.sess))
	}
	if n.dialog != nil && m.dialog == nil {
		m.openDialog(n.dialog)
	}
	return tea.Batch(cmds...)
}

func (m *Model) onThreadsKey(msg tea.KeyMsg) tea.Cmd {
	if why, off := m.readOnly.refuses(msg, m.screen); off {
		return m.setFlash(why, true)
	}
	action, _ := m.threads.Update(msg)
	return m.onListAction(action)
}

// onListAction does what the threads list asks of the root.
func (m *Model) onListAction(action listAction) tea.Cmd {
	switch action {
	case listLoaded:
		// The timeline's total is the list's count for the chain shown.
		if n, ok := m.threads.checkpoints(m.chain()); ok {
			m.timeline.setTotal(n)
		}
	case listQuit:
		return m.askQuit()
	case listHelp:
		m.openPager(true)
	case listLog:
		m.openPager(false)
	case listRefresh:
		return m.sess.readThreads()
	case listBack:
		if m.sess.thread != "" {
			m.screen = screenThread
		}
	case listOpen:
		_, c, ok := m.threads.selected()
		if !ok {
			return nil
		}
		if c == m.chain() && m.timeline.tree.len() > 0 {
			m.screen = screenThread
			return m.sync(false)
		}
		return m.openChain(c)
	case listNew:
		on := m.sess.deps
		if _, d, ok := m.sess.graphs.started(); ok {
			on = d
		}
		return m.applyRun(m.runs.Update(newThreadMsg{taken: m.threads.find, n: len(m.threads.threads), on: on}))
	case listDelete:
		t, _, ok := m.threads.selected()
		if !ok {
			return nil
		}
		if t.ID == m.sess.thread && m.busy() {
			return m.setFlash("a run is under way on this thread", true)
		}
		ctx, b, id := m.sess.ctx, m.sess.deps.Backend, t.ID
		m.openDialog(&confirmDialog{title: "Delete thread",
			question: fmt.Sprintf("Delete thread %s and all its %d checkpoints, writes and events? This cannot be undone.", termtext.Name(id), t.Checkpoints),
			keys:     newConfirmKeys(),
			onYes: func() tea.Cmd {
				return func() tea.Msg { return deletedMsg{thread: id, err: b.DeleteThread(ctx, id)} }
			}})
	}
	return m.threads.loadStates(m.sess)
}

// --- focus, panes, scrolling, mouse ---

func (m *Model) visiblePanes() (main, side int) { return m.content.visible() }

// showPane puts pane p on screen.
func (m *Model) showPane(p int) tea.Cmd {
	m.focus = focusMain
	if m.content.show(p) {
		m.focus = focusSide
	}
	m.syncPanes()
	return m.paneReads()
}

// paneReads starts what the panes now on screen read only while they show
// (after they came into view: a pane switched to, a wider screen): the
// State pane's fidelity badge, the inspector's thread costs.
func (m *Model) paneReads() tea.Cmd { return tea.Batch(m.checkFidelity(), m.wantCosts()) }

// checkFidelity starts the State pane's badge of the checkpoint shown,
// when the pane shows.
func (m *Model) checkFidelity() tea.Cmd {
	return m.fidelity.check(m.cur, m.content.shows(paneState))
}

// syncPanes re-renders the visible panes whose inputs changed.
func (m *Model) syncPanes() {
	in := paneInputs{cur: m.cur, theme: m.themeGen, badge: m.fidelity.badgeOf, pins: func(w int) int { return len(m.nav.convPins(m.cur, w, m.content.unfold)) }}
	if m.live.head != nil {
		in.costs = m.live.head.costs
	}
	m.content.sync(in)
	m.dialogFollows()
}

// dialogFollows gives a dialog that follows the cursor where it is now.
func (m *Model) dialogFollows() {
	if f, ok := m.dialog.(cursorFollower); ok {
		f.followCursor(m.cur, m.timeline.tree.cursor)
	}
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

// moveTimelineRow moves the timeline's cursor by n rows (j/k with the
// timeline focused; a focused pane scrolls by the same keys in its Update).
func (m *Model) moveTimelineRow(n int) tea.Cmd {
	if m.timeline.moveRow(n) {
		return m.cursorMoved()
	}
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
			m.timeline.scroll(wheel)
			return m.timeline.wantWords(m.sess)
		}
		main, side := m.visiblePanes()
		p := main
		if target == focusSide {
			p = side
		}
		m.content.scroll(p, wheel)
		return nil
	}
	m.focus = target
	if target == focusTimeline {
		if id, ok := m.timeline.at(msg.Y - 1); ok && m.timeline.jump(id) {
			return m.cursorMoved()
		}
	}
	return nil
}
