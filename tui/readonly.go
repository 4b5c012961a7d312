package tui

// A read-only source (Deps.Backend nil: a LangGraph database) takes no
// writes: the thread view's keys that would write, and those that read
// what only rewind's own store keeps, are refused with one line saying
// why, listed as off in ?, and left out of the footer. A graph that
// declares no input (engine.Graph.Input) has the keys that start a run
// with typed input off the same way.

import (
	"fmt"
	"slices"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"rewind/store/browse"
	"rewind/tui/termtext"
)

// readOnlyWhy is why a writing key is off.
const readOnlyWhy = "this LangGraph database is opened read-only: rewind never writes to it"

// readOnly is whether the source takes no writes.
func (s *session) readOnly() bool { return s.deps.Backend == nil }

// readOnlyPolicy is what a read-only source refuses (and a graph without
// input: withoutInput): the keys of each screen that are off there (the
// key tables' offReadOnly rows), from the model's own bindings once they are bound (so a rebound key is refused
// under its new name). The root consults it before it routes a key and
// when it lists keys in the footer and ?. The threads list's (n, d) are
// not the thread view's (n is its next match).
type readOnlyPolicy struct {
	thread, list []offKey // the thread view's keys that are off, the threads list's
}

func newReadOnlyPolicy(on bool, tk threadKeys, lk threadListKeys) readOnlyPolicy {
	if !on {
		return readOnlyPolicy{}
	}
	return readOnlyPolicy{thread: bound(threadKeyTable.offKeys(tk)), list: bound(threadListKeyTable.offKeys(lk))}
}

// withoutInput turns off the keys that start a run with typed input on a
// graph that declares no input: write and fork for why, the graph shown;
// a new thread for newWhy, the graph it runs on (the session's first).
// "": the graph takes input; a read-only source refuses them already.
func (p readOnlyPolicy) withoutInput(why, newWhy string, tk threadKeys, lk threadListKeys) readOnlyPolicy {
	if len(p.thread) > 0 {
		return p
	}
	if why != "" {
		p.thread = bound([]offKey{{tk.Compose, "writing a message", why}, {tk.Fork, "forking", why}})
	}
	if newWhy != "" {
		p.list = bound([]offKey{{lk.New, "starting a thread", newWhy}})
	}
	return p
}

// offKeys are the keys of screen s that are off on a read-only source.
func (p readOnlyPolicy) offKeys(s screen) []offKey {
	if s == screenThreads {
		return p.list
	}
	return p.thread
}

// bound is off less the keys the screen shown does not bind.
func bound(off []offKey) []offKey {
	return slices.DeleteFunc(off, func(o offKey) bool { return len(o.b.Keys()) == 0 })
}

// refuses says why msg, a key of screen s, is refused ("": it is not).
func (p readOnlyPolicy) refuses(msg tea.KeyMsg, s screen) (why string, off bool) {
	for _, o := range p.offKeys(s) {
		if key.Matches(msg, o.b) {
			return o.what + " is off: " + o.why, true
		}
	}
	return "", false
}

// markOff is groups, screen s's keys, as ? lists them on a read-only
// source: a key that is off says so.
func (p readOnlyPolicy) markOff(groups [][]key.Binding, s screen) [][]key.Binding {
	off := p.offKeys(s)
	if len(off) == 0 {
		return groups
	}
	out := make([][]key.Binding, len(groups))
	for i, g := range groups {
		out[i] = make([]key.Binding, len(g))
		for j, b := range g {
			out[i][j] = b
			if isOff(b, off) {
				out[i][j] = key.NewBinding(key.WithKeys(b.Keys()...), key.WithHelp(b.Help().Key, "off: "+b.Help().Desc))
			}
		}
	}
	return out
}

// withoutOff is bs, screen s's keys, less those that are off on a
// read-only source.
func (p readOnlyPolicy) withoutOff(bs []key.Binding, s screen) []key.Binding {
	off := p.offKeys(s)
	if len(off) == 0 {
		return bs
	}
	out := bs[:0:0]
	for _, b := range bs {
		if !isOff(b, off) {
			out = append(out, b)
		}
	}
	return out
}

func isOff(b key.Binding, off []offKey) bool {
	for _, o := range off {
		if len(b.Keys()) > 0 && len(o.b.Keys()) > 0 && b.Keys()[0] == o.b.Keys()[0] {
			return true
		}
	}
	return false
}

// jumpPrefix puts the cursor on the loaded checkpoint given names: its
// id, a prefix of it, or a short form shown ("1f1ed296…a089"); the error
// says why none or several match (thread is named in it).
func (t *timelinePane) jumpPrefix(given, thread string) error {
	id, err := browse.One("checkpoint", given, browse.Match(given, t.tree.rows), "thread "+thread, "rewind log "+thread)
	if err != nil {
		return err
	}
	t.jump(id)
	return nil
}

// sourceSearch finds q's words in the messages of s's open chain through
// the Source (browse.Search: what `rewind search` scans on a LangGraph
// database), in a Cmd.
func sourceSearch(s *session, q string) tea.Cmd {
	ctx, src, gen, ch := s.ctx, s.deps.Source, s.gen, s.chain()
	thread := ch.Thread
	return func() tea.Msg {
		found, more, err := browse.Search(ctx, src, ch, q, maxHits)
		hits := make([]searchHit, 0, len(found))
		for _, f := range found {
			hits = append(hits, searchHit{id: f.Checkpoint, short: lgShortID(f.Checkpoint),
				where: fmt.Sprintf("#%d %s", f.Message.Index+1, termtext.Line(f.Speaker)), text: f.Text, parts: hitParts(f.Text, f.Matches)})
		}
		return searchMsg{gen: gen, thread: thread, query: q, hits: hits, more: more, err: err}
	}
}

// sourcePollEvery is how often the open chain of a read-only source is
// read for checkpoints another process wrote (a running LangGraph app):
// it has no watch to wake the TUI, as rewind's stores do.
const sourcePollEvery = 2 * time.Second

// sourcePollMsg: time to read the newest checkpoints of chain generation
// gen.
type sourcePollMsg struct{ gen int }

// armSourcePoll arms the next poll of a read-only source's open chain
// (the root reads the chain again at its sourcePollMsg, if still open).
func (s *session) armSourcePoll() tea.Cmd {
	if !s.readOnly() || s.thread == "" {
		return nil
	}
	gen := s.gen
	return tea.Tick(sourcePollEvery, func(time.Time) tea.Msg { return sourcePollMsg{gen} })
}

// offKey is a key that is off, what it would do (keyRow.off) and why it
// is off (readOnlyWhy on a read-only source).
type offKey struct {
	b         key.Binding
	what, why string
}
