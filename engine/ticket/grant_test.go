package ticket_test

import (
	"testing"
	"time"

	"rewind/engine/ticket"
)

// A grant goes with a draft turn only: a plain turn records none, so it
// cannot leave a grant behind for a later draft to run under.
func TestNewTurnAttachesAGrantToDraftsOnly(t *testing.T) {
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
