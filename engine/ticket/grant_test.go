package ticket_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"rewind/engine"
	"rewind/engine/ticket"
)

// A grant goes with a draft turn only: a plain turn records none, so it
// cannot leave a grant behind for a later draft to run under.
func TestNewTurnAttachesAGrantToDraftsOnly(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 9, 1, 12, 0, 0, 0, time.FixedZone("CEST", 2*3600))
	draft := ticket.NewTurn("hi", nil, true, time.Hour, now)
	if a := draft.Authorization; a == nil || a.Ref != ticket.GrantRef || a.ExpiresAt != "2026-09-01T11:00:00Z" {
		t.Fatalf("draft turn grant: %+v", a)
	}
	if plain := ticket.NewTurn("hi", nil, false, time.Hour, now); plain.Authorization != nil {
		t.Fatalf("a plain turn carries a grant: %+v", plain.Authorization)
	}
	if none := ticket.NewTurn("hi", []string{"s3://a"}, true, 0, now); none.Authorization != nil || len(none.Attach) != 1 {
		t.Fatalf("ttl 0 must attach no grant: %+v", none)
	}
}

// The ticket graph's declared input (what the TUI's forms and composer
// send): TurnOptions in Input.Extra make a draft turn with its grant and
// attachments; no options a plain turn; options of another graph's type a
// refusal naming the type it takes.
func TestTheGraphsInputTakesTurnOptions(t *testing.T) {
	t.Parallel()
	in := ticket.NewGraph().TurnInput()
	now := time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC)
	ws, err := in(engine.Input{Text: "hi", Extra: ticket.TurnOptions{Attach: []string{"s3://a"}, Draft: true, GrantTTL: time.Hour}}, now)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, w := range ws {
		b, _ := json.Marshal(w.Value)
		got[w.Channel] = string(b)
	}
	if got["draftRequested"] != "true" || !strings.Contains(got["authorization"], `"expiresAt":"2026-09-01T13:00:00Z"`) || !strings.Contains(got["attachments"], "s3://a") {
		t.Fatalf("a draft turn's writes: %v", got)
	}
	ws, err = in(engine.Input{Text: "hi"}, now)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range ws {
		if b, _ := json.Marshal(w.Value); w.Channel == "draftRequested" && string(b) != "false" || w.Channel == "authorization" && string(b) != "null" {
			t.Fatalf("a plain turn wrote %s = %s", w.Channel, b)
		}
	}
	if _, err := in(engine.Input{Text: "hi", Extra: map[string]any{"draft": true}}, now); err == nil || !strings.Contains(err.Error(), "ticket.TurnOptions, not a map[string]interface {}") {
		t.Fatalf("options of another type: %v", err)
	}
}
