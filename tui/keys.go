package tui

import "github.com/charmbracelet/bubbles/key"

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
	Threads, Fold, Theme        key.Binding
	Help, Quit                  key.Binding
}

func newThreadKeys() threadKeys {
	return threadKeys{
		Prev:       key.NewBinding(key.WithKeys("left", "h"), key.WithHelp("←/h", "previous checkpoint")),
		Next:       key.NewBinding(key.WithKeys("right", "l"), key.WithHelp("→/l", "next checkpoint")),
		First:      key.NewBinding(key.WithKeys("home", "g"), key.WithHelp("home/g", "first of branch")),
		Last:       key.NewBinding(key.WithKeys("end", "G"), key.WithHelp("end/G", "last of branch")),
		BranchPrev: key.NewBinding(key.WithKeys("["), key.WithHelp("[", "previous branch")),
		BranchNext: key.NewBinding(key.WithKeys("]"), key.WithHelp("]", "next branch")),
		Up:         key.NewBinding(key.WithKeys("up"), key.WithHelp("↑", "scroll / row up")),
		Down:       key.NewBinding(key.WithKeys("down"), key.WithHelp("↓", "scroll / row down")),
		PageUp:     key.NewBinding(key.WithKeys("pgup", "ctrl+u"), key.WithHelp("pgup", "page up")),
		PageDown:   key.NewBinding(key.WithKeys("pgdown", "ctrl+d"), key.WithHelp("pgdn", "page down")),
		FocusNext:  key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "next pane")),
		FocusPrev:  key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "previous pane")),
		TabConv:    key.NewBinding(key.WithKeys("1"), key.WithHelp("1", "conversation")),
		TabState:   key.NewBinding(key.WithKeys("2"), key.WithHelp("2", "state")),
		TabInsp:    key.NewBinding(key.WithKeys("3"), key.WithHelp("3", "inspector")),
		Compose:    key.NewBinding(key.WithKeys("i", "enter"), key.WithHelp("i", "write a message")),
		Fork:       key.NewBinding(key.WithKeys("f"), key.WithHelp("f", "fork here")),
		Resume:     key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "resume")),
		Stop:       key.NewBinding(key.WithKeys("x"), key.WithHelp("x", "stop the run")),
		Kill:       key.NewBinding(key.WithKeys("k"), key.WithHelp("k", "kill worker (SIGKILL)")),
		Drill:      key.NewBinding(key.WithKeys("K"), key.WithHelp("K", "arm a kill point")),
		Dismiss:    key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "hide drill report")),
		DraftHelp:  key.NewBinding(key.WithKeys("ctrl+d"), key.WithHelp("ctrl+d", "draft reply (writing)")),
		Discard:    key.NewBinding(key.WithKeys("D"), key.WithHelp("D", "discard pending")),
		Approve:    key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "approve/reject draft")),
		Breaks:     key.NewBinding(key.WithKeys("b"), key.WithHelp("b", "breakpoints")),
		Threads:    key.NewBinding(key.WithKeys("t"), key.WithHelp("t", "threads")),
		Fold:       key.NewBinding(key.WithKeys("z"), key.WithHelp("z", "fold/unfold text")),
		Theme:      key.NewBinding(key.WithKeys("T"), key.WithHelp("T", "next theme")),
		Help:       key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Quit:       key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
	}
}

// ShortHelp is the key line under the status bar.
func (k threadKeys) ShortHelp() []key.Binding {
	return []key.Binding{k.Prev, k.Next, k.Compose, k.Fork, k.Resume, k.FocusNext, k.Threads, k.Help, k.Quit}
}

// FullHelp is the `?` screen.
func (k threadKeys) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Prev, k.Next, k.First, k.Last, k.BranchPrev, k.BranchNext},
		{k.Up, k.Down, k.PageUp, k.PageDown, k.FocusNext, k.FocusPrev, k.TabConv, k.TabState, k.TabInsp},
		{k.Compose, k.DraftHelp, k.Fork, k.Resume, k.Stop, k.Kill, k.Drill, k.Dismiss, k.Discard, k.Approve, k.Breaks},
		{k.Threads, k.Fold, k.Theme, k.Help, k.Quit},
	}
}

// threadListKeys are the keys of the threads screen.
type threadListKeys struct {
	Up, Down, Open, New, Delete, Refresh, Back, Help, Quit key.Binding
}

func newThreadListKeys() threadListKeys {
	return threadListKeys{
		Up:      key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑", "up")),
		Down:    key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓", "down")),
		Open:    key.NewBinding(key.WithKeys("enter", "o"), key.WithHelp("enter", "open")),
		New:     key.NewBinding(key.WithKeys("n"), key.WithHelp("n", "new thread")),
		Delete:  key.NewBinding(key.WithKeys("d", "delete"), key.WithHelp("d", "delete")),
		Refresh: key.NewBinding(key.WithKeys("R", "ctrl+r"), key.WithHelp("R", "refresh")),
		Back:    key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back")),
		Help:    key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Quit:    key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
	}
}

func (k threadListKeys) ShortHelp() []key.Binding {
	return []key.Binding{k.Up, k.Down, k.Open, k.New, k.Delete, k.Back, k.Help, k.Quit}
}

func (k threadListKeys) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Up, k.Down, k.Open}, {k.New, k.Delete, k.Refresh}, {k.Back, k.Help, k.Quit}}
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
	Send, Draft, Leave key.Binding
}

func newComposerKeys() composerKeys {
	return composerKeys{
		Send:  key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "send")),
		Draft: key.NewBinding(key.WithKeys("ctrl+d"), key.WithHelp("ctrl+d", "reply as a draft: off")),
		Leave: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back to scrubbing")),
	}
}

func (k composerKeys) ShortHelp() []key.Binding  { return []key.Binding{k.Send, k.Draft, k.Leave} }
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
