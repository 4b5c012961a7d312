package ticket_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"rewind/engine"
	"rewind/engine/ticket"
	"rewind/store"
	"rewind/store/memory"
)

func draftEngine(t *testing.T, st store.Store, opts ...ticket.Option) *engine.Engine {
	t.Helper()
	e, err := ticket.NewEngine(st, ticket.NewMock(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func grant(t *testing.T, ttl time.Duration, now time.Time) *ticket.Authorization {
	t.Helper()
	a, err := ticket.NewGrant("grant:test", ttl, now)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func draftTurn(text string, a *ticket.Authorization) []engine.Write {
	return ticket.Turn{Text: text, Draft: true, Authorization: a}.Writes()
}

func mustGet(t *testing.T, e *engine.Engine, thread string, id int64) engine.Checkpoint {
	t.Helper()
	cp, err := e.Get(context.Background(), thread, id)
	if err != nil {
		t.Fatal(err)
	}
	return cp
}

// pending is the draft operation the gate at checkpoint id waits on.
func pending(t *testing.T, e *engine.Engine, thread string, id int64) ticket.Operation {
	t.Helper()
	op, ok := ticket.PendingDraft(state(t, mustGet(t, e, thread, id)))
	if !ok {
		t.Fatalf("checkpoint %d of %s waits on no draft", id, thread)
	}
	return op
}

// answer records an approval at the gate checkpoint, as a new update
// checkpoint whose parent is the gate; it returns that checkpoint.
func answer(t *testing.T, e *engine.Engine, thread string, gate int64) int64 {
	t.Helper()
	op := pending(t, e, thread, gate)
	cp, err := e.UpdateState(context.Background(), thread, gate, ticket.Approve(op.ID, ticket.Decision{Approved: true, By: "test"}), "")
	if err != nil {
		t.Fatal(err)
	}
	return cp.ID
}

func draftsOf(t *testing.T, st store.Store, thread string) []store.Draft {
	t.Helper()
	ds, err := st.(store.Drafts).ListDrafts(context.Background(), thread)
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

func draftBody(t *testing.T, d store.Draft) map[string]string {
	t.Helper()
	var body map[string]string
	if err := json.Unmarshal(d.Body, &body); err != nil {
		t.Fatalf("draft %s body %s: %v", d.OperationID, d.Body, err)
	}
	return body
}

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Set(t time.Time) { c.mu.Lock(); defer c.mu.Unlock(); c.now = t }

// Issue 10, item 1: a fork before a draft makes its own operation, though
// its request has the same message index. Approving on both branches makes
// exactly two drafts, each with its branch's body.
func TestForkedDraftsAreTwoSideEffects(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, st store.Store, reopen func() store.Store) {
		ctx := t.Context()
		e := draftEngine(t, st)
		const th = "x"
		if _, err := e.Run(ctx, th, ticket.Input(sentence), engine.RunConfig{}); err != nil {
			t.Fatal(err)
		}
		before := mustLatest(t, e, th).ID
		resA, err := e.Run(ctx, th, draftTurn("Where is the parcel for SO20260901 now?", grant(t, time.Hour, time.Now())), engine.RunConfig{})
		if err != nil || resA.Status != "awaiting-approval" {
			t.Fatalf("turn with a draft: %v %s", err, resA.Status)
		}
		resB, err := e.Fork(ctx, th, before, draftTurn("Please change the address on SO20260901 and send me the invoice.", grant(t, time.Hour, time.Now())), engine.RunConfig{})
		if err != nil || resB.Status != "awaiting-approval" {
			t.Fatalf("fork with a draft: %v %s", err, resB.Status)
		}
		sA, sB := state(t, mustGet(t, e, th, resA.Checkpoint)), state(t, mustGet(t, e, th, resB.Checkpoint))
		if sA.Request == nil || sB.Request == nil || sA.Request.Index != sB.Request.Index {
			t.Fatalf("the branches' requests should share their message index: %+v %+v", sA.Request, sB.Request)
		}
		opA, opB := pending(t, e, th, resA.Checkpoint), pending(t, e, th, resB.Checkpoint)
		if opA.ID == opB.ID || opA.Payload == opB.Payload {
			t.Fatalf("two branches' drafts: %s %q and %s %q; want two ids and two bodies", opA.ID, opA.Payload, opB.ID, opB.Payload)
		}
		// Approve on both branches, the fork first, each in a new process.
		final := map[string]int64{}
		for _, c := range []struct {
			gate int64
			op   ticket.Operation
		}{{resB.Checkpoint, opB}, {resA.Checkpoint, opA}} {
			e2 := draftEngine(t, reopen())
			res, err := e2.ResumeAt(ctx, th, answer(t, e2, th, c.gate), engine.RunConfig{})
			if err != nil || res.Status != "done" || len(res.Blocked) != 0 {
				t.Fatalf("approve %s: %v %s blocked %v", c.op.ID, err, res.Status, res.Blocked)
			}
			final[c.op.ID] = res.Checkpoint
		}
		ds := draftsOf(t, st, th)
		if len(ds) != 2 {
			t.Fatalf("%d drafts, want exactly two (one per branch): %+v", len(ds), ds)
		}
		for _, op := range []ticket.Operation{opA, opB} {
			var got *store.Draft
			for i := range ds {
				if ds[i].OperationID == op.ID {
					got = &ds[i]
				}
			}
			if got == nil {
				t.Fatalf("no draft for %s: %+v", op.ID, ds)
			}
			if b := draftBody(t, *got); b["body"] != op.Payload || b["payloadSha256"] != ticket.PayloadHash(op.Payload) {
				t.Errorf("draft %s holds %q (%s), want its branch's %q", op.ID, b["body"], b["payloadSha256"], op.Payload)
			}
			done := state(t, mustGet(t, e, th, final[op.ID])).Operations[op.ID]
			if done.Status != ticket.OpDone || done.Reused || done.Result != "draft "+op.ID {
				t.Errorf("operation %s on its branch: %+v, want done, not reused", op.ID, done)
			}
		}
	})
}

// Issue 10, item 2: a crash after the side effect (the draft row exists,
// its result is not recorded), then the grant expires: the resume looks the
// operation up first and reuses the draft; it is not blocked.
func TestResumeAfterTheSideEffectReusesTheDraftWhateverTheGrant(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, st store.Store, reopen func() store.Store) {
		ctx := t.Context()
		start := time.Now().UTC()
		clk := &clock{now: start}
		e := draftEngine(t, st, ticket.WithClock(clk.Now))
		const th = "k"
		res, err := e.Run(ctx, th, draftTurn(sentence, grant(t, 5*time.Second, start)), engine.RunConfig{})
		if err != nil || res.Status != "awaiting-approval" {
			t.Fatalf("run: %v %s", err, res.Status)
		}
		op := pending(t, e, th, res.Checkpoint)
		approved := answer(t, e, th, res.Checkpoint)
		// The process dies right after the side effect: its checkpoint never commits.
		crash, cancel := context.WithCancel(ctx)
		defer cancel()
		_, err = e.ResumeAt(crash, th, approved, engine.RunConfig{Hook: func(point engine.HookPoint, _ engine.HookInfo) {
			if point == ticket.PointAfterSideEffect {
				cancel()
			}
		}})
		if err == nil {
			t.Fatal("the crashed approval committed")
		}
		if ds := draftsOf(t, st, th); len(ds) != 1 || ds[0].OperationID != op.ID {
			t.Fatalf("after the crash: drafts %+v, want the one for %s", ds, op.ID)
		}
		if s := state(t, mustLatest(t, e, th)); s.Operations[op.ID].Status != ticket.OpApproved {
			t.Fatalf("the crash recorded %+v; want the operation still approved, not done", s.Operations[op.ID])
		}
		// The grant expires; a new process resumes.
		clk.Set(start.Add(time.Minute))
		e2 := draftEngine(t, reopen(), ticket.WithClock(clk.Now))
		res2, err := e2.Resume(ctx, th, engine.RunConfig{})
		if err != nil || res2.Status != "done" || len(res2.Blocked) != 0 || res2.BlockedErr() != nil {
			t.Fatalf("resume: %v %s blocked %v", err, res2.Status, res2.Blocked)
		}
		got := state(t, mustLatest(t, e2, th)).Operations[op.ID]
		if got.Status != ticket.OpDone || !got.Reused || got.Result != "draft "+op.ID {
			t.Fatalf("operation after the resume: %+v, want done and reused", got)
		}
		if ds := draftsOf(t, st, th); len(ds) != 1 {
			t.Fatalf("%d drafts, want 1", len(ds))
		}
	})
}

// Issue 10, item 2: only a new write needs a grant, and it needs a valid
// one: none, a zero or negative lifetime, an unreadable or a past expiry
// block it with a reason that the run's result reports.
func TestNewDraftWriteNeedsAValidGrant(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) string { return now.Add(d).Format(time.RFC3339) }
	for _, tc := range []struct {
		name  string
		grant *ticket.Authorization
		want  string // in the reason; "" for a write that goes through
	}{
		{"no grant", nil, "no authorization grant was given for this draft"},
		{"zero lifetime", &ticket.Authorization{Ref: "grant:zero", GrantedAt: at(time.Hour), ExpiresAt: at(time.Hour)}, "authorization grant:zero has a zero or negative lifetime"},
		{"negative lifetime", &ticket.Authorization{Ref: "grant:neg", GrantedAt: at(time.Hour), ExpiresAt: at(30 * time.Minute)}, "authorization grant:neg has a zero or negative lifetime"},
		{"unreadable expiry", &ticket.Authorization{Ref: "grant:soon", ExpiresAt: "soon"}, `authorization grant:soon has no readable expiry ("soon")`},
		{"expired", &ticket.Authorization{Ref: "grant:old", ExpiresAt: at(-time.Second)}, "authorization grant:old expired at " + at(-time.Second)},
		{"expires now", &ticket.Authorization{Ref: "grant:now", ExpiresAt: at(0)}, "authorization grant:now expired at"},
		{"valid", grant(t, time.Minute, now), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			st := memory.New()
			e := draftEngine(t, st, ticket.WithClock(func() time.Time { return now }))
			res, err := e.Run(ctx, "g", draftTurn(sentence, tc.grant), engine.RunConfig{})
			if err != nil || res.Status != "awaiting-approval" {
				t.Fatalf("run: %v %s", err, res.Status)
			}
			op := pending(t, e, "g", res.Checkpoint)
			res, err = e.ResumeAt(ctx, "g", answer(t, e, "g", res.Checkpoint), engine.RunConfig{})
			if err != nil || res.Status != "done" {
				t.Fatalf("approve: %v %s", err, res.Status)
			}
			s := state(t, mustLatest(t, e, "g"))
			got := s.Operations[op.ID]
			ds := draftsOf(t, st, "g")
			if tc.want == "" {
				if got.Status != ticket.OpDone || len(ds) != 1 || len(res.Blocked) != 0 || res.BlockedErr() != nil {
					t.Fatalf("valid grant: operation %+v, drafts %d, blocked %v", got, len(ds), res.Blocked)
				}
				return
			}
			if got.Status != ticket.OpBlocked || !strings.Contains(got.Result, tc.want) || !s.Degraded {
				t.Fatalf("operation %+v (degraded %v), want blocked with %q", got, s.Degraded, tc.want)
			}
			if len(ds) != 0 {
				t.Fatalf("a blocked write stored %d draft(s)", len(ds))
			}
			if len(res.Blocked) != 1 || res.Blocked[0].Operation != op.ID || res.Blocked[0].Node != ticket.NodeDraft || res.Blocked[0].Reason != got.Result || res.Blocked[0].Checkpoint != res.Checkpoint {
				t.Fatalf("result blocked %+v, want %s at @%d", res.Blocked, op.ID, res.Checkpoint)
			}
			// A fork under a fresh grant fixes it: data the front ends
			// word (issue 35), not a command in the stored result.
			fresh := []engine.Fix{{Action: engine.FixFreshGrant, Thread: "g"}}
			var be *engine.BlockedError
			if err := res.BlockedErr(); !errors.As(err, &be) || !errors.Is(err, engine.ErrBlocked) || !strings.Contains(err.Error(), tc.want) ||
				strings.Contains(err.Error(), "--") || !reflect.DeepEqual(be.Fixes(), fresh) {
				t.Fatalf("BlockedErr = %v, fixes %+v; want %+v", err, be, fresh)
			}
		})
	}
}

// A draft turn records its own grant, or none: it never writes under an
// earlier turn's.
func TestDraftTurnDoesNotInheritAGrant(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	st := memory.New()
	e := draftEngine(t, st)
	res, err := e.Run(ctx, "i", draftTurn(sentence, grant(t, time.Hour, time.Now())), engine.RunConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if res, err = e.ResumeAt(ctx, "i", answer(t, e, "i", res.Checkpoint), engine.RunConfig{}); err != nil || len(res.Blocked) != 0 {
		t.Fatalf("first draft: %v %v", err, res.Blocked)
	}
	res, err = e.Run(ctx, "i", draftTurn("And where is the parcel now?", nil), engine.RunConfig{})
	if err != nil || res.Status != "awaiting-approval" {
		t.Fatalf("second turn: %v %s", err, res.Status)
	}
	if s := state(t, mustGet(t, e, "i", res.Checkpoint)); s.Authorization != nil {
		t.Fatalf("the second draft turn inherited %+v", s.Authorization)
	}
	res, err = e.ResumeAt(ctx, "i", answer(t, e, "i", res.Checkpoint), engine.RunConfig{})
	if err != nil || len(res.Blocked) != 1 || !strings.Contains(res.Blocked[0].Reason, "no authorization grant") {
		t.Fatalf("second draft: %v, blocked %+v; want blocked for lack of a grant", err, res.Blocked)
	}
	if ds := draftsOf(t, st, "i"); len(ds) != 1 {
		t.Fatalf("%d drafts, want only the first", len(ds))
	}
}

func TestTurnValidateAndNewGrant(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC)
	for _, ttl := range []time.Duration{0, -time.Hour} {
		if a, err := ticket.NewGrant("g", ttl, now); !errors.Is(err, ticket.ErrBadGrant) || a != nil || !wantsGrantTTL(err) {
			t.Errorf("NewGrant(%s) = %+v, %v; want ErrBadGrant wanting a grant's lifetime", ttl, a, err)
		}
	}
	a := grant(t, 1500*time.Millisecond, now)
	if a.GrantedAt != "2026-09-01T12:00:00Z" || a.ExpiresAt != "2026-09-01T12:00:01.5Z" {
		t.Errorf("NewGrant = %+v", a)
	}
	for _, tc := range []struct {
		turn ticket.Turn
		ok   bool
	}{
		{ticket.Turn{Text: "x"}, true},
		{ticket.Turn{Text: "x", Draft: true, Authorization: a}, true},
		{ticket.Turn{Text: "x", Draft: true}, false},
		{ticket.Turn{Text: "x", Draft: true, Authorization: &ticket.Authorization{Ref: "g", ExpiresAt: "2026-09-01T12:00:00Z"}}, false},
	} {
		err := tc.turn.Validate(now)
		if (err == nil) != tc.ok || err != nil && (!errors.Is(err, ticket.ErrBadGrant) || !wantsGrantTTL(err)) {
			t.Errorf("Validate(%+v) = %v, want ok %v", tc.turn, err, tc.ok)
		}
	}
}

// Issue 10, item 1: a draft found under the operation's id is reused only
// when it holds the approved payload; otherwise the step fails naming both.
func TestReusedDraftMustMatchTheApprovedPayload(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, st store.Store, _ func() store.Store) {
		ctx := t.Context()
		e := draftEngine(t, st)
		for _, tc := range []struct {
			name, body string // body: the draft already stored; %s is the approved payload
			match      bool
		}{
			{"another payload, hashed", `{"to":"customer","body":"Your parcel was lost.","payloadSha256":"` + ticket.PayloadHash("Your parcel was lost.") + `"}`, false},
			{"a body whose hash lies", `{"to":"customer","body":"%s","payloadSha256":"` + ticket.PayloadHash("something else") + `"}`, false},
			{"a draft from before hashes, same text", `{"to":"customer","body":"%s"}`, true},
			{"a draft from before hashes, other text", `{"to":"customer","body":"Your parcel was lost."}`, false},
		} {
			t.Run(tc.name, func(t *testing.T) {
				th := "m-" + strings.ReplaceAll(tc.name, " ", "-")
				res, err := e.Run(ctx, th, draftTurn(sentence, grant(t, time.Hour, time.Now())), engine.RunConfig{})
				if err != nil {
					t.Fatal(err)
				}
				op := pending(t, e, th, res.Checkpoint)
				payload, _ := json.Marshal(op.Payload)
				body := strings.Replace(tc.body, "%s", string(payload[1:len(payload)-1]), 1)
				if _, _, err := st.(store.Drafts).CreateDraft(ctx, store.Draft{ThreadID: th, OperationID: op.ID, Body: []byte(body)}); err != nil {
					t.Fatal(err)
				}
				res, err = e.ResumeAt(ctx, th, answer(t, e, th, res.Checkpoint), engine.RunConfig{})
				got := state(t, mustLatest(t, e, th)).Operations[op.ID]
				if tc.match {
					if err != nil || got.Status != ticket.OpDone || !got.Reused {
						t.Fatalf("matching draft: %v, operation %+v; want done and reused", err, got)
					}
					return
				}
				var me *ticket.DraftMismatchError
				if !errors.As(err, &me) || !errors.Is(err, ticket.ErrDraftMismatch) {
					t.Fatalf("mismatching draft: %v, want a DraftMismatchError", err)
				}
				want := ticket.PayloadHash(op.Payload)
				if me.Operation != op.ID || me.ApprovedHash != want || me.StoredHash == want ||
					!strings.Contains(err.Error(), want[:12]) || !strings.Contains(err.Error(), me.StoredHash[:12]) || !strings.Contains(err.Error(), op.ID) {
					t.Fatalf("mismatch %+v: %v", me, err)
				}
				if got.Status == ticket.OpDone || got.Reused {
					t.Fatalf("a mismatching draft was recorded as %+v", got)
				}
				if ds := draftsOf(t, st, th); len(ds) != 1 || !strings.Contains(string(ds[0].Body), "payloadSha256") && tc.name != "a draft from before hashes, other text" {
					t.Fatalf("drafts %+v: the stored one must stay as it was", ds)
				}
			})
		}
	})
}

// Issue 10, item 8: a writer that was taken over cannot create a draft;
// the new writer creates it once.
func TestFencedWriterCannotCreateADraft(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, st store.Store, reopen func() store.Store) {
		ctx := t.Context()
		e := draftEngine(t, st)
		const th = "f"
		res, err := e.Run(ctx, th, draftTurn(sentence, grant(t, time.Hour, time.Now())), engine.RunConfig{})
		if err != nil {
			t.Fatal(err)
		}
		op := pending(t, e, th, res.Checkpoint)
		approved := answer(t, e, th, res.Checkpoint)
		// Another process takes the thread over just before the side effect.
		_, err = e.ResumeAt(ctx, th, approved, engine.RunConfig{Hook: func(point engine.HookPoint, _ engine.HookInfo) {
			if point == ticket.PointBeforeSideEffect {
				if _, err := reopen().Fence(ctx, th); err != nil {
					t.Error(err)
				}
			}
		}})
		if !errors.Is(err, store.ErrFenced) || !strings.Contains(err.Error(), "create_draft "+op.ID) {
			t.Fatalf("fenced writer: %v, want ErrFenced from create_draft %s", err, op.ID)
		}
		if ds := draftsOf(t, st, th); len(ds) != 0 {
			t.Fatalf("a fenced writer created %+v", ds)
		}
		e2 := draftEngine(t, reopen())
		res, err = e2.Resume(ctx, th, engine.RunConfig{})
		if err != nil || res.Status != "done" {
			t.Fatalf("the new writer: %v %s", err, res.Status)
		}
		if got := state(t, mustLatest(t, e2, th)).Operations[op.ID]; got.Status != ticket.OpDone || got.Reused {
			t.Fatalf("operation %+v, want done by the new writer", got)
		}
		if ds := draftsOf(t, st, th); len(ds) != 1 {
			t.Fatalf("%d drafts, want 1", len(ds))
		}
	})
}

// A newer turn's draft replaces one still waiting for an answer (a fork
// from the gate carries it), so the gate asks about the newest draft only.
func TestNewDraftTurnSupersedesAWaitingDraft(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	e := draftEngine(t, memory.New())
	res, err := e.Run(ctx, "s", draftTurn(sentence, grant(t, time.Hour, time.Now())), engine.RunConfig{})
	if err != nil {
		t.Fatal(err)
	}
	old := pending(t, e, "s", res.Checkpoint)
	res, err = e.Fork(ctx, "s", res.Checkpoint, draftTurn("And where is the parcel now?", grant(t, time.Hour, time.Now())), engine.RunConfig{})
	if err != nil || res.Status != "awaiting-approval" {
		t.Fatalf("second turn: %v %s", err, res.Status)
	}
	s := state(t, mustGet(t, e, "s", res.Checkpoint))
	cur, _ := ticket.PendingDraft(s)
	if cur.ID == old.ID || res.Interrupt.Operation != cur.ID || s.Operations[old.ID].Status != ticket.OpSuperseded || !strings.Contains(s.Operations[old.ID].Result, cur.ID) {
		t.Fatalf("gate on %s (interrupt %s); old %+v", cur.ID, res.Interrupt.Operation, s.Operations[old.ID])
	}
}

// Issue 10, item 6, and issue 32, item 7: a v1 subtask WAITING for
// approval is a v2 operation awaiting approval at a gate: the migrated
// checkpoint reads awaiting-approval and is approved at once (it read done,
// and only the next turn found the gate, where the write was blocked for
// want of a grant). The write checks the grant the v1 document carried, as
// any draft's: a valid one makes the draft, none or an expired one blocks
// it.
func TestMigratedWaitingSubtaskIsApprovableAtOnce(t *testing.T) {
	t.Parallel()
	id := ticket.MigratedOperationID("t-2-replacement")
	const goal = "create a replacement draft for the damaged item (order SO20250412)"
	withGrant := func(a *ticket.Authorization) []byte {
		var doc map[string]any
		if err := json.Unmarshal(ticket.V1Checkpoint, &doc); err != nil {
			t.Fatal(err)
		}
		doc["values"].(map[string]any)["authorization"] = a
		b, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	now := time.Now()
	for _, tc := range []struct {
		name    string
		doc     []byte
		blocked string // "" when the draft is made
	}{
		{"a valid grant", withGrant(grant(t, time.Hour, now)), ""},
		{"no grant", ticket.V1Checkpoint, "no authorization grant"},
		{"an expired grant", withGrant(&ticket.Authorization{Ref: "grant:v1", GrantedAt: now.Add(-2 * time.Hour).UTC().Format(time.RFC3339), ExpiresAt: now.Add(-time.Hour).UTC().Format(time.RFC3339)}), "expired"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eachStore(t, func(t *testing.T, st store.Store, reopen func() store.Store) {
				ctx := t.Context()
				if err := st.PutCheckpoint(ctx, store.Checkpoint{ThreadID: "old", ID: 1, State: tc.doc}, nil); err != nil {
					t.Fatal(err)
				}
				e := draftEngine(t, st)
				cp := mustGet(t, e, "old", 1)
				s := state(t, cp)
				if op := s.Operations[id]; op.Kind != ticket.KindCreateDraft || op.Status != ticket.OpAwaitingApproval || op.Payload != goal {
					t.Fatalf("migrated operations %+v, want %s awaiting approval", s.Operations, id)
				}
				if run, err := e.Status(ctx, "old"); err != nil || run.Status != engine.RunAwaitingApproval {
					t.Fatalf("the migrated thread reads %+v (%v), want awaiting-approval", run, err)
				}
				gate, ok := ticket.WaitingDraft(cp, s, now)
				if !ok || gate.Op.ID != id || (tc.blocked == "") != (gate.Problem == "") || !strings.Contains(gate.Problem, tc.blocked) {
					t.Fatalf("the gate: %+v (%t), want %s with problem %q", gate, ok, id, tc.blocked)
				}
				e2 := draftEngine(t, reopen())
				res, err := e2.ResumeAt(ctx, "old", answer(t, e2, "old", 1), engine.RunConfig{})
				ds := draftsOf(t, st, "old")
				if tc.blocked != "" {
					if err != nil || len(res.Blocked) != 1 || res.Blocked[0].Operation != id || !strings.Contains(res.Blocked[0].Reason, tc.blocked) || len(ds) != 0 {
						t.Fatalf("approve: %v %s %+v, drafts %d; want the write blocked: %s", err, res.Status, res.Blocked, len(ds), tc.blocked)
					}
					return
				}
				if err != nil || res.Status != engine.RunDone || len(res.Blocked) != 0 {
					t.Fatalf("approve: %v %s %v", err, res.Status, res.Blocked)
				}
				if len(ds) != 1 || ds[0].OperationID != id || draftBody(t, ds[0])["body"] != goal {
					t.Fatalf("drafts %+v", ds)
				}
			})
		})
	}
}

// lateDrafts hides a draft from its first look-up, as if another writer
// inserted it between create_draft's look-up and its insert; later
// look-ups (verify's) find it.
type lateDrafts struct {
	store.Drafts
	looked *sync.Map
}

func (l lateDrafts) Draft(ctx context.Context, thread, op string) (store.Draft, error) {
	if _, again := l.looked.LoadOrStore(thread+"\x00"+op, true); !again {
		return store.Draft{}, store.ErrNotFound
	}
	return l.Drafts.Draft(ctx, thread, op)
}

// A draft that a racing writer inserted after the look-up is checked too:
// CreateDraft returns it (not created), and it must be the approved payload.
func TestRacingDraftMustMatchTheApprovedPayload(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	st := memory.New()
	e, err := engine.New(st, ticket.NewGraph(ticket.WithDrafts(lateDrafts{st, &sync.Map{}})), ticket.NewMock())
	if err != nil {
		t.Fatal(err)
	}
	for _, match := range []bool{true, false} {
		th := map[bool]string{true: "same", false: "other"}[match]
		res, err := e.Run(ctx, th, draftTurn(sentence, grant(t, time.Hour, time.Now())), engine.RunConfig{})
		if err != nil {
			t.Fatal(err)
		}
		op := pending(t, e, th, res.Checkpoint)
		payload := op.Payload
		if !match {
			payload = "Your parcel was lost."
		}
		body, _ := json.Marshal(map[string]string{"to": "customer", "body": payload, "payloadSha256": ticket.PayloadHash(payload)})
		if _, _, err := st.CreateDraft(ctx, store.Draft{ThreadID: th, OperationID: op.ID, Body: body}); err != nil {
			t.Fatal(err)
		}
		_, err = e.ResumeAt(ctx, th, answer(t, e, th, res.Checkpoint), engine.RunConfig{})
		got := state(t, mustLatest(t, e, th)).Operations[op.ID]
		if match && (err != nil || got.Status != ticket.OpDone || !got.Reused) {
			t.Fatalf("the racing writer's matching draft: %v %+v, want done and reused", err, got)
		}
		if !match && (!errors.Is(err, ticket.ErrDraftMismatch) || got.Status == ticket.OpDone) {
			t.Fatalf("the racing writer's other draft: %v %+v, want a mismatch", err, got)
		}
	}
}

// wantsGrantTTL: err says a grant's lifetime would get past it (the CLI
// words it as --auth-ttl).
func wantsGrantTTL(err error) bool {
	var r *ticket.WantError
	return errors.As(err, &r) && r.Want == ticket.WantGrantTTL
}
