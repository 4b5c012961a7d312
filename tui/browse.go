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

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
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

// Browser is the read-only browser's model.
type Browser struct {
	ctx   context.Context
	src   browse.Source
	label string
	th    *themes.Theme
	w, h  int

	// The threads screen: one row per chain (a thread's root, then its
	// subgraph runs).
	onThreads bool
	rows      []browse.Chain
	rowInfo   []string
	row       int
	loaded    bool

	// The chain screen: its listings oldest first, the cursor, and the
	// checkpoints read so far (values on demand).
	chain    browse.Chain
	list     []browse.Listing
	cur      int
	cps      map[string]browse.Checkpoint
	start    string // the thread to open once the threads are read
	status   string
	errText  string
	inFlight int
}

// NewBrowser makes the browser's model; thread, when not "", opens at
// start.
func NewBrowser(ctx context.Context, src browse.Source, label, thread string, th *themes.Theme) *Browser {
	return &Browser{ctx: ctx, src: src, label: label, th: th, w: 80, h: 24, onThreads: true, start: thread, cps: map[string]browse.Checkpoint{}}
}

type (
	browseThreadsMsg struct {
		ts  []browse.Thread
		err error
	}
	browseHistoryMsg struct {
		c   browse.Chain
		h   []browse.Listing
		err error
	}
	browseCheckpointMsg struct {
		c   browse.Chain
		id  string
		cp  browse.Checkpoint
		err error
	}
)

// Init reads the threads.
func (m *Browser) Init() tea.Cmd {
	m.inFlight++
	return func() tea.Msg {
		ts, err := m.src.Threads(m.ctx)
		return browseThreadsMsg{ts, err}
	}
}

func (m *Browser) openChain(c browse.Chain) tea.Cmd {
	m.onThreads, m.chain, m.list, m.cur = false, c, nil, 0
	m.inFlight++
	return func() tea.Msg {
		h, err := m.src.History(m.ctx, c, "", 0)
		return browseHistoryMsg{c, h, err}
	}
}

// load reads the checkpoint under the cursor, once.
func (m *Browser) load() tea.Cmd {
	if m.onThreads || m.cur >= len(m.list) {
		return nil
	}
	c, id := m.chain, m.list[m.cur].ID
	if _, ok := m.cps[id]; ok {
		return nil
	}
	m.inFlight++
	return func() tea.Msg {
		cp, err := m.src.Checkpoint(m.ctx, c, id)
		return browseCheckpointMsg{c, id, cp, err}
	}
}

// Settled says no read is in flight (tests wait for it).
func (m *Browser) Settled() bool { return m.inFlight == 0 && m.loaded }

// writeKeys are the thread view's keys that write, and what they do.
var writeKeys = map[string]string{
	"i": "writing a message", "enter": "writing a message", "f": "forking", "r": "resuming", "x": "stopping a run",
	"X": "killing a worker", "ctrl+k": "killing a worker", "K": "arming a kill point", "D": "discarding pending tasks", "a": "answering an approval",
	"b": "setting breakpoints", "ctrl+d": "writing a draft", "d": "deleting a thread",
}

// Update handles keys and the reads' answers.
func (m *Browser) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.w, m.h = msg.Width, msg.Height
	case browseThreadsMsg:
		m.inFlight--
		m.loaded = true
		if msg.err != nil {
			m.errText = msg.err.Error()
			return m, nil
		}
		m.rows, m.rowInfo = nil, nil
		for _, t := range msg.ts {
			for _, ns := range t.Namespaces {
				c := browse.Chain{Thread: t.ID, NS: ns.NS}
				info := fmt.Sprintf("%d checkpoints · %s", ns.Checkpoints, ns.UpdatedAt.UTC().Format("2006-01-02 15:04"))
				if ns.NS != "" {
					info += " · runs from @" + lgShortID(ns.ParentCheckpoint)
				}
				m.rows, m.rowInfo = append(m.rows, c), append(m.rowInfo, info)
			}
		}
		if m.start != "" {
			want := m.start
			i := slices.IndexFunc(m.rows, func(c browse.Chain) bool { return c.Thread == want && c.NS == "" })
			m.start = ""
			if i < 0 {
				m.errText = fmt.Sprintf("thread %s is not in this database: pick one below", termtext.Name(want))
				return m, nil
			}
			m.row = i
			return m, m.openChain(m.rows[i])
		}
	case browseHistoryMsg:
		m.inFlight--
		if msg.c != m.chain {
			return m, nil
		}
		if msg.err != nil {
			m.errText = msg.err.Error()
			return m, nil
		}
		m.list = slices.Clone(msg.h)
		slices.Reverse(m.list)
		m.cur = len(m.list) - 1
		return m, m.load()
	case browseCheckpointMsg:
		m.inFlight--
		if msg.err != nil {
			m.errText = msg.err.Error()
			return m, nil
		}
		if msg.c == m.chain {
			m.cps[msg.id] = msg.cp
		}
	case tea.KeyMsg:
		return m, m.key(msg.String())
	}
	return m, nil
}

func (m *Browser) key(k string) tea.Cmd {
	m.errText, m.status = "", ""
	if k == "q" || k == "ctrl+c" {
		return tea.Quit
	}
	if m.onThreads {
		switch k {
		case "up", "k":
			m.row = max(0, m.row-1)
		case "down", "j":
			m.row = min(len(m.rows)-1, m.row+1)
		case "enter", "right":
			if m.row < len(m.rows) {
				return m.openChain(m.rows[m.row])
			}
		default:
			m.refuse(k)
		}
		return nil
	}
	switch k {
	case "left", "h", "up", "k":
		m.cur = max(0, m.cur-1)
	case "right", "l", "down", "j":
		m.cur = min(len(m.list)-1, m.cur+1)
	case "home", "g":
		m.cur = 0
	case "end", "G":
		m.cur = len(m.list) - 1
	case "t", "esc":
		m.onThreads = true
		return nil
	default:
		m.refuse(k)
		return nil
	}
	return m.load()
}

// refuse says why a writing key does nothing here.
func (m *Browser) refuse(k string) {
	if what, ok := writeKeys[k]; ok {
		m.status = fmt.Sprintf("read-only: %s would write to this %s", what, strings.TrimSuffix(m.src.About().Status(), ", read-only"))
	}
}

// lgShortID is a UUID's distinctive part: its first 8 and last 4 characters.
func lgShortID(id string) string {
	if len(id) <= 16 {
		return termtext.Name(id)
	}
	return termtext.Name(id[:8] + "…" + id[len(id)-4:])
}

func (m *Browser) fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	return ansi.Truncate(s, w, "…")
}

// View draws the screen: a title, the body, the status bar.
func (m *Browser) View() string {
	body := m.h - 2
	var lines []string
	if m.onThreads {
		lines = m.threadsView(body)
	} else {
		lines = m.chainView(body)
	}
	for len(lines) < body {
		lines = append(lines, "")
	}
	title := "rewind · threads"
	if !m.onThreads {
		title = "rewind · thread " + termtext.Name(m.chain.Thread)
		if m.chain.NS != "" {
			title += " · " + termtext.Name(m.chain.NS)
		}
		if len(m.list) > 0 {
			title += fmt.Sprintf(" · %d/%d", m.cur+1, len(m.list))
		}
	}
	status := m.src.About().Status() + " · " + termtext.Line(m.label)
	switch {
	case m.errText != "":
		status += " · " + termtext.Error(m.errText)
	case m.status != "":
		status = termtext.Line(m.status)
	}
	bar := m.th.StatusBar.Width(m.w).Render(m.fit(status, m.w))
	return m.th.Heading.Render(m.fit(title, m.w)) + "\n" + strings.Join(lines[:body], "\n") + "\n" + bar
}

func (m *Browser) threadsView(n int) []string {
	if !m.loaded {
		return []string{"  reading the threads…"}
	}
	if len(m.rows) == 0 {
		return []string{"  no threads in this database"}
	}
	var out []string
	first := max(0, m.row-n+1)
	for i := first; i < len(m.rows) && len(out) < n; i++ {
		c := m.rows[i]
		name := termtext.Name(c.Thread)
		if c.NS != "" {
			name = "  └ " + termtext.Name(c.NS)
		}
		line := m.fit(fmt.Sprintf("%-40s %s", name, m.rowInfo[i]), m.w-2)
		if i == m.row {
			out = append(out, m.th.Cursor.Render("▸ "+line))
		} else {
			out = append(out, "  "+line)
		}
	}
	return out
}

func (m *Browser) chainView(n int) []string {
	if len(m.list) == 0 {
		return []string{"  reading the chain…"}
	}
	left := min(46, m.w/2)
	var tl []string
	first := max(0, min(m.cur-n/2, len(m.list)-n))
	children := map[string]int{}
	for _, l := range m.list {
		children[l.Parent]++
	}
	for i := first; i < len(m.list) && len(tl) < n; i++ {
		l := m.list[i]
		mark := " "
		if children[l.ID] > 1 {
			mark = "⑂" // a fork point
		}
		next := describeNext(l.Next)
		row := m.fit(fmt.Sprintf("%s %3d %-6s %s %s", mark, l.Step, termtext.Name(l.Source), lgShortID(l.ID), next), left-2)
		if i == m.cur {
			tl = append(tl, m.th.Cursor.Render("▸ "+row))
		} else {
			tl = append(tl, "  "+row)
		}
	}
	right := m.stateLines(m.w - left - 3)
	out := make([]string, n)
	for i := range out {
		l, r := "", ""
		if i < len(tl) {
			l = tl[i]
		}
		if i < len(right) {
			r = right[i]
		}
		out[i] = l + strings.Repeat(" ", max(0, left-lipgloss.Width(l))) + " │ " + r
	}
	return out
}

// describeNext names the tasks due: nodes, and Sends as node×N.
func describeNext(next []browse.Task) string {
	var parts []string
	for i := 0; i < len(next); {
		j := i
		for j < len(next) && next[j].Node == next[i].Node && next[j].Send == next[i].Send {
			j++
		}
		p := termtext.Name(next[i].Node)
		if next[i].Send {
			p += "(Send)"
		}
		if j-i > 1 {
			p += fmt.Sprintf("×%d", j-i)
		}
		parts = append(parts, p)
		i = j
	}
	if len(parts) == 0 {
		return "—"
	}
	return "→ " + strings.Join(parts, " ")
}

// stateLines is the checkpoint under the cursor: its place, the tasks
// due, the messages, then every other channel of the graph's.
func (m *Browser) stateLines(w int) []string {
	l := m.list[m.cur]
	cp, ok := m.cps[l.ID]
	out := []string{m.th.Strong.Render(m.fit(fmt.Sprintf("@%s", termtext.Name(l.ID)), w)),
		m.fit(fmt.Sprintf("step %d · %s · parent %s", l.Step, termtext.Name(l.Source), lgShortID(l.Parent)), w),
		m.fit(fmt.Sprintf("next %s · %d write(s) from here", describeNext(l.Next), l.Counts.Writes), w)}
	if l.Damaged != "" {
		out = append(out, m.th.Error.Render(m.fit("damaged: "+termtext.Line(l.Damaged), w)))
	}
	if !ok {
		return append(out, "", "reading…")
	}
	for _, t := range cp.Next {
		if t.Send {
			out = append(out, m.fit("  Send "+termtext.Name(t.Node)+" "+oneLine(t.Arg), w))
		}
	}
	out = append(out, "", m.th.Heading.Render("State"))
	for _, ch := range cp.Channels {
		if ch.Internal {
			continue
		}
		if ch.Name == "messages" {
			if msgs, isList := ch.Value.([]any); isList {
				out = append(out, m.fit(fmt.Sprintf("messages (%d)", len(msgs)), w))
				for i, v := range msgs {
					out = append(out, m.fit(fmt.Sprintf("  #%d %s", i+1, messageLine(v)), w))
				}
				continue
			}
		}
		out = append(out, m.fit(termtext.Line(ch.Name)+" = "+oneLine(ch.Value), w))
	}
	return out
}

// messageLine is a LangChain message on one line: its type and text, or
// its tool calls.
func messageLine(v any) string {
	f, ok := v.(map[string]any)
	if !ok {
		return oneLine(v)
	}
	if kw, ok := f["kwargs"].(map[string]any); ok { // LangChain.js's {"lc": 1, …}
		f = kw
	}
	role, _ := f["type"].(string)
	if role == "" {
		role, _ = f["role"].(string)
	}
	if typ, _ := f["$type"].(string); role == "" && typ != "" { // langchain_core.messages.HumanMessage
		typ = typ[strings.LastIndex(typ, ".")+1:]
		role = strings.ToLower(strings.TrimSuffix(typ, "Message"))
		if role == "aI" || role == "ai" {
			role = "ai"
		}
	}
	text, _ := f["content"].(string)
	if calls, ok := f["tool_calls"].([]any); ok && len(calls) > 0 && text == "" {
		var names []string
		for _, c := range calls {
			if cm, ok := c.(map[string]any); ok {
				names = append(names, fmt.Sprintf("%v(%v)", cm["name"], cm["id"]))
			}
		}
		text = "tool call " + strings.Join(names, ", ")
	}
	if id, ok := f["tool_call_id"].(string); ok && id != "" {
		role += " ← " + id
	}
	return termtext.Line(role + ": " + text)
}

// oneLine is a value as compact JSON on one line.
func oneLine(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return termtext.Line(fmt.Sprint(v))
	}
	return termtext.Line(string(b))
}
