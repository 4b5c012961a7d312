package ticket

import (
	"strings"
	"testing"
	"time"

	"rewind/engine"
)

// The gate the TUI and the drill show is the engine's: an unanswered draft
// at the approval node, its grant judged by the rule the write applies.
func TestWaitingDraftJudgesTheGrantAsTheWriteWould(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	atGate := engine.Checkpoint{ID: 7, Tasks: []engine.Task{{Node: NodeApproval}}}
	draft := Operation{ID: "op-1", Kind: KindCreateDraft, Status: OpAwaitingApproval, Payload: "Dear customer"}
	state := func(a *Authorization, approvals map[string]Decision) State {
		return State{Operations: map[string]Operation{draft.ID: draft}, Authorization: a, Approvals: approvals}
	}
	valid := &Authorization{Ref: "a-1", GrantedAt: "2026-12-02T11:00:00Z", ExpiresAt: "2026-12-02T13:00:00Z"}
	for _, c := range []struct {
		name    string
		cp      engine.Checkpoint
		s       State
		waits   bool
		problem string // a part of Gate.Problem; "" for none
	}{
		{"valid grant", atGate, state(valid, nil), true, ""},
		{"expired", atGate, state(&Authorization{Ref: "a-2", GrantedAt: "2026-12-02T09:00:00Z", ExpiresAt: "2026-12-02T10:00:00Z"}, nil), true, "a-2 expired at"},
		{"zero lifetime", atGate, state(&Authorization{Ref: "a-3", GrantedAt: "2026-12-02T13:00:00Z", ExpiresAt: "2026-12-02T13:00:00Z"}, nil), true, "zero or negative lifetime"},
		{"no grant", atGate, state(nil, nil), true, "no authorization grant"},
		{"answered", atGate, state(valid, map[string]Decision{"op-1": {Approved: true}}), false, ""},
		{"not at the gate", engine.Checkpoint{ID: 7, Tasks: []engine.Task{{Node: NodeReply}}}, state(valid, nil), false, ""},
		{"no draft", atGate, State{Authorization: valid}, false, ""},
	} {
		g, ok := WaitingDraft(c.cp, c.s, now)
		if ok != c.waits {
			t.Errorf("%s: waits %v, want %v", c.name, ok, c.waits)
			continue
		}
		if !ok {
			continue
		}
		if g.Checkpoint != 7 || g.Op.ID != "op-1" || g.Grant != c.s.Authorization {
			t.Errorf("%s: gate %+v", c.name, g)
		}
		if (c.problem == "") != (g.Problem == "") || !strings.Contains(g.Problem, c.problem) {
			t.Errorf("%s: problem %q, want one with %q", c.name, g.Problem, c.problem)
		}
	}
}
