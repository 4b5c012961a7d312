package tui

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

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

// wantWords asks for the words of the turn rows on screen not yet read,
// of the chain open in s.
func (p *timelinePane) wantWords(s *session) tea.Cmd {
	if s.thread == "" {
		return nil
	}
	ids := p.wordsWanted()
	if len(ids) == 0 {
		return nil
	}
	ctx, src, b, ext, gen, ch := s.ctx, s.deps.Source, s.deps.Backend, s.deps.Extension, s.gen, s.chain()
	thread := ch.Thread
	return func() tea.Msg {
		out := make(map[string]string, len(ids))
		for _, id := range ids {
			if b == nil {
				out[id] = readSourceWords(ctx, src, ch, id)
				continue
			}
			out[id] = readWords(ctx, b, ext, thread, id)
		}
		return wordsMsg{gen: gen, thread: thread, words: out}
	}
}

// onWords keeps the words read for the chain open in s, and asks for
// those of the rows the screen moved to meanwhile.
func (p *timelinePane) onWords(msg wordsMsg, s *session) tea.Cmd {
	if msg.gen != s.gen || msg.thread != s.thread || p.words == nil {
		return nil
	}
	p.takeWords(msg.words)
	return p.wantWords(s)
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

// readWords is the input that started a turn at id: the newest user
// message of its state, through the graph's extension (ext) or, with
// none, of its conversation by shape, else what the input wrote.
func readWords(ctx context.Context, b Backend, ext Extension, thread, id string) string {
	cp, err := b.Get(ctx, thread, num(id))
	if err != nil {
		return "(unreadable: " + termtext.Line(err.Error()) + ")"
	}
	var text string
	var ok bool
	if ext != nil {
		if text, ok, err = ext.Input(cp.Values); err != nil {
			return "(unreadable state)"
		}
	} else {
		text, ok = shapeInput(cp)
	}
	if !ok {
		return "(no message)"
	}
	w, _ := clipRunes(strings.Join(strings.Fields(text), " "), maxWords)
	return termtext.Line(w)
}

// --- the component ---

// navState is finding the way in the thread view (this file, search.go
// and trace.go): { } from turn to turn, : to a checkpoint, / to search and
// n/N through its hits, + to zoom a pane, o to a resume's trace, and the
// summary and question pinned above the conversation. A component: its
// Update takes its keys and messages in a navMsg (the tree it reads) and
// returns navNews, what the root does with the other components (it moves
// the timeline's cursor, lays out, opens a dialog).
type navState struct {
	sess     *session
	keys     navKeys
	theme    *themes.Theme
	themeGen int
	w        int // the prompt's row
	prompt   *navPrompt
	zoom     bool
	tracing  bool // a resume trace is being read (trace.go)
	// origLoading counts reads of questions in flight.
	origLoading int
	zoomSized   int
	search      searchState
	orig        map[origKey]Quoted // messages the pins quote, read from the store (Quoter)
	pinKey      pinKey
	pins        []string
}

func newNavState(s *session, k threadKeys) navState {
	return navState{sess: s, keys: newNavKeys(k)}
}

// navKeys are navigation's keys: the thread view's (rebindable) rows of
// its helpNav group, copied by newNavKeys.
type navKeys struct {
	TurnPrev, TurnNext, Goto, Search, SearchNext, SearchPrev, Zoom, Trace key.Binding
}

func newNavKeys(k threadKeys) navKeys {
	return navKeys{TurnPrev: k.TurnPrev, TurnNext: k.TurnNext, Goto: k.Goto, Search: k.Search,
		SearchNext: k.SearchNext, SearchPrev: k.SearchPrev, Zoom: k.Zoom, Trace: k.Trace}
}

// navKeyTable: every binding is the thread view's (newNavKeys copies
// them, threadKeyTable declares them); none is in the footer.
var navKeyTable = keyTable[navKeys]{
	helpRow(0, nil, "", func(k *navKeys) *key.Binding { return &k.TurnPrev }),
	helpRow(0, nil, "", func(k *navKeys) *key.Binding { return &k.TurnNext }),
	helpRow(0, nil, "", func(k *navKeys) *key.Binding { return &k.Goto }),
	helpRow(0, nil, "", func(k *navKeys) *key.Binding { return &k.Search }),
	helpRow(0, nil, "", func(k *navKeys) *key.Binding { return &k.SearchNext }),
	helpRow(0, nil, "", func(k *navKeys) *key.Binding { return &k.SearchPrev }),
	helpRow(0, nil, "", func(k *navKeys) *key.Binding { return &k.Zoom }),
	helpRow(0, nil, "", func(k *navKeys) *key.Binding { return &k.Trace }),
}

func (k navKeys) ShortHelp() []key.Binding  { return navKeyTable.footer(k) }
func (k navKeys) FullHelp() [][]key.Binding { return navKeyTable.fullHelp(k, 1, nil) }

// ShortHelp is the open prompt's keys (the footer while it is open);
// navigation's own keys have no place in the footer.
func (n *navState) ShortHelp() []key.Binding {
	if n.prompt != nil {
		return n.prompt.keys.ShortHelp()
	}
	return n.keys.ShortHelp()
}

func (n *navState) FullHelp() [][]key.Binding { return n.keys.FullHelp() }

// SetSize takes the prompt's row: w wide.
func (n *navState) SetSize(w, _ int) { n.w = w }

// setTheme takes the theme the prompt and the pins are drawn in; gen
// changes with it.
func (n *navState) setTheme(th *themes.Theme, gen int) { n.theme, n.themeGen = th, gen }

// prompting is whether the : or / prompt is open (it takes the keys).
func (n *navState) prompting() bool { return n.prompt != nil }

// View is the prompt's row.
func (n *navState) View() string {
	if n.prompt == nil {
		return fit("", n.w)
	}
	return fit(" "+n.prompt.in.View(), n.w)
}

// navMsg is a message for navigation with what of the root it reads: the
// timeline's tree (read only: navigation says where the cursor goes, the
// root moves it), whether the history is still loading, and the
// checkpoint shown.
type navMsg struct {
	tea.Msg
	tree    *tree
	loading bool
	cur     *detail
}

// navNews is what navigation asks of the root: handled whether the key
// was navigation's; jump a checkpoint to put the cursor on and show; say
// a status line; zoomed that + changed the layout; byPrefix (prefix) and
// sourceSearch a goto and a search on a read-only source, which the root
// does (readonly.go); dialog one to open when none is.
type navNews struct {
	handled      bool
	jump         string
	say          string
	sayErr       bool
	zoomed       bool
	byPrefix     bool
	prefix       string
	sourceSearch string
	dialog       dialog
}

func said(text string, isErr bool) navNews { return navNews{handled: true, say: text, sayErr: isErr} }

// Update takes navigation's keys (the prompt's while it is open), a
// search's and a trace's answers, the dialog's goHitMsg and a question
// read; anything else goes to the open prompt (a cursor blink).
func (n *navState) Update(msg tea.Msg) (navNews, tea.Cmd) {
	in, ok := msg.(navMsg)
	if !ok {
		in = navMsg{Msg: msg, tree: newTree()}
	}
	switch msg := in.Msg.(type) {
	case searchMsg:
		return n.onSearch(msg), nil
	case goHitMsg:
		return n.goHit(msg.i, in.tree), nil
	case traceMsg:
		return n.onTrace(msg), nil
	case origMsg:
		n.answerQuestion(msg, msg.gen == n.sess.gen && msg.thread == n.sess.thread)
		return navNews{handled: true}, nil
	case tea.KeyMsg:
		if n.prompt != nil {
			return n.promptKey(msg, in)
		}
		return n.key(msg, in)
	}
	if n.prompt != nil {
		return navNews{}, n.prompt.update(in.Msg)
	}
	return navNews{}, nil
}

// key handles the navigation keys; news.handled is false for any other
// key.
func (n *navState) key(msg tea.KeyMsg, in navMsg) (navNews, tea.Cmd) {
	k := n.keys
	switch {
	case key.Matches(msg, k.TurnPrev):
		return n.jumpTurn(in.tree, -1), nil
	case key.Matches(msg, k.TurnNext):
		return n.jumpTurn(in.tree, 1), nil
	case key.Matches(msg, k.Goto):
		return n.openPrompt(promptGoto, in.tree)
	case key.Matches(msg, k.Search):
		return n.openPrompt(promptSearch, in.tree)
	case key.Matches(msg, k.SearchNext):
		return n.nextHit(1, in.tree), nil
	case key.Matches(msg, k.SearchPrev):
		return n.nextHit(-1, in.tree), nil
	case key.Matches(msg, k.Zoom):
		n.zoom = !n.zoom
		return navNews{handled: true, zoomed: true}, nil
	case key.Matches(msg, k.Trace):
		return n.openTrace(in.tree)
	}
	return navNews{}, nil
}

// zoomStale is whether the zoom was laid out for another pane than p (the
// focus moved while zoomed).
func (n *navState) zoomStale(p int) bool { return n.zoom && p != n.zoomSized }

// jumpTurn moves to the first checkpoint of the previous turn (dir < 0:
// the start of the turn under the cursor, or the one before when already
// there) or of the next turn on the branch.
func (n *navState) jumpTurn(t *tree, dir int) navNews {
	if t.nodes[t.cursor] == nil {
		return navNews{handled: true}
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
				return said("no earlier turn on this branch", false)
			}
			return said("no later turn on this branch", false)
		}
		if t.nodes[id].turnStart {
			return navNews{handled: true, jump: id}
		}
	}
}

// gotoCheckpoint puts the cursor on the checkpoint the text names (@80 or
// 80).
func (n *navState) gotoCheckpoint(text string, in navMsg) navNews {
	s := strings.TrimSpace(text)
	if strings.HasPrefix(s, "#") {
		return said(fmt.Sprintf("%s names a message; a checkpoint is @N (: @80)", termtext.Line(s)), true)
	}
	if n.sess.deps.Backend == nil { // a read-only source: ids, prefixes
		return navNews{handled: true, byPrefix: true, prefix: strings.TrimPrefix(s, "@")}
	}
	num, err := strconv.ParseInt(strings.TrimPrefix(s, "@"), 10, 64)
	if err != nil || num <= 0 {
		return said(fmt.Sprintf("not a checkpoint: %q; type @80 or 80", termtext.Line(s)), true)
	}
	id := idOf(num)
	if _, ok := in.tree.nodes[id]; !ok {
		if in.loading {
			return said(fmt.Sprintf("@%s is not loaded yet (the timeline is still loading): try again in a moment", id), true)
		}
		return said(fmt.Sprintf("no checkpoint @%s on thread %s (it has @1–@%s)", id, termtext.Name(n.sess.thread), in.tree.maxID), true)
	}
	return navNews{handled: true, jump: id}
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

// openPrompt opens the : or / prompt, on a thread with checkpoints.
func (n *navState) openPrompt(kind promptKind, t *tree) (navNews, tea.Cmd) {
	if n.sess.thread == "" || t.len() == 0 {
		return said("open a thread with checkpoints first (t)", true), nil
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
	if th := n.theme; th != nil {
		in.PromptStyle, in.TextStyle, in.PlaceholderStyle, in.Cursor.Style = th.Prompt, th.Text, th.Placeholder, th.Accent
	}
	n.prompt = &navPrompt{kind: kind, in: in, keys: newPromptKeys(kind), hist: len(n.search.history)}
	return navNews{handled: true}, n.prompt.in.Focus()
}

// promptKey takes a key while the prompt is open: esc closes it, enter
// closes it and goes where it says or searches, ↑ and ↓ step through the
// earlier searches; anything else is typed.
func (n *navState) promptKey(msg tea.KeyMsg, in navMsg) (navNews, tea.Cmd) {
	p := n.prompt
	switch {
	case key.Matches(msg, p.keys.Cancel):
		n.prompt = nil
	case key.Matches(msg, p.keys.Submit):
		n.prompt = nil
		text := strings.TrimSpace(p.in.Value())
		switch {
		case text == "":
		case p.kind == promptGoto:
			return n.gotoCheckpoint(text, in), nil
		default:
			return n.startSearch(text, in)
		}
	case key.Matches(msg, p.keys.Older, p.keys.Newer):
		n.stepHistory(key.Matches(msg, p.keys.Newer))
	default:
		return navNews{handled: true}, p.update(msg)
	}
	return navNews{handled: true}, nil
}

// stepHistory shows the earlier search (newer: the later one) in the
// prompt; past the newest, the line typed.
func (n *navState) stepHistory(newer bool) {
	p, h := n.prompt, n.search.history
	at := p.hist - 1
	if newer {
		at = p.hist + 1
	}
	if at < 0 || at > len(h) {
		return
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
}

// update passes a message to the prompt's input (a key, a cursor blink).
func (p *navPrompt) update(msg tea.Msg) tea.Cmd {
	var cmd tea.Cmd
	p.in, cmd = p.in.Update(msg)
	return cmd
}

// zoomedTo is the pane the zoom was laid out for (-1: the timeline).
func (n *navState) zoomedTo(p int) { n.zoomSized = p }

// --- the summary and the question, pinned (item 8) ---

// convPins are the lines pinned above the conversation's tail of d, w
// wide: the extension's Pins (the ticket's: its summary's one-line header
// and the question the current reply answers), a rule under them.
func (n *navState) convPins(d *detail, w int, unfold bool) []string {
	p, ok := d.pinner()
	if !ok || d.stateErr != nil || w < 4 || n.theme == nil {
		return nil
	}
	k, _ := quoteOf(d)
	q := n.orig[k]
	key := pinKey{d: d, w: w, theme: n.themeGen, unfold: unfold, quoted: q}
	if key == n.pinKey && n.pins != nil {
		return n.pins
	}
	sh := Shown{Checkpoint: d.cp, Value: d.value, Parent: d.parent, ParentValue: d.pvalue, Theme: n.theme, Width: w, Unfold: unfold, Quoted: q}
	out := p.Pins(sh)
	if len(out) > 0 {
		out = append(out, n.theme.Muted.Render(strings.Repeat("╌", w)))
	}
	n.pinKey, n.pins = key, out
	return out
}

type pinKey struct {
	d      *detail
	w      int
	theme  int
	unfold bool
	quoted Quoted
}

// origKey is a quoted message: every checkpoint of a turn shares it.
type origKey struct {
	index int
	text  string
}

// pinner is d's extension's Pinner, if it has one.
func (d *detail) pinner() (Pinner, bool) {
	if d == nil || d.ext == nil {
		return nil, false
	}
	p, ok := d.ext.(Pinner)
	return p, ok
}

// quoteOf is the stored message d's pins quote and d no longer holds
// (Quoter), if any.
func quoteOf(d *detail) (origKey, bool) {
	qr, ok := d.ext.(Quoter)
	if !ok || d.stateErr != nil {
		return origKey{}, false
	}
	index, text, ok := qr.Quote(Shown{Checkpoint: d.cp, Value: d.value})
	if !ok {
		return origKey{}, false
	}
	return origKey{index, text}, true
}

type origMsg struct {
	gen    int
	thread string
	key    origKey
	orig   Quoted
}

// wantOriginal reads the message d's pins quote when d no longer holds
// it (Quoter: the ticket's question, gone into the summary): the
// original as stored (Store.MessagesIn of its one index, one read;
// Engine.Message would list the whole branch to pick it).
func (n *navState) wantOriginal(d *detail) tea.Cmd {
	if _, ok := d.pinner(); !ok {
		return nil
	}
	k, ok := quoteOf(d)
	if !ok {
		return nil
	}
	if _, ok := n.orig[k]; ok {
		return nil
	}
	r, ok := n.sess.deps.Backend.(messageIndex)
	if !ok {
		return nil
	}
	qr := d.ext.(Quoter)
	n.askQuestion(k)
	ctx, gen, thread := n.sess.ctx, n.sess.gen, n.sess.thread
	return func() tea.Msg {
		ms, err := r.MessagesIn(ctx, thread, int64(k.index), int64(k.index))
		if err != nil {
			return origMsg{gen: gen, thread: thread, key: k}
		}
		// Branches may hold different messages with this index: the one
		// quoted is this branch's.
		for _, sm := range ms {
			if text, ok := qr.Quoted(k.text, sm.Body); ok {
				return origMsg{gen: gen, thread: thread, key: k, orig: Quoted{Text: text, At: sm.CheckpointID}}
			}
		}
		return origMsg{gen: gen, thread: thread, key: k}
	}
}

// askQuestion marks question k's read started.
func (n *navState) askQuestion(k origKey) {
	if n.orig == nil {
		n.orig = map[origKey]Quoted{}
	}
	n.orig[k] = Quoted{} // asked
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
