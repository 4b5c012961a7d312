package ticket

// The seed's third step: after create_draft, verify each draft it made
// against the approved proposal and the sources the proposal was built
// from, and keep the finding in state (verificationResults).

import (
	"context"
	"errors"
	"fmt"
	"rewind/engine/event"
	"sort"
	"strings"

	"rewind/engine"
	"rewind/store"
)

// afterDraft goes on to verify when a draft is done and not yet verified.
func afterDraft(v engine.Values) ([]engine.Target, error) {
	s, err := Decode(v, "operations", "verificationResults")
	if err != nil {
		return nil, err
	}
	if len(unverified(s)) > 0 {
		return []engine.Target{engine.Goto(NodeVerify)}, nil
	}
	return nil, nil
}

// unverified are the ids of the done drafts verify has not checked yet,
// sorted.
func unverified(s State) []string {
	var ids []string
	for id, op := range s.Operations {
		if _, seen := s.VerificationResults[id]; !seen && op.Kind == KindCreateDraft && op.Status == OpDone {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}

// verify checks each new draft: it is stored under its operation id, it
// holds the approved payload, and the records the payload was built from
// are still at the versions read. The findings are kept whatever they
// are; a draft that fails a check fails the run (NodeContext.Fail), since
// the draft now exists and a person must look at it: no resume can make it
// right.
func (d *deps) verify(ctx context.Context, nc *engine.NodeContext) ([]engine.Write, error) {
	s, err := Decode(nc.Values, "operations", "verificationResults")
	if err != nil {
		return nil, err
	}
	ids := unverified(s)
	if len(ids) == 0 {
		return nil, nil
	}
	if d.drafts == nil {
		return nil, errors.New("verify has no drafts table: this store does not support side effects")
	}
	current, err := d.sources.Versions(ctx)
	if err != nil {
		return nil, fmt.Errorf("verify: read the source versions: %w", err)
	}
	results := map[string]Verification{}
	var failed []string
	for _, id := range ids {
		v, err := d.verifyDraft(ctx, nc.Thread, s.Operations[id], current)
		if err != nil {
			return nil, err
		}
		results[id] = v
		if !v.OK {
			failed = append(failed, fmt.Sprintf("%s: %s", id, strings.Join(v.Problems, "; ")))
		}
	}
	verified := event.DraftVerified{}
	for id, v := range results {
		verified[id] = event.Verification(v)
	}
	nc.Emit(verified)
	ws := []engine.Write{engine.Put("verificationResults", results)}
	if len(failed) > 0 {
		ws = append(ws, engine.Put("degraded", true))
		nc.Fail(fmt.Sprintf("verification failed for %s; the draft is stored, so review it and correct it in a new turn",
			strings.Join(failed, " · ")), engine.FixShow, engine.FixNewTurn)
	}
	return ws, nil
}

// EventDraftVerified carries the verify step's findings.
const EventDraftVerified = event.TypeDraftVerified

func (d *deps) verifyDraft(ctx context.Context, thread string, op Operation, current map[string]int) (Verification, error) {
	v := Verification{Operation: op.ID, Checks: []string{}}
	draft, err := d.drafts.Draft(ctx, thread, op.ID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		v.Problems = append(v.Problems, "no draft is stored under this operation id, though create_draft recorded it done")
	case err != nil:
		return Verification{}, fmt.Errorf("verify %s: look up its draft: %w", op.ID, err)
	default:
		v.Checks = append(v.Checks, "draft stored under its operation id")
		if err := checkDraft(op, draft); err != nil {
			var me *DraftMismatchError
			if errors.As(err, &me) {
				v.Problems = append(v.Problems, fmt.Sprintf("the draft's payload (sha256 %s) is not the approved proposal (sha256 %s)", short(me.StoredHash), short(me.ApprovedHash)))
			} else {
				v.Problems = append(v.Problems, err.Error())
			}
		} else {
			v.Checks = append(v.Checks, "payload is the approved proposal (sha256 "+short(PayloadHash(op.Payload))+")")
		}
	}
	cs := changed(op.Sources, current)
	for _, c := range cs {
		v.Problems = append(v.Problems, fmt.Sprintf("source %s changed from v%d to v%d after the proposal was written", c.ID, c.From, c.To))
	}
	if len(op.Sources) > 0 && len(cs) == 0 {
		ids := make([]string, 0, len(op.Sources))
		for id, ver := range op.Sources {
			ids = append(ids, fmt.Sprintf("%s v%d", id, ver))
		}
		sort.Strings(ids)
		v.Checks = append(v.Checks, "sources unchanged: "+strings.Join(ids, ", "))
	}
	v.OK = len(v.Problems) == 0
	return v, nil
}
