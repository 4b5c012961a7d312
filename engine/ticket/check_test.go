package ticket

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"rewind/engine"
	"rewind/engine/model"
)

// The mock summarizer's answers pass the check on every compaction of a
// long conversation, and so do the candidates code makes from them.
func TestMockSummaryPassesTheCheck(t *testing.T) {
	t.Parallel()
	c := newConversation(t, func(prompt string) string {
		// The check runs here, on the head the prompt was made from.
		return summaryAnswer(prompt)
	})
	checked := 0
	for turn := 0; turn < 200; turn++ {
		c.add(simTurn(turn)...)
		if NeedsSummary(c.messages, c.sum) == "" || Cut(c.messages) == 0 {
			continue
		}
		cut := Cut(c.messages)
		head, tail := c.messages[:cut], c.messages[cut:]
		answer := summaryAnswer(Transcript(head))
		if failed := checkAnswer(head, answer); len(failed) > 0 {
			t.Fatalf("turn %d: the mock's answer fails: %q", turn, failed)
		}
		if !c.compact() {
			t.Fatalf("turn %d: no compaction", turn)
		}
		if failed := checkCandidate(head, tail, c.sum.Text, readLedger(c.facts), c.turn); len(failed) > 0 {
			t.Fatalf("turn %d: the candidate fails: %q\n%s", turn, failed, c.sum.Text)
		}
		checked++
	}
	if checked < 50 {
		t.Fatalf("only %d compactions checked", checked)
	}
}

var checkHead = []Message{
	{Index: 12, Role: RoleUser, Speaker: "user", Content: "Where is my order SO20260901? I paid 49.95 EUR."},
	{Index: 13, Role: RoleAssistant, Speaker: "executor[t-1-order]", Content: "Order SO20260901 is in transit since 2026-09-04 09:12."},
	{Index: 14, Role: RoleAssistant, Speaker: "critic", Content: "review 1: approved t-1-order"},
}

const goodAnswer = "#12 user: where is SO20260901, paid 49.95 EUR\n#13 executor[t-1-order]: SO20260901 in transit since 2026-09-04 09:12\n#14 critic: approved t-1-order"

// A deliberately bad summarizer fails the check, each way naming what to
// fix; a good answer (bullets, a fence and a speaker's case aside) passes.
func TestSummaryCheckNamesEachFailure(t *testing.T) {
	t.Parallel()
	for name, answer := range map[string]string{
		"as asked":      goodAnswer,
		"bulleted":      "- " + strings.ReplaceAll(goodAnswer, "\n", "\n- "),
		"fenced":        "```\n" + goodAnswer + "\n```\n",
		"speaker case":  strings.Replace(goodAnswer, "#14 critic:", "#14 Critic:", 1),
		"blank between": strings.ReplaceAll(goodAnswer, "\n", "\n\n"),
	} {
		if failed := checkAnswer(checkHead, answer); len(failed) > 0 {
			t.Errorf("%s: %q", name, failed)
		}
	}
	for name, c := range map[string]struct{ answer, want string }{
		"prose":          {"The customer asked about an order and the critic approved.", `line 1 does not start with "#index speaker:": "The customer asked about an order and t…"`},
		"not given":      {goodAnswer + "\n#99 user: something else", "line 4 is for #99, which was not given"},
		"renamed":        {strings.Replace(goodAnswer, "#14 critic:", "#14 reply:", 1), `#14 names speaker "reply", given as "critic"`},
		"dropped line":   {strings.Replace(goodAnswer, "\n#14 critic: approved t-1-order", "", 1), "no line for #14"},
		"lost facts":     {strings.Replace(goodAnswer, "since 2026-09-04 09:12", "since early September", 1), "#13 lost 2026-09-04 09:12 (keep them verbatim)"},
		"lost an id":     {strings.Replace(goodAnswer, "#12 user: where is SO20260901, paid 49.95 EUR", "#12 user: where is my order, paid 49.95 EUR", 1), "#12 lost SO20260901"},
		"twice":          {goodAnswer + "\n#13 executor[t-1-order]: again SO20260901 2026-09-04 09:12", "#13 has more than one line"},
		"merged":         {"#12–#14 user, critic: order SO20260901 asked and approved", "line 1 merges #12–#14: write one line per input line"},
		"empty text":     {strings.Replace(goodAnswer, "#14 critic: approved t-1-order", "#14 critic:", 1), "#14 has no text"},
		"nothing at all": {"", "no line for #12, #13, #14"},
	} {
		failed := checkAnswer(checkHead, c.answer)
		if !strings.Contains(strings.Join(failed, "\n"), c.want) {
			t.Errorf("%s: %q, want %q", name, failed, c.want)
		}
	}
	// Many failures are capped, so the list stays short.
	var head []Message
	for i := 1; i <= 40; i++ {
		head = append(head, Message{Index: i, Role: RoleUser, Speaker: "user", Content: fmt.Sprintf("order SO2026%04d", i)})
	}
	var junk strings.Builder
	for i := 0; i < 30; i++ {
		junk.WriteString("junk\n")
	}
	if failed := checkAnswer(head, junk.String()); len(failed) != maxFailures+1 || failed[maxFailures] != "… and 19 more" {
		t.Errorf("capped: %d failures, last %q", len(failed), failed[len(failed)-1])
	}
}

// The candidate check reads what code assembled: a pinned line that lost
// a fact fails, one folded into a phase does not while the facts ledger
// keeps its facts, and does when it does not; a tool result kept whose
// call would be summarized fails.
func TestCandidateCheck(t *testing.T) {
	t.Parallel()
	facts := ledger{}
	if lines := facts.addLines(checkHead, 0); len(lines) != 2 || lines[0] != "#12 user: SO20260901; 49.95 EUR" || lines[1] != "#13 executor[t-1-order]: 2026-09-04 09:12" {
		t.Fatalf("ledger lines of the head: %q (#13 repeats #12's order, which stays on #12's line)", lines)
	}
	good := "#12 user: Where is my order SO20260901? I paid 49.95 EUR.\n#13 executor[t-1-order]: Order SO20260901 in transit since 2026-09-04 09:12\n#14 critic: review 1: approved t-1-order"
	if failed := checkCandidate(checkHead, nil, good, facts, 0); len(failed) > 0 {
		t.Fatalf("good candidate: %q", failed)
	}
	lost := strings.Replace(good, " since 2026-09-04 09:12", "", 1)
	if failed := checkCandidate(checkHead, nil, lost, facts, 0); len(failed) != 1 || failed[0] != "pinned #13 lost 2026-09-04 09:12" {
		t.Fatalf("lost fact: %q", failed)
	}
	folded := "#12–#13 user, executor[t-1-order]: began \"Where is my order\"; 2 facts retired\n#14 critic: review 1: approved t-1-order"
	if failed := checkCandidate(checkHead, nil, folded, facts, 0); len(failed) > 0 {
		t.Fatalf("retired into a phase: %q", failed)
	}
	// Folded with no ledger line for its facts: refused, naming them.
	partial := ledger{}
	partial.addLines(checkHead[:1], 0)
	if failed := checkCandidate(checkHead, nil, folded, partial, 0); len(failed) != 1 || failed[0] != "pinned #13 has 2026-09-04 09:12 in no facts ledger line" {
		t.Fatalf("folded away: %q", failed)
	}
	if failed := checkCandidate(checkHead, nil, folded, ledger{}, 0); len(failed) != 2 {
		t.Fatalf("folded away, no ledger at all: %q", failed)
	}
	call := Message{Index: 14, Role: RoleAssistant, Speaker: "executor[t-1-order]", Content: "calling lookup_order", ToolCall: &ToolCall{ID: "call-1"}}
	result := Message{Index: 15, Role: RoleTool, Speaker: "tool[lookup_order]", Content: "{}", ToolCallID: "call-1"}
	if failed := checkCandidate([]Message{call}, []Message{result}, "#14 executor[t-1-order]: calling lookup_order", facts, 0); len(failed) != 1 || !strings.Contains(failed[0], "tool result #15 stays verbatim but its call #14 would be summarized") {
		t.Fatalf("split tool call: %q", failed)
	}
	// The same id called again in the tail (ids repeat by turn) is fine.
	again := Message{Index: 15, Role: RoleAssistant, Speaker: "executor[t-1-order]", Content: "calling lookup_order", ToolCall: &ToolCall{ID: "call-1"}}
	result.Index = 16
	if failed := checkCandidate([]Message{call}, []Message{again, result}, "#14 executor[t-1-order]: calling lookup_order", facts, 0); len(failed) > 0 {
		t.Fatalf("a later call with the same id: %q", failed)
	}
}

// Through the engine: a summarizer that keeps failing the check is asked
// once more with the failures, then compaction is rejected with an event
// naming them and the run goes on; one that gets it right the second time
// compacts, and the event says it took two answers.
func TestBadSummarizerIsRetriedThenRejected(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, c := range []struct {
		name    string
		answers []string // the summarizer's answers, the last repeated
	}{
		{"always prose", []string{"The customer asked about orders; the team looked them up and replied."}},
		{"right the second time", []string{"The customer asked about orders.", ""}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := &scripted{answers: map[string][]string{model.RoleSummarizer: c.answers}}
			e := newMemoryEngineWith(t, model.NewMock(s.respond))
			for i, in := range []string{request, "Thanks. What is the order status now, where is the parcel, and is the refund still possible?"} {
				res, err := e.Run(ctx, "b", Input(in), engine.RunConfig{})
				if err != nil || res.Status != "done" {
					t.Fatalf("turn %d: %s %v", i+1, res.Status, err)
				}
			}
			prompts := s.prompts[model.RoleSummarizer]
			if len(prompts) != 2 || strings.Contains(prompts[0], "FAILED") || !strings.HasPrefix(prompts[1], prompts[0]+"\nYOUR LAST ANSWER FAILED THE CHECK:\n- line 1 does not start with \"#index speaker:\"") {
				t.Fatalf("summarizer prompts: %q", prompts)
			}
			st := latestState(t, e, "b")
			rejected := eventsOf(t, e, "b", EventCompactionRejected)
			compacted := eventsOf(t, e, "b", EventContextCompacted)
			if c.answers[len(c.answers)-1] != "" {
				if len(rejected) != 1 || rejected[0]["attempts"] != 2.0 || !strings.Contains(fmt.Sprint(rejected[0]["failures"]), "no line for #1, #2") || len(compacted) != 0 {
					t.Fatalf("rejected %v, compacted %v", rejected, compacted)
				}
				if st.Summary != nil || st.HistoryVersion != 0 || len(st.Messages) < 25 {
					t.Fatalf("compaction happened: summary %v, %d messages", st.Summary, len(st.Messages))
				}
				return
			}
			if len(rejected) != 0 || len(compacted) != 1 || compacted[0]["attempts"] != 2.0 || !strings.Contains(fmt.Sprint(compacted[0]["retriedFor"]), "does not start with") {
				t.Fatalf("rejected %v, compacted %v", rejected, compacted)
			}
			if st.Summary == nil || st.HistoryVersion != 1 {
				t.Fatalf("no summary after a good second answer")
			}
		})
	}
}

// A candidate code cannot make right is rejected at once, the model asked
// once: here the kept tail holds a tool result whose call falls in the
// summarized head. The same dangling pair is what a server refuses: the
// reply's request carries it, and the model answers 400, as vendors do;
// the run stops with that one line, resumable once the state is fixed.
func TestCandidateFailureIsRejectedWithoutRetry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := &scripted{}
	e := newMemoryEngineWith(t, model.NewMock(s.respond))
	var history []Message
	for i := 0; i < 23; i++ {
		history = append(history, Message{Role: RoleUser, Speaker: "user", Content: fmt.Sprintf("question %d", i)})
	}
	history[16] = Message{Role: RoleAssistant, Speaker: "executor[t-1-order]", Content: "calling lookup_order", ToolCall: &ToolCall{ID: "call-x", Name: "lookup_order"}}
	history[18] = Message{Role: RoleTool, Speaker: "tool[lookup_order]", Content: `{"order":"SO20260901"}`, ToolCallID: "call-x"}
	if _, err := e.UpdateState(ctx, "t", 0, []engine.Write{engine.Put("messages", history)}, NodeCritic); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Resume(ctx, "t", engine.RunConfig{}); !errors.Is(err, model.ErrRequestInvalid) || !strings.Contains(err.Error(), "call-x") {
		t.Fatalf("resume: %v, want the reply's request refused for its dangling call-x", err)
	}
	rejected := eventsOf(t, e, "t", EventCompactionRejected)
	if len(rejected) != 1 || rejected[0]["attempts"] != 1.0 || !strings.Contains(fmt.Sprint(rejected[0]["failures"]), "tool result #19 stays verbatim but its call #17 would be summarized") || len(s.prompts[model.RoleSummarizer]) != 1 {
		t.Fatalf("rejected %v after %d summarizer call(s)", rejected, len(s.prompts[model.RoleSummarizer]))
	}
	if st := latestState(t, e, "t"); st.Summary != nil || len(st.Messages) != 23 {
		t.Fatalf("compacted anyway: %d messages", len(st.Messages))
	}
}
