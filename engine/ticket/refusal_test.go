package ticket

import (
	"context"
	"rewind/engine/event"
	"strings"
	"testing"

	"rewind/engine"
	"rewind/engine/model"
)

var followUps = []string{
	request,
	"Thanks. What is the order status now, where is the parcel, and is the refund still possible?",
	"And can the delivery address of SO20260901 still be changed?",
	"Please send me the invoice for SO20260901 as well.",
}

// A model whose summaries are always refused (it never writes "#index
// speaker:" lines) does not leave the history growing for ever: the first
// refusal keeps it this round, the second makes rewind summarize it itself,
// recorded with its strategy, and a resume accepts that compaction.
func TestTwoRefusalsFallBackToRewindsOwnSummary(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := &scripted{answers: map[string][]string{model.RoleSummarizer: {"The customer asked about an order; the team answered."}}}
	e := newMemoryEngineWith(t, model.NewMock(s.respond))
	var compactedAt int
	for i, in := range followUps {
		if _, err := e.Run(ctx, "r", Input(in), engine.RunConfig{}); err != nil {
			t.Fatalf("turn %d: %v", i+1, err)
		}
		if st := latestState(t, e, "r"); st.Summary != nil && compactedAt == 0 {
			compactedAt = i + 1
		}
	}
	rejected := eventsOf(t, e, "r", EventCompactionRejected)
	compacted := eventsOf(t, e, "r", EventContextCompacted)
	if len(rejected) < 2 || rejected[0]["refusalsInARow"] != 1.0 || rejected[1]["refusalsInARow"] != 2.0 {
		t.Fatalf("rejections %v: want two in a row, counted", rejected)
	}
	if len(compacted) == 0 || compacted[0]["strategy"] != ExtractiveStrategy || compacted[0]["model"] != ExtractiveModel || compacted[0]["afterRefusals"] != 2.0 {
		t.Fatalf("compactions %v: want rewind's own after the second refusal", compacted)
	}
	st := latestState(t, e, "r")
	if st.Summary == nil || st.SummaryRefusals != 0 || len(st.Messages) > MaxMessages+KeepRecent {
		t.Fatalf("summary %v, refusals %d, %d messages verbatim", st.Summary != nil, st.SummaryRefusals, len(st.Messages))
	}
	if !strings.HasPrefix(st.Summary.Text, "#1") || !strings.Contains(st.Summary.Text, "SO20260901") {
		t.Errorf("rewind's summary lost the coordinates or the order:\n%s", st.Summary.Text)
	}
	cp, err := e.Latest(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	evs, err := e.Events(ctx, "r", 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckCompactions(engine.ResumeInfo{Checkpoint: cp, Events: evs}); err != nil {
		t.Fatalf("a resume refuses rewind's own compaction: %v", err)
	}
	// The refusal is said where a person looks: the CLI's line.
	d, err := event.Decode[event.CompactionRejected](EventCompactionRejected, []byte(`{"failures":["line 1 does not start with \"#index speaker:\"","no line for #2"],"refusalsInARow":1}`))
	if err != nil {
		t.Fatal(err)
	}
	if line := RefusalLine(d); !strings.Contains(line, "(and 1 more)") || !strings.Contains(line, "without the model") {
		t.Errorf("refusal line %q", line)
	}
}

// With a small context window the history is compacted before the next
// request would pass three quarters of it, long before 20 messages, and no
// request is refused as too long.
func TestTheContextWindowTriggersCompaction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := NewMock()
	m.Window = 2000
	e := newMemoryEngineWith(t, m)
	for i, in := range followUps[:3] {
		if _, err := e.Run(ctx, "w", Input(in), engine.RunConfig{}); err != nil {
			t.Fatalf("turn %d: %v (a request passed the window)", i+1, err)
		}
	}
	var byWindow bool
	for _, c := range eventsOf(t, e, "w", EventContextCompacted) {
		byWindow = byWindow || strings.Contains(c["trigger"].(string), "2000-token context window")
	}
	if !byWindow {
		t.Fatalf("no compaction named the window: %v", eventsOf(t, e, "w", EventContextCompacted))
	}
}
