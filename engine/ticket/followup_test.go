package ticket_test

import (
	"context"
	"strings"
	"testing"

	"rewind/engine"
	"rewind/engine/ticket"
	"rewind/store/memory"
)

// A follow-up that does not repeat the order number is about the order the
// conversation was about: its tools look that order up, not an empty one,
// and "the delivery address" plans an address change, not a shipment.
func TestFollowUpCarriesTheOrderForward(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, _ := newEngine(t, memory.New())
	if _, err := e.Run(ctx, "f", ticket.Input("Where is my order SO20260901? I want a refund."), engine.RunConfig{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Run(ctx, "f", ticket.Input("change the delivery address to my office"), engine.RunConfig{}); err != nil {
		t.Fatal(err)
	}
	s := state(t, mustLatest(t, e, "f"))
	if len(s.Subtasks) != 1 || s.Subtasks[0].Topic != "address" {
		t.Fatalf("subtasks %+v, want one address subtask", s.Subtasks)
	}
	if !strings.Contains(s.Subtasks[0].Goal, "SO20260901") {
		t.Errorf("goal %q does not name the order of the conversation", s.Subtasks[0].Goal)
	}
	for _, m := range s.Messages {
		if strings.Contains(m.Content, `"order":""`) {
			t.Errorf("#%d %s called a tool with no order: %s", m.Index, m.Speaker, m.Content)
		}
	}
}

// A thread that never named an order still plans without one.
func TestFollowUpWithoutAnyOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, _ := newEngine(t, memory.New())
	if _, err := e.Run(ctx, "n", ticket.Input("change the delivery address to my office"), engine.RunConfig{}); err != nil {
		t.Fatal(err)
	}
	s := state(t, mustLatest(t, e, "n"))
	if len(s.Subtasks) != 1 || !strings.Contains(s.Subtasks[0].Goal, "no order number given") {
		t.Fatalf("subtasks %+v", s.Subtasks)
	}
}

// The mock quotes a tool's list of charges as JSON, as a person would, not
// in Go's map syntax.
func TestMockQuotesStructuredToolFieldsAsJSON(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, _ := newEngine(t, memory.New())
	if _, err := e.Run(ctx, "p", ticket.Input("I was charged twice for SO20260901: check the payment."), engine.RunConfig{}); err != nil {
		t.Fatal(err)
	}
	s := state(t, mustLatest(t, e, "p"))
	found := false
	for _, m := range s.Messages {
		if strings.Contains(m.Content, "map[") {
			t.Errorf("#%d %s: %s", m.Index, m.Speaker, m.Content)
		}
		found = found || strings.Contains(m.Content, `charges [{"amount":`)
	}
	if !found {
		t.Fatalf("no executor quoted the charges as JSON: %+v", s.Messages)
	}
}
