package tui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"rewind/engine"
	"rewind/engine/ticket"
	"rewind/store"
	"rewind/tui/termtext"
)

// The fidelity badge: at a checkpoint with a summary, the State pane says
// whether the summary keeps every pinned fact of the messages it covers
// with its index and speaker (ticket.CheckFidelity over the stored
// transcript of the summary's range, as `rewind check fidelity` does). It
// is computed in a Cmd once per checkpoint, and only while the State pane
// is on screen: on a long thread the check reads every message the summary
// covers (thousands), so a badge nobody sees is not paid for. A badge keeps
// its counts, not the report's facts (one per pinned fact: thousands too).
// View only reads it.

// transcriptReader is a Backend that reads the stored transcript.
type transcriptReader interface {
	Transcript(ctx context.Context, thread string, at, from, to int64) ([]engine.StoredMessage, error)
}

// fidelityBadge is a checkpoint's fidelity: loading until report or err.
type fidelityBadge struct {
	gen     int // the thread's opening it belongs to
	loading bool
	counts  fidelityCounts
	err     error
}

// fidelityCounts is what a badge says of a report.
type fidelityCounts struct {
	facts                              int
	kept, folded, moved, altered, lost int
}

func countsOf(r ticket.FidelityReport) fidelityCounts {
	c := r.Counts
	return fidelityCounts{facts: len(r.Facts), kept: c.Kept, folded: c.Folded, moved: c.Moved, altered: c.Altered, lost: c.Lost}
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
	f.badges.put(ckey{msg.thread, msg.id}, &fidelityBadge{gen: msg.gen, counts: msg.counts, err: msg.err})
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
	gen    int
	thread string
	id     string
	counts fidelityCounts
	err    error
}

// check starts the badge of cur, the checkpoint under the cursor, when
// it has a summary and no badge yet, and the State pane shows it. One check runs at a time: scrubbing
// a long thread does not pile them up; when one ends, the checkpoint then
// under the cursor gets its own.
func (f *fidelityChecks) check(cur *detail, stateShown bool) tea.Cmd {
	s, d := f.sess, cur
	if d == nil || d.stateErr != nil || d.state.Summary == nil || s.thread == "" || !stateShown {
		return nil
	}
	if !f.start(ckey{s.thread, d.id}, s.gen) {
		return nil
	}
	return loadFidelity(s.ctx, s.deps.Backend, s.gen, s.thread, d.id, d.state.Summary, d.state.Facts)
}

// loadFidelity reads the summary's originals and checks them.
func loadFidelity(ctx context.Context, b Backend, gen int, thread, id string, s *ticket.Summary, facts []string) tea.Cmd {
	return func() tea.Msg {
		msg := fidelityMsg{gen: gen, thread: thread, id: id}
		tr, ok := b.(transcriptReader)
		if !ok {
			msg.err = errors.New("this store cannot read the transcript")
			return msg
		}
		stored, err := tr.Transcript(ctx, thread, num(id), int64(max(s.From, 1)), int64(s.To))
		if err != nil {
			msg.err = err
			return msg
		}
		originals := make([]ticket.Message, 0, len(stored))
		for _, sm := range stored {
			var om ticket.Message
			if err := json.Unmarshal(sm.Body, &om); err != nil {
				msg.err = fmt.Errorf("message #%d of thread %s does not decode: %w", sm.Index, store.Name(thread), err)
				return msg
			}
			originals = append(originals, om)
		}
		msg.counts = countsOf(ticket.CheckFidelity(s, facts, originals))
		return msg
	}
}

// badgeOf is the badge of the checkpoint shown, if any.
func (f *fidelityChecks) badgeOf(d *detail) *fidelityBadge {
	if d == nil {
		return nil
	}
	return f.badge(ckey{f.sess.thread, d.id}, f.sess.gen)
}

// badgeText is the badge's words and whether the check passed:
// "fidelity ✓ 13 kept · 50 folded", "fidelity ✗ 1 altered · 12 kept".
func badgeText(c fidelityCounts) (string, bool) {
	if c.facts == 0 {
		return "fidelity ✓ no pinned facts to keep", true
	}
	var bad []string
	for _, kv := range []struct {
		n    int
		what string
	}{{c.altered, "altered"}, {c.moved, "moved"}, {c.lost, "lost"}} {
		if kv.n > 0 {
			bad = append(bad, fmt.Sprintf("%d %s", kv.n, kv.what))
		}
	}
	good := []string{fmt.Sprintf("%d kept", c.kept)}
	if c.folded > 0 {
		good = append(good, fmt.Sprintf("%d folded", c.folded))
	}
	if len(bad) == 0 {
		return "fidelity ✓ " + strings.Join(good, " · "), true
	}
	return "fidelity ✗ " + strings.Join(append(bad, good...), " · "), false
}

// fidelityHeader is the State pane's first lines at a checkpoint with a
// summary: its range and the badge.
func (r *renderer) fidelityHeader(d *detail, b *fidelityBadge, w int) []string {
	if d == nil || d.stateErr != nil || d.state.Summary == nil {
		return nil
	}
	th := r.theme
	s := d.state.Summary
	head := th.Heading.Render("Summary") + th.Muted.Render(fmt.Sprintf(" #%d–#%d", s.From, s.To))
	var badge string
	switch {
	case b == nil || b.loading:
		badge = th.Muted.Render("fidelity …")
	case b.err != nil:
		badge = th.Warning.Render("fidelity not checked: " + termtext.Error(b.err.Error()))
	default:
		text, ok := badgeText(b.counts)
		if ok {
			badge = th.Success.Render(text)
		} else {
			badge = th.Error.Render(text) + th.Muted.Render(" (rewind check fidelity)")
		}
	}
	if width(head+badge) > w { // the badge on a line of its own
		return []string{trunc(head, w), trunc("  "+badge, w), ""}
	}
	return []string{head + th.Muted.Render(" · ") + badge, ""}
}
