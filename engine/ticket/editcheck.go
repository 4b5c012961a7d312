package ticket

// The ticket graph's checks of a value a person edits in (rewind edit, the
// TUI's e: engine.Graph.CheckChannel), run once the channel's reducer took
// the value, before the whole state is decoded (CheckState): an edit never
// stores what the graph would refuse, or read differently from what was
// given.
//   - budgetRemaining: a whole number, 0 or more. A missing budget read
//     as "no ceiling" once; now it reads as 0 (Decode), and an edit may
//     not store one.
//   - summary: the summarizer's own checks (CheckSummary: budget, lines,
//     coverage) and the fidelity check (CheckFidelity: every pinned fact
//     verbatim on its message's line), against the stored transcript;
//     it covers what the messages no longer hold, up to the first of
//     them, at the state's history version.
//   - subtasks: no more due than one superstep may fan out to
//     (engine.Graph.SendCap).
//   - scenario: one the graph knows (CheckScenario, as a turn's
//     --scenario): an unknown one was stored and every later turn ran as
//     the ticket under a name nothing else takes.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"rewind/engine"
)

// declareChecks registers the ticket graph's edit checks.
func declareChecks(g *engine.Graph) {
	g.CheckChannel("budgetRemaining", checkBudgetEdit).
		CheckChannel("summary", checkSummaryEdit).
		CheckChannel("subtasks", func(_ context.Context, in engine.ChannelEdit) error { return checkSubtasksEdit(in, g.SendCap()) }).
		CheckChannel("scenario", checkScenarioEdit)
}

// checkScenarioEdit: a scenario the graph knows, as a turn's.
func checkScenarioEdit(_ context.Context, in engine.ChannelEdit) error {
	var s string
	raw := bytes.TrimSpace(in.Values["scenario"])
	if err := json.Unmarshal(raw, &s); err != nil || string(raw) == "null" {
		return fmt.Errorf("scenario must be a string: give %s", strings.Join(quoted(Scenarios), " or "))
	}
	if err := CheckScenario(s); err != nil {
		return fmt.Errorf("scenario: %w (\"\" is the ticket too)", err)
	}
	return nil
}

func quoted(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}

// checkBudgetEdit: the tool budget is a whole number of calls, 0 or more.
func checkBudgetEdit(_ context.Context, in engine.ChannelEdit) error {
	raw := bytes.TrimSpace(in.Values["budgetRemaining"])
	fix := fmt.Sprintf("give the tool calls the turn has left, 0 or more (a turn starts with %d)", TurnToolBudget)
	bad := func(err error) error { return &WantError{Err: err, Want: WantBudget, Value: TurnToolBudget} }
	if len(raw) == 0 || string(raw) == "null" {
		return bad(fmt.Errorf("budgetRemaining is required: a missing budget is no ceiling; %s", fix))
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	switch {
	case err != nil:
		return bad(fmt.Errorf("budgetRemaining must be a whole number, not %s; %s", clip(string(raw), 40), fix))
	case n < 0:
		return bad(fmt.Errorf("budgetRemaining must be 0 or more, not %d; %s", n, fix))
	}
	return nil
}

// checkSubtasksEdit: no more subtasks due than one superstep may send.
func checkSubtasksEdit(in engine.ChannelEdit, limit int) error {
	s, err := Decode(in.Values, "subtasks")
	if err != nil {
		return err
	}
	due := 0
	for _, st := range s.Subtasks {
		if st.Status == StatusPending || st.Status == StatusRedo {
			due++
		}
	}
	if due > limit {
		return fmt.Errorf("%d subtasks are %s or %s, and each is an executor run at once, over the cap of %d a superstep may fan out to: keep at most %d of them due (the planner makes at most %d)",
			due, StatusPending, StatusRedo, limit, limit, MaxSubtasks)
	}
	return nil
}

// checkSummaryEdit: an edited summary passes the checks the summarizer's
// own passes, against the original messages it covers.
func checkSummaryEdit(ctx context.Context, in engine.ChannelEdit) error {
	s, err := Decode(in.Values, "summary", "messages", "historyVersion", "facts")
	if err != nil {
		return err
	}
	first := 0 // the first message the channel still holds
	if len(s.Messages) > 0 {
		first = s.Messages[0].Index
	}
	sum := s.Summary
	if sum == nil {
		if first > 1 {
			return fmt.Errorf("summary: without one, messages #1–#%d are in neither the summary nor the messages: give a summary that covers them", first-1)
		}
		return nil
	}
	if err := CheckSummary(sum.Text, sum.From, sum.To); err != nil {
		return fmt.Errorf("summary: %w: give one line per message or phase, \"#index speaker: …\", covering #%d–#%d in order within %d runes", err, sum.From, sum.To, SummaryBudget)
	}
	switch {
	case sum.From < 1 || sum.From > sum.To:
		return fmt.Errorf("summary: it covers #%d–#%d, which is no range of messages: give from 1 to the message before the first one kept", sum.From, sum.To)
	case first > 0 && sum.To != first-1:
		return fmt.Errorf("summary: it covers #%d–#%d, but the messages it leaves start at #%d: give one that ends at #%d", sum.From, sum.To, first, first-1)
	case sum.Count != sum.To-sum.From+1:
		return fmt.Errorf("summary: its count is %d, but #%d–#%d are %d messages: give count %d", sum.Count, sum.From, sum.To, sum.To-sum.From+1, sum.To-sum.From+1)
	case sum.HistoryVersion != s.HistoryVersion:
		return fmt.Errorf("summary: it says history v%d, but the state is at v%d: give historyVersion %d (an edit is not a compaction)", sum.HistoryVersion, s.HistoryVersion, s.HistoryVersion)
	}
	stored, err := in.Transcript(ctx, int64(sum.From), int64(sum.To))
	if err != nil {
		return fmt.Errorf("summary: read the messages it covers: %w", err)
	}
	originals := make([]Message, 0, len(stored))
	for _, m := range stored {
		var msg Message
		if err := json.Unmarshal(m.Body, &msg); err != nil {
			return fmt.Errorf("summary: message #%d: %w", m.Index, err)
		}
		originals = append(originals, msg)
	}
	r := CheckFidelity(sum, s.Facts, originals)
	if r.OK() {
		return nil
	}
	var bad []string
	for _, f := range r.Facts {
		switch f.Status {
		case FactAltered:
			bad = append(bad, fmt.Sprintf("#%d %s's %q altered (the line says %s)", f.Index, f.Speaker, f.Fact, strings.Join(f.Instead, ", ")))
		case FactMoved:
			bad = append(bad, fmt.Sprintf("#%d %s's %q moved to another line", f.Index, f.Speaker, f.Fact))
		case FactLost:
			bad = append(bad, fmt.Sprintf("#%d %s's %q lost", f.Index, f.Speaker, f.Fact))
		}
	}
	more := ""
	if len(bad) > 3 {
		bad, more = bad[:3], fmt.Sprintf(" and %d more", len(bad)-3)
	}
	return wantErr(WantFidelity, fmt.Errorf("summary: %s%s: a summary keeps every pinned fact (id, amount, date, reference, sign-off) verbatim on its message's own line; put them back",
		strings.Join(bad, "; "), more))
}
