package ticket_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"rewind/engine"
	"rewind/engine/model"
	"rewind/engine/ticket"
	"rewind/store"
	"rewind/store/memory"
)

const (
	orders    = "orders/SO20260901"
	shipments = "shipments/SO20260901"
	refunds   = "refunds/SO20260901"
)

func sourcedEngine(t *testing.T, st store.Store, src ticket.Sources) (*engine.Engine, *model.Mock) {
	t.Helper()
	m := ticket.NewMock()
	e, err := ticket.NewEngine(st, m, ticket.WithSources(src))
	if err != nil {
		t.Fatal(err)
	}
	return e, m
}

func bump(t *testing.T, src ticket.Sources, id string) int {
	t.Helper()
	v, err := src.Bump(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func subtask(t *testing.T, s ticket.State, topic string) ticket.Subtask {
	t.Helper()
	for _, st := range s.Subtasks {
		if st.Topic == topic {
			return st
		}
	}
	t.Fatalf("no %s subtask in %+v", topic, s.Subtasks)
	return ticket.Subtask{}
}

// Issue 10, item 3: every tool result records the record it read and its
// version; so do the subtask, state's sourceVersions and the proposal the
// gate waits on. A bumped record reads differently.
func TestToolResultsRecordTheirSourceAndVersion(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, st store.Store, reopen func() store.Store) {
		ctx := t.Context()
		src := ticket.NewMemorySources()
		bump(t, src, shipments)
		e, _ := sourcedEngine(t, st, src)
		res, err := e.Run(ctx, "v", draftTurn(sentence, grant(t, time.Hour, time.Now())), engine.RunConfig{})
		if err != nil || res.Status != "awaiting-approval" {
			t.Fatalf("run: %v %s", err, res.Status)
		}
		e2, _ := sourcedEngine(t, reopen(), src)
		s := state(t, mustLatest(t, e2, "v"))
		want := map[string]int{orders: 1, shipments: 2, refunds: 1}
		tools := 0
		for _, m := range s.Messages {
			if m.Role != ticket.RoleTool {
				continue
			}
			tools++
			if m.Source == nil || want[m.Source.ID] == 0 || m.Source.Version != want[m.Source.ID] {
				t.Errorf("tool result #%d %s records source %+v", m.Index, m.Speaker, m.Source)
			}
		}
		if tools != 4 {
			t.Fatalf("%d tool results, want 4", tools)
		}
		for topic, id := range map[string]string{"order": orders, "shipping": shipments, "refund": refunds} {
			if st := subtask(t, s, topic); st.Source != id || st.SourceVersion != want[id] {
				t.Errorf("%s subtask read %s v%d, want %s v%d", topic, st.Source, st.SourceVersion, id, want[id])
			}
		}
		if fmt.Sprint(s.SourceVersions) != fmt.Sprint(want) {
			t.Errorf("sourceVersions %v, want %v", s.SourceVersions, want)
		}
		op, _ := ticket.PendingDraft(s)
		if fmt.Sprint(op.Sources) != fmt.Sprint(want) {
			t.Errorf("the proposal was built from %v, want %v", op.Sources, want)
		}
		// The bumped record is another record: its figures differ.
		if !strings.Contains(subtask(t, s, "shipping").Result, "lastScan") || subtask(t, s, "shipping").Result == shippingAtV1(t) {
			t.Errorf("the shipping finding at v2 reads as at v1: %s", subtask(t, s, "shipping").Result)
		}
	})
}

// shippingAtV1 is the shipping finding of an untouched back office.
func shippingAtV1(t *testing.T) string {
	t.Helper()
	e, _ := sourcedEngine(t, memory.New(), ticket.NewMemorySources())
	if _, err := e.Run(t.Context(), "v1", ticket.Input(sentence), engine.RunConfig{}); err != nil {
		t.Fatal(err)
	}
	return subtask(t, state(t, mustLatest(t, e, "v1")), "shipping").Result
}

// Issue 10, item 3: a record that changed while the run waited for
// approval blocks the write, naming the record and both versions; no draft
// is made and nothing is verified. The same when the change comes after
// the approval, before create_draft ran (a kill before the side effect).
func TestChangedSourceBlocksTheWrite(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, st store.Store, reopen func() store.Store) {
		ctx := t.Context()
		for _, when := range []string{"awaiting-approval", "before-side-effect"} {
			t.Run(when, func(t *testing.T) {
				src := ticket.NewMemorySources()
				e, _ := sourcedEngine(t, st, src)
				th := "gate-" + when
				res, err := e.Run(ctx, th, draftTurn(sentence, grant(t, time.Hour, time.Now())), engine.RunConfig{})
				if err != nil {
					t.Fatal(err)
				}
				op := pending(t, e, th, res.Checkpoint)
				approved := answer(t, e, th, res.Checkpoint)
				if when == "before-side-effect" {
					// Approved and past the gate: create_draft is pending.
					res, err = e.ResumeAt(ctx, th, approved, engine.RunConfig{InterruptBefore: []string{ticket.NodeDraft}})
					if err != nil || res.Status != "interrupted" {
						t.Fatalf("to create_draft: %v %s", err, res.Status)
					}
				}
				bump(t, src, shipments)
				e2, _ := sourcedEngine(t, reopen(), src)
				if when == "before-side-effect" {
					res, err = e2.Resume(ctx, th, engine.RunConfig{})
				} else {
					res, err = e2.ResumeAt(ctx, th, approved, engine.RunConfig{})
				}
				if err != nil || res.Status != "done" {
					t.Fatalf("approve: %v %s", err, res.Status)
				}
				want := "shipments/SO20260901 v1 → v2"
				// A new turn fixes it: data the front ends word (issue 35).
				if len(res.Blocked) != 1 || res.Blocked[0].Operation != op.ID || !strings.Contains(res.Blocked[0].Reason, want) ||
					strings.Contains(res.Blocked[0].Reason, "rewind") || !slices.Equal(res.Blocked[0].Fix, []engine.Fix{engine.NewTurnFix(th)}) {
					t.Fatalf("blocked %+v, want %s blocked over %s, a new turn its fix", res.Blocked, op.ID, want)
				}
				if !errors.Is(res.BlockedErr(), engine.ErrBlocked) {
					t.Fatal("a blocked write is not an error")
				}
				s := state(t, mustLatest(t, e2, th))
				if got := s.Operations[op.ID]; got.Status != ticket.OpBlocked || !strings.Contains(got.Result, want) {
					t.Fatalf("operation %+v", got)
				}
				if ds := draftsOf(t, st, th); len(ds) != 0 {
					t.Fatalf("a stale proposal was written: %+v", ds)
				}
				if len(s.VerificationResults) != 0 {
					t.Fatalf("a blocked draft was verified: %+v", s.VerificationResults)
				}
			})
		}
	})
}

// Issue 10, item 3: a resume re-reads what changed. Findings committed
// before the change go back to their executors (only those whose record
// changed); the critic and the reply follow from the new findings, and the
// proposal the gate waits on is built from the new versions.
func TestResumeReReadsChangedSources(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, st store.Store, reopen func() store.Store) {
		ctx := t.Context()
		src := ticket.NewMemorySources()
		e, _ := sourcedEngine(t, st, src)
		res, err := e.Run(ctx, "re", draftTurn(sentence, grant(t, time.Hour, time.Now())), engine.RunConfig{InterruptBefore: []string{ticket.NodeSummarizer}})
		if err != nil || res.Status != "interrupted" {
			t.Fatalf("run: %v %s", err, res.Status)
		}
		before := state(t, mustLatest(t, e, "re"))
		bump(t, src, shipments)
		e2, m2 := sourcedEngine(t, reopen(), src)
		res, err = e2.Resume(ctx, "re", engine.RunConfig{})
		if err != nil || res.Status != "awaiting-approval" {
			t.Fatalf("resume: %v %s", err, res.Status)
		}
		rc := res.Rechecked
		if rc == nil || !strings.Contains(rc.Reason, "shipments/SO20260901 v1 → v2 (read by t-2-shipping)") || rc.Next != "executor" || rc.Checkpoint == 0 {
			t.Fatalf("rechecked %+v", rc)
		}
		first := res.Steps[0]
		if len(first.Ran) != 1 || first.Ran[0].Node != ticket.NodeExecutor || !strings.Contains(string(first.Ran[0].Args), "t-2-shipping") || first.ModelCalls["executor"] != ticket.MockCallsPerSubtask {
			t.Fatalf("first resumed step %+v: want the shipping executor alone", first)
		}
		if m2.Calls()["planner"] != 0 || m2.Calls()["executor"] != ticket.MockCallsPerSubtask {
			t.Fatalf("calls %v: only the changed record is re-read", m2.Calls())
		}
		s := state(t, mustLatest(t, e2, "re"))
		ship := subtask(t, s, "shipping")
		if ship.SourceVersion != 2 || ship.Result == subtask(t, before, "shipping").Result || subtask(t, s, "order").Result != subtask(t, before, "order").Result {
			t.Fatalf("after the re-read: shipping %+v", ship)
		}
		if s.SourceVersions[shipments] != 2 || *s.BudgetRemaining != *before.BudgetRemaining-1 {
			t.Fatalf("sourceVersions %v, budget %d (before %d): a re-read spends the turn's budget, never resets it", s.SourceVersions, *s.BudgetRemaining, *before.BudgetRemaining)
		}
		op, _ := ticket.PendingDraft(s)
		if op.Sources[shipments] != 2 {
			t.Fatalf("the proposal was built from %v", op.Sources)
		}
		evs, err := e2.Events(ctx, "re", rc.Checkpoint)
		if err != nil || !slices.ContainsFunc(evs, func(ev engine.Event) bool { return ev.Type == engine.EventRechecked }) {
			t.Fatalf("no %s event at @%d: %v %+v", engine.EventRechecked, rc.Checkpoint, err, evs)
		}
		// Nothing changed since: the approval goes through and verifies.
		res, err = e2.ResumeAt(ctx, "re", answer(t, e2, "re", res.Checkpoint), engine.RunConfig{})
		if err != nil || res.Status != "done" || len(res.Blocked) != 0 || res.Rechecked != nil {
			t.Fatalf("approve: %v %s %+v %+v", err, res.Status, res.Blocked, res.Rechecked)
		}
		if v := state(t, mustLatest(t, e2, "re")).VerificationResults[op.ID]; !v.OK {
			t.Fatalf("verification %+v", v)
		}
	})
}

// Issue 10, item 3: an executor whose writes are stored but not yet
// committed (a crash mid-fan-out) read a record that changed: its writes
// are not reused, it runs again; the others' writes are reused.
func TestResumeRerunsAStaleStoredExecutor(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, st store.Store, reopen func() store.Store) {
		ctx := t.Context()
		src := ticket.NewMemorySources()
		e, m := sourcedEngine(t, st, src)
		res, err := e.Run(ctx, "mid", ticket.Input(sentence), engine.RunConfig{InterruptBefore: []string{ticket.NodeExecutor}})
		if err != nil {
			t.Fatal(err)
		}
		at := res.Checkpoint
		m.FailRole(model.RoleExecutor, 1)
		if _, err := e.Resume(ctx, "mid", engine.RunConfig{}); !errors.Is(err, model.ErrInjected) {
			t.Fatalf("resume with a failing executor: %v", err)
		}
		stored, err := e.PendingWrites(ctx, "mid", at)
		if err != nil || len(stored) != 2 {
			t.Fatalf("%d stored writes (%v), want 2", len(stored), err)
		}
		// Bump the record one of the finished executors read.
		cp := mustGet(t, e, "mid", at)
		var stale engine.Task
		for _, task := range cp.Tasks {
			if task.ID == stored[0].Task {
				stale = task
			}
		}
		topic := map[string]string{"t-1-order": orders, "t-2-shipping": shipments, "t-3-refund": refunds}
		var id string
		for sub, rec := range topic {
			if strings.Contains(string(stale.Args), sub) {
				id = rec
			}
		}
		bump(t, src, id)
		e2, m2 := sourcedEngine(t, reopen(), src)
		res, err = e2.Resume(ctx, "mid", engine.RunConfig{})
		if err != nil {
			t.Fatal(err)
		}
		rc := res.Rechecked
		if rc == nil || !slices.Equal(rc.Rerun, []string{stale.ID}) || rc.Checkpoint != 0 || !strings.Contains(rc.Reason, id+" v1 → v2") {
			t.Fatalf("rechecked %+v, want %s rerun over %s", rc, stale.ID, id)
		}
		first := res.Steps[0]
		if len(first.Ran) != 2 || len(first.Reused) != 1 || first.Reused[0].ID != stored[1].Task || m2.Calls()["executor"] < 2 {
			t.Fatalf("first step ran %d reused %+v; calls %v", len(first.Ran), first.Reused, m2.Calls())
		}
		s := state(t, mustGet(t, e2, "mid", first.Checkpoint))
		for _, sub := range s.Subtasks {
			if sub.Source == id && sub.SourceVersion != 2 {
				t.Fatalf("%s kept the stale read %+v", sub.ID, sub)
			}
		}
	})
}

// Issue 10, item 4: the seed's third step. After create_draft, verify
// checks the draft against the approved proposal and its sources and keeps
// the finding; a record that changed after the draft was made fails the
// verification and the run (the draft stays, once; no resume revives it).
func TestVerifyChecksTheDraft(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, st store.Store, reopen func() store.Store) {
		ctx := t.Context()
		for _, stale := range []bool{false, true} {
			th := map[bool]string{false: "fresh", true: "stale"}[stale]
			t.Run(th, func(t *testing.T) {
				src := ticket.NewMemorySources()
				e, _ := sourcedEngine(t, st, src)
				res, err := e.Run(ctx, th, draftTurn(sentence, grant(t, time.Hour, time.Now())), engine.RunConfig{})
				if err != nil {
					t.Fatal(err)
				}
				op := pending(t, e, th, res.Checkpoint)
				// The record changes right after the draft is written, before
				// its result is recorded (a kill there and a resume see the same).
				res, err = e.ResumeAt(ctx, th, answer(t, e, th, res.Checkpoint), engine.RunConfig{Hook: func(point engine.HookPoint, _ engine.HookInfo) {
					if stale && point == ticket.PointAfterSideEffect {
						bump(t, src, refunds)
					}
				}})
				e2, _ := sourcedEngine(t, reopen(), src)
				latest := mustLatest(t, e2, th)
				s := state(t, latest)
				v, ok := s.VerificationResults[op.ID]
				if !ok || v.Operation != op.ID || !slices.Contains(latest.Metadata.Nodes, ticket.NodeVerify) {
					t.Fatalf("no verification of %s at @%d (%v): %+v", op.ID, latest.ID, latest.Metadata.Nodes, s.VerificationResults)
				}
				if ds := draftsOf(t, st, th); len(ds) != 1 {
					t.Fatalf("%d drafts", len(ds))
				}
				if !stale {
					if err != nil || res.Status != "done" || !v.OK || len(v.Checks) != 3 || len(v.Problems) != 0 {
						t.Fatalf("verify: %v %s %+v", err, res.Status, v)
					}
					if st, _ := e2.Status(ctx, th); st.Status != engine.RunDone {
						t.Fatalf("status %+v", st)
					}
					return
				}
				if !errors.Is(err, engine.ErrRunFailed) || !strings.Contains(err.Error(), "refunds/SO20260901 changed from v1 to v2") || res.Status != engine.RunFailed {
					t.Fatalf("a stale draft: %v %s", err, res.Status)
				}
				if v.OK || len(v.Problems) != 1 || !s.Degraded {
					t.Fatalf("verification %+v degraded %v", v, s.Degraded)
				}
				wantVerifyFixes(t, e2, th, err)
			})
		}
	})
}

// The file store of versions works across processes: bumps under its
// lock are never lost, and every handle reads the same versions.
func TestFileSourcesBumpsAreNeverLost(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "store.db.sources.json")
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f := ticket.FileSources{Path: path} // its own handle, as another process
			for j := 0; j < 5; j++ {
				if _, err := f.Bump(ctx, shipments); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	vs, err := ticket.FileSources{Path: path}.Versions(ctx)
	if err != nil || vs[shipments] != 1+40 {
		t.Fatalf("versions %v (%v), want %s at v41", vs, err, shipments)
	}
	if _, err := (ticket.FileSources{Path: path}).Bump(ctx, "SO20260901"); !errors.Is(err, ticket.ErrBadSource) || !strings.Contains(err.Error(), "shipments/SO20260901") {
		t.Fatalf("a bare order number: %v", err)
	}
	if vs, err := (ticket.FileSources{Path: filepath.Join(t.TempDir(), "none.json")}).Versions(ctx); err != nil || len(vs) != 0 {
		t.Fatalf("no file: %v %v", vs, err)
	}
}

// Issue 32, item 3: a version at the top of an int is not bumped (it
// wrapped to a negative version), and a version below v1 (negative, as a
// wrapped bump or a hand left it) is refused when read; the file is left
// as it was.
func TestSourceVersionsStayPositive(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir := t.TempDir()
	write := func(name string, v int) ticket.FileSources {
		path := filepath.Join(dir, name)
		doc := fmt.Sprintf(`{"format": "rewind-sources/1", "versions": {%q: %d}}`, shipments, v)
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return ticket.FileSources{Path: path}
	}
	top := write("top.json", math.MaxInt)
	before, _ := os.ReadFile(top.Path)
	if v, err := top.Bump(ctx, shipments); err == nil || !strings.Contains(err.Error(), "the highest version") || !strings.Contains(err.Error(), top.Path) {
		t.Fatalf("bump at MaxInt: v%d, %v; want a refusal naming the file", v, err)
	}
	if after, _ := os.ReadFile(top.Path); string(after) != string(before) {
		t.Fatalf("a refused bump rewrote the file:\n%s", after)
	}
	for _, v := range []int{-1, 0, math.MinInt} {
		f := write(fmt.Sprintf("low%d.json", v), v)
		if vs, err := f.Versions(ctx); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%s is at v%d", shipments, v)) {
			t.Errorf("version %d read as %v (%v); want a refusal naming it", v, vs, err)
		}
		if _, err := f.Bump(ctx, shipments); err == nil {
			t.Errorf("version %d bumped", v)
		}
	}
}

// wantVerifyFixes checks that a failed verification's fixes (review the
// draft, then a new turn) are data in the run's error (err) and thread's
// stored status alike, and that its reason names no command.
func wantVerifyFixes(t *testing.T, e *engine.Engine, thread string, err error) {
	t.Helper()
	fixes := []engine.Fix{engine.ShowFix(thread), engine.NewTurnFix(thread)}
	var fe *engine.RunFailedError
	if !errors.As(err, &fe) || !slices.Equal(fe.Fixes(), fixes) || strings.Contains(fe.Reason, "rewind") {
		t.Fatalf("the failed run's error %+v, want the fixes %+v", fe, fixes)
	}
	if st, _ := e.Status(t.Context(), thread); st.Status != engine.RunFailed || !strings.Contains(st.Reason, "verification failed") || !slices.Equal(st.Fix, fixes) {
		t.Fatalf("status %+v", st)
	}
}
