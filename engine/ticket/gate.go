package ticket

import (
	"time"

	"rewind/engine"
)

// Gate is a draft waiting at the approval gate for a person's answer.
type Gate struct {
	Checkpoint int64
	Op         Operation
	Grant      *Authorization // the grant it is written under; nil when none
	// Problem is why the grant would not let create_draft write now (""
	// when it would): an approval then records the decision, but the write
	// is blocked and nothing is created.
	Problem string
}

// WaitingDraft finds the draft cp waits on at the approval gate (s is cp's
// state, decoded), unanswered, with its grant judged at now by the rule the
// write itself applies. ok is false when nothing waits for an answer.
func WaitingDraft(cp engine.Checkpoint, s State, now time.Time) (g Gate, ok bool) {
	atGate := false
	for _, t := range cp.Tasks {
		atGate = atGate || t.Node == NodeApproval
	}
	op, pending := PendingDraft(s)
	if !atGate || !pending {
		return Gate{}, false
	}
	if _, answered := s.Approvals[op.ID]; answered {
		return Gate{}, false
	}
	return Gate{Checkpoint: cp.ID, Op: op, Grant: s.Authorization, Problem: GrantProblem(s.Authorization, now)}, true
}
