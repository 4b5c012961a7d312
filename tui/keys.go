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

func newThreadKeys() threadKeys {
	return threadKeys{
		Prev:       bind("previous checkpoint", "left", "h"),
		Next:       bind("next checkpoint", "right", "l"),
		First:      bind("first of branch", "home", "g"),
		Last:       bind("last of branch", "end", "G"),
		BranchPrev: bind("previous branch", "["),
		BranchNext: bind("next branch", "]"),
		Up:         bind("up: row or scroll", "up", "k"),
		Down:       bind("down: row or scroll", "down", "j"),
		PageUp:     bind("page up", "pgup", "ctrl+u"),
		PageDown:   bind("page down", "pgdown", "ctrl+d"),
		FocusNext:  bind("next pane", "tab"),
		FocusPrev:  bind("previous pane", "shift+tab"),
		TabConv:    bind("conversation", "1"),
		TabState:   bind("state", "2"),
		TabInsp:    bind("inspector", "3"),
		Compose:    bind("write a message", "i", "enter"),
		Fork:       bind("fork here", "f"),
		Resume:     bind("resume", "r"),
		Stop:       bind("stop the run", "x"),
		Kill:       bind("kill worker (asks)", "X", "ctrl+k"),
		Drill:      bind("arm a kill point", "K"),
		Dismiss:    bind("hide drill report", "esc"),
		DraftHelp:  bind("draft reply (writing)", "ctrl+d"),
		Discard:    bind("discard pending", "D"),
		Approve:    bind("approve/reject draft", "a"),
		Breaks:     bind("breakpoints", "b"),
		Threads:    bind("threads", "t"),
		Fold:       bind("fold/unfold text", "z"),
		Theme:      bind("next theme (saved)", "T"),
		Log:        bind("status log", "L"),
		Script:     bind("lesson script panel", "s"),
		Help:       bind("help", "?"),
		Quit:       bind("quit (asks mid-run)", "q", "ctrl+c"),
		Replay:     bind("replay here (asks)", "p"),
		EditState:  bind("edit state ($EDITOR)", "e"),
		Mark:       bind("mark for compare", "m"),
		Compare:    bind("compare with the mark", "="),
		Graph:      bind("graph view", "v"),
		Prompt:     bind("what the model saw", "P"),
		TurnPrev:   bind("previous turn", "{"),
		TurnNext:   bind("next turn", "}"),
		Goto:       bind("go to checkpoint (@N)", ":"),
		Search:     bind("search", "/"),
		SearchNext: bind("next match", "n"),
		SearchPrev: bind("previous match", "N"),
		Zoom:       bind("zoom pane", "+"),
		Trace:      bind("resume trace (⟲ ✝)", "o"),
	}
}

// keyName is a rebindable key and the name the config file gives it.
type keyName struct {
	name string
	b    *key.Binding
}

// keyNames are the thread view's keys by config name, in help order.
func (k *threadKeys) keyNames() []keyName {
	return []keyName{
		{"prev", &k.Prev}, {"next", &k.Next}, {"first", &k.First}, {"last", &k.Last},
		{"branch_prev", &k.BranchPrev}, {"branch_next", &k.BranchNext},
		{"up", &k.Up}, {"down", &k.Down}, {"page_up", &k.PageUp}, {"page_down", &k.PageDown},
		{"focus_next", &k.FocusNext}, {"focus_prev", &k.FocusPrev},
		{"tab_conversation", &k.TabConv}, {"tab_state", &k.TabState}, {"tab_inspector", &k.TabInsp},
		{"compose", &k.Compose}, {"fork", &k.Fork}, {"resume", &k.Resume}, {"stop", &k.Stop},
		{"kill", &k.Kill}, {"drill", &k.Drill}, {"dismiss", &k.Dismiss},
		{"discard", &k.Discard}, {"approve", &k.Approve}, {"breakpoints", &k.Breaks},
		{"threads", &k.Threads}, {"fold", &k.Fold}, {"theme", &k.Theme}, {"log", &k.Log}, {"script", &k.Script},
		{"help", &k.Help}, {"quit", &k.Quit},
		{"replay", &k.Replay}, {"edit_state", &k.EditState}, {"mark", &k.Mark}, {"compare", &k.Compare}, {"graph", &k.Graph}, {"prompt", &k.Prompt},
		{"turn_prev", &k.TurnPrev}, {"turn_next", &k.TurnNext}, {"goto", &k.Goto}, {"search", &k.Search},
		{"search_next", &k.SearchNext}, {"search_prev", &k.SearchPrev}, {"zoom", &k.Zoom}, {"trace", &k.Trace},
	}
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

// FullHelp is the `?` screen.
func (k threadKeys) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Prev, k.Next, k.First, k.Last, k.BranchPrev, k.BranchNext},
		{k.Up, k.Down, k.PageUp, k.PageDown, k.FocusNext, k.FocusPrev, k.TabConv, k.TabState, k.TabInsp},
		{k.Compose, k.DraftHelp, k.Fork, k.Resume, k.Stop, k.Kill, k.Drill, k.Dismiss, k.Discard, k.Approve, k.Breaks},
		{k.Replay, k.EditState, k.Mark, k.Compare, k.Graph, k.Prompt},
		{k.Threads, k.Fold, k.Theme, k.Log, k.Script, k.Help, k.Quit},
		{k.TurnPrev, k.TurnNext, k.Goto, k.Search, k.SearchNext, k.SearchPrev, k.Zoom, k.Trace},
	}
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

func (k formKeys) ShortHelp() []key.Binding  { return []key.Binding{k.Submit, k.Next, k.Cancel} }
func (k formKeys) FullHelp() [][]key.Binding { return [][]key.Binding{k.ShortHelp()} }

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
