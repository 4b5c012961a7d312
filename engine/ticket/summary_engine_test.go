package ticket

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"rewind/engine"
	"rewind/engine/model"
	"rewind/store/memory"
)

func newMemoryEngine(t *testing.T) *engine.Engine {
	t.Helper()
	return newMemoryEngineWith(t, NewMock())
}

func newMemoryEngineWith(t *testing.T, m model.Model) *engine.Engine {
	t.Helper()
	e, err := engine.New(memory.New(), NewGraph(), m)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func latestState(t *testing.T, e *engine.Engine, thread string) State {
	t.Helper()
	cp, err := e.Latest(context.Background(), thread)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Decode(cp.Values)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func eventsOf(t *testing.T, e *engine.Engine, thread, typ string) []map[string]any {
	t.Helper()
	evs, err := e.Events(context.Background(), thread, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, ev := range evs {
		if ev.Type != typ {
			continue
		}
		var d map[string]any
		if err := json.Unmarshal(ev.Data, &d); err != nil {
			t.Fatal(err)
		}
		out = append(out, d)
	}
	return out
}

// Issue 9 through the real engine: a hundred turns of ten support
// sentences, each with its own order number. After every turn the summary
// fits its budget, covers every index before the verbatim tail exactly
// once and keeps the newest requirements verbatim.
func TestHundredTurnsThroughTheEngineStayBounded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newMemoryEngine(t)
	var requests []Message
	var sizes []int
	for turn := 0; turn < 100; turn++ {
		res, err := e.Run(ctx, "long", Input(sentenceFor(turn)), engine.RunConfig{})
		if err != nil || res.Status != "done" {
			t.Fatalf("turn %d: %v (%s)", turn, err, res.Status)
		}
		s := latestState(t, e, "long")
		requests = append(requests, Message{Index: s.Request.Index, Speaker: "user", Content: s.Request.Text})
		if s.Summary == nil {
			continue
		}
		when := fmt.Sprintf("turn %d", turn+1)
		singles, _ := shapeOf(t, when, s.Summary)
		requireRecentRequests(t, when, s.Summary, singles, requests)
		if s.Messages[0].Index != s.Summary.To+1 || s.Summary.From != 1 {
			t.Fatalf("%s: summary #%d–#%d, tail from #%d", when, s.Summary.From, s.Summary.To, s.Messages[0].Index)
		}
		sizes = append(sizes, utf8.RuneCountInString(s.Summary.Text))
	}
	compacted := eventsOf(t, e, "long", EventContextCompacted)
	if len(compacted) < 60 {
		t.Fatalf("%d compactions in 100 turns", len(compacted))
	}
	for i, d := range compacted {
		if d["summaryChars"].(float64) > SummaryBudget || d["summaryCharsBefore"] == nil || d["pinned"] == nil || d["folded"] == nil || d["retired"] == nil {
			t.Fatalf("compaction %d event %v", i, d)
		}
	}
	last := latestState(t, e, "long")
	if got := compacted[len(compacted)-1]["summaryChars"].(float64); int(got) != utf8.RuneCountInString(last.Summary.Text) {
		t.Fatalf("event says %v runes, the summary has %d", got, utf8.RuneCountInString(last.Summary.Text))
	}
	for _, d := range eventsOf(t, e, "long", EventContextMeasured) {
		if d["tokens"].(float64) != d["summaryChars"].(float64)+d["messageTokens"].(float64) {
			t.Fatalf("measured tokens are not summary + messages: %v", d)
		}
	}
	t.Logf("summary runes after each compaction: first %v … last %v", sizes[:5], sizes[len(sizes)-5:])
}

// The node's trigger counts the summary: 8 messages of 7,000 characters
// stay under both lines, but with a 1,500-rune summary the context sent
// is 8,500 and compaction runs.
func TestSummarizerTriggersOnSummaryPlusMessages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newMemoryEngine(t)
	var history []Message
	for i := 0; i < 8; i++ {
		history = append(history, Message{Index: 30 + i, Role: RoleAssistant, Speaker: "critic", Content: strings.Repeat("checked ", 109) + "ok."})
	}
	prev := Summary{Text: "#1–#29 user, critic: began \"hi\"" + strings.Repeat(".", 1500-31), From: 1, To: 29, Count: 29, Speakers: []string{"critic", "user"}}
	if n := utf8.RuneCountInString(prev.Text); n != 1500 || EstimateTokens(history) != 7000 {
		t.Fatalf("setup: summary %d, messages %d", n, EstimateTokens(history))
	}
	if _, err := e.UpdateState(ctx, "t", 0, []engine.Write{engine.Put("messages", history), engine.Put("summary", prev)}, NodeCritic); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Resume(ctx, "t", engine.RunConfig{}); err != nil {
		t.Fatal(err)
	}
	measured := eventsOf(t, e, "t", EventContextMeasured)
	if len(measured) == 0 || measured[0]["tokens"].(float64) != 8500 || measured[0]["summaryChars"].(float64) != 1500 {
		t.Fatalf("measured %v", measured)
	}
	if n := len(eventsOf(t, e, "t", EventContextCompacted)); n != 1 {
		t.Fatalf("%d compactions, want 1", n)
	}
	s := latestState(t, e, "t")
	if s.Summary.From != 1 || s.Summary.To != 31 || s.HistoryVersion != 1 || !strings.HasPrefix(s.Summary.Text, "#1–#29 ") {
		t.Fatalf("summary #%d–#%d v%d:\n%s", s.Summary.From, s.Summary.To, s.HistoryVersion, s.Summary.Text)
	}
}

// A candidate that cannot be right (the head overlaps what the summary
// already covers) is rejected with an event naming why; the run goes on
// unchanged.
func TestRejectedCandidateSkipsCompaction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newMemoryEngine(t)
	var history []Message
	for i := 0; i < 23; i++ {
		history = append(history, Message{Index: 5 + i, Role: RoleUser, Speaker: "user", Content: "question"})
	}
	prev := Summary{Text: "#1–#30 user: began \"q\"", From: 1, To: 30, Count: 30, Speakers: []string{"user"}}
	if _, err := e.UpdateState(ctx, "t", 0, []engine.Write{engine.Put("messages", history), engine.Put("summary", prev)}, NodeCritic); err != nil {
		t.Fatal(err)
	}
	res, err := e.Resume(ctx, "t", engine.RunConfig{})
	if err != nil || res.Status != "done" {
		t.Fatalf("%v %s", err, res.Status)
	}
	// Another answer would not help: rejected at once, the model asked once.
	rejected := eventsOf(t, e, "t", EventCompactionRejected)
	if len(rejected) != 1 || !strings.Contains(fmt.Sprint(rejected[0]["failures"]), "already covers up to #30") || rejected[0]["attempts"] != 1.0 {
		t.Fatalf("reject events %v", rejected)
	}
	s := latestState(t, e, "t")
	if s.HistoryVersion != 0 || s.Summary.Text != prev.Text || len(s.Messages) != 24 {
		t.Fatalf("state changed: v%d, %d messages, summary %q", s.HistoryVersion, len(s.Messages), s.Summary.Text)
	}
}
