package ticket

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"rewind/engine"
	"rewind/store"
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

// Answers to a draft: what refuses one.
var (
	// ErrNoApprovalPending: approve or reject on a thread whose head does
	// not wait at the approval gate on an unanswered draft.
	ErrNoApprovalPending = errors.New("no approval is pending")
	// ErrAnswerStale: the thread moved on, or the draft it waits on
	// changed, since the person answering looked at it.
	ErrAnswerStale = errors.New("the draft changed since it was looked at")
)

// Seen is what a person answering a draft looked at: the thread's head,
// the draft operation it waited on and the hash of its payload
// (PayloadHash). An answer made on it is refused when any of them is not
// what the head, read under the thread's lock, holds now.
type Seen struct {
	Head        int64
	Operation   string
	PayloadHash string
}

// Look is what head shows a person about to answer at its gate; ok is
// false when it waits on no unanswered draft.
func Look(head engine.Checkpoint) (Seen, bool) {
	s, err := Decode(head.Values, "operations", "approvals")
	if err != nil {
		return Seen{Head: head.ID}, false
	}
	g, ok := WaitingDraft(head, s, time.Time{})
	if !ok {
		return Seen{Head: head.ID}, false
	}
	return Seen{Head: head.ID, Operation: g.Op.ID, PayloadHash: PayloadHash(g.Op.Payload)}, true
}

// Answer is the answer d to the draft head waits on, for
// engine.Engine.Answer (which reads head under the thread's lock): the
// writes that record it, or why it is refused. Head must wait at the
// approval gate on an unanswered draft and, when seen names a head, be
// the head, the draft and the payload the person saw: an answer to a draft
// that changed, or on a thread that moved on (another answer, an edit),
// is refused with nothing written.
func Answer(head engine.Checkpoint, d Decision, seen Seen) ([]engine.Write, error) {
	verb, thread := "reject", store.Name(head.Thread)
	if d.Approved {
		verb = "approve"
	}
	now, ok := Look(head)
	if !ok {
		return nil, engine.Fixable(head.Thread, head.ID, fmt.Errorf("%s on thread %q: %w at @%d", verb, thread, ErrNoApprovalPending, head.ID), engine.ShowFix(head.Thread))
	}
	again := fmt.Sprintf("nothing was %s: read it again, then answer", map[bool]string{true: "approved", false: "rejected"}[d.Approved])
	stale := func(err error) ([]engine.Write, error) {
		return nil, engine.Fixable(head.Thread, head.ID, err, engine.ShowFix(head.Thread))
	}
	switch {
	case seen.Operation != "" && now.Operation != seen.Operation:
		return stale(fmt.Errorf("%s on thread %q: %w: it waits on draft %s now, not on %s that was looked at; %s", verb, thread, ErrAnswerStale, store.Name(now.Operation), store.Name(seen.Operation), again))
	case seen.PayloadHash != "" && now.PayloadHash != seen.PayloadHash:
		return stale(fmt.Errorf("%s on thread %q: %w: the text of draft %s changed (sha256 %s → %s); %s", verb, thread, ErrAnswerStale, store.Name(now.Operation), short(seen.PayloadHash), short(now.PayloadHash), again))
	case seen.Head != 0 && now.Head != seen.Head:
		return stale(fmt.Errorf("%s on thread %q: %w: the thread moved on from @%d to @%d; %s", verb, thread, ErrAnswerStale, seen.Head, now.Head, again))
	}
	if !d.Approved && strings.TrimSpace(d.Reason) == "" {
		return nil, wantErr(WantReason, fmt.Errorf("reject on thread %q needs a reason", thread))
	}
	if d.By == "" {
		d.By = "operator"
	}
	if d.Grant == (Authorization{}) {
		return Approve(now.Operation, d), nil
	}
	// A grant given with the answer is for a draft written under none.
	s, err := Decode(head.Values, "authorization")
	if err != nil {
		return nil, err
	}
	switch has := s.Authorization; {
	case !d.Approved:
		return nil, fmt.Errorf("reject on thread %q: a grant goes with an approval, not a rejection: nothing was rejected", thread)
	case has != nil && *has != (Authorization{}):
		if p := GrantProblem(has, time.Now()); p != "" {
			return nil, wantErr(WantFreshDraft, fmt.Errorf("approve on thread %q: draft %s was written under a grant, and %s; an approval gives a grant only to a draft written under none: nothing was approved",
				thread, store.Name(now.Operation), p))
		}
		return nil, wantErr(WantNoGrant, fmt.Errorf("approve on thread %q: draft %s has its grant already (%s, expires %s): nothing was approved",
			thread, store.Name(now.Operation), store.Name(has.Ref), has.ExpiresAt))
	}
	grant := d.Grant
	return append(Approve(now.Operation, d), engine.Put("authorization", &grant)), nil
}

// Waiting is the draft head's run waits on (answered or not, as long as
// the run has not acted on the answer), for StillWaiting; ok is false
// when none waits.
func Waiting(head engine.Checkpoint) (Seen, bool) {
	s, err := Decode(head.Values, "operations")
	if err != nil {
		return Seen{Head: head.ID}, false
	}
	op, ok := PendingDraft(s)
	if !ok || len(head.Tasks) == 0 {
		return Seen{Head: head.ID}, false
	}
	return Seen{Head: head.ID, Operation: op.ID, PayloadHash: PayloadHash(op.Payload)}, true
}

// StillWaiting is the check of an answer that ends the run (cancel,
// discard) given what the person looked at (Waiting; waited: a draft was
// waiting then): the draft must still be waiting, not yet approved,
// rejected or replaced. An answer recorded since that the run has not acted on does
// not stop it: the end fences out the run that would act on it. Nothing
// is checked when no draft was waiting.
func StillWaiting(seen Seen, waited bool) engine.HeadCheck {
	if !waited {
		return nil
	}
	return func(head engine.Checkpoint) error {
		s, err := Decode(head.Values, "operations")
		if err != nil {
			return err
		}
		op, ok := s.Operations[seen.Operation]
		if ok && op.Status == OpAwaitingApproval && PayloadHash(op.Payload) == seen.PayloadHash {
			return nil
		}
		what := "is gone"
		if ok {
			what = "is " + op.Status + " now"
		}
		return engine.Fixable(head.Thread, head.ID, fmt.Errorf("thread %q: %w: draft %s, waiting at @%d when this began, %s (the head is @%d); nothing was changed: read it again, then try again",
			store.Name(head.Thread), ErrAnswerStale, store.Name(seen.Operation), seen.Head, what, head.ID), engine.ShowFix(head.Thread))
	}
}
