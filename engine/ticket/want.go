package ticket

// What a person can give to get past a refusal of this package, as data:
// the front end words it (the CLI as its flag or command, the TUI as its
// key or dialog), so no message here spells one interface's words
// (issue 35).

// Want is what would get past a refusal.
type Want int

const (
	// WantReason: a rejection needs its reason.
	WantReason Want = iota + 1
	// WantNoGrant: approve without a grant (the draft has its own).
	WantNoGrant
	// WantFreshDraft: fork the thread with a new draft turn under a fresh
	// grant.
	WantFreshDraft
	// WantGrantTTL: a draft turn's grant, lasting longer than 0.
	WantGrantTTL
	// WantBudget: a tool budget of 0 or more calls (WantError.Value is one).
	WantBudget
	// WantFidelity: the pinned facts a summary lost, as the fidelity check
	// lists them.
	WantFidelity
)

// WantError is Err, refused until what Want names is given.
type WantError struct {
	Err   error
	Want  Want
	Value int // WantBudget's example
}

func (e *WantError) Error() string { return e.Err.Error() }
func (e *WantError) Unwrap() error { return e.Err }

// wantErr is err, got past by want.
func wantErr(want Want, err error) error { return &WantError{Err: err, Want: want} }
