package tui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

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
// is computed in a Cmd once per checkpoint and kept; View only reads it.

// transcriptReader is a Backend that reads the stored transcript.
type transcriptReader interface {
	Transcript(ctx context.Context, thread string, at, from, to int64) ([]engine.StoredMessage, error)
}

// fidelityBadge is a checkpoint's fidelity: loading until report or err.
type fidelityBadge struct {
	gen     int // the thread's opening it belongs to
	loading bool
	report  ticket.FidelityReport
	err     error
}

type fidelityMsg struct {
	gen    int
	thread string
	id     int64
	report ticket.FidelityReport
	err    error
}

// checkFidelity starts the badge of the checkpoint under the cursor when
// it has a summary and no badge yet. One check runs at a time: scrubbing
// a long thread does not pile them up; when one ends, the checkpoint then
// under the cursor gets its own.
func (m *Model) checkFidelity() tea.Cmd {
	d := m.cur
	if d == nil || d.stateErr != nil || d.state.Summary == nil || m.thread == "" {
		return nil
	}
	if m.fidelity == nil {
		m.fidelity = newLRU[*fidelityBadge](256)
	}
	k := ckey{m.thread, d.cp.ID}
	if b, ok := m.fidelity.get(k); ok && b.gen == m.gen || m.fidelityBusy {
		return nil
	}
	m.fidelityBusy = true
	m.fidelity.put(k, &fidelityBadge{gen: m.gen, loading: true})
	return loadFidelity(m.ctx, m.deps.Backend, m.gen, m.thread, d.cp.ID, d.state.Summary)
}

// loadFidelity reads the summary's originals and checks them.
func loadFidelity(ctx context.Context, b Backend, gen int, thread string, id int64, s *ticket.Summary) tea.Cmd {
	return func() tea.Msg {
		msg := fidelityMsg{gen: gen, thread: thread, id: id}
		tr, ok := b.(transcriptReader)
		if !ok {
			msg.err = errors.New("this store cannot read the transcript")
			return msg
		}
		stored, err := tr.Transcript(ctx, thread, id, int64(max(s.From, 1)), int64(s.To))
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
		msg.report = ticket.CheckFidelity(s, originals)
		return msg
	}
}

// onFidelity keeps a badge and redraws the State pane if it shows it.
func (m *Model) onFidelity(msg fidelityMsg) tea.Cmd {
	m.fidelityBusy = false
	if msg.gen == m.gen && msg.thread == m.thread && m.fidelity != nil {
		m.fidelity.put(ckey{msg.thread, msg.id}, &fidelityBadge{gen: msg.gen, report: msg.report, err: msg.err})
		if m.cur != nil && m.cur.cp.ID == msg.id {
			m.content.panes[paneState].key = paneKey{} // its inputs changed: render it again
			m.syncPanes()
		}
	}
	return m.checkFidelity() // the cursor may have moved on meanwhile
}

// fidelityBadgeOf is the badge of the checkpoint shown, if any.
func (m *Model) fidelityBadgeOf(d *detail) *fidelityBadge {
	if d == nil || m.fidelity == nil {
		return nil
	}
	b, ok := m.fidelity.get(ckey{m.thread, d.cp.ID})
	if !ok || b.gen != m.gen {
		return nil
	}
	return b
}

// badgeText is the badge's words and whether the check passed:
// "fidelity ✓ 13 kept · 50 folded", "fidelity ✗ 1 altered · 12 kept".
func badgeText(r ticket.FidelityReport) (string, bool) {
	c := r.Counts
	if len(r.Facts) == 0 {
		return "fidelity ✓ no pinned facts to keep", true
	}
	var bad []string
	for _, kv := range []struct {
		n    int
		what string
	}{{c.Altered, "altered"}, {c.Moved, "moved"}, {c.Lost, "lost"}} {
		if kv.n > 0 {
			bad = append(bad, fmt.Sprintf("%d %s", kv.n, kv.what))
		}
	}
	good := []string{fmt.Sprintf("%d kept", c.Kept)}
	if c.Folded > 0 {
		good = append(good, fmt.Sprintf("%d folded", c.Folded))
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
		text, ok := badgeText(b.report)
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
