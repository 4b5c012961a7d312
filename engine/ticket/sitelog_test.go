package ticket

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"rewind/engine"
	"rewind/store/memory"
)

// The site-log scenario plans checks of the day's matters with its own
// tools, writes a daily report, and its summary keeps the seed's facts
// (depths, batches, change orders, who signed) through compaction: the
// fidelity check passes on the mock's summary after two weeks of days.
func TestSiteLogScenarioKeepsItsFacts(t *testing.T) {
	ctx := context.Background()
	e, err := engine.New(memory.New(), NewGraph(), NewMock())
	if err != nil {
		t.Fatal(err)
	}
	const days = 14
	for d := 1; d <= days; d++ {
		turn := Turn{Text: SiteLogDay(d)}
		if d == 1 {
			turn.Scenario = ScenarioSiteLog
		}
		if _, err := e.Run(ctx, "site", turn.Writes(), engine.RunConfig{}); err != nil {
			t.Fatalf("day %d: %v", d, err)
		}
		head, err := e.Latest(ctx, "site")
		if err != nil {
			t.Fatal(err)
		}
		s, err := Decode(head.Values)
		if err != nil {
			t.Fatal(err)
		}
		if s.Scenario != ScenarioSiteLog {
			t.Fatalf("day %d: scenario %q, want it kept from day 1", d, s.Scenario)
		}
		want := map[int]string{1: "excavation", 2: "concrete", 3: "change", 0: "inspection"}[d%4]
		found := false
		for _, st := range s.Subtasks {
			found = found || st.Topic == want
			if topicOf(st.Topic).tool == "search_kb" || !strings.Contains(st.Goal, "DL2026") {
				t.Errorf("day %d: subtask %+v is not a site check of the day's log", d, st)
			}
		}
		if !found {
			t.Errorf("day %d (%q): subtasks %+v, want a %s check", d, SiteLogDay(d), s.Subtasks, want)
		}
		last := s.Messages[len(s.Messages)-1]
		if last.Speaker != "reply" || !strings.HasPrefix(last.Content, "Daily report:") {
			t.Errorf("day %d: the reply is %q, want a daily report", d, last.Content)
		}
	}
	head, err := e.Latest(ctx, "site")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Decode(head.Values)
	if err != nil {
		t.Fatal(err)
	}
	if s.Summary == nil || s.Summary.HistoryVersion < 2 {
		t.Fatalf("two weeks of days compacted %v times, want at least twice", s.Summary)
	}
	stored, err := e.Transcript(ctx, "site", head.ID, int64(s.Summary.From), int64(s.Summary.To))
	if err != nil {
		t.Fatal(err)
	}
	var msgs []Message
	for _, m := range stored {
		var msg Message
		if err := json.Unmarshal(m.Body, &msg); err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, msg)
	}
	r := CheckFidelity(s.Summary, msgs)
	if !r.OK() || r.Counts.Kept == 0 {
		t.Fatalf("fidelity of the site log's summary: %s", r.Verdict())
	}
	// Sign-offs retire last: the newest summarized one is still verbatim.
	if !strings.Contains(s.Summary.Text, "signed by J. Devries") {
		t.Errorf("no sign-off kept verbatim in the summary:\n%s", s.Summary.Text)
	}
	if !strings.Contains(s.Summary.Text, "CO-0") {
		t.Errorf("no change order kept in the summary:\n%s", s.Summary.Text)
	}
}

func TestUnknownScenarioIsRefused(t *testing.T) {
	if err := CheckScenario("space-station"); err == nil || !strings.Contains(err.Error(), "ticket or site-log") {
		t.Fatalf("CheckScenario(space-station) = %v", err)
	}
	for _, s := range []string{"", ScenarioTicket, ScenarioSiteLog} {
		if err := CheckScenario(s); err != nil {
			t.Errorf("CheckScenario(%q) = %v", s, err)
		}
	}
}
