package ticket_test

import (
	"context"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"rewind/engine"
	"rewind/engine/model"
	"rewind/engine/model/openai"
	"rewind/engine/model/openai/openaitest"
	"rewind/engine/ticket"
	"rewind/store/memory"
)

// standIn runs the ticket graph against the OpenAI stand-in, which logs
// every request as it came over the wire.
func standIn(t *testing.T) (*engine.Engine, *openaitest.Server) {
	t.Helper()
	srv := openaitest.NewServer(openaitest.TicketBrain)
	t.Cleanup(srv.Close)
	models := map[string]string{}
	for _, r := range openai.Roles {
		models[r] = "stand-in"
	}
	p, err := openai.New(openai.Config{BaseURL: srv.BaseURL(), Models: models, MaxAttempts: 1, APIKey: standInKey})
	if err != nil {
		t.Fatal(err)
	}
	e, err := ticket.NewEngine(memory.New(), p)
	if err != nil {
		t.Fatal(err)
	}
	return e, srv
}

// standInKey is the API key the stand-in's client sends: it must appear in
// no request rewind shows and nothing it stores.
const standInKey = "sk-test-5f1e0c2d9b8a7766"

// roleOf tells a wire request's role by its system prompt, as the brain
// does.
func roleOf(r openaitest.Request) string {
	s := strings.ToLower(r.System)
	for _, c := range []struct{ says, role string }{
		{"you compress", model.RoleSummarizer}, {"you are the critic", model.RoleCritic},
		{"you are the planner", model.RolePlanner}, {"you are an executor", model.RoleExecutor},
		{"final reply", model.RoleReply},
	} {
		if strings.Contains(s, c.says) {
			return c.role
		}
	}
	return ""
}

// wire is every message's text of a request, joined.
func wire(r openaitest.Request) string {
	var b strings.Builder
	for _, m := range r.Messages {
		b.WriteString(m.Content)
		b.WriteByte('\n')
	}
	return b.String()
}

var tailIndex = regexp.MustCompile(`^#(\d+) `)

// Turn 2's planner, critic and reply requests carry turn 1's messages as
// chat messages, its tool calls joined to their results; a follow-up that
// names no order is planned and answered for turn 1's order, because the
// model read the conversation.
func TestEveryRequestCarriesTheConversation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, srv := standIn(t)
	first := "My order SO20260901 hasn't arrived yet: what is the order status and where is the parcel?"
	if _, err := e.Run(ctx, "c", ticket.Input(first), engine.RunConfig{}); err != nil {
		t.Fatal(err)
	}
	turn1 := len(srv.Requests())
	if _, err := e.Run(ctx, "c", ticket.Input("And can I get a refund?"), engine.RunConfig{}); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()[turn1:]
	seen := map[string]int{}
	for _, r := range reqs {
		role := roleOf(r)
		seen[role]++
		if err := model.CheckSequence(r.Messages); err != nil {
			t.Errorf("%s request breaks the vendor rules: %v", role, err)
		}
		if role == model.RoleSummarizer {
			continue
		}
		text := wire(r)
		if !strings.Contains(text, "#1 user: "+first) {
			t.Errorf("turn 2's %s request lacks turn 1's message #1:\n%s", role, text)
		}
		var calls, results int
		for _, m := range r.Messages {
			calls += len(m.ToolCalls)
			if m.Role == model.ChatTool {
				results++
			}
		}
		if calls == 0 || calls != results {
			t.Errorf("turn 2's %s request holds %d tool calls and %d results: want turn 1's calls, each with its result", role, calls, results)
		}
		if role == model.RoleExecutor && len(r.Tools) == 0 {
			t.Errorf("an executor request offers no tools")
		}
	}
	for _, role := range []string{model.RolePlanner, model.RoleExecutor, model.RoleCritic, model.RoleReply} {
		if seen[role] == 0 {
			t.Errorf("turn 2 made no %s request (%v)", role, seen)
		}
	}
	s := state(t, mustLatest(t, e, "c"))
	if len(s.Subtasks) != 1 || s.Subtasks[0].Topic != "refund" || !strings.Contains(s.Subtasks[0].Goal, "SO20260901") {
		t.Fatalf("turn 2 planned %+v: want the refund of turn 1's order", s.Subtasks)
	}
	if last := s.Messages[len(s.Messages)-1]; last.Speaker != "reply" || !strings.Contains(last.Content, "SO20260901") {
		t.Errorf("turn 2's reply %q does not answer for SO20260901", last.Content)
	}
	// What the model saw, as shown, never holds the key (it went in the
	// Authorization header alone).
	head := mustLatest(t, e, "c")
	for id := int64(1); id <= head.ID; id++ {
		calls, err := ticket.Calls(ctx, e, "c", id)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(calls)
		if strings.Contains(string(b), standInKey) {
			t.Fatalf("the calls of @%d show the API key", id)
		}
	}
	if got := srv.Requests()[0].Authorization; got != "Bearer "+standInKey {
		t.Fatalf("the stand-in got Authorization %q: the key was not sent", got)
	}
}

// After a compaction every request carries the summary's indexed lines and
// the verbatim tail, and no message the summary replaced.
func TestRequestsAfterCompactionCarryTheSummaryNotWhatItReplaced(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, srv := standIn(t)
	inputs := []string{
		"My order SO20260901 hasn't arrived yet: what is the order status, where is the parcel, and can I get a refund?",
		"Thanks. What is the order status now, where is the parcel, and is the refund still possible?",
		"And can the delivery address still be changed?",
	}
	var from int
	for i, in := range inputs {
		from = len(srv.Requests())
		if _, err := e.Run(ctx, "s", ticket.Input(in), engine.RunConfig{}); err != nil {
			t.Fatalf("turn %d: %v", i+1, err)
		}
	}
	s := state(t, mustLatest(t, e, "s"))
	if s.Summary == nil {
		t.Fatal("three turns did not compact")
	}
	checked := 0
	for _, r := range srv.Requests()[from:] {
		role := roleOf(r)
		if role == model.RoleSummarizer || role == "" {
			continue
		}
		var summary string
		for _, m := range r.Messages {
			if m.Role == model.ChatSystem && strings.HasPrefix(m.Content, "SUMMARY") {
				summary = m.Content
			}
			if m.Role != model.ChatUser && m.Role != model.ChatAssistant {
				continue
			}
			if g := tailIndex.FindStringSubmatch(m.Content); g != nil {
				if n, _ := strconv.Atoi(g[1]); n <= s.Summary.To && n >= s.Summary.From {
					t.Errorf("%s request carries #%d verbatim, which the summary (#%d–#%d) replaced", role, n, s.Summary.From, s.Summary.To)
				}
			}
		}
		if !strings.Contains(summary, "#1 user: ") {
			t.Errorf("%s request after compaction has no summary with indexed lines:\n%s", role, wire(r))
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no request after the compaction")
	}
}

// The aligned cut keeps every request valid; a cut between a tool call and
// its result is what a server refuses with a 400.
func TestADanglingCallIsRefusedByTheStandIn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, srv := standIn(t)
	p, err := openai.New(openai.Config{BaseURL: srv.BaseURL(), Models: map[string]string{model.RolePlanner: "x", model.RoleExecutor: "x", model.RoleCritic: "x", model.RoleSummarizer: "x", model.RoleReply: "x"}, MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	call := model.ToolCall{ID: "call_1", Name: "lookup_order", Arguments: `{"order":"SO20260901"}`}
	base := []model.Message{
		{Role: model.ChatSystem, Content: "You are the critic."},
		{Role: model.ChatAssistant, Content: "#2 executor[t-1]: calling lookup_order", ToolCalls: []model.ToolCall{call}},
		{Role: model.ChatTool, Content: `{"stage":"packed"}`, ToolCallID: "call_1"},
		{Role: model.ChatUser, Content: "REVIEW ROUND 1"},
	}
	for name, ms := range map[string][]model.Message{
		"call without its result": {base[0], base[1], base[3]},
		"result without its call": {base[0], base[2], base[3]},
	} {
		_, err := p.Complete(ctx, model.Request{Role: model.RoleCritic, Messages: ms})
		if err == nil || !strings.Contains(err.Error(), "400") || !strings.Contains(err.Error(), "tool") {
			t.Errorf("%s: %v, want the stand-in's 400", name, err)
		}
	}
	if _, err := p.Complete(ctx, model.Request{Role: model.RoleCritic, Messages: base}); err != nil {
		t.Errorf("an aligned request: %v", err)
	}
	long := []model.Message{{Role: model.ChatSystem, Content: "You are the critic."}, {Role: model.ChatUser, Content: strings.Repeat("word ", 4*model.DefaultWindow)}}
	if _, err := p.Complete(ctx, model.Request{Role: model.RoleCritic, Messages: long}); err == nil || !strings.Contains(err.Error(), "context window") {
		t.Errorf("a request past the window: %v, want context_length_exceeded", err)
	}
}
