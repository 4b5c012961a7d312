package openai_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"rewind/engine"
	"rewind/engine/model"
	"rewind/engine/model/openai"
	"rewind/engine/model/openai/openaitest"
	"rewind/engine/ticket"
	"rewind/store/memory"
)

// A whole ticket turn against each kind of server: one that holds answers
// to a JSON Schema, one that only knows json_object (400 on a schema), and
// one that knows neither and whose model answers in prose. Each turn ends
// with a reply; the mode each call used is in its model.called event, and
// what could not be parsed is an event, not a failure.
func TestTicketTurnOnEachKindOfServer(t *testing.T) {
	for _, c := range []struct {
		name     string
		brain    openaitest.Brain
		formats  openaitest.Formats
		mode     string
		sent     string // response_format of the first planner request(s)
		degraded []string
	}{
		{"json_schema", openaitest.TicketBrain, openaitest.FormatsAll, model.JSONSchema, "json_schema", nil},
		{"json_object only", openaitest.TicketBrain, openaitest.FormatsObject, model.JSONObject, "json_schema,json_object", nil},
		{"prose", openaitest.ProseBrain, openaitest.FormatsNone, model.JSONPrompt, "json_schema,json_object,", []string{ticket.EventPlannerRetried, ticket.EventPlannerDegraded, ticket.EventCriticDegraded}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			srv := openaitest.NewServer(c.brain)
			defer srv.Close()
			srv.SetFormats(c.formats)
			cfg := openai.Config{BaseURL: srv.BaseURL(), Models: map[string]string{}, MaxAttempts: 1}
			for _, r := range openai.Roles {
				cfg.Models[r] = "fake-chat"
			}
			p, err := openai.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			e, err := engine.New(memory.New(), ticket.NewGraph(), p)
			if err != nil {
				t.Fatal(err)
			}
			res, err := e.Run(ctx, "s", ticket.Input(turn1), engine.RunConfig{})
			if err != nil || res.Status != "done" {
				t.Fatalf("%s %v", res.Status, err)
			}
			evs, err := e.Events(ctx, "s", 0)
			if err != nil {
				t.Fatal(err)
			}
			modes := map[string][]string{}
			var seen []string
			for _, ev := range evs {
				if ev.Type != engine.EventModelCalled {
					if strings.HasPrefix(ev.Type, "planner.") || strings.HasPrefix(ev.Type, "critic.") {
						seen = append(seen, ev.Type)
					}
					continue
				}
				var d struct{ Role, JSONMode string }
				_ = json.Unmarshal(ev.Data, &d)
				modes[d.Role] = append(modes[d.Role], d.JSONMode)
			}
			for _, role := range []string{model.RolePlanner, model.RoleCritic} {
				for _, m := range modes[role] {
					if m != c.mode {
						t.Errorf("%s calls in modes %q, want %s", role, modes[role], c.mode)
						break
					}
				}
			}
			if strings.Join(modes[model.RoleReply], "") != "" {
				t.Errorf("the reply, a text call, has mode %q", modes[model.RoleReply])
			}
			if strings.Join(seen, ",") != strings.Join(c.degraded, ",") {
				t.Errorf("events %v, want %v", seen, c.degraded)
			}
			var first []string
			for _, r := range srv.Requests() {
				if !strings.Contains(r.System, "planner") {
					break
				}
				first = append(first, r.ResponseFormat)
			}
			if got := strings.Join(first, ","); !strings.HasPrefix(got, c.sent) {
				t.Errorf("the planner's requests asked for %q, want %q first", got, c.sent)
			}
			cp, err := e.Latest(ctx, "s")
			if err != nil {
				t.Fatal(err)
			}
			s, err := ticket.Decode(cp.Values)
			if err != nil {
				t.Fatal(err)
			}
			if c.degraded == nil && (len(s.Subtasks) != 3 || s.Degraded) {
				t.Errorf("%d subtasks, degraded %t: want the brain's three, approved", len(s.Subtasks), s.Degraded)
			}
			if c.degraded != nil && (len(s.Subtasks) != 1 || !s.Degraded) {
				t.Errorf("%d subtasks, degraded %t: want the whole request as one, unverified", len(s.Subtasks), s.Degraded)
			}
		})
	}
}

// The summary check over the wire: the fake server's summarizer passes it
// and compacts at once; one that rewrites order numbers is asked again
// with the failures, and its summary is rejected with an event naming them.
func TestSummaryCheckAgainstTheFakeServer(t *testing.T) {
	lossy := func(mdl string, req model.Request) (model.Response, error) {
		resp, err := openaitest.TicketBrain(mdl, req)
		if strings.Contains(req.System(), "You compress") {
			resp.Text = strings.ReplaceAll(resp.Text, "SO20260901", "the order")
		}
		return resp, err
	}
	for _, c := range []struct {
		name  string
		brain openaitest.Brain
		calls int
		event string
	}{
		{"faithful", openaitest.TicketBrain, 1, ticket.EventContextCompacted},
		{"lossy", lossy, 2, ticket.EventCompactionRejected},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			srv := openaitest.NewServer(c.brain)
			defer srv.Close()
			cfg := openai.Config{BaseURL: srv.BaseURL(), Models: map[string]string{}, MaxAttempts: 1}
			for _, r := range openai.Roles {
				cfg.Models[r] = "fake-chat"
			}
			p, err := openai.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			e, err := engine.New(memory.New(), ticket.NewGraph(), p)
			if err != nil {
				t.Fatal(err)
			}
			for _, in := range []string{turn1, turn2} {
				if res, err := e.Run(ctx, "c", ticket.Input(in), engine.RunConfig{}); err != nil || res.Status != "done" {
					t.Fatalf("%s %v", res.Status, err)
				}
			}
			var summaries []string
			for _, r := range srv.Requests() {
				if strings.Contains(r.System, "You compress") {
					summaries = append(summaries, r.Prompt)
				}
			}
			if len(summaries) != c.calls || c.calls == 2 && !strings.Contains(summaries[1], "YOUR LAST ANSWER FAILED THE CHECK:\n- #1 lost SO20260901 (keep them verbatim)") {
				t.Fatalf("%d summarizer requests: %q", len(summaries), summaries)
			}
			evs, err := e.Events(ctx, "c", 0)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, ev := range evs {
				if ev.Type == ticket.EventContextCompacted || ev.Type == ticket.EventCompactionRejected || ev.Type == ticket.EventCompactionFailed {
					got = append(got, ev.Type+" "+string(ev.Data))
				}
			}
			if len(got) != 1 || !strings.HasPrefix(got[0], c.event) || c.calls == 2 && !strings.Contains(got[0], "lost SO20260901") {
				t.Fatalf("events %q, want one %s", got, c.event)
			}
		})
	}
}
