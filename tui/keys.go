package tui

import (
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/key"
)

// Keys follow the Bubble Tea apps people already know (gh-dash,
// soft-serve, lazygit): j/k and the arrows move in every list and pane,
// h/l scrub, ? opens the help, q quits. What cannot be undone sits on a
// key that is not hit by accident (X, ctrl+k) and asks first. Every key of
// the thread view can be rebound in the config file's [keys] table, under
// the name keyNames gives it.

// bind is a binding whose help label is written from its keys, so a
// rebound key shows as itself in the footer, the help and README.
func bind(desc string, keys ...string) key.Binding {
	return key.NewBinding(key.WithKeys(keys...), key.WithHelp(keyLabel(keys), desc))
}

// keyLabel writes keys the way the help shows them: ←/h, pgup/ctrl+u.
func keyLabel(keys []string) string {
	names := map[string]string{"left": "←", "right": "→", "up": "↑", "down": "↓", "pgdown": "pgdn", " ": "space"}
	out := make([]string, len(keys))
	for i, k := range keys {
		if n, ok := names[k]; ok {
			k = n
		}
		out[i] = k
	}
	return strings.Join(out, "/")
}

// threadKeys are the keys of the thread view.
type threadKeys struct {
	Prev, Next, First, Last     key.Binding
	BranchPrev, BranchNext      key.Binding
	Up, Down, PageUp, PageDown  key.Binding
	FocusNext, FocusPrev        key.Binding
	TabConv, TabState, TabInsp  key.Binding
	Compose, Fork, Resume, Stop key.Binding
	Kill, Drill, Dismiss        key.Binding
	DraftHelp                   key.Binding // shown in help; the composer handles ctrl+d
	Discard, Approve, Breaks    key.Binding
	Threads, Fold, Theme, Log   key.Binding
	Script                      key.Binding // a lesson's script panel
	Help, Quit                  key.Binding
	Replay, EditState, Mark     key.Binding // parity.go
	Compare, Graph, Prompt      key.Binding
	// nav.go, search.go, trace.go
	TurnPrev, TurnNext, Goto, Search, SearchNext, SearchPrev, Zoom, Trace key.Binding
}

// Help groups: the columns of the ? screen, in order.
const (
	helpScrub  = iota // the timeline's cursor
	helpMove          // rows, pages, panes
	helpRun           // runs, drills, the approval
	helpParity        // replay, edit, compare, graph, prompt
	helpScreen        // other screens, the theme, help and quit
	helpNav           // turns, goto, search, zoom, trace
	helpGroups
)

// keyRow is one key of a key map K: the name `[keys]` rebinds it under
// ("": not rebindable), its help group (a column of ?), its default keys,
// what it does, the field of K it fills, and two optional columns: its
// place and word in the footer (foot; at 0: not in the footer), and what
// it would do when it is off on a read-only source (off; "": on there).
type keyRow[K any] struct {
	name  string
	group int
	keys  []string
	label string // the help's key label, when not keyLabel(keys): "tab" for tab/down
	desc  string
	field func(*K) *key.Binding
	foot  footHint
	off   string
}

// footHint is a key's place in the footer (1 first) and its word there
// ("": the binding as the help shows it); label, when set, is its key
// label there too ("enter" for enter/o).
type footHint struct {
	at          int
	word, label string
}

// row is a key map's row with no footer place, on on a read-only source.
func row[K any](name string, group int, keys []string, desc string, field func(*K) *key.Binding) keyRow[K] {
	return keyRow[K]{name: name, group: group, keys: keys, desc: desc, field: field}
}

// helpRow is a row of a key map that is not rebindable: a dialog's, the
// pager's. A row with no keys is a binding the map's constructor copies
// from another map (the thread view's h/l, as rebound).
func helpRow[K any](group int, keys []string, desc string, field func(*K) *key.Binding) keyRow[K] {
	return row("", group, keys, desc, field)
}

// labelled shows r's keys as label in the help.
func (r keyRow[K]) labelled(label string) keyRow[K] {
	r.label = label
	return r
}

// inFooter puts r at place at of the footer, as word ("": as the help
// shows it).
func (r keyRow[K]) inFooter(at int, word string) keyRow[K] {
	r.foot = footHint{at: at, word: word}
	return r
}

// inFooterAs puts r at place at of the footer as label and word.
func (r keyRow[K]) inFooterAs(at int, label, word string) keyRow[K] {
	r.foot = footHint{at, word, label}
	return r
}

// offReadOnly says what r does, refused on a read-only source.
func (r keyRow[K]) offReadOnly(what string) keyRow[K] {
	r.off = what
	return r
}

// keyTable is the only place a key map's keys are declared: its bindings
// (bind), config names (names), footer (footer), ? screen (fullHelp), the
// keys off on a read-only source (offKeys) and README's tables are all
// read from it, so a key cannot be bound and missing from the help or
// README (TestEveryThreadKeyIsInTheTable,
// TestEveryKeyMapHelpsWithEveryBinding).
type keyTable[K any] []keyRow[K]

// bind is the key map with every row's binding, less the rows with no
// keys (copied by the map's constructor).
func (t keyTable[K]) bind() K {
	var k K
	for _, r := range t {
		switch {
		case len(r.keys) == 0:
		case r.label != "":
			*r.field(&k) = key.NewBinding(key.WithKeys(r.keys...), key.WithHelp(r.label, r.desc))
		default:
			*r.field(&k) = bind(r.desc, r.keys...)
		}
	}
	return k
}

// names are k's rebindable keys by config name, in the table's order.
func (t keyTable[K]) names(k *K) []keyName {
	out := make([]keyName, 0, len(t))
	for _, r := range t {
		if r.name != "" {
			out = append(out, keyName{r.name, r.field(k)})
		}
	}
	return out
}

// fullHelp is k's rows group by group (groups of them), less those keep
// refuses.
func (t keyTable[K]) fullHelp(k K, groups int, keep func(keyRow[K]) bool) [][]key.Binding {
	out := make([][]key.Binding, groups)
	for _, r := range t {
		if keep == nil || keep(r) {
			out[r.group] = append(out[r.group], *r.field(&k))
		}
	}
	return out
}

// footer is k's footer keys in their places, each shortened to its word.
func (t keyTable[K]) footer(k K) []key.Binding { return t.footerOf(k, nil) }

// footerOf is footer less the rows keep refuses.
func (t keyTable[K]) footerOf(k K, keep func(keyRow[K]) bool) []key.Binding {
	rows := slices.DeleteFunc(slices.Clone(t), func(r keyRow[K]) bool { return r.foot.at == 0 || keep != nil && !keep(r) })
	slices.SortStableFunc(rows, func(a, b keyRow[K]) int { return a.foot.at - b.foot.at })
	out := make([]key.Binding, len(rows))
	for i, r := range rows {
		b := *r.field(&k)
		switch {
		case r.foot.label != "":
			b = key.NewBinding(key.WithKeys(b.Keys()...), key.WithHelp(r.foot.label, r.foot.word))
		case r.foot.word != "":
			b = short(b, r.foot.word)
		}
		b.SetEnabled(r.field(&k).Enabled()) // an off key stays out of the footer
		out[i] = b
	}
	return out
}

// offKeys are k's keys that are off on a read-only source, with what each
// would do.
func (t keyTable[K]) offKeys(k K) []offKey {
	var out []offKey
	for _, r := range t {
		if r.off != "" {
			out = append(out, offKey{*r.field(&k), r.off, readOnlyWhy})
		}
	}
	return out
}

// threadKeyRow is one key of the thread view.
type threadKeyRow = keyRow[threadKeys]

// needsStore is why a key that only reads is off on a read-only source.
const needsStore = " (it reads what only a rewind store keeps)"

// threadKeyTable is the thread view's keys. Its order is keyNames' (the
// config's error lists the names in it); FullHelp takes the rows group by
// group. A row with no name is a key another component handles (the
// composer's ctrl+d), listed in ? only where it can be pressed.
var threadKeyTable = keyTable[threadKeys]{
	row("prev", helpScrub, []string{"left", "h"}, "previous checkpoint", func(k *threadKeys) *key.Binding { return &k.Prev }),
	row("next", helpScrub, []string{"right", "l"}, "next checkpoint", func(k *threadKeys) *key.Binding { return &k.Next }),
	row("first", helpScrub, []string{"home", "g"}, "first of branch", func(k *threadKeys) *key.Binding { return &k.First }),
	row("last", helpScrub, []string{"end", "G"}, "last of branch", func(k *threadKeys) *key.Binding { return &k.Last }),
	row("branch_prev", helpScrub, []string{"["}, "previous branch", func(k *threadKeys) *key.Binding { return &k.BranchPrev }),
	row("branch_next", helpScrub, []string{"]"}, "next branch", func(k *threadKeys) *key.Binding { return &k.BranchNext }),
	row("up", helpMove, []string{"up", "k"}, "up: row or scroll", func(k *threadKeys) *key.Binding { return &k.Up }),
	row("down", helpMove, []string{"down", "j"}, "down: row or scroll", func(k *threadKeys) *key.Binding { return &k.Down }),
	row("page_up", helpMove, []string{"pgup", "ctrl+u"}, "page up", func(k *threadKeys) *key.Binding { return &k.PageUp }),
	row("page_down", helpMove, []string{"pgdown", "ctrl+d"}, "page down", func(k *threadKeys) *key.Binding { return &k.PageDown }),
	row("focus_next", helpMove, []string{"tab"}, "next pane", func(k *threadKeys) *key.Binding { return &k.FocusNext }).inFooter(5, "pane"),
	row("focus_prev", helpMove, []string{"shift+tab"}, "previous pane", func(k *threadKeys) *key.Binding { return &k.FocusPrev }),
	row("tab_conversation", helpMove, []string{"1"}, "conversation", func(k *threadKeys) *key.Binding { return &k.TabConv }),
	row("tab_state", helpMove, []string{"2"}, "state", func(k *threadKeys) *key.Binding { return &k.TabState }),
	row("tab_inspector", helpMove, []string{"3"}, "inspector", func(k *threadKeys) *key.Binding { return &k.TabInsp }),
	row("compose", helpRun, []string{"i", "enter"}, "write a message", func(k *threadKeys) *key.Binding { return &k.Compose }).inFooter(1, "write").offReadOnly("writing a message"),
	// The composer handles ctrl+d; the help says what it does there.
	row("", helpRun, []string{"ctrl+d"}, "draft reply (writing)", func(k *threadKeys) *key.Binding { return &k.DraftHelp }),
	row("fork", helpRun, []string{"f"}, "fork here", func(k *threadKeys) *key.Binding { return &k.Fork }).inFooter(3, "fork").offReadOnly("forking"),
	row("resume", helpRun, []string{"r"}, "resume", func(k *threadKeys) *key.Binding { return &k.Resume }).inFooter(2, "resume").offReadOnly("resuming"),
	row("stop", helpRun, []string{"x"}, "stop the run", func(k *threadKeys) *key.Binding { return &k.Stop }).offReadOnly("stopping a run"),
	row("kill", helpRun, []string{"X", "ctrl+k"}, "kill worker (asks)", func(k *threadKeys) *key.Binding { return &k.Kill }).offReadOnly("killing a worker"),
	row("drill", helpRun, []string{"K"}, "arm a kill point", func(k *threadKeys) *key.Binding { return &k.Drill }).offReadOnly("arming a kill point"),
	row("dismiss", helpRun, []string{"esc"}, "hide drill report", func(k *threadKeys) *key.Binding { return &k.Dismiss }),
	row("discard", helpRun, []string{"D"}, "discard pending", func(k *threadKeys) *key.Binding { return &k.Discard }).offReadOnly("discarding pending tasks"),
	row("approve", helpRun, []string{"a"}, "approve/reject draft", func(k *threadKeys) *key.Binding { return &k.Approve }).offReadOnly("answering an approval"),
	row("breakpoints", helpRun, []string{"b"}, "breakpoints", func(k *threadKeys) *key.Binding { return &k.Breaks }).offReadOnly("setting breakpoints"),
	row("threads", helpScreen, []string{"t"}, "threads", func(k *threadKeys) *key.Binding { return &k.Threads }).inFooter(4, "threads"),
	row("fold", helpScreen, []string{"z"}, "fold/unfold text", func(k *threadKeys) *key.Binding { return &k.Fold }),
	row("theme", helpScreen, []string{"T"}, "next theme (saved)", func(k *threadKeys) *key.Binding { return &k.Theme }),
	row("log", helpScreen, []string{"L"}, "status log", func(k *threadKeys) *key.Binding { return &k.Log }),
	row("script", helpScreen, []string{"s"}, "lesson script panel", func(k *threadKeys) *key.Binding { return &k.Script }),
	row("help", helpScreen, []string{"?"}, "help", func(k *threadKeys) *key.Binding { return &k.Help }).inFooter(7, "help"),
	row("quit", helpScreen, []string{"q", "ctrl+c"}, "quit (asks mid-run)", func(k *threadKeys) *key.Binding { return &k.Quit }).inFooter(6, "quit"),
	row("replay", helpParity, []string{"p"}, "replay here (asks)", func(k *threadKeys) *key.Binding { return &k.Replay }).offReadOnly("replaying a checkpoint"),
	row("edit_state", helpParity, []string{"e"}, "edit state ($EDITOR)", func(k *threadKeys) *key.Binding { return &k.EditState }).offReadOnly("editing the state"),
	row("mark", helpParity, []string{"m"}, "mark for compare", func(k *threadKeys) *key.Binding { return &k.Mark }).offReadOnly("marking for a compare" + needsStore),
	row("compare", helpParity, []string{"="}, "compare with the mark", func(k *threadKeys) *key.Binding { return &k.Compare }).offReadOnly("comparing" + needsStore),
	row("graph", helpParity, []string{"v"}, "graph view", func(k *threadKeys) *key.Binding { return &k.Graph }).offReadOnly("the graph view" + needsStore),
	row("prompt", helpParity, []string{"P"}, "what the model saw", func(k *threadKeys) *key.Binding { return &k.Prompt }).offReadOnly("what the model saw" + needsStore),
	row("turn_prev", helpNav, []string{"{"}, "previous turn", func(k *threadKeys) *key.Binding { return &k.TurnPrev }),
	row("turn_next", helpNav, []string{"}"}, "next turn", func(k *threadKeys) *key.Binding { return &k.TurnNext }),
	row("goto", helpNav, []string{":"}, "go to checkpoint (@N)", func(k *threadKeys) *key.Binding { return &k.Goto }),
	row("search", helpNav, []string{"/"}, "search", func(k *threadKeys) *key.Binding { return &k.Search }),
	row("search_next", helpNav, []string{"n"}, "next match", func(k *threadKeys) *key.Binding { return &k.SearchNext }),
	row("search_prev", helpNav, []string{"N"}, "previous match", func(k *threadKeys) *key.Binding { return &k.SearchPrev }),
	row("zoom", helpNav, []string{"+"}, "zoom pane", func(k *threadKeys) *key.Binding { return &k.Zoom }),
	row("trace", helpNav, []string{"o"}, "resume trace (⟲ ✝)", func(k *threadKeys) *key.Binding { return &k.Trace }).offReadOnly("the resume trace" + needsStore),
}

func newThreadKeys() threadKeys { return threadKeyTable.bind() }

// keyName is a rebindable key and the name the config file gives it.
type keyName struct {
	name string
	b    *key.Binding
}

// keyNames are the thread view's rebindable keys by config name, in the
// table's order.
func (k *threadKeys) keyNames() []keyName { return threadKeyTable.names(k) }

// short is b for the footer: a short description, and when b has a
// one-letter key, only that and the arrows (the help lists the others).
func short(b key.Binding, desc string) key.Binding {
	var keys []string
	for _, k := range b.Keys() {
		if len([]rune(k)) == 1 && k != " " || k == "left" || k == "right" || k == "up" || k == "down" {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		keys = b.Keys()
	}
	return key.NewBinding(key.WithKeys(b.Keys()...), key.WithHelp(keyLabel(keys), desc))
}

// footer is the key line under the status bar, the most needed first:
// focused (the keys of the components that have the focus: h/l scrub),
// the thread view's keys with a footer place, quit and ? help last. A
// footer short of room drops keys from the end of the list, before quit
// and help (keyLine).
func (k threadKeys) footer(focused []key.Binding) []key.Binding {
	return append(slices.Clone(focused), threadKeyTable.footer(k)...)
}

// FullHelp is the `?` screen: the table's rows, group by group.
func (k threadKeys) FullHelp() [][]key.Binding { return threadKeyTable.fullHelp(k, helpGroups, nil) }

// readOnlyHelp is the `?` screen on a read-only source: the composer never
// opens there, so its keys (the rows with no name) are left out; ctrl+d
// is page down only.
func (k threadKeys) readOnlyHelp() [][]key.Binding {
	return threadKeyTable.fullHelp(k, helpGroups, func(r threadKeyRow) bool { return r.name != "" })
}

// threadListKeys are the keys of the threads screen.
type threadListKeys struct {
	Up, Down, Top, Bottom, Open, New, Delete, Refresh, Back, Log, Help, Quit key.Binding
}

// threadListKeyTable is the threads screen's keys (keyTable): three
// columns in ?.
var threadListKeyTable = keyTable[threadListKeys]{
	row("", 0, []string{"up", "k"}, "up", func(k *threadListKeys) *key.Binding { return &k.Up }).inFooter(1, "up"),
	row("", 0, []string{"down", "j"}, "down", func(k *threadListKeys) *key.Binding { return &k.Down }).inFooter(2, "down"),
	row("", 0, []string{"home", "g"}, "first thread", func(k *threadListKeys) *key.Binding { return &k.Top }),
	row("", 0, []string{"end", "G"}, "last thread", func(k *threadListKeys) *key.Binding { return &k.Bottom }),
	row("", 0, []string{"enter", "o"}, "open", func(k *threadListKeys) *key.Binding { return &k.Open }).inFooter(3, "open"),
	row("", 1, []string{"n"}, "new thread", func(k *threadListKeys) *key.Binding { return &k.New }).inFooter(4, "new thread").offReadOnly("starting a thread"),
	row("", 1, []string{"d", "delete"}, "delete (asks y/n)", func(k *threadListKeys) *key.Binding { return &k.Delete }).inFooter(5, "delete").offReadOnly("deleting a thread"),
	row("", 1, []string{"R", "ctrl+r"}, "refresh", func(k *threadListKeys) *key.Binding { return &k.Refresh }),
	row("", 2, []string{"esc"}, "back", func(k *threadListKeys) *key.Binding { return &k.Back }).inFooter(6, "back"),
	row("", 2, []string{"L"}, "status log", func(k *threadListKeys) *key.Binding { return &k.Log }),
	row("", 2, []string{"?"}, "help", func(k *threadListKeys) *key.Binding { return &k.Help }).inFooter(8, "help"),
	row("", 2, []string{"q", "ctrl+c"}, "quit", func(k *threadListKeys) *key.Binding { return &k.Quit }).inFooter(7, "quit"),
}

func newThreadListKeys() threadListKeys { return threadListKeyTable.bind() }

func (k threadListKeys) ShortHelp() []key.Binding { return threadListKeyTable.footer(k) }

func (k threadListKeys) FullHelp() [][]key.Binding { return threadListKeyTable.fullHelp(k, 3, nil) }

// pagerKeys scroll and close the help and the status log.
type pagerKeys struct{ Up, Down, PageUp, PageDown, Top, Bottom, Close key.Binding }

var pagerKeyTable = keyTable[pagerKeys]{
	helpRow(0, []string{"up", "k"}, "scroll up", func(k *pagerKeys) *key.Binding { return &k.Up }).inFooter(2, "up"),
	helpRow(0, []string{"down", "j"}, "scroll down", func(k *pagerKeys) *key.Binding { return &k.Down }).inFooter(1, "down"),
	helpRow(0, []string{"pgup", "ctrl+u"}, "page up", func(k *pagerKeys) *key.Binding { return &k.PageUp }),
	helpRow(0, []string{"pgdown", "ctrl+d", " "}, "page down", func(k *pagerKeys) *key.Binding { return &k.PageDown }).inFooter(3, "page"),
	helpRow(0, []string{"home", "g"}, "top", func(k *pagerKeys) *key.Binding { return &k.Top }),
	helpRow(0, []string{"end", "G"}, "bottom", func(k *pagerKeys) *key.Binding { return &k.Bottom }),
	helpRow(0, []string{"esc", "q", "?", "L"}, "close", func(k *pagerKeys) *key.Binding { return &k.Close }).inFooter(4, "close"),
}

func newPagerKeys() pagerKeys                 { return pagerKeyTable.bind() }
func (k pagerKeys) ShortHelp() []key.Binding  { return pagerKeyTable.footer(k) }
func (k pagerKeys) FullHelp() [][]key.Binding { return pagerKeyTable.fullHelp(k, 1, nil) }

// formKeys are the keys of dialogs with text fields.
type formKeys struct {
	Submit, Next, Prev, Cancel key.Binding
}

var formKeyTable = keyTable[formKeys]{
	helpRow(0, []string{"enter"}, "submit", func(k *formKeys) *key.Binding { return &k.Submit }).inFooter(1, ""),
	helpRow(0, []string{"tab", "down"}, "next field", func(k *formKeys) *key.Binding { return &k.Next }).labelled("tab").inFooter(2, ""),
	helpRow(0, []string{"shift+tab", "up"}, "previous field", func(k *formKeys) *key.Binding { return &k.Prev }).labelled("shift+tab"),
	helpRow(0, []string{"esc"}, "cancel", func(k *formKeys) *key.Binding { return &k.Cancel }).inFooter(3, ""),
}

func newFormKeys() formKeys                  { return formKeyTable.bind() }
func (k formKeys) ShortHelp() []key.Binding  { return formKeyTable.footer(k) }
func (k formKeys) FullHelp() [][]key.Binding { return formKeyTable.fullHelp(k, 1, nil) }

// composerKeys are the keys while writing a message.
type composerKeys struct {
	Send, Draft, Leave, Clear key.Binding
}

// composerKeyTable: the footer's draft word is the composer's
// (composer.ShortHelp says whether the reply will be a draft).
var composerKeyTable = keyTable[composerKeys]{
	helpRow(0, []string{"enter"}, "send", func(k *composerKeys) *key.Binding { return &k.Send }).inFooter(1, "send"),
	helpRow(0, []string{"ctrl+d"}, "reply as a draft: off", func(k *composerKeys) *key.Binding { return &k.Draft }).inFooter(2, "draft: off"),
	helpRow(0, []string{"esc"}, "back to scrubbing (text kept)", func(k *composerKeys) *key.Binding { return &k.Leave }).inFooter(3, "back"),
	helpRow(0, []string{"ctrl+c"}, "clear, then close", func(k *composerKeys) *key.Binding { return &k.Clear }).inFooter(4, "clear"),
}

func newComposerKeys() composerKeys              { return composerKeyTable.bind() }
func (k composerKeys) ShortHelp() []key.Binding  { return composerKeyTable.footer(k) }
func (k composerKeys) FullHelp() [][]key.Binding { return composerKeyTable.fullHelp(k, 1, nil) }

// retitled is bs with the binding of b's keys described as desc.
func retitled(bs []key.Binding, b key.Binding, desc string) []key.Binding {
	for i := range bs {
		if slices.Equal(bs[i].Keys(), b.Keys()) {
			bs[i].SetHelp(bs[i].Help().Key, desc)
		}
	}
	return bs
}

// confirmKeys answer a yes/no question.
type confirmKeys struct{ Yes, No key.Binding }

var confirmKeyTable = keyTable[confirmKeys]{
	helpRow(0, []string{"y", "Y"}, "yes", func(k *confirmKeys) *key.Binding { return &k.Yes }).labelled("y").inFooter(1, ""),
	helpRow(0, []string{"n", "N", "esc", "q"}, "no", func(k *confirmKeys) *key.Binding { return &k.No }).labelled("n/esc").inFooter(2, ""),
}

// quitKeyTable answers "quit during a run?": a second ctrl+c quits too.
var quitKeyTable = keyTable[confirmKeys]{
	helpRow(0, []string{"y", "Y", "ctrl+c"}, "quit (during a run)", func(k *confirmKeys) *key.Binding { return &k.Yes }).labelled("y/ctrl+c").inFooter(1, ""),
	helpRow(0, []string{"n", "N", "esc"}, "stay", func(k *confirmKeys) *key.Binding { return &k.No }).labelled("n/esc").inFooter(2, ""),
}

func newConfirmKeys() confirmKeys { return confirmKeyTable.bind() }
func newQuitKeys() confirmKeys    { return quitKeyTable.bind() }

// Both tables have the same footer and columns; confirmKeyTable reads them.
func (k confirmKeys) ShortHelp() []key.Binding  { return confirmKeyTable.footer(k) }
func (k confirmKeys) FullHelp() [][]key.Binding { return confirmKeyTable.fullHelp(k, 1, nil) }

// toggleKeys drive the breakpoints dialog.
type toggleKeys struct{ Up, Down, Toggle, Close key.Binding }

var toggleKeyTable = keyTable[toggleKeys]{
	helpRow(0, []string{"up", "k"}, "up", func(k *toggleKeys) *key.Binding { return &k.Up }).labelled("↑").inFooter(1, ""),
	helpRow(0, []string{"down", "j"}, "down", func(k *toggleKeys) *key.Binding { return &k.Down }).labelled("↓").inFooter(2, ""),
	helpRow(0, []string{" ", "x"}, "toggle", func(k *toggleKeys) *key.Binding { return &k.Toggle }).labelled("space").inFooter(3, ""),
	helpRow(0, []string{"esc", "enter", "b", "q"}, "done", func(k *toggleKeys) *key.Binding { return &k.Close }).labelled("enter/esc").inFooter(4, ""),
}

func newToggleKeys() toggleKeys                { return toggleKeyTable.bind() }
func (k toggleKeys) ShortHelp() []key.Binding  { return toggleKeyTable.footer(k) }
func (k toggleKeys) FullHelp() [][]key.Binding { return toggleKeyTable.fullHelp(k, 1, nil) }
