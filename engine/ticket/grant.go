package ticket

import (
	"fmt"
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

// TurnOptions are the ticket graph's input beyond the text
// (engine.Input.Extra): attachment references, and a draft reply with its
// grant's lifetime (NewTurn).
type TurnOptions struct {
	Attach   []string
	Draft    bool
	GrantTTL time.Duration
}

// turnInput is the ticket graph's Input: typed input as a turn (NewTurn).
func turnInput(in engine.Input, now time.Time) ([]engine.Write, error) {
	var o TurnOptions
	switch x := in.Extra.(type) {
	case nil:
	case TurnOptions:
		o = x
	default:
		return nil, fmt.Errorf("the ticket graph's input options are a ticket.TurnOptions, not a %T", in.Extra)
	}
	return NewTurn(in.Text, o.Attach, o.Draft, o.GrantTTL, now).Writes(), nil
}
