package tui

// The read-only browser: a LangGraph database (or any browse.Source)
// shown as threads, a chain's timeline and the state at the checkpoint
// under the cursor. It reads through browse.Source only, so it links no
// store backend; it never writes, and the keys that would (compose, fork,
// resume, kill, discard, approve…) say so on the status line.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"rewind/store/browse"
	"rewind/themes"
	"rewind/tui/termtext"
)

// BrowseOptions open the read-only browser.
type BrowseOptions struct {
	// Source is what it reads; the caller closes it.
	Source browse.Source
	// StoreLabel names the database, password hidden.
	StoreLabel string
	// Thread opens this thread at start; empty shows the threads list.
	Thread string
	// Theme is the --theme flag.
	Theme string
	// Input and Output default to the terminal.
	Input  io.Reader
	Output io.Writer
}

// RunBrowse runs the read-only browser until the user quits.
func RunBrowse(ctx context.Context, o BrowseOptions) error {
	if o.Source == nil {
		return errors.New("tui: nothing to browse: open the database first (cli/app.Store.OpenLangGraph)")
	}
	cfg, err := LoadConfig(ConfigPath())
	if err != nil {
		return err
	}
	th, err := ResolveTheme(o.Theme, cfg, os.Getenv)
	if err != nil {
		return err
	}
	applyColorProfile(os.Getenv("NO_COLOR") != "")
	m := NewBrowser(ctx, o.Source, o.StoreLabel, o.Thread, th)
	opts := []tea.ProgramOption{tea.WithAltScreen(), tea.WithContext(ctx)}
	if o.Input != nil {
		opts = append(opts, tea.WithInput(o.Input))
	}
	if o.Output != nil {
		opts = append(opts, tea.WithOutput(o.Output))
	}
	if _, err := tea.NewProgram(m, opts...).Run(); err != nil && !(errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil) {
		return fmt.Errorf("tui: %w", err)
	}
	return nil
}

// Browser is the read-only browser's root: it reads (every read a
// tea.Cmd), routes keys and answers to the component that owns them
// (browse_*.go) and lays the screen out. It knows only browse.Source.
type Browser struct {
	ctx     context.Context
	src     browse.Source
	label   string
	theme   *themes.Theme
	painted themes.Painted // the last screen View painted
	keys    browserKeys
	help    help.Model
	w, h    int

	threads  *browseThreads
	timeline *browseTimeline
	conv     *browseConv
	state    *browseState
	writes   *browseWrites
	diff     *browseDiff
	follow   *browseFollow
	prompt   *browseGoto
	// results lists a search's hits (nil: closed); search is the last
	// search, for n/N.
	results *searchDialog
	search  searchState
	// off are the thread view's keys that write: refused here.
	off []offKey

	onThreads bool
	// pager shows the help (?) over the screen, as the thread view's does.
	pager pager
	// chain is the chain on screen; stack the chains it was entered
	// from (a subgraph's run is entered from its parent's checkpoint).
	chain browse.Chain
	stack []chainAt
	// want is the checkpoint to put the cursor on once the chain is read.
	want string
	gen  int
	// older: the chain's older listings are being read (the newest page
	// shows first).
	older bool
	// olderFrom is the oldest listing read while the older ones wait
	// for the first screen.
	olderFrom string
	tab       int
	focus     int

	cps     *browseCache[*browse.Checkpoint]
	wss     *browseCache[[]browse.TaskWrites]
	start   string // the thread to open once the threads are read
	status  string
	errText string
	// inFlight counts the reads out (follow's polls aside).
	inFlight int
}

// chainAt is a chain and the checkpoint the cursor was on.
type chainAt struct {
	c  browse.Chain
	at string
}

// The detail panes (tab), and where the keys go (focus).
const (
	tabConv = iota
	tabState
	tabWrites
	tabDiff
)

const (
	bFocusTimeline = iota
	bFocusDetail
)

// browseFirstPage is how many of the newest listings show before the rest.
const browseFirstPage = 200

// browserKeys are the root's own keys.
type browserKeys struct {
	Threads, Focus, Conv, State, Writes, Diff, Help, Quit key.Binding
	Search, NextHit, PrevHit                              key.Binding
}

func newBrowserKeys() browserKeys {
	return browserKeys{
		Threads: bind("threads", "t"),
		Focus:   bind("timeline/pane focus", "tab"),
		Conv:    bind("conversation", "1"),
		State:   bind("state", "2"),
		Writes:  bind("writes", "3"),
		Diff:    bind("diff", "4"),
		Help:    bind("help", "?"),
		Quit:    bind("quit", "q", "ctrl+c"),
		Search:  bind("search the messages", "/"),
		NextHit: bind("next match", "n"),
		PrevHit: bind("previous match", "N"),
	}
}

// browserHelp is what the footer and ? show: the focused part's keys,
// then the root's.
type browserHelp struct{ m *Browser }

func (h browserHelp) ShortHelp() []key.Binding {
	m := h.m
	k := m.keys
	switch {
	case m.results != nil:
		return m.results.ShortHelp()
	case m.prompt.active:
		return m.prompt.KeyMap().ShortHelp()
	case m.onThreads:
		return append(m.threads.KeyMap().ShortHelp(), k.Help, k.Quit)
	case m.focus == bFocusDetail && m.tab == tabState:
		return append(m.state.KeyMap().ShortHelp(), k.Focus, k.Help, k.Quit)
	case m.focus == bFocusDetail:
		return append(m.conv.KeyMap().ShortHelp(), k.Focus, k.Help, k.Quit)
	}
	return append(m.timeline.KeyMap().ShortHelp(), k.Focus, m.diff.keys.Mark, m.diff.keys.Compare, k.Help, k.Quit)
}

func (h browserHelp) FullHelp() [][]key.Binding {
	m := h.m
	k := m.keys
	out := m.timeline.KeyMap().FullHelp()
	out = append(out, []key.Binding{k.Focus, k.Conv, k.State, k.Writes, k.Diff}, m.diff.KeyMap().ShortHelp())
	out = append(out, m.state.KeyMap().FullHelp()...)
	out = append(out, []key.Binding{k.Search, k.NextHit, k.PrevHit}, []key.Binding{m.follow.keys.Toggle, k.Threads, k.Help, k.Quit})
	return append(out, offHelp(m.off))
}

// NewBrowser makes the browser's model; thread, when not "", opens at
// start. It follows the database (a poll a second) until F turns it off.
func NewBrowser(ctx context.Context, src browse.Source, label, thread string, th *themes.Theme) *Browser {
	m := &Browser{ctx: ctx, src: src, label: label, theme: th, w: 80, h: 24, onThreads: true, start: thread,
		keys: newBrowserKeys(), help: help.New(), pager: newPager(), off: browseOffKeys(),
		threads: newBrowseThreads(th), timeline: newBrowseTimeline(th), conv: newBrowseConv(th), state: newBrowseState(th),
		writes: newBrowseWrites(th), diff: newBrowseDiff(th), follow: newBrowseFollow(true, time.Second), prompt: newBrowseGoto(th),
		cps: newBrowseCache[*browse.Checkpoint](64), wss: newBrowseCache[[]browse.TaskWrites](64)}
	m.help.Styles.ShortKey, m.help.Styles.FullKey = th.HelpKey, th.HelpKey
	m.help.Styles.ShortDesc, m.help.Styles.FullDesc = th.HelpDesc, th.HelpDesc
	m.help.Styles.ShortSeparator, m.help.Styles.FullSeparator = th.HelpSep, th.HelpSep
	m.layout()
	return m
}

type (
	browseThreadsMsg struct {
		ts     []browse.Thread
		status map[string]browse.Status
		err    error
	}
	browseHistoryMsg struct {
		gen   int
		c     browse.Chain
		h     []browse.Listing
		older bool
		err   error
	}
	browseCheckpointMsg struct {
		c   browse.Chain
		id  string
		cp  browse.Checkpoint
		err error
	}
	browseWritesMsg struct {
		c   browse.Chain
		id  string
		ws  []browse.TaskWrites
		err error
	}
)

// Init reads the threads and arms follow.
func (m *Browser) Init() tea.Cmd {
	return tea.Batch(m.readThreads(), m.follow.Arm())
}

func (m *Browser) readThreads() tea.Cmd {
	m.inFlight++
	prev := m.threads.status // replaced, never changed: safe to read here
	return func() tea.Msg {
		ts, err := m.src.Threads(m.ctx)
		if err != nil {
			return browseThreadsMsg{ts: ts, err: err}
		}
		// Each thread's status, as LangGraph's get_state tells it: its
		// newest checkpoint's listing, and its writes when tasks are due.
		// One that does not read shows none; the list still does. An idle
		// thread whose newest checkpoint is the one it was read from keeps
		// its status (nothing is due from there, so no write can come to
		// it): a poll of the list reads only the threads that may move.
		status := make(map[string]browse.Status, len(ts))
		for _, t := range ts {
			if st, ok := prev[t.ID]; ok && st.State == browse.StateIdle && st.Checkpoint != "" && st.Checkpoint == t.Latest {
				status[t.ID] = st
				continue
			}
			if st, err := browse.ThreadStatus(m.ctx, m.src, t); err == nil {
				status[t.ID] = st
			}
		}
		return browseThreadsMsg{ts: ts, status: status}
	}
}

// openChain shows chain c, its cursor on checkpoint at ("": the head).
func (m *Browser) openChain(c browse.Chain, at string) tea.Cmd {
	m.onThreads, m.chain, m.want, m.older, m.olderFrom = false, c, at, false, ""
	m.gen++
	m.timeline = newBrowseTimeline(m.theme)
	m.timeline.SetMark(m.diff.Marked(c))
	m.diff.SetChain(c)
	m.layout()
	subs := map[string][]browse.Namespace{}
	for _, ns := range m.threads.Namespaces(c.Thread) {
		if ns.NS != "" && ns.NS != c.NS && ns.Parent == c.NS {
			subs[ns.ParentCheckpoint] = append(subs[ns.ParentCheckpoint], ns)
		}
	}
	m.timeline.SetSubgraphs(subs)
	m.syncPanes()
	return m.readHistory(c, "", browseFirstPage, false)
}

func (m *Browser) readHistory(c browse.Chain, before string, limit int, older bool) tea.Cmd {
	m.inFlight++
	gen := m.gen
	return func() tea.Msg {
		h, err := m.src.History(m.ctx, c, before, limit)
		return browseHistoryMsg{gen, c, h, older, err}
	}
}

// load reads what the panes show of the checkpoint under the cursor, once.
func (m *Browser) load() tea.Cmd {
	id := m.timeline.CurrentID()
	if m.onThreads || id == "" {
		return nil
	}
	c := m.chain
	key := cacheKey(c, id)
	var cmds []tea.Cmd
	if _, ok := m.cps.get(key); !ok {
		m.inFlight++
		cmds = append(cmds, func() tea.Msg {
			cp, err := m.src.Checkpoint(m.ctx, c, id)
			return browseCheckpointMsg{c, id, cp, err}
		})
	}
	if _, ok := m.wss.get(key); !ok {
		m.inFlight++
		cmds = append(cmds, func() tea.Msg {
			ws, err := m.src.Writes(m.ctx, c, id)
			return browseWritesMsg{c, id, ws, err}
		})
	}
	m.syncPanes()
	return tea.Batch(cmds...)
}

// syncPanes gives the panes what is read of the checkpoint under the cursor.
func (m *Browser) syncPanes() {
	key := cacheKey(m.chain, m.timeline.CurrentID())
	cp, _ := m.cps.get(key)
	m.conv.SetCheckpoint(cp)
	m.state.SetCheckpoint(cp)
	ws, ok := m.wss.get(key)
	m.writes.SetWrites(ws, ok)
	m.timeline.SetMark(m.diff.Marked(m.chain))
}

// Settled says no read is in flight and what the screen shows is read
// (tests wait for it).
func (m *Browser) Settled() bool {
	if m.inFlight != 0 || !m.threads.loaded || m.diff.Loading() {
		return false
	}
	if m.onThreads {
		return true
	}
	key := cacheKey(m.chain, m.timeline.CurrentID())
	_, cp := m.cps.get(key)
	_, ws := m.wss.get(key)
	return !m.older && cp && ws
}

// Update routes keys and the reads' answers.
func (m *Browser) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.w, m.h = msg.Width, msg.Height
		m.layout()
	case browseThreadsMsg:
		m.inFlight--
		if msg.err != nil {
			m.errText = msg.err.Error()
			return m, nil
		}
		m.threads.SetThreads(msg.ts, msg.status)
		if m.start != "" {
			want := browse.Chain{Thread: m.start}
			m.start = ""
			if !m.threads.Select(want) {
				m.errText = fmt.Sprintf("thread %s is not in this database: pick one below", termtext.Name(want.Thread))
				return m, nil
			}
			return m, m.openChain(want, "")
		}
	case browseHistoryMsg:
		m.inFlight--
		return m, m.onHistory(msg)
	case browseCheckpointMsg:
		m.inFlight--
		if msg.err != nil {
			m.errText = msg.err.Error()
			return m, nil
		}
		cp := msg.cp
		m.cps.put(cacheKey(msg.c, msg.id), &cp)
		m.syncPanes()
		return m, m.readOlder()
	case browseWritesMsg:
		m.inFlight--
		if msg.err != nil {
			m.errText = msg.err.Error()
			return m, nil
		}
		m.wss.put(cacheKey(msg.c, msg.id), msg.ws)
		m.syncPanes()
		return m, m.readOlder()
	case browseDiffMsg:
		m.diff.Update(msg)
	case searchMsg:
		m.onSearch(msg)
	case goHitMsg:
		return m, m.goHit(msg.i)
	case browseFollowTick:
		if m.onThreads {
			if !m.threads.loaded || m.inFlight > 0 {
				return m, m.follow.Arm()
			}
			return m, tea.Batch(m.readThreads(), m.follow.Arm())
		}
		if m.older || len(m.timeline.Listings()) == 0 {
			return m, m.follow.Arm()
		}
		return m, m.follow.Poll(m.ctx, m.src, msg, m.chain)
	case browseFollowMsg:
		current, next := m.follow.Update(msg)
		if !current || msg.c != m.chain || msg.err != nil {
			return m, next
		}
		return m, tea.Batch(next, m.merge(msg.h))
	case tea.KeyMsg:
		if keys := splitRunes(msg); keys != nil { // keys typed fast come as one message
			cmds := make([]tea.Cmd, len(keys))
			for i, k := range keys {
				cmds[i] = m.key(k)
			}
			return m, tea.Batch(cmds...)
		}
		return m, m.key(msg)
	}
	return m, nil
}

// onHistory shows a chain's listings: the newest page, then the rest.
func (m *Browser) onHistory(msg browseHistoryMsg) tea.Cmd {
	if msg.gen != m.gen || msg.c != m.chain {
		return nil
	}
	if msg.err != nil {
		m.errText = msg.err.Error()
		m.older = false
		return nil
	}
	h := slices.Clone(msg.h)
	slices.Reverse(h)
	if msg.older {
		m.older = false
		h = append(h, m.timeline.Listings()...)
	} else if len(msg.h) == browseFirstPage {
		m.older, m.olderFrom = true, h[0].ID
	}
	m.timeline.SetListings(h)
	if m.want != "" && m.timeline.MoveTo(m.want) && !m.older {
		m.want = ""
	}
	return tea.Batch(m.load(), m.readOlder())
}

// readOlder reads the chain's older listings once the first screen is
// whole (the checkpoint under the cursor and its writes in): a long
// chain's first screen does not wait behind them.
func (m *Browser) readOlder() tea.Cmd {
	if m.olderFrom == "" {
		return nil
	}
	key := cacheKey(m.chain, m.timeline.CurrentID())
	_, cp := m.cps.get(key)
	_, ws := m.wss.get(key)
	if !cp || !ws {
		return nil
	}
	from := m.olderFrom
	m.olderFrom = ""
	return m.readHistory(m.chain, from, 0, true)
}

// merge adds follow's newest listings to the chain; a checkpoint whose
// writes changed is read again.
func (m *Browser) merge(newest []browse.Listing) tea.Cmd {
	order := m.timeline.Listings()
	at := make(map[string]int, len(order))
	for i, l := range order {
		at[l.ID] = i
	}
	var added []browse.Listing
	changed := false
	for _, l := range newest {
		i, ok := at[l.ID]
		switch {
		case !ok:
			added = append(added, l)
		case order[i].Counts != l.Counts || len(order[i].Next) != len(l.Next):
			order[i] = l
			m.wss.drop(cacheKey(m.chain, l.ID))
			changed = true
		}
	}
	if len(added) == len(newest) && len(newest) == followPage {
		return m.openChain(m.chain, m.timeline.CurrentID()) // more came than a poll reads
	}
	if len(added) == 0 && !changed {
		return nil
	}
	slices.Reverse(added)
	m.timeline.SetListings(append(slices.Clone(order), added...))
	if len(added) > 0 {
		m.status = fmt.Sprintf("%d new checkpoint(s)", len(added))
	}
	return m.load()
}

func (m *Browser) key(k tea.KeyMsg) tea.Cmd {
	if m.pager.shown() {
		_, lines, _ := m.helpLines()
		closed, cmd := m.pager.Update(pagerKeyMsg{k, len(lines)})
		if closed && k.Type == tea.KeyCtrlC {
			return tea.Quit
		}
		return cmd
	}
	if m.results != nil {
		return m.resultsKey(k)
	}
	if m.prompt.active {
		done, text := m.prompt.Update(k)
		switch {
		case done && m.prompt.label == promptSearchLabel:
			m.errText, m.status = "", ""
			return m.startSearch(text)
		case done:
			if err := m.timeline.Goto(text); err != nil {
				m.errText = err.Error()
			}
			return m.load()
		}
		return nil
	}
	m.errText, m.status = "", ""
	switch {
	case key.Matches(k, m.keys.Quit):
		return tea.Quit
	case key.Matches(k, m.keys.Help):
		m.pager.open(true, 0)
		return nil
	case key.Matches(k, m.follow.keys.Toggle):
		cmd := m.follow.Toggle()
		m.status = "follow off: the screen stays as read"
		if m.follow.on {
			m.status = "following: new checkpoints appear as they are written"
		}
		return cmd
	}
	if m.onThreads {
		handled, open := m.threads.Update(k)
		switch {
		case open != nil:
			m.stack = nil
			return m.openChain(*open, "")
		case !handled:
			m.refuse(k)
		}
		return nil
	}
	switch {
	case key.Matches(k, m.keys.Threads):
		m.onThreads = true
		m.threads.Select(m.chain)
		return nil
	case key.Matches(k, m.keys.Focus):
		m.focus = 1 - m.focus
		return nil
	case key.Matches(k, m.keys.Conv):
		m.tab, m.focus = tabConv, bFocusDetail
		return nil
	case key.Matches(k, m.keys.State):
		m.tab, m.focus = tabState, bFocusDetail
		return nil
	case key.Matches(k, m.keys.Writes):
		m.tab, m.focus = tabWrites, bFocusDetail
		return nil
	case key.Matches(k, m.keys.Diff):
		m.tab, m.focus = tabDiff, bFocusDetail
		return nil
	case key.Matches(k, m.diff.keys.Mark):
		m.diff.Mark(m.chain, m.timeline.CurrentID())
		m.timeline.SetMark(m.timeline.CurrentID())
		m.status = fmt.Sprintf("marked @%s: move, then = compares it with the cursor", m.timeline.Short(m.timeline.CurrentID()))
		return nil
	case key.Matches(k, m.diff.keys.Compare):
		cmd := m.diff.Compare(m.ctx, m.src, m.chain, m.timeline.CurrentID(), m.timeline.Listings(), m.timeline.Short)
		if cmd == nil {
			m.status = "nothing marked in this chain: m marks the checkpoint under the cursor"
			return nil
		}
		m.tab = tabDiff
		return cmd
	case key.Matches(k, m.timeline.keys.Goto):
		m.prompt.Open(promptGotoLabel)
		return nil
	case key.Matches(k, m.keys.Search):
		m.prompt.Open(promptSearchLabel)
		return nil
	case key.Matches(k, m.keys.NextHit):
		return m.nextHit(1)
	case key.Matches(k, m.keys.PrevHit):
		return m.nextHit(-1)
	case key.Matches(k, m.timeline.keys.Back):
		return m.back()
	case m.focus == bFocusDetail && m.tab == tabState && m.state.Update(k):
		return nil
	case key.Matches(k, m.timeline.keys.Descend):
		if subs := m.timeline.Subgraphs(m.timeline.CurrentID()); len(subs) > 0 {
			m.stack = append(m.stack, chainAt{m.chain, m.timeline.CurrentID()})
			if len(subs) > 1 {
				m.status = fmt.Sprintf("%d subgraph runs start here: showing the first", len(subs))
			}
			return m.openChain(browse.Chain{Thread: m.chain.Thread, NS: subs[0].NS}, "")
		}
	case m.focus == bFocusDetail && !key.Matches(k, m.timeline.keys.Prev, m.timeline.keys.Next) && m.paneUpdate(k):
		return nil
	case m.timeline.Update(k):
		return m.load()
	}
	m.refuse(k)
	return nil
}

// paneUpdate gives a key to the pane on show.
func (m *Browser) paneUpdate(k tea.KeyMsg) bool {
	switch m.tab {
	case tabConv:
		return m.conv.Update(k)
	case tabState:
		return m.state.Update(k)
	case tabWrites:
		return m.writes.Update(k)
	}
	return m.diff.Update(k)
}

// back leaves a subgraph's run for the chain it was entered from, or the
// root chain for the threads.
func (m *Browser) back() tea.Cmd {
	if len(m.stack) == 0 {
		m.onThreads = true
		m.threads.Select(m.chain)
		return nil
	}
	top := m.stack[len(m.stack)-1]
	m.stack = m.stack[:len(m.stack)-1]
	return m.openChain(top.c, top.at)
}

// refuse says why a writing key does nothing here.
func (m *Browser) refuse(k tea.KeyMsg) {
	if r := m.refusal(k); r != "" {
		m.status = r
	}
}

// layout gives the parts their sizes.
func (m *Browser) layout() {
	body := max(1, m.h-3)
	m.threads.SetSize(m.w, body)
	lw := m.leftWidth()
	m.timeline.SetSize(lw, body)
	rw, ph := max(1, m.w-lw-3), max(1, body-4)
	m.conv.SetSize(rw, ph)
	m.state.SetSize(rw, ph)
	m.writes.SetSize(rw, ph)
	m.diff.SetSize(rw, ph)
	m.prompt.SetSize(m.w, 1)
	m.pager.SetSize(m.w, m.h)
	if m.results != nil {
		m.results.SetSize(dialogRoom(m.w, m.h))
	}
	m.help.Width = m.w
}

// helpLines are every key of the browser, in as many columns as fit.
func (m *Browser) helpLines() (title string, lines []string, w int) {
	lines, w = helpColumns(m.theme, browserHelp{m}.FullHelp(), m.w)
	lines = append(lines, "")
	for _, l := range wrap("Read-only: the keys that would write (off:) say so on the status line. esc closes this help.", w-4) {
		lines = append(lines, m.theme.Muted.Render(l))
	}
	return "Keys · LangGraph browser", lines, w
}

func (m *Browser) leftWidth() int { return max(22, min(60, m.w*2/5)) }

// View lays out the title, the body, the help line and the status bar,
// on the theme's background.
func (m *Browser) View() string { return m.painted.Paint(m.theme, m.view(), m.w, m.h) }

func (m *Browser) view() string {
	body := max(1, m.h-3)
	var b string
	switch {
	case m.onThreads:
		b = m.threads.View()
	default:
		b = m.chainView(body)
	}
	lines := strings.Split(b, "\n")
	for len(lines) < body {
		lines = append(lines, "")
	}
	title := "rewind · threads"
	if !m.onThreads {
		title = "rewind · thread " + termtext.Name(m.chain.Thread)
		if n := len(m.timeline.rows); n > 0 {
			title += fmt.Sprintf(" · %d/%d", m.timeline.cur+1, n)
		}
		if m.older {
			title += " · reading older…"
		}
		if m.chain.NS != "" {
			title += " · subgraph " + termtext.Name(m.chain.NS)
		}
	}
	status := m.src.About().Status() + " · " + termtext.Line(m.label)
	if f := m.follow.View(); f != "" {
		status += " · " + f
	}
	switch {
	case m.errText != "":
		status = termtext.Error(m.errText) + " · " + status
	case m.status != "":
		status = termtext.Line(m.status)
	}
	keys := browserHelp{m}.ShortHelp()
	if m.pager.shown() {
		keys = m.pager.ShortHelp()
	}
	foot := keyLine(m.help, m.theme, m.w, keys, m.endsFooter)
	if m.prompt.active && m.results == nil && !m.pager.shown() {
		foot = m.prompt.View()
	}
	bar := m.theme.StatusBar.Width(m.w).Render(ansi.Truncate(status, m.w, "…"))
	screen := m.theme.Heading.Render(ansi.Truncate(title, m.w, "…")) + "\n" + strings.Join(lines[:body], "\n") + "\n" +
		ansi.Truncate(foot, m.w, "…") + "\n" + bar
	switch {
	case m.pager.shown():
		title, lines, w := m.helpLines()
		screen = overlay(screen, m.pager.View(m.theme, title, lines, w), m.w, m.h)
	case m.results != nil:
		screen = overlay(screen, m.results.View(m.theme, m.help), m.w, m.h)
	}
	return screen
}

// endsFooter is whether b stays at the footer's end when keys are cut.
func (m *Browser) endsFooter(b key.Binding) bool {
	k := b.Help().Key
	return k == m.keys.Help.Help().Key || k == m.keys.Quit.Help().Key
}

// chainView is the timeline beside the inspector and the pane on show.
func (m *Browser) chainView(n int) string {
	lw := m.leftWidth()
	rw := max(1, m.w-lw-3)
	left := strings.Split(m.timeline.View(), "\n")
	right := m.inspector(rw)
	right = append(right, m.tabs(rw))
	var pane string
	switch m.tab {
	case tabConv:
		pane = m.conv.View()
	case tabState:
		pane = m.state.View()
	case tabWrites:
		pane = m.writes.View()
	default:
		pane = m.diff.View()
	}
	right = append(right, strings.Split(pane, "\n")...)
	sep := m.theme.Border.Render(" │ ")
	if m.focus == bFocusDetail {
		sep = m.theme.BorderFocused.Render(" ┃ ")
	}
	out := make([]string, n)
	for i := range out {
		l, r := "", ""
		if i < len(left) {
			l = left[i]
		}
		if i < len(right) {
			r = ansi.Truncate(right[i], rw, "…")
		}
		out[i] = l + strings.Repeat(" ", max(0, lw-ansi.StringWidth(l))) + sep + r
	}
	return strings.Join(out, "\n")
}

// inspector is the checkpoint under the cursor, from its listing: the
// whole id, where it stands, what is due and what it stored.
func (m *Browser) inspector(w int) []string {
	l, ok := m.timeline.Current()
	if !ok {
		return []string{"", "", ""}
	}
	th := m.theme
	out := []string{th.Strong.Render("@" + termtext.Name(l.ID))}
	parent := "none"
	if l.Parent != "" {
		parent = "@" + m.timeline.Short(l.Parent)
	}
	when := ""
	if !l.CreatedAt.IsZero() {
		when = " · " + l.CreatedAt.UTC().Format("2006-01-02 15:04:05")
	}
	out = append(out, th.Muted.Render(fmt.Sprintf("step %d · %s · parent %s%s", l.Step, termtext.Name(l.Source), parent, when)))
	line := "next " + describeNext(l.Next) + fmt.Sprintf(" · %d write(s)", l.Counts.Writes)
	if l.Counts.Errors > 0 {
		line += th.Error.Render(fmt.Sprintf(" · %d error(s)", l.Counts.Errors))
	}
	if l.Counts.Interrupts > 0 {
		line += th.Paused.Render(fmt.Sprintf(" · %d interrupt(s)", l.Counts.Interrupts))
	}
	for _, s := range m.timeline.Subgraphs(l.ID) {
		line += th.Accent.Render(" · ⤷" + termtext.Name(s.Node) + " (enter)")
	}
	if l.Damaged != "" {
		line = th.Error.Render("damaged: " + termtext.Line(l.Damaged))
	}
	return append(out, line)
}

// tabs is the detail panes' tab bar.
func (m *Browser) tabs(w int) string {
	names := []string{"1 conversation", "2 state", "3 writes", "4 diff"}
	if l, ok := m.timeline.Current(); ok && l.Counts.Writes > 0 {
		names[tabWrites] = fmt.Sprintf("3 writes (%d)", l.Counts.Writes)
	}
	parts := make([]string, len(names))
	for i, n := range names {
		if i == m.tab {
			parts[i] = m.theme.TabActive.Render(n)
		} else {
			parts[i] = m.theme.Tab.Render(n)
		}
	}
	return ansi.Truncate(strings.Join(parts, "  "), w, "…")
}

// browseCache keeps the values read for the last n checkpoints.
type browseCache[V any] struct {
	n     int
	m     map[string]V
	order []string
}

func newBrowseCache[V any](n int) *browseCache[V] {
	return &browseCache[V]{n: n, m: map[string]V{}}
}

func cacheKey(c browse.Chain, id string) string { return c.Thread + "\x00" + c.NS + "\x00" + id }

func (c *browseCache[V]) get(k string) (V, bool) {
	v, ok := c.m[k]
	return v, ok
}

func (c *browseCache[V]) put(k string, v V) {
	if _, ok := c.m[k]; !ok {
		c.order = append(c.order, k)
	}
	c.m[k] = v
	for len(c.order) > c.n {
		delete(c.m, c.order[0])
		c.order = c.order[1:]
	}
}

func (c *browseCache[V]) drop(k string) {
	delete(c.m, k)
	c.order = slices.DeleteFunc(c.order, func(s string) bool { return s == k })
}

// lgShortID is a UUID's distinctive part: its first 8 and last 4 characters.
func lgShortID(id string) string {
	if len(id) <= 16 {
		return termtext.Name(id)
	}
	return termtext.Name(id[:8] + "…" + id[len(id)-4:])
}

// describeNext names the tasks due as the CLI does (browse.DescribeNext),
// after an arrow.
func describeNext(next []browse.Task) string {
	if len(next) == 0 {
		return "—"
	}
	return "→ " + termtext.Name(browse.DescribeNext(next))
}

// oneLine is a value as compact JSON on one line.
func oneLine(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return termtext.Line(fmt.Sprint(v))
	}
	return termtext.Line(string(b))
}
