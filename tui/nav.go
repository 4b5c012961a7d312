package tui

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"rewind/engine/ticket"
	"rewind/store/browse"
	"rewind/themes"
	"rewind/tui/termtext"
)

// Finding the way in a long thread (issue 12, item 4): timeline rows
// grouped by turn under a "turn N" header, a turn's first row showing the
// customer's words (read for the rows on screen, in a Cmd, and kept), {/}
// from turn to turn, : to a checkpoint, / to search (search.go), + to zoom
// the focused pane.

// isTurnStart: new input starts a turn at cp (an input, or a fork that is
// not a replay: a fork carries the new branch's input).
func isTurnStart(l browse.Listing) bool {
	return l.Source == browse.SourceInput || l.Source == browse.SourceFork && l.ReplayOf == ""
}

// maxWords is how much of the customer's words a row keeps.
const maxWords = 160

// turnWords is what a turn's first row says after its id and source.
func turnWords(k rowKey) string {
	if k.preview == "" {
		return "› …"
	}
	return "› " + k.preview
}

// drillMark is one cell after a row's id: ✝ a run stopped here and a
// resume finished it, ⟲ that resume (it reused stored writes).
func drillMark(k rowKey) string {
	switch {
	case k.reused > 0:
		return "⟲"
	case k.resumed:
		return "✝"
	}
	return " "
}

// turnHeader is the line above a turn's first row.
func (p *timelinePane) turnHeader(th *themes.Theme, theme int, n *timelineNode) string {
	k := rowKey{n: n, w: p.w, theme: theme, nest: -1 - n.nest, pending: -1 - n.turn}
	if row, ok := p.rows[k]; ok {
		return row
	}
	rail := strings.Repeat("│ ", min(n.nest, 6))
	t := "┄ turn " + strconv.Itoa(n.turn) + " "
	if n.turn == turnUnknown {
		t = "┄ turn … " // the turns before it are still loading
	}
	if date := n.at.Local().Format("2006-01-02 15:04") + " "; !n.at.IsZero() && width(rail)+width(t)+width(date)+2 <= p.w {
		t += date
	}
	if fill := p.w - width(rail) - width(t); fill > 0 {
		t += strings.Repeat("┄", fill)
	}
	row := th.Rail.Render(rail) + th.Muted.Render(trunc(t, max(p.w-width(rail), 1)))
	p.rows[k] = row
	return row
}

// wordsWanted are the turn rows on screen whose words are neither read
// nor being read; they are marked as being read.
func (p *timelinePane) wordsWanted() []string {
	t := p.tree
	if p.h <= 0 {
		return nil
	}
	if p.words == nil {
		p.words, p.loadingWords = map[string]string{}, map[string]string{}
	}
	var ids []string
	lines := 0
	for r := p.off; r < len(t.rows) && lines < p.h; r++ {
		n := t.nodes[t.rows[r]]
		lines++
		if !n.turnStart {
			continue
		}
		lines++
		if _, ok := p.words[n.id]; ok {
			continue
		}
		if _, ok := p.loadingWords[n.id]; ok {
			continue
		}
		p.loadingWords[n.id] = ""
		ids = append(ids, n.id)
	}
	return ids
}

// takeWords keeps the customer's words read for turn rows.
func (p *timelinePane) takeWords(words map[string]string) {
	for id, w := range words {
		p.words[id] = w
		delete(p.loadingWords, id)
	}
}

// linesTo is how many lines rows off..r take (turn headers included).
func (p *timelinePane) linesTo(r int) int {
	t, n := p.tree, 0
	for i := p.off; i <= r && i < len(t.rows); i++ {
		n++
		if t.nodes[t.rows[i]].turnStart {
			n++
		}
	}
	return n
}

// maxOff is the largest offset that still fills the pane.
func (p *timelinePane) maxOff() int {
	t, lines := p.tree, 0
	for r := len(t.rows) - 1; r >= 0; r-- {
		lines++
		if t.nodes[t.rows[r]].turnStart {
			lines++
		}
		if lines > p.h {
			return r + 1
		}
	}
	return 0
}

// wordsMsg brings the customer's words of turn rows.
type wordsMsg struct {
	gen    int
	thread string
	words  map[string]string
}

// wantWords asks for the words of the turn rows on screen not yet read.
func (m *Model) wantWords() tea.Cmd {
	if m.sess.thread == "" {
		return nil
	}
	ids := m.timeline.wordsWanted()
	if len(ids) == 0 {
		return nil
	}
	ctx, src, b, gen, ch := m.sess.ctx, m.sess.deps.Source, m.sess.deps.Backend, m.sess.gen, m.chain()
	thread := ch.Thread
	return func() tea.Msg {
		out := make(map[string]string, len(ids))
		for _, id := range ids {
			if b == nil {
				out[id] = readSourceWords(ctx, src, ch, id)
				continue
			}
			out[id] = readWords(ctx, b, thread, id)
		}
		return wordsMsg{gen: gen, thread: thread, words: out}
	}
}

// readSourceWords is what a read-only source's turn at id started with:
// the newest human message of its messages channel or, as a LangGraph
// input checkpoint holds no messages yet, of the messages its superstep
// writes (the input's own).
func readSourceWords(ctx context.Context, src browse.Source, ch browse.Chain, id string) string {
	cp, err := src.Checkpoint(ctx, ch, id)
	if err != nil {
		return "(unreadable: " + termtext.Line(err.Error()) + ")"
	}
	v, _ := cp.Value("messages")
	if w, ok := newestHuman(v); ok {
		return w
	}
	tws, err := src.Writes(ctx, ch, id)
	if err != nil {
		return "(unreadable: " + termtext.Line(err.Error()) + ")"
	}
	for _, tw := range tws {
		for _, w := range tw.Writes {
			if w.Channel != "messages" || w.Kind != "" {
				continue
			}
			if _, one := w.Value.(map[string]any); one {
				w.Value = []any{w.Value} // add_messages takes one message too
			}
			if words, ok := newestHuman(w.Value); ok {
				return words
			}
		}
	}
	return ""
}

// newestHuman is the newest human message of v, a LangChain message list,
// as a turn row shows it.
func newestHuman(v any) (string, bool) {
	msgs, _ := browse.Messages(v)
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "human" {
			text, _ := clipRunes(msgs[i].Content, maxWords)
			return termtext.Line(strings.Join(strings.Fields(text), " ")), true
		}
	}
	return "", false
}

// readWords is the customer's message that started a turn at id: the
// newest user message of its state.
func readWords(ctx context.Context, b Backend, thread, id string) string {
	cp, err := b.Get(ctx, thread, num(id))
	if err != nil {
		return "(unreadable: " + termtext.Line(err.Error()) + ")"
	}
	s, err := ticket.Decode(cp.Values, "messages")
	if err != nil {
		return "(unreadable state)"
	}
	for i := len(s.Messages) - 1; i >= 0; i-- {
		if s.Messages[i].Role == ticket.RoleUser {
			w, _ := clipRunes(strings.Join(strings.Fields(s.Messages[i].Content), " "), maxWords)
			return termtext.Line(w)
		}
	}
	return "(no message)"
}

func (m *Model) onWords(msg wordsMsg) tea.Cmd {
	if msg.gen != m.sess.gen || msg.thread != m.sess.thread || m.timeline.words == nil {
		return nil
	}
	m.timeline.takeWords(msg.words)
	return m.wantWords() // the screen may have moved on meanwhile
}

// --- keys ---

// onNavKey handles the navigation keys; ok is false for any other key.
func (m *Model) onNavKey(msg tea.KeyMsg) (cmd tea.Cmd, ok bool) {
	k := m.keys
	switch {
	case key.Matches(msg, k.TurnPrev):
		return m.jumpTurn(-1), true
	case key.Matches(msg, k.TurnNext):
		return m.jumpTurn(1), true
	case key.Matches(msg, k.Goto):
		return m.openPrompt(promptGoto), true
	case key.Matches(msg, k.Search):
		return m.openPrompt(promptSearch), true
	case key.Matches(msg, k.SearchNext):
		return m.nextHit(1), true
	case key.Matches(msg, k.SearchPrev):
		return m.nextHit(-1), true
	case key.Matches(msg, k.Zoom):
		m.nav.toggleZoom()
		m.relayout()
		return m.wantWords(), true
	case key.Matches(msg, k.Trace):
		return m.openTrace(), true
	}
	return nil, false
}

// afterNavKey lays the screen out again when a key changed which pane is
// zoomed.
func (m *Model) afterNavKey() {
	if m.nav.zoom && m.zoomedPane() != m.nav.zoomSized {
		m.relayout()
	}
}

// jumpTurn moves to the first checkpoint of the previous turn (dir < 0:
// the start of the turn under the cursor, or the one before when already
// there) or of the next turn on the branch.
func (m *Model) jumpTurn(dir int) tea.Cmd {
	t := m.timeline.tree
	if t.nodes[t.cursor] == nil {
		return nil
	}
	id := t.cursor
	for {
		if dir < 0 {
			id = t.parentOf(id)
		} else {
			id = t.preferred(id)
		}
		if id == "" {
			if dir < 0 {
				return m.setFlash("no earlier turn on this branch", false)
			}
			return m.setFlash("no later turn on this branch", false)
		}
		if t.nodes[id].turnStart {
			t.jump(id)
			return m.cursorMoved()
		}
	}
}

// gotoCheckpoint puts the cursor on the checkpoint the text names (@80 or
// 80).
func (m *Model) gotoCheckpoint(text string) tea.Cmd {
	s := strings.TrimSpace(text)
	if strings.HasPrefix(s, "#") {
		return m.setFlash(fmt.Sprintf("%s names a message; a checkpoint is @N (: @80)", termtext.Line(s)), true)
	}
	if m.sess.readOnly() {
		if err := m.timeline.jumpPrefix(strings.TrimPrefix(s, "@"), m.sess.thread); err != nil {
			return m.setFlash(termtext.Line(err.Error()), true)
		}
		return m.cursorMoved()
	}
	n, err := strconv.ParseInt(strings.TrimPrefix(s, "@"), 10, 64)
	if err != nil || n <= 0 {
		return m.setFlash(fmt.Sprintf("not a checkpoint: %q; type @80 or 80", termtext.Line(s)), true)
	}
	id := idOf(n)
	if !m.timeline.jump(id) {
		if m.timeline.loading {
			return m.setFlash(fmt.Sprintf("@%s is not loaded yet (the timeline is still loading): try again in a moment", id), true)
		}
		return m.setFlash(fmt.Sprintf("no checkpoint @%s on thread %s (it has @1–@%s)", id, termtext.Name(m.sess.thread), m.timeline.tree.maxID), true)
	}
	return m.cursorMoved()
}

// --- the : and / prompt ---

type promptKind int

const (
	promptGoto promptKind = iota
	promptSearch
)

// navPrompt is the one-line input of : and /, in the composer's row. The
// search prompt steps through the earlier queries (searchState.history)
// with ↑ and ↓: hist is the one shown (len(history): the line typed,
// kept in draft).
type navPrompt struct {
	kind  promptKind
	in    textinput.Model
	keys  promptKeys
	hist  int
	draft string
}

type promptKeys struct{ Submit, Cancel, Older, Newer key.Binding }

var promptKeyTable = keyTable[promptKeys]{
	helpRow(0, []string{"enter"}, "go", func(k *promptKeys) *key.Binding { return &k.Submit }).inFooter(1, ""),
	helpRow(0, []string{"up"}, "earlier search", func(k *promptKeys) *key.Binding { return &k.Older }).inFooter(2, ""),
	helpRow(0, []string{"down"}, "later search", func(k *promptKeys) *key.Binding { return &k.Newer }),
	helpRow(0, []string{"esc", "ctrl+c"}, "cancel", func(k *promptKeys) *key.Binding { return &k.Cancel }).labelled("esc").inFooter(3, ""),
}

func newPromptKeys(kind promptKind) promptKeys {
	k := promptKeyTable.bind()
	if kind != promptSearch {
		k.Older.SetEnabled(false)
		k.Newer.SetEnabled(false)
	}
	return k
}

func (k promptKeys) ShortHelp() []key.Binding  { return promptKeyTable.footer(k) }
func (k promptKeys) FullHelp() [][]key.Binding { return promptKeyTable.fullHelp(k, 1, nil) }

func (m *Model) openPrompt(kind promptKind) tea.Cmd {
	if m.sess.thread == "" || m.timeline.tree.len() == 0 {
		return m.setFlash("open a thread with checkpoints first (t)", true)
	}
	in := newInput()
	in.CharLimit = 200
	in.Prompt = ": "
	in.Placeholder = "@80 or 80: go to a checkpoint"
	if kind == promptSearch {
		// Empty: typing starts a new query; ↑ brings back the last one.
		in.Prompt = "/ "
		in.Placeholder = "search words in every branch's messages, this checkpoint's state and events (↑ earlier)"
	}
	in.PromptStyle, in.TextStyle, in.PlaceholderStyle, in.Cursor.Style = m.theme.Prompt, m.theme.Text, m.theme.Placeholder, m.theme.Accent
	return m.nav.openPrompt(kind, in)
}

// openPrompt opens the : or / prompt with its input.
func (n *navState) openPrompt(kind promptKind, in textinput.Model) tea.Cmd {
	n.prompt = &navPrompt{kind: kind, in: in, keys: newPromptKeys(kind), hist: len(n.search.history)}
	return n.prompt.in.Focus()
}

// onPromptKey passes a key to the open prompt and does what it submits.
func (m *Model) onPromptKey(msg tea.KeyMsg) tea.Cmd {
	kind, text, cmd := m.nav.promptKey(msg)
	switch {
	case text == "":
		return cmd
	case kind == promptGoto:
		return m.gotoCheckpoint(text)
	}
	return m.startSearch(text)
}

// promptKey takes a key while the prompt is open: esc closes it, enter
// closes it and returns its kind and text ("": nothing to do), ↑ and ↓
// step through the earlier searches; anything else is typed.
func (n *navState) promptKey(msg tea.KeyMsg) (promptKind, string, tea.Cmd) {
	p := n.prompt
	switch {
	case key.Matches(msg, p.keys.Cancel):
		n.prompt = nil
		return p.kind, "", nil
	case key.Matches(msg, p.keys.Submit):
		n.prompt = nil
		return p.kind, strings.TrimSpace(p.in.Value()), nil
	case key.Matches(msg, p.keys.Older, p.keys.Newer):
		h := n.search.history
		at := p.hist - 1
		if key.Matches(msg, p.keys.Newer) {
			at = p.hist + 1
		}
		if at < 0 || at > len(h) {
			return p.kind, "", nil
		}
		if p.hist == len(h) {
			p.draft = p.in.Value()
		}
		p.hist = at
		if at == len(h) {
			p.in.SetValue(p.draft)
		} else {
			p.in.SetValue(h[at])
		}
		p.in.CursorEnd()
		return p.kind, "", nil
	}
	return p.kind, "", p.update(msg)
}

// update passes a message to the prompt's input (a key, a cursor blink).
// updatePrompt passes msg (a cursor blink) to the open prompt.
func (n *navState) updatePrompt(msg tea.Msg) tea.Cmd { return n.prompt.update(msg) }

func (p *navPrompt) update(msg tea.Msg) tea.Cmd {
	var cmd tea.Cmd
	p.in, cmd = p.in.Update(msg)
	return cmd
}

func (m *Model) viewPrompt() string {
	return fit(" "+m.nav.prompt.in.View(), m.w)
}

// --- zoom ---

// zoomedPane is what + shows full screen: the focused pane, or -1 for the
// timeline.
func (m *Model) zoomedPane() int {
	if m.focus == focusTimeline {
		return -1
	}
	return m.focusedPane()
}

// zoomSizes gives the zoomed pane the whole body (relayout calls it).
func (m *Model) zoomSizes() {
	if !m.nav.zoom {
		return
	}
	p := m.zoomedPane()
	m.nav.zoomedTo(p)
	inner := m.layout.paneInner
	if p < 0 {
		m.timeline.SetSize(m.w-2, inner)
		m.timeline.ensureVisible()
		return
	}
	m.content.zoom(p, m.w-2, inner)
	m.syncPanes()
}

// zoomedCols is the body when a pane is zoomed.
func (m *Model) zoomedCols() [][]string {
	l := m.layout
	p := m.zoomedPane()
	var s string
	if p < 0 {
		s = frame(m.timeline.title()+" · + back", m.timeline.View(), m.w, l.bodyH, true, m.border(true), m.theme.PaneTitleFocused)
	} else {
		s = m.framePane(p, m.w, true)
	}
	return [][]string{strings.Split(s, "\n")}
}

// --- the summary and the question, pinned (item 8) ---

// convPins are the lines pinned above the conversation's tail: the
// summary's one-line header and the question the current reply answers.
func (m *Model) convPins(w int) []string {
	d := m.cur
	if d == nil || d.stateErr != nil || w < 4 {
		return nil
	}
	key := pinKey{d: d, w: w, theme: m.themeGen, unfold: m.content.unfold, orig: m.nav.orig[reqKey(d)].text}
	if at := m.nav.orig[reqKey(d)].at; at != 0 {
		key.origAt = "@" + strconv.FormatInt(at, 10)
	}
	if pins, ok := m.nav.pinned(key); ok {
		return pins
	}
	th := m.theme
	var out []string
	s := d.state
	if sm := s.Summary; sm != nil {
		t := fmt.Sprintf("▤ summary #%d–#%d · %d msgs · history v%d", sm.From, sm.To, sm.Count, sm.HistoryVersion)
		if m.content.unfold {
			t += " · shown below · z folds"
		} else {
			t += " · z unfolds"
		}
		out = append(out, th.SummaryTitle.Render(trunc(t, w)))
	}
	if r := s.Request; r != nil {
		text, where := r.Text, ""
		if inSummary(s, r.Index) {
			where = " (in the summary)"
			if key.orig != "" {
				text, where = key.orig, " (summary, "+key.origAt+")"
				if key.origAt == "" {
					where = " (in the summary)"
				}
			}
		}
		label := fmt.Sprintf("? answering #%d%s: ", r.Index, where)
		words := termtext.Line(strings.Join(strings.Fields(text), " "))
		out = append(out, th.SpeakerUser.Render(label)+th.Text.Render(trunc(words, max(w-width(label), 1))))
	}
	if len(out) > 0 {
		out = append(out, th.Muted.Render(strings.Repeat("╌", w)))
	}
	m.nav.pin(key, out)
	return out
}

type pinKey struct {
	d      *detail
	w      int
	theme  int
	unfold bool
	orig   string
	origAt string
}

// origKey is a question: every checkpoint of a turn shares it.
type origKey struct {
	index int
	text  string
}

func reqKey(d *detail) origKey {
	if d.state.Request == nil {
		return origKey{}
	}
	return origKey{d.state.Request.Index, d.state.Request.Text}
}

// inSummary: message index went into the summary (it is not in the tail).
func inSummary(s ticket.State, index int) bool {
	if s.Summary == nil {
		return false
	}
	for _, msg := range s.Messages {
		if msg.Index == index {
			return false
		}
	}
	return true
}

type origMsg struct {
	gen    int
	thread string
	key    origKey
	orig   storedQuestion
}

// storedQuestion is a question as the store keeps it, apart from the
// checkpoints' tail.
type storedQuestion struct {
	text string
	at   int64 // the checkpoint that stored it first
}

// wantOriginal reads the question the current reply answers when it went
// into the summary: the original message as stored (Store.MessagesIn of
// its one index, one read; Engine.Message would list the whole branch to
// pick it).
func (m *Model) wantOriginal() tea.Cmd {
	d := m.cur
	if d == nil || d.stateErr != nil || d.state.Request == nil || !inSummary(d.state, d.state.Request.Index) {
		return nil
	}
	k := reqKey(d)
	if _, ok := m.nav.orig[k]; ok {
		return nil
	}
	r, ok := m.sess.deps.Backend.(messageIndex)
	if !ok {
		return nil
	}
	m.nav.askQuestion(k)
	ctx, gen, thread := m.sess.ctx, m.sess.gen, m.sess.thread
	return func() tea.Msg {
		ms, err := r.MessagesIn(ctx, thread, int64(k.index), int64(k.index))
		if err != nil {
			return origMsg{gen: gen, thread: thread, key: k}
		}
		// Branches may hold different messages with this index: the one
		// the request quotes is this branch's.
		for _, sm := range ms {
			var msg ticket.Message
			if json.Unmarshal(sm.Body, &msg) == nil && msg.Role == ticket.RoleUser && strings.TrimSpace(msg.Content) == strings.TrimSpace(k.text) {
				return origMsg{gen: gen, thread: thread, key: k, orig: storedQuestion{text: msg.Content, at: sm.CheckpointID}}
			}
		}
		return origMsg{gen: gen, thread: thread, key: k}
	}
}

func (m *Model) onOriginal(msg origMsg) tea.Cmd {
	m.nav.answerQuestion(msg, msg.gen == m.sess.gen && msg.thread == m.sess.thread)
	return nil
}

// traced marks a resume trace's read started (on) or ended.
func (n *navState) traced(on bool) { n.tracing = on }

// toggleZoom shows the focused pane full screen (+), or the columns again.
func (n *navState) toggleZoom() { n.zoom = !n.zoom }

// zoomedTo is the pane the zoom was laid out for (-1: the timeline).
func (n *navState) zoomedTo(p int) { n.zoomSized = p }

// pinned is the pinned lines rendered for key, if they were.
func (n *navState) pinned(key pinKey) ([]string, bool) {
	return n.pins, key == n.pinKey && n.pins != nil
}

// pin keeps the pinned lines rendered for key.
func (n *navState) pin(key pinKey, lines []string) { n.pinKey, n.pins = key, lines }

// askQuestion marks question k's read started.
func (n *navState) askQuestion(k origKey) {
	if n.orig == nil {
		n.orig = map[origKey]storedQuestion{}
	}
	n.orig[k] = storedQuestion{} // asked
	n.origLoading++
}

// answerQuestion ends a question's read, keeping what it read when
// current (the open thread's, this opening's).
func (n *navState) answerQuestion(msg origMsg, current bool) {
	n.origLoading = max(n.origLoading-1, 0)
	if current && n.orig != nil {
		n.orig[msg.key] = msg.orig
	}
}

// navState is the Model's part for this file, search.go and trace.go.
type navState struct {
	prompt  *navPrompt
	zoom    bool
	tracing bool // a resume trace is being read (trace.go)
	// origLoading counts reads of questions in flight.
	origLoading int
	zoomSized   int
	search      searchState
	orig        map[origKey]storedQuestion // questions gone into the summary
	pinKey      pinKey
	pins        []string
}
