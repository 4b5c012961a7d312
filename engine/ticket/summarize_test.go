package ticket

import (
	"strings"
	"testing"
)

func msgs(roles ...string) []Message {
	out := make([]Message, len(roles))
	for i, r := range roles {
		out[i] = Message{Index: i + 1, Role: r, Speaker: r, Content: "x"}
	}
	return out
}

func repeat(role string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = role
	}
	return out
}

func TestTriggerEdges(t *testing.T) {
	t.Parallel()
	if why := NeedsSummary(msgs(repeat("user", 20)...)); why != "" {
		t.Errorf("20 messages triggered: %s", why)
	}
	if why := NeedsSummary(msgs(repeat("user", 21)...)); why != "count 21 exceeds 20" {
		t.Errorf("21 messages: %q", why)
	}
	at := func(chars int) []Message {
		return []Message{{Index: 1, Role: "user", Content: strings.Repeat("a", chars-1000)}, {Index: 2, Role: "assistant", Content: strings.Repeat("é", 1000)}}
	}
	if why := NeedsSummary(at(8000)); why != "" {
		t.Errorf("8,000 characters triggered: %s", why)
	}
	// Characters, not bytes: é is 2 bytes but one token in the estimate.
	if why := NeedsSummary(at(8001)); why != "estimated 8001 tokens exceeds 8000" {
		t.Errorf("8,001 characters: %q", why)
	}
}

func TestCutKeepsSixAndNeverSplitsAToolCall(t *testing.T) {
	t.Parallel()
	plain := msgs(repeat("user", 23)...)
	if c := Cut(plain); c != 17 || plain[c].Index != 18 {
		t.Fatalf("23 plain messages: cut %d, want 17 (tail from #18)", c)
	}
	// Position 17 (#18) is a tool result: the cut moves back to its call.
	roles := repeat("user", 23)
	roles[16], roles[17] = "assistant", "tool"
	m := msgs(roles...)
	if c := Cut(m); c != 16 {
		t.Fatalf("tool result at the cut: cut %d, want 16", c)
	}
	// Several tool results in a row move the cut back past all of them.
	roles = repeat("user", 23)
	roles[15], roles[16], roles[17] = "assistant", "tool", "tool"
	if c := Cut(msgs(roles...)); c != 15 {
		t.Fatalf("two tool results: cut %d, want 15", c)
	}
	if c := Cut(msgs(repeat("user", 6)...)); c != 0 {
		t.Fatalf("6 messages: cut %d, want 0 (nothing to compact)", c)
	}
	if c := Cut(msgs(append([]string{"user"}, repeat("tool", 7)...)...)); c != 0 {
		t.Fatalf("all tool results: cut %d, want 0", c)
	}
}

func TestTranscriptKeepsIndexAndSpeaker(t *testing.T) {
	t.Parallel()
	ms := []Message{
		{Index: 12, Role: "user", Speaker: "user", Content: "need the\nrefund window"},
		{Index: 13, Role: "assistant", Speaker: "executor[t-3-refund]", Content: "30 days"},
	}
	// Only the new head goes to the model; code merges the previous summary.
	got := Transcript(ms)
	want := "#12 user: need the refund window\n#13 executor[t-3-refund]: 30 days\n"
	if got != want {
		t.Fatalf("transcript:\n%s\nwant:\n%s", got, want)
	}
}

func TestPlanDependsOnTheSentence(t *testing.T) {
	t.Parallel()
	main := plan("My order SO20260901 hasn't arrived yet: what is the order status, where is the parcel now, and can I get a refund if it is lost?")
	var topics []string
	for _, s := range main {
		topics = append(topics, s.Topic)
		if !strings.Contains(s.Goal, "SO20260901") {
			t.Errorf("goal %q lost the order number", s.Goal)
		}
	}
	if strings.Join(topics, ",") != "order,shipping,refund" {
		t.Fatalf("main plan %v", topics)
	}
	fork := plan("Please change the address on SO20260901 and send me the invoice.")
	if len(fork) != 2 || fork[0].Topic != "address" || fork[1].Topic != "invoice" {
		t.Fatalf("fork plan %+v", fork)
	}
	if g := plan("hello there"); len(g) != 1 || g[0].Topic != "general" {
		t.Fatalf("no topic: %+v", g)
	}
}
