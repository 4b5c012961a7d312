package tui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	tea "github.com/charmbracelet/bubbletea"

	"rewind/engine"
	"rewind/engine/model"
	"rewind/engine/model/stream"
	"rewind/engine/ticket"
	"rewind/store"
	"rewind/store/browse"
)

// draftStore is the test store with its drafts table reachable (and, like
// storeOnly, no Watch).
type draftStore struct {
	storeOnly
	store.Drafts
}

// newDraftEngine is an engine whose create_draft writes to a real drafts
// table (the memory store's), answering with m.
func newDraftEngine(t testing.TB, m model.Model) (*engine.Engine, store.Drafts) {
	t.Helper()
	ms := newStore()
	st := draftStore{storeOnly{ms}, ms}
	return newClockedEngine(t, st, ticket.NewGraph(ticket.WithDrafts(st)), m), st
}

// flakyModel is the mock, except that the first executor call of each named
// subtask fails (so those tasks store no writes, while the others do). It
// counts first attempts per subtask (prompts without critic feedback): a
// finished task that ran again would show up there.
type flakyModel struct {
	inner model.Model
	mu    sync.Mutex
	fail  map[string]int
	first map[string]int
}

func newFlaky(failing ...string) *flakyModel {
	f := &flakyModel{inner: ticket.NewMock(), fail: map[string]int{}, first: map[string]int{}}
	for _, id := range failing {
		f.fail[id] = 1
	}
	return f
}

func (f *flakyModel) Complete(ctx context.Context, req model.Request) (model.Response, error) {
	if req.Role == model.RoleExecutor {
		f.mu.Lock()
		for _, line := range strings.Split(req.Prompt(), "\n") {
			id, _, ok := strings.Cut(strings.TrimPrefix(line, "SUBTASK "), ":")
			if !ok || !strings.HasPrefix(line, "SUBTASK ") {
				continue
			}
			if !strings.Contains(req.Prompt(), "FEEDBACK:") && !hasToolResult(req) {
				f.first[id]++
			}
			if f.fail[id] > 0 {
				f.fail[id]--
				f.mu.Unlock()
				return model.Response{}, fmt.Errorf("flaky executor for %s: %w", id, model.ErrInjected)
			}
		}
		f.mu.Unlock()
	}
	return f.inner.Complete(ctx, req)
}

func (f *flakyModel) firstAttempts(id string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.first[id]
}

const fakePid = 4242

// fakeRunner stands in for worker processes so kill flows are
// deterministic: runs really happen in-process (local), and a run's end is
// turned into a SIGKILL the way a worker's would be: at its kill point, or
// when the test presses k (hold keeps a finished run "alive" until then).
// With script set, Start returns a run the test feeds update by update.
type fakeRunner struct {
	local  Runner
	hold   bool
	script chan RunUpdate

	mu    sync.Mutex
	kinds []string
	rs    []RunSettings
	runs  []*heldRun
}

func (f *fakeRunner) CanKill() bool { return true }

func (f *fakeRunner) record(kind string, rs RunSettings) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.kinds = append(f.kinds, kind)
	f.rs = append(f.rs, rs)
}

func (f *fakeRunner) settings() []RunSettings {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]RunSettings(nil), f.rs...)
}

func (f *fakeRunner) wrap(inner RunHandle, err error, rs RunSettings, hold bool) (RunHandle, error) {
	if err != nil {
		return nil, err
	}
	h := &heldRun{inner: inner, out: make(chan RunUpdate), killed: make(chan struct{}), innerDone: make(chan struct{})}
	f.mu.Lock()
	f.runs = append(f.runs, h)
	f.mu.Unlock()
	go h.pump(rs.KillAt, hold)
	return h, nil
}

func (f *fakeRunner) Start(ctx context.Context, thread string, in Input, rs RunSettings) (RunHandle, error) {
	f.record("run", rs)
	if f.script != nil {
		return &scriptRun{out: f.script}, nil
	}
	r, err := f.local.Start(ctx, thread, in, RunSettings{InterruptBefore: rs.InterruptBefore, InterruptAfter: rs.InterruptAfter})
	return f.wrap(r, err, rs, f.hold)
}

func (f *fakeRunner) Resume(ctx context.Context, thread string, rs RunSettings) (RunHandle, error) {
	f.record("resume", rs)
	r, err := f.local.Resume(ctx, thread, RunSettings{InterruptBefore: rs.InterruptBefore, InterruptAfter: rs.InterruptAfter, At: rs.At})
	return f.wrap(r, err, rs, false)
}

func (f *fakeRunner) Fork(ctx context.Context, thread string, checkpoint int64, in Input, rs RunSettings) (RunHandle, error) {
	f.record("fork", rs)
	r, err := f.local.Fork(ctx, thread, checkpoint, in, RunSettings{})
	return f.wrap(r, err, rs, false)
}

func (f *fakeRunner) lastRun() *heldRun {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.runs) == 0 {
		return nil
	}
	return f.runs[len(f.runs)-1]
}

// heldRun forwards an in-process run's updates and reports its end as a
// worker's SIGKILL when it is killed or reaches its kill point.
type heldRun struct {
	inner     RunHandle
	out       chan RunUpdate
	killed    chan struct{}
	once      sync.Once
	innerDone chan struct{}
}

func (h *heldRun) pump(point string, hold bool) {
	defer close(h.out)
	var final RunUpdate
	for u := range h.inner.Updates() {
		if u.Done {
			final = u
			continue
		}
		h.out <- u
	}
	close(h.innerDone)
	switch {
	case point != "":
		h.out <- RunUpdate{Kill: point}
		h.out <- RunUpdate{Done: true, Result: final.Result, Err: &KilledError{Pid: fakePid, Point: point}}
	case hold:
		<-h.killed
		h.out <- RunUpdate{Done: true, Result: final.Result, Err: &KilledError{Pid: fakePid}}
	default:
		select {
		case <-h.killed:
			h.out <- RunUpdate{Done: true, Result: final.Result, Err: &KilledError{Pid: fakePid}}
		default:
			h.out <- final
		}
	}
}

func (h *heldRun) Updates() <-chan RunUpdate { return h.out }
func (h *heldRun) Cancel()                   { h.inner.Cancel() }
func (h *heldRun) Pid() int                  { return fakePid }
func (h *heldRun) Kill() error {
	h.once.Do(func() { close(h.killed) })
	h.inner.Cancel()
	return nil
}

func (h *heldRun) settled() bool {
	select {
	case <-h.innerDone:
		return true
	default:
		return false
	}
}

// scriptRun is a run whose updates the test sends.
type scriptRun struct{ out chan RunUpdate }

func (s *scriptRun) Updates() <-chan RunUpdate { return s.out }
func (s *scriptRun) Cancel()                   {}

func fakeDeps(e *engine.Engine, r Runner) Deps {
	return Deps{Source: e.Browse(browse.About{}), Backend: EngineBackend(e), Runner: r, StoreLabel: "memory:", RunnerLabel: "worker processes", Extension: TicketExtension()}
}

func TestKillShowsStoredWritesAndResumeRedispatchesOnlyTheRest(t *testing.T) {
	fm := newFlaky("t-2-shipping", "t-3-refund")
	e, err := engine.New(storeOnly{newStore()}, ticket.NewGraph(), fm, engine.WithClock(fixedClock))
	if err != nil {
		t.Fatal(err)
	}
	fr := &fakeRunner{local: NewLocalRunner(e), hold: true}
	h := newHarnessDeps(t, fakeDeps(e, fr), Settings{Thread: "k"}, 140, 44)
	h.until("the empty thread", func() bool { return !h.m.timeline.loading })
	h.key("i")
	h.typeText(firstInput)
	h.key("enter")
	h.until("the run to be under way with its executors done or failed", func() bool {
		r := fr.lastRun()
		return h.m.live.run != nil && r != nil && r.settled()
	})
	h.drain()
	if !h.contains("worker pid 4242 · X/ctrl+k kills it") {
		t.Fatalf("the live area should name the worker and the kill key:\n%s", h.screen())
	}

	// X asks first: n keeps the worker running, y kills it.
	h.key("X")
	if !h.contains("Send SIGKILL to worker pid 4242") {
		t.Fatalf("X should ask before the kill:\n%s", h.screen())
	}
	h.key("n")
	h.drain()
	select {
	case <-fr.lastRun().killed:
		t.Fatal("n should keep the worker, it was killed")
	default:
	}
	if h.m.dialog != nil || h.m.live.run == nil {
		t.Fatalf("n should close the question and keep the run: dialog %v", h.m.dialog)
	}
	h.key("X", "y")
	h.until("the kill report", func() bool {
		return h.m.live.killed != nil && h.m.live.head != nil && h.m.live.head.thread == "k" && !h.m.busy()
	})
	s := h.screen()
	for _, want := range []string{
		"✝ killed · worker pid 4242 · SIGKILL · r resumes in a new worker",
		"last checkpoint @2 · step 1 · loop · written by planner",
		"3 pending tasks: 1 finished (writes stored), 2 to redispatch",
		"executor t-1-order", "finished → reused, not run again",
		"executor t-2-shipping", "executor t-3-refund", "not finished → redispatched on resume",
	} {
		if !strings.Contains(s, want) {
			t.Fatalf("after the kill the screen lacks %q:\n%s", want, s)
		}
	}
	if strings.Count(s, "not finished → redispatched") != 2 {
		t.Fatalf("exactly the two failed executors are to be redispatched:\n%s", s)
	}
	h.key("3")
	h.until("the inspector at @2", func() bool { return h.at(2) })
	if insp := strings.Join(h.m.content.panes[paneInsp].scroll.lines, "\n"); !strings.Contains(insp, "Stored writes of the next superstep (1/3 tasks done)") {
		t.Fatalf("the inspector should show the one stored write:\n%s", insp)
	}

	h.key("r")
	h.until("the resume to end", func() bool {
		return h.m.live.phase != nil && h.m.live.phase.figure != nil && h.loaded() && h.m.live.head != nil
	})
	s = h.screen()
	for _, want := range []string{
		"resumed from @2 · worker pid 4242",
		"resume: 2 redispatched, 1 reused, 4 model calls",
		"↺ executor t-1-order", "skipped: its writes were stored before, reused, not run again",
		"✓ executor t-2-shipping", "✓ executor t-3-refund", "redispatched · done · 2 model calls",
	} {
		if !strings.Contains(s, want) {
			t.Fatalf("after the resume the screen lacks %q:\n%s", want, s)
		}
	}
	// The figure is the engine's: the resumed superstep reused one task
	// and ran two, and the finished task's model was never asked again.
	cp3, err := e.Get(context.Background(), "k", 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(cp3.Metadata.Reused) != 1 {
		t.Fatalf("#3 should record one reused task, got %v", cp3.Metadata.Reused)
	}
	if got := fm.firstAttempts("t-1-order"); got != 1 {
		t.Fatalf("t-1-order finished before the kill but its executor ran %d times", got)
	}
	for _, id := range []string{"t-2-shipping", "t-3-refund"} {
		if got := fm.firstAttempts(id); got != 2 {
			t.Fatalf("%s should run once before (failing) and once on resume, ran %d times", id, got)
		}
	}
	if kinds := fr.kinds; len(kinds) != 2 || kinds[1] != "resume" {
		t.Fatalf("r should start a resume (a new worker), runner saw %v", kinds)
	}

	h.key("esc")
	if h.m.live.phase != nil || h.contains("resume: 2 redispatched") {
		t.Fatalf("esc should hide the report:\n%s", h.screen())
	}
}

func TestDrillMenuArmsAKillPointForOneRun(t *testing.T) {
	e := newEngine(t)
	fr := &fakeRunner{local: NewLocalRunner(e)}
	h := newHarnessDeps(t, fakeDeps(e, fr), Settings{Thread: "d"}, 120, 40)
	h.until("the empty thread", func() bool { return !h.m.timeline.loading })
	h.key("K")
	s := h.screen()
	for _, want := range []string{"Crash drill · kill point for the next run", "off", "before-model-call", "mid-fanout", "mid-transaction", "after one executor stored its writes"} {
		if !strings.Contains(s, want) {
			t.Fatalf("K should list the kill points with their descriptions; %q is missing:\n%s", want, s)
		}
	}
	h.key("down", "down", "down")
	if !h.contains("mid-fanout: after one executor stored its writes") {
		t.Fatalf("the selected point's description should show in full:\n%s", h.screen())
	}
	h.key("enter")
	if h.m.dialog != nil || h.m.runs.next.armed != "mid-fanout" {
		t.Fatalf("enter should arm mid-fanout and close the menu (armed %q)", h.m.runs.next.armed)
	}
	if !h.contains("✝ next run dies at mid-fanout") {
		t.Fatalf("the status bar should show the armed point:\n%s", h.screen())
	}

	h.key("i")
	h.typeText(firstInput)
	h.key("enter")
	h.until("the worker's death at its kill point", func() bool { return h.m.live.killed != nil && h.m.live.head != nil })
	if rs := fr.settings(); len(rs) != 1 || rs[0].KillAt != "mid-fanout" {
		t.Fatalf("the run should carry --kill-at mid-fanout, runner saw %+v", rs)
	}
	s = h.screen()
	if !strings.Contains(s, "SIGKILL at kill point mid-fanout") || strings.Contains(s, "next run dies at") {
		t.Fatalf("the kill report should name the point, and the point be disarmed:\n%s", s)
	}
	if h.m.runs.next.armed != "" {
		t.Fatalf("a kill point is armed for one run; still armed: %q", h.m.runs.next.armed)
	}

	// The next run carries no kill point.
	h.key("esc", "i")
	h.typeText("Thanks! Can I also get the invoice?")
	h.key("enter")
	h.until("the second run", func() bool { return len(fr.settings()) == 2 && h.loaded() && h.m.status.text != "" })
	if rs := fr.settings(); rs[1].KillAt != "" {
		t.Fatalf("the second run should not be killed, it carries %q", rs[1].KillAt)
	}

	// K with the menu open again, esc leaves the armed point as it was.
	h.key("K", "down", "esc")
	if h.m.runs.next.armed != "" || h.m.dialog != nil {
		t.Fatalf("esc should cancel the menu without arming (armed %q)", h.m.runs.next.armed)
	}
}

func TestInProcessRunsSayTheyCannotBeKilled(t *testing.T) {
	e := newEngine(t)
	deps := depsFor(e)
	deps.RunnerLabel = "in-process (a memory: store cannot cross processes; no kills)"
	h := newHarnessDeps(t, deps, Settings{Thread: "m"}, 200, 40)
	h.until("the empty thread", func() bool { return !h.m.timeline.loading })
	if !h.contains("runs in-process (a memory: store cannot cross processes; no kills)") {
		t.Fatalf("the status bar should say where runs happen:\n%s", h.screen())
	}
	h.key("K")
	if h.m.dialog != nil || !strings.Contains(h.m.status.text, "kill points need worker processes") {
		t.Fatalf("K in-process should explain, not arm: dialog %v, flash %q", h.m.dialog, h.m.status.text)
	}
	stuck := make(chan struct{})
	h.m.sess.deps.Runner = blockingRunner{stuck}
	h.key("i")
	h.typeText("hello")
	h.key("enter")
	h.until("the run", func() bool { return h.m.live.run != nil })
	h.key("X")
	if !strings.Contains(h.m.status.text, "no worker to kill") {
		t.Fatalf("X on an in-process run should explain, flash %q", h.m.status.text)
	}
	h.key("x")
	h.until("the stop", func() bool {
		select {
		case <-stuck:
			return true
		default:
			return false
		}
	})
}

func TestApproveADraftFromTheScreen(t *testing.T) {
	e, drafts := newDraftEngine(t, ticket.NewMock())
	h := newHarness(t, e, Settings{Thread: "a"}, 120, 40)
	h.m.sess.deps.Backend = EngineBackend(e)
	h.until("the empty thread", func() bool { return !h.m.timeline.loading })
	h.key("i", "ctrl+d")
	if !h.contains("✉ draft reply: awaits approval") || !strings.Contains(h.screen(), "ctrl+d draft: ON") {
		t.Fatalf("ctrl+d should turn the draft request on, visibly:\n%s", h.screen())
	}
	h.typeText(firstInput)
	h.key("enter")
	h.until("the approval gate", func() bool { return h.loaded() && h.m.live.head != nil && h.m.live.head.gate != nil })
	if h.m.composer.draft {
		t.Fatal("the draft request is for one turn; it should be off again")
	}
	opID := h.m.live.head.gate.Op.ID // names the reply task's checkpoint and id (ticket.OperationID)
	s := h.screen()
	for _, want := range []string{"waits for approval · a answers", "create_draft " + opID, "authorization grant:customer-consent expires 20", "draft: Here is where things stand", "a approve/reject"} {
		if !strings.Contains(s, want) {
			t.Fatalf("at the gate the screen lacks %q:\n%s", want, s)
		}
	}
	gateCP := h.m.live.head.cp
	before := gateCP.Values.Len("messages")

	h.key("a")
	s = h.screen()
	for _, want := range []string{"Approval · @", "operation      create_draft " + opID, "Draft to the customer", "Here is where things stand", "y approve", "n reject"} {
		if !strings.Contains(s, want) {
			t.Fatalf("the approval dialog lacks %q:\n%s", want, s)
		}
	}
	h.key("y")
	h.until("the approved run", func() bool {
		return h.m.live.answer != nil && h.m.live.answer.ended && h.loaded() && h.m.live.head != nil && h.m.live.head.cp.ID > gateCP.ID
	})
	s = h.screen()
	for _, want := range []string{"approved " + opID, "operation create_draft " + opID + ": done", "drafts table: 1 row for this thread (" + opID + ") · 1 row for " + opID} {
		if !strings.Contains(s, want) {
			t.Fatalf("after approving the screen lacks %q:\n%s", want, s)
		}
	}
	ds, err := drafts.ListDrafts(context.Background(), "a")
	if err != nil || len(ds) != 1 || ds[0].OperationID != opID {
		t.Fatalf("want exactly one draft row for %s, got %+v (%v)", opID, ds, err)
	}
	var body map[string]string
	if err := json.Unmarshal(ds[0].Body, &body); err != nil || !strings.HasPrefix(body["body"], "Here is where things stand") {
		t.Fatalf("the draft should hold the reply: %s", ds[0].Body)
	}
	latest, _ := e.Latest(context.Background(), "a")
	st, _ := ticket.Decode(latest.Values)
	if d := st.Approvals[opID]; !d.Approved || st.Operations[opID].Status != ticket.OpDone {
		t.Fatalf("the decision and the operation should be recorded: %+v %+v", d, st.Operations)
	}
	if got := latest.Values.Len("messages"); got != before {
		t.Fatalf("an approval is a decision, not a message: messages %d → %d", before, got)
	}
	h.key("a")
	if !strings.Contains(h.m.status.text, "nothing waits for approval") {
		t.Fatalf("a with no gate should say so, flash %q", h.m.status.text)
	}
}

func TestRejectADraftNeedsAReason(t *testing.T) {
	e, drafts := newDraftEngine(t, ticket.NewMock())
	h := newHarness(t, e, Settings{Thread: "r"}, 100, 30)
	h.m.sess.deps.Backend = EngineBackend(e)
	h.until("the empty thread", func() bool { return !h.m.timeline.loading })
	h.key("i", "ctrl+d")
	h.typeText(firstInput)
	h.key("enter")
	h.until("the approval gate", func() bool { return h.loaded() && h.m.live.head != nil && h.m.live.head.gate != nil })
	opID := h.m.live.head.gate.Op.ID
	h.key("a", "n")
	if !h.contains("Reason for rejecting (required)") {
		t.Fatalf("n should ask for the reason:\n%s", h.screen())
	}
	h.key("enter")
	if h.m.dialog == nil || !h.contains("a rejection needs a reason") {
		t.Fatalf("an empty reason must be refused:\n%s", h.screen())
	}
	h.typeText("wrong tone for this customer")
	h.key("enter")
	h.until("the rejected run", func() bool {
		return h.m.live.answer != nil && h.m.live.answer.ended && h.loaded() && h.m.live.head != nil
	})
	s := h.screen()
	for _, want := range []string{"rejected " + opID, "rejected: wrong tone for this customer", "0 rows for " + opID} {
		if !strings.Contains(s, want) {
			t.Fatalf("after rejecting the screen lacks %q:\n%s", want, s)
		}
	}
	if ds, _ := drafts.ListDrafts(context.Background(), "r"); len(ds) != 0 {
		t.Fatalf("a rejected draft must not be created, got %+v", ds)
	}
}

func TestExpiredAuthorizationIsShownAndTheDraftBlocked(t *testing.T) {
	e, drafts := newDraftEngine(t, ticket.NewMock())
	h := newHarness(t, e, Settings{Thread: "x", AuthTTL: time.Nanosecond}, 120, 40)
	h.m.sess.deps.Backend = EngineBackend(e)
	h.until("the empty thread", func() bool { return !h.m.timeline.loading })
	h.key("i", "ctrl+d")
	h.typeText(firstInput)
	h.key("enter")
	h.until("the approval gate", func() bool { return h.loaded() && h.m.live.head != nil && h.m.live.head.gate != nil })
	opID := h.m.live.head.gate.Op.ID
	if !h.contains("BLOCKED: authorization") || !h.contains("expired at") {
		t.Fatalf("an expired grant should be flagged at the gate:\n%s", h.screen())
	}
	h.key("a")
	if !h.contains("create_draft will be blocked") {
		t.Fatalf("the dialog should warn before approving:\n%s", h.screen())
	}
	h.key("y")
	h.until("the run", func() bool {
		return h.m.live.answer != nil && h.m.live.answer.ended && h.loaded() && h.m.live.head != nil
	})
	if !h.contains("operation create_draft " + opID + ": blocked") {
		t.Fatalf("the operation should be blocked:\n%s", h.screen())
	}
	if ds, _ := drafts.ListDrafts(context.Background(), "x"); len(ds) != 0 {
		t.Fatalf("an expired grant must block the draft, got %+v", ds)
	}
}

func TestStreamedTokensShowPerCall(t *testing.T) {
	e := newEngine(t)
	script := make(chan RunUpdate, 64)
	fr := &fakeRunner{local: NewLocalRunner(e), script: script}
	h := newHarnessDeps(t, fakeDeps(e, fr), Settings{Thread: "s"}, 100, 30)
	h.until("the empty thread", func() bool { return !h.m.timeline.loading })
	h.key("i")
	h.typeText(firstInput)
	h.key("enter")
	h.until("the run", func() bool { return h.m.live.run != nil })
	ev := func(typ, node, task string, data any) RunUpdate {
		b, _ := json.Marshal(data)
		return RunUpdate{Event: &engine.Event{Thread: "s", Type: typ, Node: node, Task: task, Data: b}}
	}
	delta := func(d stream.Delta) RunUpdate { return RunUpdate{Delta: &d} }
	script <- ev(engine.EventStepStarted, "", "", map[string]int{"tasks": 2, "toRun": 2})
	script <- ev(engine.EventNodeStarted, "executor", "aaaa1111bbbb", map[string]any{"args": map[string]any{"task": map[string]string{"id": "t-1-order"}}})
	script <- ev(engine.EventNodeStarted, "executor", "cccc2222dddd", map[string]any{"args": map[string]any{"task": map[string]string{"id": "t-2-shipping"}}})
	script <- delta(stream.Delta{Call: 7, Role: "executor", Text: "The parcel "})
	script <- delta(stream.Delta{Call: 9, Role: "executor", Text: "garbled \x1b]52;c;ZXZpbA==\x07"})
	script <- delta(stream.Delta{Call: 7, Role: "executor", Text: "is in Leipzig"})
	script <- delta(stream.Delta{Call: 13, Role: "evil\x1b[2J\u202e", Text: "line one\r\nline two\x9b31m"})
	h.until("three calls streaming", func() bool {
		return h.contains("executor·1 › The parcel is in Leipzig ▍") && h.contains("executor·2 › garbled ␛]52;c;ZXZpbA==␇") &&
			h.contains("evil␛[2J⟨U+202E⟩·1 › line one line two⟨0x9B⟩31m ▍")
	})
	if !h.contains("● executor t-1-order") || !h.contains("● executor t-2-shipping") {
		t.Fatalf("the live area should list the running tasks:\n%s", h.screen())
	}
	if v := h.m.View(); !utf8.ValidString(v) || strings.ContainsAny(v, "\x1b\x07\r\u009b\u202e") {
		t.Fatalf("streamed text leaks control characters to the terminal:\n%q", v)
	}
	script <- delta(stream.Delta{Call: 9, Role: "executor", Reset: true})
	script <- delta(stream.Delta{Call: 9, Role: "executor", Text: "Refund possible"})
	script <- delta(stream.Delta{Call: 9, Role: "executor", Done: true})
	script <- delta(stream.Delta{Call: 7, Role: "executor", Done: true, Err: "timeout"})
	h.until("the reset and the ends", func() bool {
		return h.contains("executor·2 › Refund possible ✓") && h.contains("executor·1 › The parcel is in Leipzig ✗ timeout")
	})
	if h.contains("garbled") {
		t.Fatalf("a reset must drop what the call showed:\n%s", h.screen())
	}
	script <- RunUpdate{Done: true, Err: errors.New("scripted end")}
	close(script)
	h.until("the end", func() bool { return !h.m.busy() })
	if h.contains("executor·1") || h.m.live.streams != nil {
		t.Fatalf("the live streams go when the run ends:\n%s", h.screen())
	}
}

// gatedModel is the mock, but it streams the reply in two pieces and waits
// between them until the test lets it go on.
type gatedModel struct {
	inner   model.Model
	shown   chan struct{}
	release chan struct{}
}

func (g gatedModel) Complete(ctx context.Context, req model.Request) (model.Response, error) {
	resp, err := g.inner.Complete(stream.Without(ctx), req)
	listen := stream.Listener(ctx)
	if listen == nil || req.Role != model.RoleReply || err != nil {
		return resp, err
	}
	call := stream.NewCall()
	half := len(resp.Text) / 2
	listen(stream.Delta{Call: call, Role: req.Role, Text: resp.Text[:half]})
	close(g.shown)
	<-g.release
	listen(stream.Delta{Call: call, Role: req.Role, Text: resp.Text[half:]})
	listen(stream.Delta{Call: call, Role: req.Role, Done: true})
	return resp, err
}

func TestInProcessRunsStreamAndCheckpointsHoldOnlyFinishedMessages(t *testing.T) {
	g := gatedModel{inner: ticket.NewMock(), shown: make(chan struct{}), release: make(chan struct{})}
	e, err := engine.New(storeOnly{newStore()}, ticket.NewGraph(), g, engine.WithClock(fixedClock))
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, e, Settings{Thread: "g"}, 120, 40)
	h.until("the empty thread", func() bool { return !h.m.timeline.loading })
	h.key("i")
	h.typeText(firstInput)
	h.key("enter")
	var label string
	h.until("half the reply streamed", func() bool {
		select {
		case <-g.shown:
		default:
			return false
		}
		if h.m.live.streams == nil || len(h.m.live.streams.calls) == 0 {
			return false
		}
		// The live area shows the end of what the call has said so far.
		last := h.m.live.streams.calls[len(h.m.live.streams.calls)-1]
		text := strings.Join(strings.Fields(last.text), " ")
		label = last.label
		// Calls are labelled with the task that made them.
		return text != "" && strings.HasPrefix(label, "reply ") && len(label) == len("reply ")+8 &&
			h.contains(label+" › ") && h.contains(text[max(len(text)-30, 0):]+" ▍")
	})
	// Nothing stored holds the half-streamed reply.
	cps, _ := e.History(context.Background(), "g", 0, 0)
	for _, l := range cps {
		cp, _ := e.Get(context.Background(), "g", l.ID)
		s, _ := ticket.Decode(cp.Values)
		for _, m := range s.Messages {
			if m.Speaker == "reply" {
				t.Fatalf("checkpoint %d holds the reply while it is still streaming", cp.ID)
			}
		}
	}
	close(g.release)
	h.until("the reply", func() bool { return h.at(8) && strings.Contains(h.m.status.text, "done at @8") })
	if h.contains(label+" ›") || !h.contains("#16 reply") {
		t.Fatalf("after the run the reply is a stored message, not a stream:\n%s", h.screen())
	}
}

func TestDrillScreensFitAtEverySize(t *testing.T) {
	pending, err := engine.New(storeOnly{newStore()}, ticket.NewGraph(), newFlaky("t-2-shipping", "t-3-refund"), engine.WithClock(fixedClock))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pending.Run(context.Background(), "p", ticket.Input(firstInput), engine.RunConfig{}); err == nil {
		t.Fatal("the flaky executors should stop the run")
	}
	gate, _ := newDraftEngine(t, ticket.NewMock())
	turn := ticket.Turn{Text: firstInput, Draft: true, Authorization: &ticket.Authorization{Ref: "grant:x", ExpiresAt: "2000-01-01T00:00:00Z"}}
	if _, err := gate.Run(context.Background(), "p", turn.Writes(), engine.RunConfig{}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		e    *engine.Engine
		keys [][]string
	}{
		{pending, [][]string{{"1"}, {"3"}, {"K"}, {"down", "down", "down"}, {"esc"}, {"?"}, {"esc"}, {"i", "ctrl+d"}, {"esc"}}},
		{gate, [][]string{{"1"}, {"a"}, {"n"}, {"esc", "esc"}}},
	} {
		h := newHarnessDeps(t, fakeDeps(c.e, &fakeRunner{local: NewLocalRunner(c.e)}), Settings{Thread: "p"}, 80, 24)
		h.until("the head", func() bool { return h.loaded() && h.m.live.head != nil })
		for _, size := range [][2]int{{80, 24}, {100, 30}, {120, 40}, {160, 48}, {60, 12}, {61, 13}, {240, 70}} {
			h.dispatch(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
			for _, keys := range c.keys {
				h.key(keys...)
				assertFits(t, h.m.View(), size, keys)
			}
			if len(h.m.live.lines) == 0 || len(h.m.live.lines) > liveMax(size[1]) {
				t.Fatalf("at %dx%d the live area has %d lines (at most %d)", size[0], size[1], len(h.m.live.lines), liveMax(size[1]))
			}
		}
	}
}

// hasToolResult says whether an executor's request already holds its tool
// result: the second call of a subtask, not a new one.
func hasToolResult(req model.Request) bool {
	for _, part := range ticket.Parts(req.Messages) {
		if part == model.PartRounds {
			return true
		}
	}
	return false
}

// Issue 32, item 1, the TUI's half: an answer checks what the approval
// dialog showed, not what the worker finds when it starts. While the
// dialog is open on a draft, another answer rejects it with --redraft and
// a new draft waits; y (or n with a reason, or y on an edited draft) is
// then refused in one line, nothing recorded for the new draft and no
// draft made. Before, the worker read the gate afresh and approved the
// redraft nobody on screen had seen.
func TestAnAnswerToADraftThatChangedMeanwhileIsRefused(t *testing.T) {
	for _, answer := range []string{"approve", "reject", "approve edited"} {
		t.Run(answer, func(t *testing.T) {
			t.Setenv("TMPDIR", t.TempDir()) // e writes the draft's file
			ctx := context.Background()
			e, drafts := newDraftEngine(t, ticket.NewMock())
			turn := ticket.NewTurn(firstInput, nil, true, time.Hour, time.Now())
			if _, err := e.Run(ctx, "c", turn.Writes(), engine.RunConfig{}); err != nil {
				t.Fatal(err)
			}
			h := newHarness(t, e, Settings{Thread: "c"}, 120, 40)
			h.until("the gate", func() bool { return h.loaded() && h.m.live.head != nil && h.m.live.head.gate != nil })
			shown := h.m.live.head.gate.Op.ID
			h.key("a")
			dlg, ok := h.m.dialog.(*approvalDialog)
			if !ok {
				t.Fatalf("a should open the approval, flash %q", h.m.status.text)
			}

			// Meanwhile, elsewhere: rejected with --redraft, a new draft waits.
			if _, err := ticket.AnswerWith(ctx, e, "c", ticket.Decision{Reason: "say when it arrives", Redraft: true}, ticket.Seen{}, engine.RunConfig{}); err != nil {
				t.Fatal(err)
			}
			latest, _ := e.Latest(ctx, "c")
			now, waiting := ticket.Look(latest)
			if !waiting || now.Operation == shown {
				t.Fatalf("the redraft should wait on a new draft: %+v", now)
			}

			switch answer {
			case "approve":
				h.key("y")
			case "reject":
				h.key("n")
				h.typeText("wrong tone")
				h.key("enter")
			case "approve edited":
				h.key("e")
				h.dispatch(draftReadMsg{dlg: dlg, text: "Dear customer, edited by a person."})
				h.key("y")
			}
			h.until("the answer's end", func() bool { return h.m.live.answer != nil && h.m.live.answer.ended && !h.m.busy() })
			if msg := h.m.status.text; !strings.Contains(msg, "the draft changed since it was looked at") || !strings.Contains(msg, now.Operation) || strings.Contains(msg, "\n") {
				t.Fatalf("the answer should be refused in one line naming the draft waiting now (%s), flash %q", now.Operation, msg)
			}
			after, _ := e.Latest(ctx, "c")
			s, _ := ticket.Decode(after.Values)
			if after.ID != latest.ID || s.Operations[now.Operation].Status != ticket.OpAwaitingApproval {
				t.Fatalf("the refused answer wrote: head @%d → @%d, %s is %s", latest.ID, after.ID, now.Operation, s.Operations[now.Operation].Status)
			}
			if _, answered := s.Approvals[now.Operation]; answered {
				t.Fatalf("a decision was recorded for %s, which the dialog never showed", now.Operation)
			}
			if ds, _ := drafts.ListDrafts(ctx, "c"); len(ds) != 0 {
				t.Fatalf("drafts made: %+v", ds)
			}
		})
	}
}

// Issue 32, item 7: a migrated v1 draft was written under no grant, so an
// approval alone is blocked. The dialog says that y gives it one (the
// session's --auth-ttl), and y does: the decision names the grant, and
// create_draft makes the draft.
func TestApprovingAV1DraftGivesItTheSessionsGrant(t *testing.T) {
	ctx := context.Background()
	e, drafts := newDraftEngine(t, ticket.NewMock())
	if err := e.Store().PutCheckpoint(ctx, store.Checkpoint{ThreadID: "old", ID: 1, State: ticket.V1Checkpoint}, nil); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, e, Settings{Thread: "old", AuthTTL: 2 * time.Hour}, 120, 40)
	h.until("the gate", func() bool { return h.loaded() && h.m.live.head != nil && h.m.live.head.gate != nil })
	op := h.m.live.head.gate.Op.ID
	h.key("a")
	if !h.contains("none attached: y gives it "+ticket.GrantRef) || !h.contains("2h0m0s") {
		t.Fatalf("the dialog should say that approving gives the draft a grant:\n%s", h.screen())
	}
	h.key("y")
	h.until("the approval's end", func() bool { return h.m.live.answer != nil && h.m.live.answer.ended && !h.m.busy() })
	latest, _ := e.Latest(ctx, "old")
	s, _ := ticket.Decode(latest.Values)
	d := s.Approvals[op]
	if !d.Approved || d.Grant.Ref != ticket.GrantRef || s.Operations[op].Status != ticket.OpDone {
		t.Fatalf("the decision %+v and the operation %+v: want approved with the grant, done (flash %q)", d, s.Operations[op], h.m.status.text)
	}
	if ds, _ := drafts.ListDrafts(ctx, "old"); len(ds) != 1 || ds[0].OperationID != op {
		t.Fatalf("drafts %+v, want the v1 draft made", ds)
	}
	h.until("the strip's report", func() bool { return h.loaded() && h.m.live.head != nil && h.m.live.head.cp.ID == latest.ID })
	if !h.contains("gave it grant " + ticket.GrantRef) {
		t.Fatalf("the live strip should say the approval gave a grant:\n%s", h.screen())
	}
}
