package engine_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"rewind/engine"
	"rewind/store"
	"rewind/store/sqlite"
)

// tampered shows a store's events through edit, as if rows had been lost
// or added behind the engine's back.
type tampered struct {
	store.Store
	edit func([]store.Event) []store.Event
}

func (s tampered) Events(ctx context.Context, thread string, id int64) ([]store.Event, error) {
	evs, err := s.Store.Events(ctx, thread, id)
	if err != nil {
		return nil, err
	}
	return s.edit(evs), nil
}

// paused makes thread wait before work: @2, with events at @1 and @2.
func paused(t *testing.T, e *engine.Engine, thread string) {
	t.Helper()
	if _, err := e.Run(t.Context(), thread, input("user"), engine.RunConfig{InterruptBefore: []string{"work"}}); err != nil {
		t.Fatal(err)
	}
}

// Issue 10, item 5 (seed 003): before a resume goes on, the stored events
// must follow on from the checkpoints: none missing inside a checkpoint's
// sequence, none for a checkpoint that does not exist (where the resume
// would write next). A gap stops the resume with the fix; nothing is
// written.
func TestResumeRefusesEventsThatAreNotContinuous(t *testing.T) {
	t.Parallel()
	for _, sc := range storeCases {
		t.Run(sc.name, func(t *testing.T) {
			ctx := t.Context()
			st, _ := sc.open(t)
			g := gateGraph(nil)
			paused(t, newTestEngine(t, st, g), "gap")
			for _, tc := range []struct {
				name string
				edit func([]store.Event) []store.Event
				want string
			}{
				{"a missing event", func(evs []store.Event) []store.Event {
					// @2 holds an interrupt event after the input's: drop #1 of @1.
					return slices.DeleteFunc(slices.Clone(evs), func(ev store.Event) bool { return ev.CheckpointID == 1 && ev.Seq == 1 })
				}, "@1 was stored with 1 event(s) but 0 are left (#1 is missing)"},
				{"a gap in the numbering", func(evs []store.Event) []store.Event {
					return append(slices.Clone(evs), store.Event{ThreadID: "gap", CheckpointID: 2, Seq: 3, Type: "late.result", Payload: []byte(`{}`)})
				}, "the events of @2 jump from #1 to #3 (late.result)"},
				{"an event beyond the newest checkpoint", func(evs []store.Event) []store.Event {
					return append(slices.Clone(evs), store.Event{ThreadID: "gap", CheckpointID: 3, Seq: 1, Type: "late.result", Payload: []byte(`{}`)})
				}, "a late.result event is stored for @3, which is not a checkpoint of the thread (the newest is @2)"},
			} {
				t.Run(tc.name, func(t *testing.T) {
					e := newTestEngine(t, tampered{st, tc.edit}, g)
					before, err := e.Latest(ctx, "gap")
					if err != nil {
						t.Fatal(err)
					}
					_, err = e.Resume(ctx, "gap", engine.RunConfig{})
					if !errors.Is(err, engine.ErrDiscontinuous) || !errors.Is(err, engine.ErrCorrupt) || !strings.Contains(err.Error(), tc.want) ||
						!fixedBy(err, engine.FixFork, "gap") || strings.Count(err.Error(), "\n") != 0 {
						t.Fatalf("resume: %v\nwant %q and the fix", err, tc.want)
					}
					if after, _ := e.Latest(ctx, "gap"); after.ID != before.ID {
						t.Fatalf("a refused resume wrote @%d", after.ID)
					}
				})
			}
			// Untampered, the same thread resumes.
			if res, err := newTestEngine(t, st, g).Resume(ctx, "gap", engine.RunConfig{}); err != nil || res.Status != "awaiting-approval" {
				t.Fatalf("untampered resume: %v %s", err, res.Status)
			}
		})
	}
}

// The same on a real SQLite file, with the row really deleted.
func TestResumeRefusesADeletedEventRowOnSQLite(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "gap.db")
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	g := gateGraph(nil)
	paused(t, newTestEngine(t, st, g), "gap")
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if r, err := db.Exec(`DELETE FROM graph_events WHERE thread_id = 'gap' AND checkpoint_id = 1 AND seq = 1`); err != nil {
		t.Fatal(err)
	} else if n, _ := r.RowsAffected(); n != 1 {
		t.Fatalf("deleted %d rows", n)
	}
	_, err = newTestEngine(t, st, g).Resume(ctx, "gap", engine.RunConfig{})
	if !errors.Is(err, engine.ErrDiscontinuous) {
		t.Fatalf("resume after a lost event row: %v", err)
	}
}

// recheckGraph: start → work ×2 (Send) → gate. Its resume check is check.
func recheckGraph(check engine.ResumeCheck, ran *sync.Map) *engine.Graph {
	return engine.NewGraph("recheck-test", 1).
		Channel("log", engine.IndexedAppend("index"), []any{}).
		Node("start", func(context.Context, *engine.NodeContext) ([]engine.Write, error) { return nil, nil }).
		Node("work", func(_ context.Context, nc *engine.NodeContext) ([]engine.Write, error) {
			var who string
			_ = json.Unmarshal(nc.Task.Args, &who)
			n, _ := ran.LoadOrStore(who, new(int))
			*n.(*int)++
			return []engine.Write{engine.Put("log", []map[string]any{{"by": who}})}, nil
		}).
		Node("gate", func(context.Context, *engine.NodeContext) ([]engine.Write, error) {
			return nil, engine.AwaitApproval("op", "?")
		}).Gate("gate").
		Entry("start").
		Route("start", func(engine.Values) ([]engine.Target, error) {
			return []engine.Target{engine.Send("work", "a"), engine.Send("work", "b")}, nil
		}).
		Edge("work", "gate").Edge("gate", engine.End).
		OnResume(check)
}

// Issue 10, item 3's engine side: a graph's resume check can refuse the
// stored writes of a pending task (it runs again, its new writes are the
// ones committed), or replace the pending tasks with the work to redo (an
// update checkpoint). Either is reported in the Result and stored as an
// event; an error refuses the resume.
func TestResumeCheckRerunsOrReplacesPendingWork(t *testing.T) {
	t.Parallel()
	for _, sc := range storeCases {
		t.Run(sc.name, func(t *testing.T) {
			ctx := t.Context()
			st, reopen := sc.open(t)
			var verdict engine.Recheck
			var checkErr error
			var seen engine.ResumeInfo
			check := func(_ context.Context, in engine.ResumeInfo) (engine.Recheck, error) {
				seen = in
				return verdict, checkErr
			}
			var ran sync.Map
			count := func(who string) int {
				n, ok := ran.Load(who)
				if !ok {
					return 0
				}
				return *n.(*int)
			}
			g := recheckGraph(check, &ran)
			e := newTestEngine(t, st, g)
			res, err := e.Run(ctx, "r", input("user"), engine.RunConfig{InterruptBefore: []string{"work"}})
			if err != nil {
				t.Fatal(err)
			}
			at := res.Checkpoint
			pending, err := e.Get(ctx, "r", at)
			if err != nil {
				t.Fatal(err)
			}
			a := pending.Tasks[0]
			if string(a.Args) != `"a"` {
				t.Fatalf("tasks %+v", pending.Tasks)
			}
			// a's writes as a superstep that crashed before its commit left
			// them, with what a read then.
			doc, _ := json.Marshal(engine.TaskWrites{Task: a.ID, Node: "work", Writes: []engine.Write{engine.Put("log", []map[string]any{{"by": "stale a"}})}})
			if err := st.PutWrites(ctx, store.TaskWrites{ThreadID: "r", CheckpointID: at, TaskID: a.ID, Writes: doc}); err != nil {
				t.Fatal(err)
			}

			// A refusal names its reason and writes nothing.
			checkErr = errors.New("the summary's strategy x@v9 is not accepted: fork from @1")
			if _, err := e.Resume(ctx, "r", engine.RunConfig{}); err == nil || !strings.Contains(err.Error(), "x@v9 is not accepted") || !strings.Contains(err.Error(), "resume thread") {
				t.Fatalf("refused resume: %v", err)
			}
			if l, _ := e.Latest(ctx, "r"); l.ID != at {
				t.Fatalf("a refused resume wrote @%d", l.ID)
			}
			checkErr = nil

			// Rerun: a's stale writes are not reused.
			verdict = engine.Recheck{Reason: "what a read changed", Rerun: map[string]string{a.ID: "source x changed"}}
			res, err = reopened(t, st, reopen, g).Resume(ctx, "r", engine.RunConfig{})
			if err != nil {
				t.Fatal(err)
			}
			if len(seen.Stored) != 1 || seen.Stored[0].Task != a.ID || seen.Checkpoint.ID != at || len(seen.Events) == 0 {
				t.Fatalf("the check saw %d stored writes, checkpoint @%d, %d events", len(seen.Stored), seen.Checkpoint.ID, len(seen.Events))
			}
			if res.Rechecked == nil || res.Rechecked.Reason != "what a read changed" || !slices.Equal(res.Rechecked.Rerun, []string{a.ID}) ||
				len(res.Steps[0].Ran) != 2 || len(res.Steps[0].Reused) != 0 || count("a") != 1 {
				t.Fatalf("rerun: rechecked %+v, steps %+v, a ran %d", res.Rechecked, res.Steps, count("a"))
			}
			cp, _ := e.Get(ctx, "r", res.Steps[0].Checkpoint)
			if log := string(cp.Values["log"]); strings.Contains(log, "stale a") || !strings.Contains(log, `"by":"a"`) {
				t.Fatalf("log after the rerun: %s", log)
			}
			evs, _ := e.Events(ctx, "r", res.Steps[0].Checkpoint)
			if !slices.ContainsFunc(evs, func(ev engine.Event) bool { return ev.Type == engine.EventRechecked }) {
				t.Fatalf("no %s event stored with @%d: %+v", engine.EventRechecked, res.Steps[0].Checkpoint, evs)
			}
			if w, _ := e.PendingWrites(ctx, "r", at); len(w) != 0 {
				t.Fatalf("the stale writes were not settled: %+v", w)
			}

			// Replace: the gate's pending task becomes one more "b".
			gateAt := res.Checkpoint
			verdict = engine.Recheck{Reason: "b read something that changed", Writes: []engine.Write{engine.Put("log", []map[string]any{{"by": "recheck"}})}, Next: []engine.Target{engine.Send("work", "b")}}
			res, err = reopened(t, st, reopen, g).Resume(ctx, "r", engine.RunConfig{})
			if err != nil || res.Status != "awaiting-approval" {
				t.Fatalf("replace: %v %s", err, res.Status)
			}
			rc := res.Rechecked
			if rc == nil || rc.Checkpoint != gateAt+1 || rc.Next != "work" || count("b") != 2 {
				t.Fatalf("replace: rechecked %+v, b ran %d", rc, count("b"))
			}
			upd, _ := e.Get(ctx, "r", rc.Checkpoint)
			if upd.Source != engine.SourceUpdate || upd.ParentID != gateAt || upd.Metadata.Status != engine.RunRunning ||
				len(upd.Metadata.Discarded) != 1 || upd.Metadata.Discarded[0].Node != "gate" || !strings.Contains(string(upd.Values["log"]), "recheck") {
				t.Fatalf("the recheck's checkpoint: %+v %s", upd.Metadata, upd.Values["log"])
			}
			// A Next that names no node is refused.
			verdict = engine.Recheck{Reason: "x", Writes: verdict.Writes, Next: []engine.Target{engine.Goto("nowhere")}}
			if _, err := e.Resume(ctx, "r", engine.RunConfig{}); !errors.Is(err, engine.ErrUnknownNode) {
				t.Fatalf("a Next to no node: %v", err)
			}
		})
	}
}

// Issue 36, item 3: a fork checks the events of the branch it builds on,
// and a new turn those of the turn it follows, as a resume does: a lost
// event refuses either with the fix, and nothing is written. The same
// thread untampered forks and takes a new turn.
func TestForkAndNewTurnRefuseEventsThatAreNotContinuous(t *testing.T) {
	for _, sc := range storeCases {
		t.Run(sc.name, func(t *testing.T) {
			ctx := t.Context()
			st, _ := sc.open(t)
			g := gateGraph(nil)
			e := newTestEngine(t, st, g)
			paused(t, e, "gap")
			if _, err := e.Resume(ctx, "gap", engine.RunConfig{}); err != nil {
				t.Fatal(err)
			}
			if _, err := e.Answer(ctx, "gap", func(engine.Checkpoint) ([]engine.Write, error) { return input("ok"), nil }, engine.RunConfig{}); err != nil {
				t.Fatal(err)
			}
			lost := tampered{st, func(evs []store.Event) []store.Event {
				return slices.DeleteFunc(slices.Clone(evs), func(ev store.Event) bool { return ev.CheckpointID == 1 && ev.Seq == 1 })
			}}
			head, err := e.Latest(ctx, "gap")
			if err != nil {
				t.Fatal(err)
			}
			refused := func(what string, err error) {
				t.Helper()
				if !errors.Is(err, engine.ErrDiscontinuous) || !strings.Contains(err.Error(), "@1 was stored with 1 event(s) but 0 are left") ||
					!fixedBy(err, engine.FixFork, "gap") || strings.Contains(err.Error(), "\n") {
					t.Fatalf("%s on a lost event: %v, want the gap and the fix", what, err)
				}
				if after, _ := e.Latest(ctx, "gap"); after.ID != head.ID {
					t.Fatalf("a refused %s wrote @%d", what, after.ID)
				}
			}
			_, err = newTestEngine(t, lost, g).Fork(ctx, "gap", 2, input("again"), engine.RunConfig{})
			refused("fork", err)
			_, err = newTestEngine(t, lost, g).Run(ctx, "gap", input("next"), engine.RunConfig{})
			refused("new turn", err)
			if _, err := newTestEngine(t, st, g).Run(ctx, "gap", input("next"), engine.RunConfig{}); err != nil {
				t.Fatalf("untampered new turn: %v", err)
			}
			if _, err := newTestEngine(t, st, g).Fork(ctx, "gap", 2, input("again"), engine.RunConfig{}); err != nil {
				t.Fatalf("untampered fork: %v", err)
			}
		})
	}
}
