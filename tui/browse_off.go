package tui

// The keys that write, off in the browser: the thread view's own bindings
// (threadKeyTable, the threads list's), so a key the thread view writes
// with is refused here by the same table, and ? lists it as off. A key
// the browser binds itself (enter into a subgraph, n the next match) does
// its browser work first; the refusal is for what is left.

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
)

// offKey is a key of the thread view that writes and what it would do.
type offKey struct {
	b    key.Binding
	what string
}

// browseOffKeys are the thread view's writing keys.
func browseOffKeys() []offKey { return writingKeys(newThreadKeys(), newThreadListKeys()) }

// writingKeys are tk's and lk's keys that write (the main TUI's on a
// read-only source, readonly.go, and the browser's).
func writingKeys(tk threadKeys, lk threadListKeys) []offKey {
	return []offKey{
		{tk.Compose, "writing a message"}, {tk.DraftHelp, "writing a draft"}, {tk.Fork, "forking"},
		{tk.Resume, "resuming"}, {tk.Stop, "stopping a run"}, {tk.Kill, "killing a worker"},
		{tk.Drill, "arming a kill point"}, {tk.Discard, "discarding pending tasks"},
		{tk.Approve, "answering an approval"}, {tk.Breaks, "setting breakpoints"},
		{tk.Replay, "replaying a checkpoint"}, {tk.EditState, "editing the state"},
		{threadsOnly(lk.New, "new thread"), "starting a thread"}, {threadsOnly(lk.Delete, "delete a thread"), "deleting a thread"},
	}
}

// threadsOnly is a threads list's key, its help (desc) saying where it
// is bound (n is the next match in a chain, a new thread in the list).
func threadsOnly(b key.Binding, desc string) key.Binding {
	return key.NewBinding(key.WithKeys(b.Keys()...), key.WithHelp(b.Help().Key, desc+" (list)"))
}

// offHelp is the writing keys as ? lists them: each says it is off.
func offHelp(off []offKey) []key.Binding {
	out := make([]key.Binding, len(off))
	for i, o := range off {
		out[i] = key.NewBinding(key.WithKeys(o.b.Keys()...), key.WithHelp(o.b.Help().Key, "off: "+o.b.Help().Desc))
	}
	return out
}

// refusal is what the status line says of key k when it writes ("" when
// it does not).
func (m *Browser) refusal(k tea.KeyMsg) string {
	for _, o := range m.off {
		if key.Matches(k, o.b) {
			return fmt.Sprintf("read-only: %s would write to this %s", o.what, strings.TrimSuffix(m.src.About().Status(), ", read-only"))
		}
	}
	return ""
}
