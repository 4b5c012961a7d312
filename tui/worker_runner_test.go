package tui

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"rewind/engine"
	"rewind/engine/ticket"
	"rewind/store"
	"rewind/store/backend"
	"rewind/store/browse"
)

func TestWorkerArgsKeepFlagsBeforePositionals(t *testing.T) {
	w := &workerRunner{cfg: WorkerConfig{Exe: "rewind", Store: "sqlite:/x.db", Flags: []string{"--mock-latency", "400ms"}}}
	rs := RunSettings{InterruptBefore: []string{"executor"}, KillAt: "mid-fanout"}
	got := strings.Join(w.args("resume", rs, nil, "-odd thread"), " ")
	want := "worker resume --store sqlite:/x.db --mock-latency 400ms --interrupt-before executor --kill-at mid-fanout -- -odd thread"
	if got != want {
		t.Fatalf("args\n got %s\nwant %s", got, want)
	}
	f, err := turnFlags(Input{Text: "-hi", Attach: []string{"s3://a"}, Draft: true, AuthTTL: 90 * 60e9})
	if err != nil || strings.Join(f, " ") != "--input=-hi --attach=s3://a --draft --auth-ttl=1h30m0s" {
		t.Fatalf("turn flags %q (%v)", f, err)
	}
	if _, err := turnFlags(Input{Text: "  "}); err == nil {
		t.Fatal("an empty message must be refused before a worker starts")
	}
}

// processGone reports whether pid no longer exists.
func processGone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// TestWorkerRunnerKillsAndResumesRealProcesses drives the screen against
// real `rewind worker` processes on a sqlite file: a kill point armed in the
// drill menu, a kill by k while executors run, resumes in new workers, and
// a draft approved by a worker.
func TestWorkerRunnerKillsAndResumesRealProcesses(t *testing.T) {
	t.Parallel()
	exe := rewindBinary(t)
	spec := "sqlite:" + filepath.Join(t.TempDir(), "w.db")
	ctx := context.Background()
	st, err := backend.Open(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	drafts, ok := st.(store.Drafts)
	if !ok {
		t.Fatal("the sqlite store should have a drafts table")
	}
	e, err := engine.New(st, ticket.NewGraph(ticket.WithDrafts(drafts)), ticket.NewMock())
	if err != nil {
		t.Fatal(err)
	}
	runner := NewWorkerRunner(WorkerConfig{Exe: exe, Store: spec, Flags: []string{"--mock-latency", "150ms"}})
	h := newHarnessDeps(t, Deps{Source: e.Browse(browse.About{}), Backend: EngineBackend(e), Runner: runner, StoreLabel: spec, RunnerLabel: "worker processes", Extension: TicketExtension()}, Settings{Thread: "w"}, 150, 44)
	h.until("the empty thread", func() bool { return !h.m.timeline.loading })

	// 1. The worker kills itself at the kill point armed in the menu.
	h.key("K", "down", "down", "down", "enter")
	if h.m.runs.next.armed != "mid-fanout" {
		t.Fatalf("armed %q, want mid-fanout", h.m.runs.next.armed)
	}
	h.key("i")
	h.typeText(firstInput)
	h.key("enter")
	h.until("the worker's death at mid-fanout", func() bool {
		return h.m.live.killed != nil && h.m.live.head != nil && h.m.live.head.thread == "w" && h.loaded()
	})
	first := *h.m.live.killed
	if first.point != "mid-fanout" || first.pid <= 0 || !processGone(first.pid) {
		t.Fatalf("want worker killed at mid-fanout and gone, got %+v (gone %v)", first, processGone(first.pid))
	}
	for _, want := range []string{"SIGKILL at kill point mid-fanout", "3 pending tasks: 1 finished (writes stored), 2 to redispatch"} {
		if !h.contains(want) {
			t.Fatalf("after the kill the screen lacks %q:\n%s", want, h.screen())
		}
	}

	// 2. r resumes in a new worker: two redispatched, one reused.
	h.key("r")
	h.until("the resume", func() bool {
		return h.m.live.phase != nil && h.m.live.phase.figure != nil && h.loaded() && h.m.live.head != nil
	})
	if !h.contains("resume: 2 redispatched, 1 reused, 4 model calls") {
		t.Fatalf("the resume phase figure is missing:\n%s", h.screen())
	}
	if p := h.m.live.phase.pid; p <= 0 || p == first.pid {
		t.Fatalf("the resume should run in a new worker, pid %d (killed one was %d)", p, first.pid)
	}
	if latest, err := e.Latest(ctx, "w"); err != nil || h.m.live.head.cp.ID != latest.ID || len(latest.Tasks) != 0 {
		t.Fatalf("the resumed turn should end with nothing pending: head #%d, latest %+v (%v)", h.m.live.head.cp.ID, latest, err)
	}

	// 3. X (asked, y) kills the worker while its executors run.
	h.key("esc", "i")
	h.typeText(firstInput)
	h.key("enter")
	h.until("executors running", func() bool {
		if h.m.live.run == nil || h.m.live.progress == nil {
			return false
		}
		for _, n := range h.m.live.progress.running {
			if n == ticket.NodeExecutor {
				return true
			}
		}
		return false
	})
	h.key("X", "y")
	h.until("the kill by X", func() bool { return h.m.live.killed != nil && h.m.live.head != nil && h.loaded() })
	k := *h.m.live.killed
	if k.point != "" || !processGone(k.pid) {
		t.Fatalf("X should SIGKILL the worker: %+v (gone %v)", k, processGone(k.pid))
	}
	pending, stored := len(h.m.live.head.cp.Tasks), len(h.m.live.head.plan.Reused())
	if pending == 0 {
		t.Fatalf("the kill left nothing pending:\n%s", h.screen())
	}
	if want := fmt.Sprintf("%s: %d finished (writes stored)", plural(pending, "pending task", "pending tasks"), stored); !h.contains(want) {
		t.Fatalf("the kill report lacks %q:\n%s", want, h.screen())
	}
	h.key("r")
	h.until("the second resume", func() bool {
		return h.m.live.phase != nil && h.m.live.phase.figure != nil && h.loaded() && h.m.live.head != nil
	})
	f := *h.m.live.phase.figure
	if f.redispatched != pending-stored || f.reused != stored || !h.contains(f.String()) {
		t.Fatalf("after a kill with %d pending and %d stored the resume shows %+v:\n%s", pending, stored, f, h.screen())
	}
	// An unfinished executor makes its calls again when redispatched (a
	// tool round and the finding); a finished one makes none.
	allExecutors := true
	for _, task := range h.m.live.phase.tasks {
		allExecutors = allExecutors && task.node == ticket.NodeExecutor
	}
	if allExecutors && f.calls != (pending-stored)*ticket.MockCallsPerSubtask {
		t.Fatalf("the resume phase made %d model calls for %d redispatched executors", f.calls, pending-stored)
	}

	// 4. A draft turn, approved: the worker creates exactly one draft row.
	h.key("esc", "i", "ctrl+d")
	h.typeText(firstInput)
	h.key("enter")
	h.until("the approval gate", func() bool { return h.loaded() && h.m.live.head != nil && h.m.live.head.gate != nil })
	op := h.m.live.head.gate.Op.ID
	h.key("a", "y")
	h.until("the approval", func() bool {
		return h.m.live.answer != nil && h.m.live.answer.ended && h.loaded() && h.m.live.head != nil
	})
	ds, err := drafts.ListDrafts(ctx, "w")
	if err != nil || len(ds) != 1 || ds[0].OperationID != op {
		t.Fatalf("want one draft row for %s, got %+v (%v)", op, ds, err)
	}
	if !h.contains("drafts table: 1 row for this thread") {
		t.Fatalf("the screen should show the draft row:\n%s", h.screen())
	}
}

// TestWorkerRunnerForwardsStreamedTokens replays a recorded session in a
// worker: a replayed call streams its text, and the worker's delta lines
// come through the runner as Delta updates, before the run's end.
func TestWorkerRunnerForwardsStreamedTokens(t *testing.T) {
	exe := rewindBinary(t)
	dir := t.TempDir()
	rec := filepath.Join(dir, "session.json")
	record := exec.Command(exe, "run", "--thread", "rec", "--input", firstInput, "--store", "memory:", "--record", rec)
	if out, err := record.CombinedOutput(); err != nil {
		t.Fatalf("record a session: %v\n%s", err, out)
	}
	runner := NewWorkerRunner(WorkerConfig{Exe: exe, Store: "sqlite:" + filepath.Join(dir, "s.db"), Flags: []string{"--replay", rec}})
	r, err := runner.Start(context.Background(), "play", Input{Text: firstInput}, RunSettings{})
	if err != nil {
		t.Fatal(err)
	}
	texts := map[uint64]string{}
	roles := map[uint64]string{}
	ended := map[uint64]bool{}
	var final RunUpdate
	for u := range r.Updates() {
		if final.Done {
			t.Fatalf("an update after the end: %+v", u)
		}
		switch {
		case u.Delta != nil:
			d := *u.Delta
			texts[d.Call] += d.Text
			roles[d.Call] = d.Role
			ended[d.Call] = ended[d.Call] || d.Done
		case u.Done:
			final = u
		}
	}
	if final.Err != nil || final.Result.Status != "done" {
		t.Fatalf("the replayed run should finish: %+v", final)
	}
	calls := 0
	for _, n := range final.Result.ModelCalls {
		calls += n
	}
	if len(texts) != calls || calls == 0 {
		t.Fatalf("%d streamed calls for %d model calls", len(texts), calls)
	}
	reply := ""
	for id, role := range roles {
		if !ended[id] {
			t.Fatalf("call %d (%s) never ended", id, role)
		}
		if role == "reply" {
			reply = texts[id]
		}
	}
	if !strings.HasPrefix(reply, "Here is where things stand") {
		t.Fatalf("the reply's stream should hold the reply, got %q", reply)
	}
}

// What the approval dialog showed reaches the worker (--op, --seen-head,
// --seen-sha256), which checks it under the thread's lock: a draft
// redrafted while the dialog was open is not approved by y, in a real
// `rewind worker approve` process, and the edited approval (its
// --payload-file) neither.
func TestWorkerRunnerAnswersOnlyWhatTheDialogShowed(t *testing.T) {
	exe := rewindBinary(t)
	for _, edited := range []bool{false, true} {
		t.Run(fmt.Sprintf("edited %v", edited), func(t *testing.T) {
			t.Setenv("TMPDIR", t.TempDir())
			spec := "sqlite:" + filepath.Join(t.TempDir(), "w.db")
			ctx := context.Background()
			st, err := backend.Open(ctx, spec)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			e, err := engine.New(st, ticket.NewGraph(ticket.WithDrafts(st.(store.Drafts))), ticket.NewMock())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.Run(ctx, "w", ticket.NewTurn(firstInput, nil, true, time.Hour, time.Now()).Writes(), engine.RunConfig{}); err != nil {
				t.Fatal(err)
			}
			runner := NewWorkerRunner(WorkerConfig{Exe: exe, Store: spec})
			h := newHarnessDeps(t, Deps{Source: e.Browse(browse.About{}), Backend: EngineBackend(e), Runner: runner, StoreLabel: spec, RunnerLabel: "worker processes", Extension: TicketExtension()}, Settings{Thread: "w"}, 150, 44)
			h.until("the gate", func() bool { return h.loaded() && h.m.live.head != nil && h.m.live.head.gate != nil })
			h.key("a")
			dlg := h.m.dialog.(*approvalDialog)
			if _, err := ticket.AnswerWith(ctx, e, "w", ticket.Decision{Reason: "say when it arrives", Redraft: true}, ticket.Seen{}, engine.RunConfig{}); err != nil {
				t.Fatal(err)
			}
			if edited {
				h.key("e")
				h.dispatch(draftReadMsg{dlg: dlg, text: "Dear customer, edited by a person."})
			}
			h.key("y")
			h.until("the answer's end", func() bool { return h.m.live.answer != nil && h.m.live.answer.ended && !h.m.busy() })
			if msg := h.m.status.text; !strings.Contains(msg, "the draft changed since it was looked at") {
				t.Fatalf("the worker should refuse the answer, flash %q", msg)
			}
			if ds, _ := st.(store.Drafts).ListDrafts(ctx, "w"); len(ds) != 0 {
				t.Fatalf("drafts made: %+v", ds)
			}
		})
	}
}
