package ticketview

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/charmbracelet/lipgloss"

	"rewind/engine/ticket"
	"rewind/themes"
	"rewind/tui"
	"rewind/tui/draw"
	"rewind/tui/termtext"
)

// state draws the ticket's channels as of the checkpoint: attachments
// (references intact), subtasks, review rounds, budget, history version,
// the source versions read, operations and authorization. Changed
// channels are marked against the parent.
func state(sh tui.Shown) []string {
	th := sh.Theme
	if sh.Err != nil {
		return append([]string{th.Error.Render("this checkpoint's state does not decode:")}, draw.Wrap(sh.Err.Error(), sh.Width)...)
	}
	t := &ticketLines{th: th, sh: sh, s: stateOf(sh.Value), w: sh.Width, unfold: sh.Unfold}
	t.turn()
	t.add("")
	t.attachments()
	t.add("")
	t.subtasks()
	t.records()
	t.approvals()
	return t.out
}

// ticketLines is the ticket's State pane being drawn.
type ticketLines struct {
	th     *themes.Theme
	sh     tui.Shown
	s      ticket.State
	w      int
	unfold bool
	out    []string
}

// mark says a channel changed against the parent.
func (t *ticketLines) mark(ch string) string {
	if t.sh.Changed[ch] && t.sh.Parent != nil {
		return t.th.Warning.Render(" • changed")
	}
	return ""
}

func (t *ticketLines) add(ls ...string) { t.out = append(t.out, ls...) }

// wrapped adds text wrapped to the pane under indent.
func (t *ticketLines) wrapped(text, indent string, st lipgloss.Style) {
	for _, l := range draw.Wrap(text, max(t.w-draw.Width(indent), 8)) {
		t.add(indent + st.Render(l))
	}
}

// heading is a section's title with its count, marked as changed by
// the channel key (see mark).
func (t *ticketLines) heading(title string, n int, key string) string {
	return t.th.Heading.Render(fmt.Sprintf("%s (%d)", title, n)) + t.mark(key)
}

// turn is the turn's counters.
func (t *ticketLines) turn() {
	th := t.th
	s := t.s
	add, mark, wrapped := t.add, t.mark, t.wrapped
	budget := "—"
	if s.BudgetRemaining != nil {
		budget = fmt.Sprintf("%d/%d", *s.BudgetRemaining, ticket.TurnToolBudget)
	}
	if ticket.BudgetMissing(t.sh.Checkpoint.Values) {
		budget += " (none stored: read as 0)"
	}
	degraded := th.Success.Render("no")
	if s.Degraded {
		degraded = th.Warning.Render("yes")
	}
	add(th.Heading.Render("Turn"))
	add(fmt.Sprintf("  review rounds %s%s", th.Strong.Render(fmt.Sprintf("%d/%d", s.ReviewRounds, ticket.MaxReviewRounds)), mark("reviewRounds")))
	add(fmt.Sprintf("  tool budget   %s%s", th.Strong.Render(budget), mark("budgetRemaining")))
	add(fmt.Sprintf("  history       %s%s", th.Strong.Render(fmt.Sprintf("v%d", s.HistoryVersion)), mark("historyVersion")))
	add(fmt.Sprintf("  degraded      %s%s", degraded, mark("degraded")))
	add(fmt.Sprintf("  messages      %s%s", th.Strong.Render(fmt.Sprint(len(s.Messages))), mark("messages")))
	if s.DraftRequested {
		add(fmt.Sprintf("  draft         %s%s", th.Strong.Render("requested"), mark("draftRequested")))
	}
	if s.Request != nil {
		add(th.Muted.Render(fmt.Sprintf("  requirement #%d", s.Request.Index)) + mark("request"))
		wrapped(s.Request.Text, "    ", th.Text)
	}
}

// attachments are the turn's attachments, references intact.
func (t *ticketLines) attachments() {
	th := t.th
	s := t.s
	add, wrapped := t.add, t.wrapped
	add(t.heading("Attachments", len(s.Attachments), "attachments"))
	if len(s.Attachments) == 0 {
		add(th.Muted.Render("  none"))
	}
	for _, a := range s.Attachments {
		line := fmt.Sprintf("%s · %s · %s", a.ID, a.Kind, a.Ref)
		if a.Caption != "" {
			line += fmt.Sprintf(" · %q", a.Caption)
		}
		wrapped(line, "  ◆ ", th.Text)
	}
}

// subtasks are the plan's subtasks, marked against the parent's.
func (t *ticketLines) subtasks() {
	th := t.th
	s := t.s
	w := t.w
	unfold := t.unfold
	add, wrapped := t.add, t.wrapped
	add(t.heading("Subtasks", len(s.Subtasks), "subtasks"))
	if len(s.Subtasks) == 0 {
		add(th.Muted.Render("  none"))
	}
	var prev map[string]ticket.Subtask
	if parentStateOf(t.sh) != nil {
		prev = map[string]ticket.Subtask{}
		for _, st := range parentStateOf(t.sh).Subtasks {
			prev[st.ID] = st
		}
	}
	for _, st := range s.Subtasks {
		icon, style := statusIcon(th, st.Status)
		head := fmt.Sprintf("  %s %s %s · tools %d", style.Render(icon), th.Strong.Render(draw.Cut(termtext.Name(st.ID), max(w/2, 10))), style.Render(termtext.Line(st.Status)), st.ToolCalls)
		if old, ok := prev[st.ID]; prev != nil && (!ok || old != st) {
			if !ok {
				head += th.Warning.Render(" • new")
			} else if old.Status != st.Status {
				head += th.Warning.Render(" • was " + termtext.Line(old.Status))
			} else {
				head += th.Warning.Render(" • changed")
			}
		}
		add(draw.Cut(head, w))
		wrapped(st.Goal, "      ", th.Muted)
		if st.Result != "" {
			text, _ := draw.Clip(st.Result, draw.FoldedRunes)
			if !unfold {
				text, _ = draw.Clip(st.Result, 600)
			}
			wrapped("→ "+text, "      ", th.Text)
		}
		if st.Feedback != "" {
			wrapped("critic: "+st.Feedback, "      ", th.Warning)
		}
		if st.Status == ticket.StatusAwaitingApproval {
			wrapped("waits for a person's answer (a)", "      ", th.StatusApproval)
		}
	}
}

// records are the source versions read and the operations.
func (t *ticketLines) records() {
	th := t.th
	s := t.s
	w := t.w
	add, wrapped := t.add, t.wrapped
	if len(s.SourceVersions) > 0 {
		// The version of each record the tools read: a resume re-reads,
		// and the gate blocks a draft, when one has changed since.
		add("")
		add(t.heading("Source versions", len(s.SourceVersions), "sourceVersions"))
		ids := slices.Sorted(maps.Keys(s.SourceVersions))
		for _, id := range ids {
			line := fmt.Sprintf("  %s %s", termtext.Line(id), th.Strong.Render(fmt.Sprintf("v%d", s.SourceVersions[id])))
			if parentStateOf(t.sh) != nil {
				if old, ok := parentStateOf(t.sh).SourceVersions[id]; !ok {
					line += th.Warning.Render(" • new")
				} else if old != s.SourceVersions[id] {
					line += th.Warning.Render(fmt.Sprintf(" • was v%d", old))
				}
			}
			add(draw.Cut(line, w))
		}
	}
	if len(s.Operations) > 0 {
		add("")
		add(t.heading("Operations", len(s.Operations), "operations"))
		ids := slices.Sorted(maps.Keys(s.Operations))
		for _, id := range ids {
			op := s.Operations[id]
			line := fmt.Sprintf("%s · %s · %s %s", op.ID, op.Kind, op.Status, op.Result)
			if op.Reused {
				line += " (reused: already done)"
			}
			wrapped(line, "  ", th.Text)
		}
	}
}

// approvals are the answers given and the draft's authorization.
func (t *ticketLines) approvals() {
	th := t.th
	s := t.s
	add, mark, wrapped := t.add, t.mark, t.wrapped
	if len(s.Approvals) > 0 {
		add("")
		add(t.heading("Approvals", len(s.Approvals), "approvals"))
		ids := slices.Sorted(maps.Keys(s.Approvals))
		for _, id := range ids {
			d := s.Approvals[id]
			verdict, st := "approved", th.StatusDone
			if !d.Approved {
				verdict, st = "rejected", th.StatusBlocked
			}
			line := id + " · " + verdict
			if d.Reason != "" {
				line += ": " + d.Reason
			}
			if d.By != "" {
				line += " · by " + d.By
			}
			if d.At != "" {
				line += " · " + d.At
			}
			wrapped(line, "  ", st)
		}
	}
	if s.Authorization != nil {
		add("")
		add(th.Heading.Render("Authorization") + mark("authorization"))
		wrapped(fmt.Sprintf("%s · expires %s", s.Authorization.Ref, s.Authorization.ExpiresAt), "  ", th.Text)
	}
}

// statusIcon is a subtask's status as an icon and its colour.
func statusIcon(th *themes.Theme, status string) (string, lipgloss.Style) {
	switch strings.ToLower(status) {
	case ticket.StatusApproved:
		return "✓", th.StatusDone
	case ticket.StatusDone:
		return "●", th.StatusDone
	case ticket.StatusPending:
		return "○", th.StatusPending
	case ticket.StatusRedo:
		return "↻", th.StatusRedo
	case ticket.StatusBlocked:
		return "✗", th.StatusBlocked
	case strings.ToLower(ticket.StatusAwaitingApproval):
		return "⏸", th.StatusApproval
	}
	return "·", th.Muted
}
