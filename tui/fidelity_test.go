package tui

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"rewind/engine"
	"rewind/engine/ticket"
	"rewind/themes"
)

// transcriptOnly is a Backend that reads only the transcript.
type transcriptOnly struct {
	Backend
	msgs []ticket.Message
}

func (b transcriptOnly) Transcript(_ context.Context, _ string, _, from, to int64) ([]engine.StoredMessage, error) {
	var out []engine.StoredMessage
	for _, m := range b.msgs {
		if int64(m.Index) < from || int64(m.Index) > to {
			continue
		}
		body, _ := json.Marshal(m)
		out = append(out, engine.StoredMessage{Index: int64(m.Index), Body: body})
	}
	return out, nil
}

// The badge of a summary that keeps every fact, of one the budget folded
// some of, and of one that altered an amount: read through the Cmd from
// the stored transcript, then drawn in the State pane's header.
func TestFidelityBadgeKeptFoldedAltered(t *testing.T) {
	originals := []ticket.Message{
		{Index: 1, Role: ticket.RoleUser, Speaker: "user", Content: "Order SO20260901 arrived damaged; I paid 49.95 EUR on 2026-09-01."},
		{Index: 2, Role: ticket.RoleAssistant, Speaker: "executor[t-2]", Content: "invoice INV-004213 has VAT 21%"},
		{Index: 3, Role: ticket.RoleUser, Speaker: "user", Content: "thanks, that is all"},
	}
	// The facts ledger keeps #2's facts when its line folds.
	ledger := []string{"#1 user: SO20260901; 49.95 EUR; 2026-09-01\n#2 executor[t-2]: INV-004213; 21%"}
	cases := []struct {
		name, text, want string
		pass             bool
		facts            []string
	}{
		{"kept", "#1 user: Order SO20260901 arrived damaged; paid 49.95 EUR on 2026-09-01.\n#2 executor[t-2]: invoice INV-004213, VAT 21%\n#3 user: thanks",
			"fidelity ✓ 5 kept", true, ledger},
		{"folded", "#1 user: Order SO20260901 arrived damaged; paid 49.95 EUR on 2026-09-01.\n#2–#3 executor[t-2], user: answered; 2 facts retired",
			"fidelity ✓ 3 kept · 2 folded", true, ledger},
		{"folded away", "#1 user: Order SO20260901 arrived damaged; paid 49.95 EUR on 2026-09-01.\n#2–#3 executor[t-2], user: answered; 2 facts retired",
			"fidelity ✗ 2 lost · 3 kept", false, nil},
		{"altered", "#1 user: Order SO20260901 arrived damaged; paid 94.95 EUR on 2026-09-01.\n#2–#3 executor[t-2], user: answered; 2 facts retired",
			"fidelity ✗ 1 altered · 2 kept · 2 folded", false, ledger},
	}
	r := newRenderer(themes.Or(themes.Default))
	for _, tc := range cases {
		s := &ticket.Summary{Text: tc.text, From: 1, To: 3, HistoryVersion: 1}
		d := &detail{id: "7", cp: engine.Checkpoint{ID: 7}, ext: TicketExtension(), value: ticket.State{Summary: s, Facts: tc.facts}}
		c, _ := d.checker()
		msg, ok := loadCheck(context.Background(), transcriptOnly{msgs: originals}, c, 1, "t", "7", Shown{Checkpoint: d.cp, Value: d.value})().(fidelityMsg)
		if !ok || msg.err != nil {
			t.Fatalf("%s: %#v", tc.name, msg)
		}
		if v := msg.verdict; v.Text != tc.want || v.OK != tc.pass {
			t.Errorf("%s: badge %q (pass %v), want %q (pass %v)", tc.name, v.Text, v.OK, tc.want, tc.pass)
		}
		head := strings.Join(r.fidelityHeader(d, &fidelityBadge{gen: 1, verdict: msg.verdict}, 120), "\n")
		if !strings.Contains(ansi.Strip(head), tc.want) || !strings.Contains(ansi.Strip(head), "Summary #1–#3") {
			t.Errorf("%s: header %q", tc.name, ansi.Strip(head))
		}
	}
}

// The badge is computed once per checkpoint: moving back to a checkpoint
// whose badge is kept starts no second check.
func TestFidelityBadgeIsCachedPerCheckpoint(t *testing.T) {
	m := New(context.Background(), Deps{Backend: transcriptOnly{}, Extension: TicketExtension()}, Settings{Thread: "t"})
	m.sess.thread, m.sess.gen = "t", 3
	m.showPane(paneState)
	m.cur = &detail{id: "7", cp: engine.Checkpoint{ID: 7}, ext: TicketExtension(), value: ticket.State{Summary: &ticket.Summary{From: 1, To: 1}}}
	if m.checkFidelity() == nil {
		t.Fatal("no check started at a checkpoint with a summary")
	}
	if m.checkFidelity() != nil {
		t.Fatal("a second check started while the first is under way")
	}
	m.Update(fidelityMsg{gen: 3, thread: "t", id: "7"})
	if b := m.fidelity.badgeOf(m.cur); b == nil || b.loading {
		t.Fatalf("badge not kept: %+v", b)
	}
	if m.checkFidelity() != nil {
		t.Fatal("a kept badge was checked again")
	}
	m.sess.gen++ // the thread opened again (a lesson prepared anew)
	if m.checkFidelity() == nil {
		t.Fatal("a badge of an earlier opening of the thread was reused")
	}
	// One check at a time: scrubbing on while one runs starts none; its
	// end starts the one of the checkpoint then under the cursor.
	m.cur = &detail{id: "9", cp: engine.Checkpoint{ID: 9}, ext: TicketExtension(), value: ticket.State{Summary: &ticket.Summary{From: 1, To: 2}}}
	if m.checkFidelity() != nil {
		t.Fatal("a second check started while one runs")
	}
	if _, cmd := m.Update(fidelityMsg{gen: 4, thread: "t", id: "7"}); cmd == nil {
		t.Fatal("the end of a check started none for the checkpoint under the cursor")
	}
	m.Update(fidelityMsg{gen: 4, thread: "t", id: "9"})
	m.cur = &detail{id: "8", cp: engine.Checkpoint{ID: 8}, ext: TicketExtension(), value: ticket.State{}}
	if m.checkFidelity() != nil {
		t.Fatal("a check started at a checkpoint without a summary")
	}
}

// The badge is checked only while the State pane is on screen: scrubbing
// with the conversation shown reads no transcript (on a long thread a check
// reads thousands of messages); showing the State pane starts it, in the
// narrow layout (2) and in the wide one's side column.
func TestFidelityBadgeOnlyWhenStateShows(t *testing.T) {
	for _, w := range []int{80, 140} {
		m := New(context.Background(), Deps{Backend: transcriptOnly{}, Extension: TicketExtension()}, Settings{Thread: "t"})
		m.Update(tea.WindowSizeMsg{Width: w, Height: 30})
		m.sess.thread, m.sess.gen = "t", 3
		m.cur = &detail{id: "7", cp: engine.Checkpoint{ID: 7}, ext: TicketExtension(), value: ticket.State{Summary: &ticket.Summary{From: 1, To: 1}}}
		if m.checkFidelity() != nil {
			t.Fatalf("%d columns: a check started with the State pane off screen", w)
		}
		if m.showPane(paneInsp) != nil {
			t.Fatalf("%d columns: showing the inspector started a check", w)
		}
		if m.showPane(paneState) == nil {
			t.Fatalf("%d columns: showing the State pane started no check", w)
		}
	}
}
