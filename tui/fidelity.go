package tui

import (
	"context"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"rewind/tui/termtext"
)

// The State pane's badge: at a checkpoint its extension checks (Checker:
// the ticket's summary fidelity, whether the summary keeps every pinned
// fact of the messages it covers, as `rewind check fidelity` does), the
// State pane is headed by the check's verdict. It is computed in a Cmd
// once per checkpoint, and only while the State pane is on screen: on a
// long thread the ticket's check reads every message the summary covers
// (thousands), so a badge nobody sees is not paid for. A badge keeps the
// verdict's words, not what was read. View only reads it.

// fidelityBadge is a checkpoint's check: loading until verdict or err.
type fidelityBadge struct {
	gen     int // the thread's opening it belongs to
	loading bool
	verdict Verdict
	err     error
}

// fidelityChecks are the badges kept, by checkpoint, and whether a check
// is under way: a component with no room and no keys (the State pane
// draws its badge, passed in by the root: paneInputs.badge). Its Update
// takes a check's answer and says whether it kept the badge; check starts
// one.
type fidelityChecks struct {
	sess   *session // read only: the chain open and its store
	badges *lru[*fidelityBadge]
	busy   bool
}

func newFidelityChecks(s *session) fidelityChecks { return fidelityChecks{sess: s} }

// Update takes a check's answer (fidelityMsg): kept is whether its badge
// is the open chain's, for the root to redraw the State pane when it
// shows that checkpoint.
func (f *fidelityChecks) Update(msg tea.Msg) (kept bool, _ tea.Cmd) {
	if msg, ok := msg.(fidelityMsg); ok {
		return f.done(msg, msg.gen == f.sess.gen && msg.thread == f.sess.thread), nil
	}
	return false, nil
}

// SetSize: the badges take no room of their own; the State pane draws
// them.
func (f *fidelityChecks) SetSize(int, int) {}

// ShortHelp: no keys; a check starts when the State pane shows a
// checkpoint with a summary.
func (f *fidelityChecks) ShortHelp() []key.Binding { return nil }

// FullHelp: no keys (ShortHelp).
func (f *fidelityChecks) FullHelp() [][]key.Binding { return nil }

// start reserves the check of checkpoint k for the thread's opening gen:
// false when its badge is current or another check is under way (one at
// a time: scrubbing does not pile them up).
func (f *fidelityChecks) start(k ckey, gen int) bool {
	if f.badges == nil {
		f.badges = newLRU[*fidelityBadge](256)
	}
	if b, ok := f.badges.get(k); ok && b.gen == gen || f.busy {
		return false
	}
	f.busy = true
	f.badges.put(k, &fidelityBadge{gen: gen, loading: true})
	return true
}

// done ends the check msg answers, keeping its badge when current (the
// open thread's, this opening's): kept says whether it did.
func (f *fidelityChecks) done(msg fidelityMsg, current bool) (kept bool) {
	f.busy = false
	if !current || f.badges == nil {
		return false
	}
	f.badges.put(ckey{msg.thread, msg.id}, &fidelityBadge{gen: msg.gen, verdict: msg.verdict, err: msg.err})
	return true
}

// badge is checkpoint k's badge for the thread's opening gen, if any.
func (f *fidelityChecks) badge(k ckey, gen int) *fidelityBadge {
	if f.badges == nil {
		return nil
	}
	b, ok := f.badges.get(k)
	if !ok || b.gen != gen {
		return nil
	}
	return b
}

type fidelityMsg struct {
	gen     int
	thread  string
	id      string
	verdict Verdict
	err     error
}

// check starts the badge of cur, the checkpoint under the cursor, when
// its extension checks it and it has no badge yet, and the State pane
// shows it. One check runs at a time: scrubbing a long thread does not
// pile them up; when one ends, the checkpoint then under the cursor gets
// its own.
func (f *fidelityChecks) check(cur *detail, stateShown bool) tea.Cmd {
	s, d := f.sess, cur
	c, ok := d.checker()
	if !ok || s.thread == "" || !stateShown {
		return nil
	}
	sh := Shown{Checkpoint: d.cp, Value: d.value, Parent: d.parent, ParentValue: d.pvalue}
	if _, _, ok := c.Checks(sh); !ok {
		return nil
	}
	if !f.start(ckey{s.thread, d.id}, s.gen) {
		return nil
	}
	return loadCheck(s.ctx, s.deps.Backend, c, s.gen, s.thread, d.id, sh)
}

// checker is d's extension's Checker, when d decoded.
func (d *detail) checker() (Checker, bool) {
	if d == nil || d.stateErr != nil || d.ext == nil {
		return nil, false
	}
	c, ok := d.ext.(Checker)
	return c, ok
}

// loadCheck runs c's check of sh in a Cmd.
func loadCheck(ctx context.Context, b Backend, c Checker, gen int, thread, id string, sh Shown) tea.Cmd {
	return func() tea.Msg {
		v, err := c.Check(ctx, b, thread, sh)
		return fidelityMsg{gen: gen, thread: thread, id: id, verdict: v, err: err}
	}
}

// badgeOf is the badge of the checkpoint shown, if any.
func (f *fidelityChecks) badgeOf(d *detail) *fidelityBadge {
	if d == nil {
		return nil
	}
	return f.badge(ckey{f.sess.thread, d.id}, f.sess.gen)
}

// fidelityHeader is the State pane's first lines at a checkpoint its
// extension checks: the check's heading and its badge.
func (r *renderer) fidelityHeader(d *detail, b *fidelityBadge, w int) []string {
	c, ok := d.checker()
	if !ok {
		return nil
	}
	th := r.theme
	head, name, ok := c.Checks(Shown{Checkpoint: d.cp, Value: d.value, Parent: d.parent, ParentValue: d.pvalue, Theme: th, Width: w})
	if !ok {
		return nil
	}
	var badge string
	switch {
	case b == nil || b.loading:
		badge = th.Muted.Render(name + " …")
	case b.err != nil:
		badge = th.Warning.Render(name + " not checked: " + termtext.Error(b.err.Error()))
	case b.verdict.OK:
		badge = th.Success.Render(termtext.Line(b.verdict.Text))
	default:
		badge = th.Error.Render(termtext.Line(b.verdict.Text))
		if b.verdict.Hint != "" {
			badge += th.Muted.Render(" (" + termtext.Line(b.verdict.Hint) + ")")
		}
	}
	if width(head+badge) > w { // the badge on a line of its own
		return []string{trunc(head, w), trunc("  "+badge, w), ""}
	}
	return []string{head + th.Muted.Render(" · ") + badge, ""}
}
