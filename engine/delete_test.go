package engine_test

import (
	"errors"
	"strings"
	"testing"

	"rewind/engine"
	"rewind/engine/ticket"
	"rewind/store"
)

// pausedThread runs a turn that stops before the executors and returns
// its checkpoints' ids, newest first.
func pausedThread(t *testing.T, e *engine.Engine, thread string, cfg engine.RunConfig) []int64 {
	t.Helper()
	cfg.InterruptBefore = []string{ticket.NodeExecutor}
	if _, err := e.Run(t.Context(), thread, ticket.Input(sentences[0]), cfg); err != nil {
		t.Fatalf("run %s: %v", thread, err)
	}
	return historyIDs(t, e, thread)
}

func historyIDs(t *testing.T, e *engine.Engine, thread string) []int64 {
	t.Helper()
	h, err := e.History(t.Context(), thread, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, cp := range h {
		ids = append(ids, cp.ID)
	}
	return ids
}

// Deleting a thread is a writer's act: refused while another live process
// runs the thread, done with takeOver, which fences that process out of
// the thread for good, also once the thread is started again.
func TestDeleteThreadTakesTheWriterLock(t *testing.T) {
	t.Parallel()
	for _, sc := range storeCases {
		t.Run(sc.name, func(t *testing.T) {
			ctx := t.Context()
			st, _ := sc.open(t)
			e, err := ticket.NewEngine(st, ticket.NewMock())
			if err != nil {
				t.Fatal(err)
			}
			before := pausedThread(t, e, "t", engine.RunConfig{})

			// Another process runs the thread: it holds the lock and an epoch.
			release, err := st.Lock(ctx, "t")
			if err != nil {
				t.Fatal(err)
			}
			defer release()
			stale, err := st.Fence(ctx, "t")
			if err != nil {
				t.Fatal(err)
			}
			err = e.DeleteThread(ctx, "t", false)
			const says = `thread "t" is being run by another process`
			var f engine.Fixer
			if !errors.Is(err, store.ErrLocked) || err.Error() != says || !errors.As(err, &f) || len(f.Fixes()) != 2 || f.Fixes()[1].Action != engine.FixTakeOver {
				t.Fatalf("DeleteThread of a live thread = %v, want ErrLocked saying %q, its last fix a take-over", err, says)
			}
			if got := historyIDs(t, e, "t"); len(got) != len(before) {
				t.Fatalf("a refused delete changed the thread: %v, was %v", got, before)
			}
			late := store.Checkpoint{ThreadID: "t", ID: before[0] + 1, ParentID: before[0], State: []byte(`{"late":1}`), Epoch: stale}
			if err := st.PutCheckpoint(ctx, late, nil); err != nil {
				t.Fatalf("the live writer's put after a refused delete: %v", err)
			}

			if err := e.DeleteThread(ctx, "t", true); err != nil {
				t.Fatalf("DeleteThread with take-over: %v", err)
			}
			if _, err := e.Latest(ctx, "t"); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("Latest after DeleteThread = %v, want ErrNotFound", err)
			}
			if n, err := st.Size(ctx, "t"); err != nil || n != 0 {
				t.Errorf("Size after DeleteThread = %d, %v; want 0", n, err)
			}
			late.ID, late.ParentID = before[0]+2, before[0]+1
			if err := st.PutCheckpoint(ctx, late, nil); !errors.Is(err, store.ErrFenced) {
				t.Errorf("the taken-over writer's put after the delete = %v, want ErrFenced", err)
			}

			// A new writer starts the thread again; the old one stays out.
			again := pausedThread(t, e, "t", engine.RunConfig{TakeOver: true})
			late.ID, late.ParentID = again[0]+1, again[0]
			if err := st.PutCheckpoint(ctx, late, nil); !errors.Is(err, store.ErrFenced) {
				t.Errorf("the taken-over writer's put on the new thread = %v, want ErrFenced", err)
			}
			if err := st.PutWrites(ctx, store.TaskWrites{ThreadID: "t", CheckpointID: again[0], TaskID: "late", Writes: []byte(`{}`), Epoch: stale}); !errors.Is(err, store.ErrFenced) {
				t.Errorf("the taken-over writer's writes on the new thread = %v, want ErrFenced", err)
			}
			if got := historyIDs(t, e, "t"); len(got) != len(again) || got[0] != again[0] {
				t.Errorf("history of the new thread = %v, want %v", got, again)
			}
		})
	}
}

func TestDeleteThreadUnknownAndLeftovers(t *testing.T) {
	t.Parallel()
	for _, sc := range storeCases {
		t.Run(sc.name, func(t *testing.T) {
			ctx := t.Context()
			st, _ := sc.open(t)
			e, err := ticket.NewEngine(st, ticket.NewMock())
			if err != nil {
				t.Fatal(err)
			}
			err = e.DeleteThread(ctx, "nope", false)
			if !errors.Is(err, store.ErrNotFound) || !fixedBy(err, engine.FixThreads, "") {
				t.Errorf("DeleteThread of an unknown thread = %v, want not found naming `rewind threads`", err)
			}
			if n, err := st.Size(ctx, "nope"); err != nil || n != 0 {
				t.Errorf("DeleteThread of an unknown thread left %d bytes behind (%v)", n, err)
			}
			if err := e.DeleteThread(ctx, " ", false); err == nil || errors.Is(err, store.ErrNotFound) {
				t.Errorf("DeleteThread of a blank id = %v, want a refusal", err)
			}

			// Leftovers without checkpoints are a thread to delete too:
			// drafts, and the epoch of a run that died before its first
			// checkpoint.
			ds := st.(store.Drafts)
			if _, _, err := ds.CreateDraft(ctx, store.Draft{ThreadID: "drafts", OperationID: "op", Body: []byte(`{}`)}); err != nil {
				t.Fatal(err)
			}
			if _, err := st.Fence(ctx, "epoch"); err != nil {
				t.Fatal(err)
			}
			for _, th := range []string{"drafts", "epoch"} {
				if err := e.DeleteThread(ctx, th, false); err != nil {
					t.Errorf("DeleteThread(%s): %v", th, err)
				}
				if n, err := st.Size(ctx, th); err != nil || n != 0 {
					t.Errorf("Size(%s) after DeleteThread = %d, %v; want 0", th, n, err)
				}
				if err := e.DeleteThread(ctx, th, false); !errors.Is(err, store.ErrNotFound) {
					t.Errorf("second DeleteThread(%s) = %v, want ErrNotFound", th, err)
				}
			}
		})
	}
}

// Issue 11's first case through the engine: a new thread's first run is
// stuck just before it commits its third checkpoint (as if SIGSTOPped);
// the thread is deleted with take-over and run again, stopping before the
// executors at its second checkpoint. The stuck run, let go, would put its
// third on top of the new run's second, past its interrupt: it is refused
// and stops, and the new chain is untouched.
func TestStuckRunIsFencedAcrossDelete(t *testing.T) {
	t.Parallel()
	for _, sc := range storeCases {
		t.Run(sc.name, func(t *testing.T) {
			ctx := t.Context()
			st, _ := sc.open(t)
			e, err := ticket.NewEngine(st, ticket.NewMock())
			if err != nil {
				t.Fatal(err)
			}
			stuck, cont := make(chan struct{}), make(chan struct{})
			commits := 0
			hook := func(point engine.HookPoint, info engine.HookInfo) {
				if point == engine.HookBeforeCommit {
					if commits++; commits == 3 {
						close(stuck)
						<-cont
					}
				}
			}
			done := make(chan error, 1)
			go func() {
				_, err := e.Run(ctx, "t", ticket.Input(sentences[0]), engine.RunConfig{Hook: hook})
				done <- err
			}()
			select {
			case <-stuck:
			case err := <-done:
				t.Fatalf("the run finished before it got stuck: %v", err)
			}
			if got := historyIDs(t, e, "t"); len(got) != 2 {
				t.Fatalf("the stuck run has checkpoints %v, want 2 ← 1", got)
			}

			if err := e.DeleteThread(ctx, "t", false); !errors.Is(err, store.ErrLocked) {
				t.Fatalf("DeleteThread under a live run = %v, want ErrLocked", err)
			}
			if err := e.DeleteThread(ctx, "t", true); err != nil {
				t.Fatalf("DeleteThread with take-over: %v", err)
			}
			again := pausedThread(t, e, "t", engine.RunConfig{TakeOver: true})
			if len(again) != 2 {
				t.Fatalf("the new run paused with checkpoints %v, want 2 ← 1", again)
			}
			close(cont)
			err = <-done
			if !errors.Is(err, store.ErrFenced) || !strings.Contains(err.Error(), "taken over") {
				t.Fatalf("the stuck run, let go = %v, want it fenced out", err)
			}
			if got := historyIDs(t, e, "t"); len(got) != len(again) || got[0] != again[0] {
				t.Fatalf("history after the stuck run went on = %v, want the new run's %v", got, again)
			}
			latest, err := e.Latest(ctx, "t")
			if err != nil || len(latest.Tasks) == 0 || latest.Tasks[0].Node != ticket.NodeExecutor {
				t.Errorf("latest = %d with tasks %v, %v; want the new run paused before the executors", latest.ID, latest.Tasks, err)
			}
		})
	}
}
