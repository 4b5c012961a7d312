package ticket_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"rewind/engine"
	"rewind/engine/model"
	"rewind/engine/ticket"
	"rewind/store"
	"rewind/store/memory"
)

const sentence = "My order SO20260901 hasn't arrived yet: what is the order status, where is the parcel now, and can I get a refund if it is lost?"

func newEngine(t *testing.T, st store.Store) (*engine.Engine, *model.Mock) {
	t.Helper()
	m := ticket.NewMock()
	e, err := engine.New(st, ticket.NewGraph(), m)
	if err != nil {
		t.Fatal(err)
	}
	return e, m
}

func state(t *testing.T, cp engine.Checkpoint) ticket.State {
	t.Helper()
	s, err := ticket.Decode(cp.Values)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestWholeTurn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, m := newEngine(t, memory.New())
	res, err := e.Run(ctx, "t1", ticket.Input(sentence, "blob://tickets/2026/att-1.png"), engine.RunConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != "done" || len(res.Pending) != 0 {
		t.Fatalf("status %s, pending %v", res.Status, res.Pending)
	}
	want := map[string]int{"planner": 1, "executor": 4 * ticket.MockCallsPerSubtask, "critic": 2, "reply": 1}
	for role, n := range want {
		if res.ModelCalls[role] != n {
			t.Errorf("%s calls %d, want %d (all: %v)", role, res.ModelCalls[role], n, res.ModelCalls)
		}
	}
	if got := m.Calls(); got["summarizer"] != 0 {
		t.Errorf("first turn compacted: %v", got)
	}
	final, err := e.Latest(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	s := state(t, final)
	if s.ReviewRounds != 2 || *s.BudgetRemaining != ticket.TurnToolBudget-4 {
		t.Errorf("review rounds %d, budget %d", s.ReviewRounds, *s.BudgetRemaining)
	}
	last := s.Messages[len(s.Messages)-1]
	if last.Speaker != "reply" || !strings.Contains(last.Content, "Here is where things stand") {
		t.Errorf("last message %+v", last)
	}
	for i, msg := range s.Messages {
		if msg.Index != i+1 {
			t.Fatalf("message %d has index %d", i, msg.Index)
		}
		if msg.Role == ticket.RoleTool && (i == 0 || s.Messages[i-1].ToolCall == nil || s.Messages[i-1].ToolCall.ID != msg.ToolCallID) {
			t.Fatalf("tool result #%d does not follow its call", msg.Index)
		}
	}
	// A second turn grows past 20 messages and compacts: nine calls, and
	// one more for each executor's tool round.
	res2, err := e.Run(ctx, "t1", ticket.Input("Thanks. What is the order status now, where is the parcel, and is the refund still possible?"), engine.RunConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if n := model.Counts(res2.ModelCalls).Sum(); n != 9+4*(ticket.MockCallsPerSubtask-1) || res2.ModelCalls["summarizer"] != 1 {
		t.Errorf("second turn: %d calls %v, want 9 with one summary", n, res2.ModelCalls)
	}
	s2 := state(t, mustLatest(t, e, "t1"))
	if s2.Summary == nil || s2.Summary.From != 1 || s2.HistoryVersion != 1 {
		t.Fatalf("summary %+v, version %d", s2.Summary, s2.HistoryVersion)
	}
	if s2.Messages[0].Index != s2.Summary.To+1 {
		t.Errorf("tail starts at #%d, summary ends at #%d", s2.Messages[0].Index, s2.Summary.To)
	}
	if len(s2.Attachments) != 1 || s2.Attachments[0].Ref != "blob://tickets/2026/att-1.png" {
		t.Errorf("attachments %+v", s2.Attachments)
	}
	evs, err := e.Events(ctx, "t1", 0)
	if err != nil {
		t.Fatal(err)
	}
	compacted := 0
	for _, ev := range evs {
		if ev.Type == ticket.EventContextCompacted {
			compacted++
			var d struct {
				Before  int   `json:"historyVersionBefore"`
				After   int   `json:"historyVersionAfter"`
				Sources []int `json:"sourceIndices"`
			}
			if err := json.Unmarshal(ev.Data, &d); err != nil || d.Before != 0 || d.After != 1 || len(d.Sources) == 0 || d.Sources[0] != 1 {
				t.Errorf("compacted event %s (%v)", ev.Data, err)
			}
		}
	}
	if compacted != 1 {
		t.Errorf("%d context.compacted events, want 1", compacted)
	}
}

func mustLatest(t *testing.T, e *engine.Engine, thread string) engine.Checkpoint {
	t.Helper()
	cp, err := e.Latest(context.Background(), thread)
	if err != nil {
		t.Fatal(err)
	}
	return cp
}

func TestResumeSkipsTasksWhoseWritesAreStored(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := memory.New()
	e, m := newEngine(t, st)
	if _, err := e.Run(ctx, "t", ticket.Input(sentence), engine.RunConfig{InterruptBefore: []string{ticket.NodeExecutor}}); err != nil {
		t.Fatal(err)
	}
	at := mustLatest(t, e, "t")
	// One executor fails: the other two finish and store their writes.
	m.FailRole(model.RoleExecutor, 1)
	_, err := e.Resume(ctx, "t", engine.RunConfig{})
	if !errors.Is(err, model.ErrInjected) {
		t.Fatalf("resume with a failing executor: %v", err)
	}
	if now := mustLatest(t, e, "t"); now.ID != at.ID {
		t.Fatalf("a failed superstep wrote checkpoint %d", now.ID)
	}
	stored, err := e.PendingWrites(ctx, "t", at.ID)
	if err != nil || len(stored) != 2 {
		t.Fatalf("stored writes %d (%v), want 2", len(stored), err)
	}
	e2, m2 := newEngine(t, st)
	res, err := e2.Resume(ctx, "t", engine.RunConfig{})
	if err != nil {
		t.Fatal(err)
	}
	first := res.Steps[0]
	if len(first.Ran) != 1 || len(first.Reused) != 2 || first.ModelCalls["executor"] != ticket.MockCallsPerSubtask {
		t.Fatalf("first resumed step ran %d, reused %d, calls %v", len(first.Ran), len(first.Reused), first.ModelCalls)
	}
	if m2.Calls()["planner"] != 0 {
		t.Fatal("the planner ran again")
	}
	s := state(t, mustLatest(t, e2, "t"))
	if n := strings.Count(mustJSON(t, s.Messages), "call-t-"); n != 8 {
		// 4 tool calls (3 + 1 redo), each named in its call and its result.
		t.Errorf("%d tool-call references, want 8: no task may run twice", n)
	}
}

func mustJSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestNewTurnWithPendingTasksIsRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, _ := newEngine(t, memory.New())
	if _, err := e.Run(ctx, "t", ticket.Input(sentence), engine.RunConfig{InterruptBefore: []string{ticket.NodeExecutor}}); err != nil {
		t.Fatal(err)
	}
	_, err := e.Run(ctx, "t", ticket.Input("another question"), engine.RunConfig{})
	var pe *engine.PendingError
	if !errors.As(err, &pe) || len(pe.Tasks) != 3 {
		t.Fatalf("got %v", err)
	}
	// The refusal offers each way on (the CLI words them as commands).
	for _, choice := range []engine.Action{engine.FixResume, engine.FixFork, engine.FixDiscard} {
		if !offers(err, choice, "t") {
			t.Errorf("refusal does not offer fix %d: %v", choice, err)
		}
	}
	cp, err := e.DiscardPending(ctx, "t")
	if err != nil || len(cp.Tasks) != 0 || len(cp.Metadata.Discarded) != 3 {
		t.Fatalf("discard: %v %+v", err, cp.Metadata)
	}
	if _, err := e.Run(ctx, "t", ticket.Input("another question"), engine.RunConfig{}); err != nil {
		t.Fatalf("run after discard: %v", err)
	}
}

func TestForkBranchesWithoutDeleting(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, _ := newEngine(t, memory.New())
	if _, err := e.Run(ctx, "t", ticket.Input(sentence), engine.RunConfig{}); err != nil {
		t.Fatal(err)
	}
	listed, _ := e.History(ctx, "t", 0, 0)
	var before []engine.Checkpoint
	for _, l := range listed {
		cp, err := e.Get(ctx, "t", l.ID)
		if err != nil {
			t.Fatal(err)
		}
		before = append(before, cp)
	}
	res, err := e.Fork(ctx, "t", 1, ticket.Input("Please change the address on SO20260901 and send me the invoice."), engine.RunConfig{})
	if err != nil {
		t.Fatal(err)
	}
	after, _ := e.History(ctx, "t", 0, 0)
	if len(after) <= len(before) {
		t.Fatal("fork wrote nothing")
	}
	for _, old := range before {
		cp, err := e.Get(ctx, "t", old.ID)
		if err != nil || mustJSON(t, cp.Values) != mustJSON(t, old.Values) {
			t.Fatalf("fork changed checkpoint %d (%v)", old.ID, err)
		}
	}
	chain, err := e.Ancestors(ctx, "t", res.Checkpoint)
	if err != nil {
		t.Fatal(err)
	}
	if chain[0].ID != 1 || chain[1].Source != engine.SourceFork || chain[1].ParentID != 1 {
		t.Fatalf("chain %d←%d(%s)", chain[0].ID, chain[1].ParentID, chain[1].Source)
	}
	if _, err := e.Fork(ctx, "t", 0, ticket.Input("x"), engine.RunConfig{}); !errors.Is(err, engine.ErrNoCheckpoint) {
		t.Fatalf("fork without checkpoint: %v", err)
	}
	if _, err := e.Fork(ctx, "t", 999, ticket.Input("x"), engine.RunConfig{}); !errors.Is(err, store.ErrNotFound) || !offers(err, engine.FixLog, "t") {
		t.Fatalf("fork from unknown checkpoint: %v", err)
	}
	if _, err := e.Fork(ctx, "t", 1, nil, engine.RunConfig{}); !errors.Is(err, engine.ErrEmptyInput) {
		t.Fatalf("fork without input: %v", err)
	}
}

func TestMigrationOnRead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := memory.New()
	if err := st.PutCheckpoint(ctx, store.Checkpoint{ThreadID: "old", ID: 1, State: ticket.V1Checkpoint}, nil); err != nil {
		t.Fatal(err)
	}
	e, _ := newEngine(t, st)
	cp, err := e.Get(ctx, "old", 1)
	if err != nil {
		t.Fatal(err)
	}
	s := state(t, cp)
	if cp.MigratedFrom != 1 || s.Attachments[0].Ref != "blob://tickets/2025/att-old.png" || *s.BudgetRemaining != 1 ||
		s.Subtasks[0].ToolCalls != 3 || s.Subtasks[1].Status != ticket.StatusAwaitingApproval || s.Messages[1].Index != 2 {
		t.Fatalf("migrated: from v%d %+v budget %d", cp.MigratedFrom, s, *s.BudgetRemaining)
	}
	if strings.Contains(mustJSON(t, cp.Values), `"url"`) || strings.Contains(mustJSON(t, cp.Values), `"calls"`) {
		t.Fatal("old field names survive migration")
	}
	// The stored row is not rewritten by a read.
	row, _ := st.Get(ctx, "old", 1)
	if string(row.State) != string(ticket.V1Checkpoint) {
		t.Fatal("reading migrated the stored row")
	}
}

func TestBadCheckpointsAreRefusedClearly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := memory.New()
	put := func(thread, doc string) {
		if err := st.PutCheckpoint(ctx, store.Checkpoint{ThreadID: thread, ID: 1, State: []byte(doc)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	put("newer", `{"schemaVersion": 9, "values": {}}`)
	put("corrupt", `{"schemaVersion": 2, "values": {"messages": 5}, "tasks": "nope"}`)
	put("zero", `{"schemaVersion": 0}`)
	e, _ := newEngine(t, st)
	if _, err := e.Get(ctx, "newer", 1); !errors.Is(err, engine.ErrNewerSchema) || !strings.Contains(err.Error(), "upgrade rewind") {
		t.Errorf("newer: %v", err)
	}
	if _, err := e.Get(ctx, "corrupt", 1); !errors.Is(err, engine.ErrCorrupt) {
		t.Errorf("corrupt: %v", err)
	}
	if _, err := e.Get(ctx, "zero", 1); !errors.Is(err, engine.ErrUnknownSchema) {
		t.Errorf("v0: %v", err)
	}
	// A newer checkpoint cannot be resumed or forked either.
	if _, err := e.Resume(ctx, "newer", engine.RunConfig{}); !errors.Is(err, engine.ErrNewerSchema) {
		t.Errorf("resume newer: %v", err)
	}
	if _, err := e.Get(ctx, "nope", 1); !errors.Is(err, store.ErrNotFound) || !offers(err, engine.FixThreads, "") {
		t.Errorf("unknown thread: %v", err)
	}
}

func TestFailedSummaryCallSkipsCompactionAndTheRunGoesOn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, m := newEngine(t, memory.New())
	var history []ticket.Message
	for i := 0; i < 23; i++ {
		history = append(history, ticket.Message{Role: ticket.RoleUser, Speaker: "user", Content: "question"})
	}
	if _, err := e.UpdateState(ctx, "t", 0, []engine.Write{engine.Put("messages", history)}, ticket.NodeCritic); err != nil {
		t.Fatal(err)
	}
	m.FailRole(model.RoleSummarizer, -1)
	res, err := e.Resume(ctx, "t", engine.RunConfig{})
	if err != nil || res.Status != "done" {
		t.Fatalf("run with failing summarizer: %v %s", err, res.Status)
	}
	s := state(t, mustLatest(t, e, "t"))
	if s.Summary != nil || len(s.Messages) != 24 || s.HistoryVersion != 0 {
		t.Fatalf("compaction happened anyway: summary %v, %d messages", s.Summary, len(s.Messages))
	}
	evs, _ := e.Events(ctx, "t", 0)
	skipped := false
	for _, ev := range evs {
		skipped = skipped || ev.Type == ticket.EventCompactionFailed
	}
	if !skipped {
		t.Fatal("no context.compaction_skipped event")
	}
}

func TestInterruptAfter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, _ := newEngine(t, memory.New())
	res, err := e.Run(ctx, "t", ticket.Input(sentence), engine.RunConfig{InterruptAfter: []string{ticket.NodeCritic}})
	if err != nil || res.Status != "interrupted" || res.Interrupt.When != "after" {
		t.Fatalf("%v %+v", err, res.Interrupt)
	}
	if _, err := e.Run(ctx, "t", ticket.Input(sentence), engine.RunConfig{InterruptBefore: []string{"nope"}}); !errors.Is(err, engine.ErrUnknownNode) {
		t.Fatalf("unknown interrupt node: %v", err)
	}
}

// Seed 003: a redelivered compaction (the same checkpoint stored again)
// produces no second version and no second event.
func TestRedeliveredCompactionMakesNoSecondVersion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := memory.New()
	e, _ := newEngine(t, st)
	var history []ticket.Message
	for i := 0; i < 23; i++ {
		history = append(history, ticket.Message{Role: ticket.RoleUser, Speaker: "user", Content: "question"})
	}
	if _, err := e.UpdateState(ctx, "t", 0, []engine.Write{engine.Put("messages", history)}, ticket.NodeCritic); err != nil {
		t.Fatal(err)
	}
	res, err := e.Resume(ctx, "t", engine.RunConfig{})
	if err != nil {
		t.Fatal(err)
	}
	compactedAt := res.Steps[0].Checkpoint
	row, err := st.Get(ctx, "t", compactedAt)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := st.Events(ctx, "t", compactedAt)
	if err != nil {
		t.Fatal(err)
	}
	// Redeliver: the same version with the same content is a no-op.
	if err := st.PutCheckpoint(ctx, row, rows); err != nil {
		t.Fatalf("redelivered compaction refused: %v", err)
	}
	// A different result for the same version (a late, cancelled run) is refused.
	altered := row
	altered.State = []byte(strings.Replace(string(row.State), `"historyVersion":1`, `"historyVersion":2`, 1))
	if err := st.PutCheckpoint(ctx, altered, nil); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("a different compaction at the same version: %v", err)
	}
	evs, err := e.Events(ctx, "t", 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ev := range evs {
		if ev.Type == ticket.EventContextCompacted {
			n++
		}
	}
	s := state(t, mustLatest(t, e, "t"))
	if n != 1 || s.HistoryVersion != 1 {
		t.Fatalf("%d compaction events, history version %d; want 1 and 1", n, s.HistoryVersion)
	}
}

// A fork leaves the interrupted branch behind; ResumeAt finishes that
// branch without touching the fork, and refuses a checkpoint that was
// already continued.
func TestResumeAtAPausedBranchHead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, m := newEngine(t, memory.New())
	res, err := e.Run(ctx, "t", ticket.Input(sentence), engine.RunConfig{InterruptBefore: []string{ticket.NodeExecutor}})
	if err != nil {
		t.Fatal(err)
	}
	paused := res.Checkpoint
	forked, err := e.Fork(ctx, "t", paused, ticket.Input("Please send me the invoice for SO20260901."), engine.RunConfig{})
	if err != nil {
		t.Fatal(err)
	}
	// The newest checkpoint is the fork's end: plain Resume has nothing to do.
	if _, err := e.Resume(ctx, "t", engine.RunConfig{}); !errors.Is(err, engine.ErrNothingToResume) {
		t.Fatalf("resume latest: %v", err)
	}
	before := m.Calls()["executor"]
	got, err := e.ResumeAt(ctx, "t", paused, engine.RunConfig{})
	if err != nil || got.Status != "done" {
		t.Fatalf("resume the paused branch: %v %s", err, got.Status)
	}
	if got.Steps[0].From != paused || m.Calls()["executor"]-before != 4*ticket.MockCallsPerSubtask || got.ModelCalls["planner"] != 0 {
		t.Fatalf("resumed from %d with calls %v", got.Steps[0].From, got.ModelCalls)
	}
	chain, err := e.Ancestors(ctx, "t", got.Checkpoint)
	if err != nil {
		t.Fatal(err)
	}
	for _, cp := range chain {
		if cp.ID > paused && cp.ID <= forked.Checkpoint {
			t.Fatalf("the resumed branch runs through the fork's checkpoint %d", cp.ID)
		}
	}
	if _, err := e.ResumeAt(ctx, "t", paused, engine.RunConfig{}); !errors.Is(err, engine.ErrNothingToResume) || !strings.Contains(err.Error(), "already continued") {
		t.Fatalf("second resume of the same head: %v", err)
	}
}

// offers says err offers action on thread among its fixes (engine.Fixer),
// which the CLI words as commands and the TUI as keys.
func offers(err error, action engine.Action, thread string) bool {
	var f engine.Fixer
	if !errors.As(err, &f) {
		return false
	}
	for _, fx := range f.Fixes() {
		if fx.Action == action && fx.Thread == thread {
			return true
		}
	}
	return false
}
