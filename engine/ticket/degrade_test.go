package ticket

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"rewind/engine"
	"rewind/engine/model"
)

const request = "My order SO20260901 hasn't arrived yet: what is the order status, where is the parcel now, and can I get a refund if it is lost?"

// scripted is the mock with some roles answering from a script, one
// answer per call (the last repeats; "" is the mock's own answer); it
// keeps every prompt it was sent.
type scripted struct {
	mu      sync.Mutex
	answers map[string][]string
	prompts map[string][]string
}

func (s *scripted) respond(req model.Request) (model.Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.prompts == nil {
		s.prompts = map[string][]string{}
	}
	s.prompts[req.Role] = append(s.prompts[req.Role], Instructions(req))
	if a := s.answers[req.Role]; len(a) > 0 {
		out := a[0]
		if len(a) > 1 {
			s.answers[req.Role] = a[1:]
		}
		if out != "" { // "" answers as the mock does
			return model.Response{Text: out}, nil
		}
	}
	return Respond(req)
}

func runScripted(t *testing.T, answers map[string][]string) (*scripted, engine.Result, State, map[string][]map[string]any) {
	t.Helper()
	s := &scripted{answers: answers}
	e := newMemoryEngineWith(t, model.NewMock(s.respond))
	res, err := e.Run(context.Background(), "d", Input(request), engine.RunConfig{})
	if err != nil || res.Status != "done" {
		t.Fatalf("the run did not go on: %s %v", res.Status, err)
	}
	evs := map[string][]map[string]any{}
	for _, typ := range []string{EventPlannerRetried, EventPlannerDegraded, EventCriticDegraded} {
		evs[typ] = eventsOf(t, e, "d", typ)
	}
	return s, res, latestState(t, e, "d"), evs
}

// A prose plan is asked for once more, with why it could not be used; a
// good second answer is the plan.
func TestPlannerRetriesWithTheParseError(t *testing.T) {
	t.Parallel()
	good, _ := Respond(model.Simple(model.RolePlanner, "", "REQUEST: "+request))
	s, res, st, evs := runScripted(t, map[string][]string{model.RolePlanner: {"I would split this into order, shipping and refund questions.", good.Text}})
	if len(s.prompts[model.RolePlanner]) != 2 || !strings.Contains(s.prompts[model.RolePlanner][1], "YOUR LAST ANSWER COULD NOT BE USED: the answer holds no JSON object") {
		t.Fatalf("planner prompts %q: want a second one naming the parse error", s.prompts[model.RolePlanner])
	}
	if len(evs[EventPlannerRetried]) != 1 || len(evs[EventPlannerDegraded]) != 0 || len(st.Subtasks) != 3 || res.ModelCalls[model.RolePlanner] != 2 {
		t.Fatalf("events %v, %d subtasks, calls %v", evs, len(st.Subtasks), res.ModelCalls)
	}
}

// Two unusable plans make the whole request one subtask, with an event;
// the turn is answered all the same.
func TestPlannerDegradesToOneSubtask(t *testing.T) {
	t.Parallel()
	_, res, st, evs := runScripted(t, map[string][]string{model.RolePlanner: {`{"plan": "order, shipping, refund"}`, "Sorry, I cannot produce JSON."}})
	if len(st.Subtasks) != 1 || st.Subtasks[0].ID != "t-1-request" || st.Subtasks[0].Goal != request || st.Subtasks[0].Status != StatusApproved {
		t.Fatalf("subtasks %+v: want the whole request as one approved subtask", st.Subtasks)
	}
	d := evs[EventPlannerDegraded]
	if len(d) != 1 || d[0]["error"] != "the answer holds no JSON object" || len(evs[EventPlannerRetried]) != 1 || evs[EventPlannerRetried][0]["error"] != `the JSON is not {"subtasks": [{"id", "goal", "topic"}, …]}` {
		t.Fatalf("events %v", evs)
	}
	if res.ModelCalls[model.RolePlanner] != 2 || res.ModelCalls[model.RoleReply] != 1 {
		t.Fatalf("calls %v", res.ModelCalls)
	}
}

// An unreadable verdict approves nothing and sends nothing back: the
// findings go to the reply marked unverified, with an event.
func TestUnreadableVerdictApprovesNothing(t *testing.T) {
	t.Parallel()
	_, res, st, evs := runScripted(t, map[string][]string{model.RoleCritic: {"All three look fine to me, well done!"}})
	if len(evs[EventCriticDegraded]) != 1 || evs[EventCriticDegraded][0]["error"] != `the answer holds no {"approve": […], "redo": […]} object` {
		t.Fatalf("events %v", evs)
	}
	for _, sub := range st.Subtasks {
		if sub.Status != StatusDone || sub.Feedback != "" {
			t.Errorf("subtask %s is %s (feedback %q): want done, neither approved nor sent back", sub.ID, sub.Status, sub.Feedback)
		}
	}
	last := st.Messages[len(st.Messages)-1]
	if !st.Degraded || st.ReviewRounds != 1 || res.ModelCalls[model.RoleExecutor] != 3*MockCallsPerSubtask || res.ModelCalls[model.RoleCritic] != 1 || !strings.Contains(last.Content, "could not be fully verified") {
		t.Fatalf("degraded %t, rounds %d, calls %v, reply %q", st.Degraded, st.ReviewRounds, res.ModelCalls, last.Content)
	}
}

// The reply has nothing to fall back to: its failure fails the run.
func TestReplyFailureIsAnError(t *testing.T) {
	t.Parallel()
	m := NewMock()
	m.FailRole(model.RoleReply, -1)
	e := newMemoryEngineWith(t, m)
	res, err := e.Run(context.Background(), "r", Input(request), engine.RunConfig{})
	if err == nil || !strings.Contains(err.Error(), "node reply") || len(res.Pending) != 1 {
		t.Fatalf("%v, pending %v", err, res.Pending)
	}
}

func TestParsePlanMendsLooseAnswers(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		answer string
		want   string // id/topic pairs
	}{
		"fenced in prose":    {"Here:\n```json\n{\"subtasks\":[{\"id\":\"t-1-order\",\"goal\":\"status of SO20260901\",\"topic\":\"order\"}]}\n```", "t-1-order/order"},
		"a bare list":        {`[{"goal":"where is the parcel of SO20260901"},{"goal":"refund for SO20260901"}]`, "t-1/shipping t-2/refund"},
		"unknown topic":      {`{"subtasks":[{"id":"a","goal":"can I get my money back","topic":"finance"}]}`, "a/refund"},
		"repeated ids":       {`{"subtasks":[{"id":"x","goal":"order status","topic":"order"},{"id":"x","goal":"invoice please","topic":"invoice"}]}`, "x/order t-2/invoice"},
		"goalless skipped":   {`{"subtasks":[{"id":"a","goal":" "},{"id":"b","goal":"invoice please","topic":"Invoice"}]}`, "b/invoice"},
		"cut to MaxSubtasks": {`{"subtasks":[{"goal":"a"},{"goal":"b"},{"goal":"c"},{"goal":"d"},{"goal":"e"}]}`, "t-1/general t-2/general t-3/general t-4/general"},
	} {
		subs, err := parsePlan(c.answer)
		var got []string
		for _, s := range subs {
			got = append(got, s.ID+"/"+s.Topic)
		}
		if err != nil || strings.Join(got, " ") != c.want {
			t.Errorf("%s: %q %v, want %q", name, got, err, c.want)
		}
	}
	for answer, why := range map[string]string{
		"no json at all":                     "the answer holds no JSON object",
		`{"subtasks": []}`:                   `the "subtasks" list is empty or no subtask has a goal`,
		`{"subtasks": "order and shipping"}`: `the JSON is not {"subtasks": [{"id", "goal", "topic"}, …]}`,
	} {
		if _, err := parsePlan(answer); err == nil || err.Error() != why {
			t.Errorf("%q: %v, want %q", answer, err, why)
		}
	}
	b, _ := json.Marshal(plan(request))
	if subs, err := parsePlan(fmt.Sprintf(`{"subtasks": %s}`, b)); err != nil || len(subs) != 3 {
		t.Errorf("the mock's own plan: %v %v", subs, err)
	}
}
