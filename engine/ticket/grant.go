package ticket

import (
	"time"

	"rewind/engine"
)

// GrantRef names the authorization grant a draft turn is written under.
const GrantRef = "grant:customer-consent"

// NewTurn is a user's turn. Only a draft turn carries a grant, since only
// its write step (create_draft) checks one; it expires ttl after now, and a
// ttl of 0 attaches none. The CLI and the TUI both build turns here, so they
// cannot disagree on when a grant is recorded.
func NewTurn(text string, attach []string, draft bool, ttl time.Duration, now time.Time) Turn {
	t := Turn{Text: text, Attach: attach, Draft: draft}
	if draft && ttl > 0 {
		t.Authorization, _ = NewGrant(GrantRef, ttl, now) // ttl > 0: no error
	}
	return t
}

// turnInput is the ticket graph's Input: typed input as a turn (NewTurn).
func turnInput(in engine.Input, now time.Time) ([]engine.Write, error) {
	return NewTurn(in.Text, in.Attach, in.Draft, in.GrantTTL, now).Writes(), nil
}
