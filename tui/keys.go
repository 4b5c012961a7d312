package tui

import (
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

// threadKeyRow is one key of the thread view: the name `[keys]` rebinds
// it under ("": not rebindable, shown in the help only), its help group,
// its default keys, what it does, and the field of threadKeys it fills.
type threadKeyRow struct {
	name  string
	group int
	keys  []string
	desc  string
	field func(*threadKeys) *key.Binding
}

// threadKeyTable is the only place the thread view's keys are declared:
// the bindings (newThreadKeys), the config names (keyNames), the ? screen
// (FullHelp) and README's key table are all read from it, so a key cannot
// be bound and missing from the help or README
// (TestEveryThreadKeyIsInTheTable). Its order is keyNames' (the config's
// error lists the names in it); FullHelp takes the rows group by group.
var threadKeyTable = []threadKeyRow{
	{"prev", helpScrub, []string{"left", "h"}, "previous checkpoint", func(k *threadKeys) *key.Binding { return &k.Prev }},
	{"next", helpScrub, []string{"right", "l"}, "next checkpoint", func(k *threadKeys) *key.Binding { return &k.Next }},
	{"first", helpScrub, []string{"home", "g"}, "first of branch", func(k *threadKeys) *key.Binding { return &k.First }},
	{"last", helpScrub, []string{"end", "G"}, "last of branch", func(k *threadKeys) *key.Binding { return &k.Last }},
	{"branch_prev", helpScrub, []string{"["}, "previous branch", func(k *threadKeys) *key.Binding { return &k.BranchPrev }},
	{"branch_next", helpScrub, []string{"]"}, "next branch", func(k *threadKeys) *key.Binding { return &k.BranchNext }},
	{"up", helpMove, []string{"up", "k"}, "up: row or scroll", func(k *threadKeys) *key.Binding { return &k.Up }},
	{"down", helpMove, []string{"down", "j"}, "down: row or scroll", func(k *threadKeys) *key.Binding { return &k.Down }},
	{"page_up", helpMove, []string{"pgup", "ctrl+u"}, "page up", func(k *threadKeys) *key.Binding { return &k.PageUp }},
	{"page_down", helpMove, []string{"pgdown", "ctrl+d"}, "page down", func(k *threadKeys) *key.Binding { return &k.PageDown }},
	{"focus_next", helpMove, []string{"tab"}, "next pane", func(k *threadKeys) *key.Binding { return &k.FocusNext }},
	{"focus_prev", helpMove, []string{"shift+tab"}, "previous pane", func(k *threadKeys) *key.Binding { return &k.FocusPrev }},
	{"tab_conversation", helpMove, []string{"1"}, "conversation", func(k *threadKeys) *key.Binding { return &k.TabConv }},
	{"tab_state", helpMove, []string{"2"}, "state", func(k *threadKeys) *key.Binding { return &k.TabState }},
	{"tab_inspector", helpMove, []string{"3"}, "inspector", func(k *threadKeys) *key.Binding { return &k.TabInsp }},
	{"compose", helpRun, []string{"i", "enter"}, "write a message", func(k *threadKeys) *key.Binding { return &k.Compose }},
	// The composer handles ctrl+d; the help says what it does there.
	{"", helpRun, []string{"ctrl+d"}, "draft reply (writing)", func(k *threadKeys) *key.Binding { return &k.DraftHelp }},
	{"fork", helpRun, []string{"f"}, "fork here", func(k *threadKeys) *key.Binding { return &k.Fork }},
	{"resume", helpRun, []string{"r"}, "resume", func(k *threadKeys) *key.Binding { return &k.Resume }},
	{"stop", helpRun, []string{"x"}, "stop the run", func(k *threadKeys) *key.Binding { return &k.Stop }},
	{"kill", helpRun, []string{"X", "ctrl+k"}, "kill worker (asks)", func(k *threadKeys) *key.Binding { return &k.Kill }},
	{"drill", helpRun, []string{"K"}, "arm a kill point", func(k *threadKeys) *key.Binding { return &k.Drill }},
	{"dismiss", helpRun, []string{"esc"}, "hide drill report", func(k *threadKeys) *key.Binding { return &k.Dismiss }},
	{"discard", helpRun, []string{"D"}, "discard pending", func(k *threadKeys) *key.Binding { return &k.Discard }},
	{"approve", helpRun, []string{"a"}, "approve/reject draft", func(k *threadKeys) *key.Binding { return &k.Approve }},
	{"breakpoints", helpRun, []string{"b"}, "breakpoints", func(k *threadKeys) *key.Binding { return &k.Breaks }},
	{"threads", helpScreen, []string{"t"}, "threads", func(k *threadKeys) *key.Binding { return &k.Threads }},
	{"fold", helpScreen, []string{"z"}, "fold/unfold text", func(k *threadKeys) *key.Binding { return &k.Fold }},
	{"theme", helpScreen, []string{"T"}, "next theme (saved)", func(k *threadKeys) *key.Binding { return &k.Theme }},
	{"log", helpScreen, []string{"L"}, "status log", func(k *threadKeys) *key.Binding { return &k.Log }},
	{"script", helpScreen, []string{"s"}, "lesson script panel", func(k *threadKeys) *key.Binding { return &k.Script }},
	{"help", helpScreen, []string{"?"}, "help", func(k *threadKeys) *key.Binding { return &k.Help }},
	{"quit", helpScreen, []string{"q", "ctrl+c"}, "quit (asks mid-run)", func(k *threadKeys) *key.Binding { return &k.Quit }},
	{"replay", helpParity, []string{"p"}, "replay here (asks)", func(k *threadKeys) *key.Binding { return &k.Replay }},
	{"edit_state", helpParity, []string{"e"}, "edit state ($EDITOR)", func(k *threadKeys) *key.Binding { return &k.EditState }},
	{"mark", helpParity, []string{"m"}, "mark for compare", func(k *threadKeys) *key.Binding { return &k.Mark }},
	{"compare", helpParity, []string{"="}, "compare with the mark", func(k *threadKeys) *key.Binding { return &k.Compare }},
	{"graph", helpParity, []string{"v"}, "graph view", func(k *threadKeys) *key.Binding { return &k.Graph }},
	{"prompt", helpParity, []string{"P"}, "what the model saw", func(k *threadKeys) *key.Binding { return &k.Prompt }},
	{"turn_prev", helpNav, []string{"{"}, "previous turn", func(k *threadKeys) *key.Binding { return &k.TurnPrev }},
	{"turn_next", helpNav, []string{"}"}, "next turn", func(k *threadKeys) *key.Binding { return &k.TurnNext }},
	{"goto", helpNav, []string{":"}, "go to checkpoint (@N)", func(k *threadKeys) *key.Binding { return &k.Goto }},
	{"search", helpNav, []string{"/"}, "search", func(k *threadKeys) *key.Binding { return &k.Search }},
	{"search_next", helpNav, []string{"n"}, "next match", func(k *threadKeys) *key.Binding { return &k.SearchNext }},
	{"search_prev", helpNav, []string{"N"}, "previous match", func(k *threadKeys) *key.Binding { return &k.SearchPrev }},
	{"zoom", helpNav, []string{"+"}, "zoom pane", func(k *threadKeys) *key.Binding { return &k.Zoom }},
	{"trace", helpNav, []string{"o"}, "resume trace (⟲ ✝)", func(k *threadKeys) *key.Binding { return &k.Trace }},
}

func newThreadKeys() threadKeys {
	var k threadKeys
	for _, r := range threadKeyTable {
		*r.field(&k) = bind(r.desc, r.keys...)
	}
	return k
}

// keyName is a rebindable key and the name the config file gives it.
type keyName struct {
	name string
	b    *key.Binding
}

// keyNames are the thread view's rebindable keys by config name, in the
// table's order.
func (k *threadKeys) keyNames() []keyName {
	out := make([]keyName, 0, len(threadKeyTable))
	for _, r := range threadKeyTable {
		if r.name != "" {
			out = append(out, keyName{r.name, r.field(k)})
		}
	}
	return out
}

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
// the thread view's keys, then quit and ? help, last. A footer short of
// room drops keys from the end of the list, before quit and help
// (keyLine).
func (k threadKeys) footer(focused []key.Binding) []key.Binding {
	bs := append([]key.Binding{}, focused...)
	bs = append(bs, short(k.Compose, "write"), short(k.Resume, "resume"), short(k.Fork, "fork"),
		short(k.Threads, "threads"), short(k.FocusNext, "pane"))
	return append(bs, short(k.Quit, "quit"), k.Help)
}

// FullHelp is the `?` screen: the table's rows, group by group.
func (k threadKeys) FullHelp() [][]key.Binding {
	groups := make([][]key.Binding, helpGroups)
	for _, r := range threadKeyTable {
		groups[r.group] = append(groups[r.group], *r.field(&k))
	}
	return groups
}

// threadListKeys are the keys of the threads screen.
type threadListKeys struct {
	Up, Down, Open, New, Delete, Refresh, Back, Log, Help, Quit key.Binding
}

func newThreadListKeys() threadListKeys {
	return threadListKeys{
		Up:      bind("up", "up", "k"),
		Down:    bind("down", "down", "j"),
		Open:    bind("open", "enter", "o"),
		New:     bind("new thread", "n"),
		Delete:  bind("delete (asks y/n)", "d", "delete"),
		Refresh: bind("refresh", "R", "ctrl+r"),
		Back:    bind("back", "esc"),
		Log:     bind("status log", "L"),
		Help:    bind("help", "?"),
		Quit:    bind("quit", "q", "ctrl+c"),
	}
}

func (k threadListKeys) ShortHelp() []key.Binding {
	return []key.Binding{k.Up, k.Down, short(k.Open, "open"), k.New, short(k.Delete, "delete"), k.Back, short(k.Quit, "quit"), k.Help}
}

func (k threadListKeys) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Up, k.Down, k.Open}, {k.New, k.Delete, k.Refresh}, {k.Back, k.Log, k.Help, k.Quit}}
}

// pagerKeys scroll and close the help and the status log.
type pagerKeys struct{ Up, Down, PageUp, PageDown, Top, Bottom, Close key.Binding }

func newPagerKeys() pagerKeys {
	return pagerKeys{
		Up:       bind("scroll up", "up", "k"),
		Down:     bind("scroll down", "down", "j"),
		PageUp:   bind("page up", "pgup", "ctrl+u"),
		PageDown: bind("page down", "pgdown", "ctrl+d", " "),
		Top:      bind("top", "home", "g"),
		Bottom:   bind("bottom", "end", "G"),
		Close:    bind("close", "esc", "q", "?", "L"),
	}
}

func (k pagerKeys) ShortHelp() []key.Binding {
	return []key.Binding{short(k.Down, "down"), short(k.Up, "up"), short(k.PageDown, "page"), short(k.Close, "close")}
}
func (k pagerKeys) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom, k.Close}}
}

// formKeys are the keys of dialogs with text fields.
type formKeys struct {
	Submit, Next, Prev, Cancel key.Binding
}

func newFormKeys() formKeys {
	return formKeys{
		Submit: key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "submit")),
		Next:   key.NewBinding(key.WithKeys("tab", "down"), key.WithHelp("tab", "next field")),
		Prev:   key.NewBinding(key.WithKeys("shift+tab", "up"), key.WithHelp("shift+tab", "previous field")),
		Cancel: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel")),
	}
}

func (k formKeys) ShortHelp() []key.Binding { return []key.Binding{k.Submit, k.Next, k.Cancel} }
func (k formKeys) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Submit, k.Next, k.Prev, k.Cancel}}
}

// composerKeys are the keys while writing a message.
type composerKeys struct {
	Send, Draft, Leave, Clear key.Binding
}

func newComposerKeys() composerKeys {
	return composerKeys{
		Send:  key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "send")),
		Draft: key.NewBinding(key.WithKeys("ctrl+d"), key.WithHelp("ctrl+d", "reply as a draft: off")),
		Leave: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back to scrubbing (text kept)")),
		Clear: key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "clear, then close")),
	}
}

func (k composerKeys) ShortHelp() []key.Binding {
	return []key.Binding{k.Send, k.Draft, k.Leave, k.Clear}
}
func (k composerKeys) FullHelp() [][]key.Binding { return [][]key.Binding{k.ShortHelp()} }

// confirmKeys answer a yes/no question.
type confirmKeys struct{ Yes, No key.Binding }

func newConfirmKeys() confirmKeys {
	return confirmKeys{
		Yes: key.NewBinding(key.WithKeys("y", "Y"), key.WithHelp("y", "yes")),
		No:  key.NewBinding(key.WithKeys("n", "N", "esc", "q"), key.WithHelp("n/esc", "no")),
	}
}

func (k confirmKeys) ShortHelp() []key.Binding  { return []key.Binding{k.Yes, k.No} }
func (k confirmKeys) FullHelp() [][]key.Binding { return [][]key.Binding{k.ShortHelp()} }

// newQuitKeys answer "quit during a run?": a second ctrl+c quits too.
func newQuitKeys() confirmKeys {
	return confirmKeys{
		Yes: key.NewBinding(key.WithKeys("y", "Y", "ctrl+c"), key.WithHelp("y/ctrl+c", "quit (during a run)")),
		No:  key.NewBinding(key.WithKeys("n", "N", "esc"), key.WithHelp("n/esc", "stay")),
	}
}

// toggleKeys drive the breakpoints dialog.
type toggleKeys struct{ Up, Down, Toggle, Close key.Binding }

func newToggleKeys() toggleKeys {
	return toggleKeys{
		Up:     key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑", "up")),
		Down:   key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓", "down")),
		Toggle: key.NewBinding(key.WithKeys(" ", "x"), key.WithHelp("space", "toggle")),
		Close:  key.NewBinding(key.WithKeys("esc", "enter", "b", "q"), key.WithHelp("enter/esc", "done")),
	}
}

func (k toggleKeys) ShortHelp() []key.Binding  { return []key.Binding{k.Up, k.Down, k.Toggle, k.Close} }
func (k toggleKeys) FullHelp() [][]key.Binding { return [][]key.Binding{k.ShortHelp()} }
