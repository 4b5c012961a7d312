package tui

import (
	"context"
	"fmt"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"rewind/engine"
	"rewind/engine/ticket"
	"rewind/store/browse"
)

func TestScrubShowsStateAtCursor(t *testing.T) {
	e := newEngine(t)
	seed(t, e, "t")
	h := newHarness(t, e, Settings{Thread: "t"}, 120, 40)
	h.until("the newest checkpoint", func() bool { return h.at(16) })
	if !h.contains("at @16 10/10") {
		t.Fatalf("status bar lacks the position 10/10:\n%s", h.screen())
	}
	if !h.contains("INV-") || h.contains("refund_policy") {
		t.Fatalf("the fork's leaf should show the invoice branch only:\n%s", h.screen())
	}

	h.key("home")
	h.until("#1", func() bool { return h.at(1) })
	s := h.screen()
	for _, want := range []string{"at @1 1/10", "#1 user", "Pending tasks (1)", "planner"} {
		if !strings.Contains(s, want) {
			t.Fatalf("at @1 the screen lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "executor[") {
		t.Fatalf("#1 has only the user's message, but the screen shows executor output:\n%s", s)
	}

	// → follows the branch the cursor came from (the fork), not the newest
	// child by accident.
	h.key("right", "right")
	h.until("#9", func() bool { return h.at(9) })
	if !h.contains("at @9 3/10") || !h.contains(forkInput) {
		t.Fatalf("after → → the cursor should be on the fork #9 showing its input:\n%s", h.screen())
	}

	// [ jumps to the same step on the sibling branch, to compare.
	h.key("[")
	h.until("#3", func() bool { return h.at(3) })
	h.key("2")
	s = h.screen()
	for _, want := range []string{"at @3 3/8", "t-1-order", "t-2-shipping", "t-3-refund", "branch 1/2 at @2"} {
		if !strings.Contains(s, want) {
			t.Fatalf("on the original branch at @3 the screen lacks %q:\n%s", want, s)
		}
	}
	h.key("right", "]")
	h.until("#10 on the fork", func() bool { return h.at(10) })
	s = h.screen()
	if !strings.Contains(s, "t-1-invoice") || strings.Contains(s, "t-3-refund") {
		t.Fatalf("after its planner, the fork's state should list its own subtask only:\n%s", s)
	}

	h.key("[", "end")
	h.until("#8", func() bool { return h.at(8) })
	h.key("1")
	if !h.contains("at @8 8/8") || !h.contains("Here is where things stand") {
		t.Fatalf("End on the original branch should reach its reply at @8:\n%s", h.screen())
	}
	h.key("left")
	h.until("#7", func() bool { return h.at(7) })
	if h.contains("Here is where things stand") {
		t.Fatalf("#7 is before the reply, yet the reply is shown:\n%s", h.screen())
	}

	// ↓ in the focused timeline walks display rows across branches.
	h.m.focus = focusTimeline
	h.key("down")
	h.until("#8 by row", func() bool { return h.at(8) })
}

func TestForkRunsANewBranch(t *testing.T) {
	e := newEngine(t)
	seed(t, e, "t")
	h := newHarness(t, e, Settings{Thread: "t"}, 80, 24)
	h.until("loaded", func() bool { return h.at(16) })
	h.key("home", "right")
	h.until("#2", func() bool { return h.at(2) })
	h.key("f")
	if !h.contains("Fork at @2") {
		t.Fatalf("f should open the fork dialog:\n%s", h.screen())
	}
	h.typeText("Can I change the delivery address of SO20260901?")
	h.key("enter")
	h.until("the fork's reply", func() bool { return num(h.m.timeline.tree.maxID) >= 24 && h.at(num(h.m.timeline.tree.maxID)) })
	fork := h.m.timeline.tree.nodes["17"]
	if fork == nil || num(fork.parent) != 2 || fork.source != engine.SourceFork {
		t.Fatalf("checkpoint 17 should be a fork of #2, got %+v", fork)
	}
	if n := len(h.m.timeline.tree.nodes["2"].kids); n != 3 {
		t.Fatalf("#2 should have 3 branches now, has %d", n)
	}
	if !h.contains("address") || !h.contains("done at @24") {
		t.Fatalf("the new branch's reply and the run's end should show:\n%s", h.screen())
	}
	// Nothing was deleted: the original branch still ends with its reply.
	cp, err := e.Get(context.Background(), "t", 8)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := ticket.Decode(cp.Values)
	if got := s.Messages[len(s.Messages)-1].Speaker; got != "reply" {
		t.Fatalf("the original branch changed: last speaker at @8 is %q", got)
	}
	h.key("[")
	h.until("the sibling at the same step", func() bool { return h.loaded() && num(h.m.timeline.tree.cursor) != 24 })
	if got := h.m.timeline.tree.nodes[h.m.timeline.tree.cursor].depth; got != h.m.timeline.tree.nodes["24"].depth {
		t.Fatalf("[ should land at the same depth on the sibling branch, got depth %d", got)
	}
}

func TestSendStartsANewThreadWithLiveProgress(t *testing.T) {
	e := newEngine(t)
	h := newHarness(t, e, Settings{Thread: "fresh"}, 80, 24)
	h.until("empty thread", func() bool { return !h.m.timeline.loading })
	if !h.contains("No checkpoints yet") || !h.contains("No checkpoints on fresh yet") || h.contains("loading…") {
		t.Fatalf("an unknown thread should say it is empty, not loading:\n%s", h.screen())
	}
	h.key("i")
	h.typeText(firstInput)
	h.key("enter")
	sawRun := false
	h.until("the reply", func() bool {
		sawRun = sawRun || h.m.live.run != nil
		return h.at(8)
	})
	if !sawRun {
		t.Fatal("the run never showed as under way")
	}
	if !h.contains("Here is where things stand") || !h.contains("done at @8") {
		t.Fatalf("the reply and the run's end should show:\n%s", h.screen())
	}
}

func TestSendOnAnOlderBranchForksFromItsEnd(t *testing.T) {
	e := newEngine(t)
	seed(t, e, "t")
	h := newHarness(t, e, Settings{Thread: "t"}, 100, 30)
	h.until("loaded", func() bool { return h.at(16) })
	h.key("[", "end")
	h.until("#8", func() bool { return h.at(8) })
	if !h.contains("continues this branch from @8") {
		t.Fatalf("the composer hint should say where a message goes:\n%s", h.screen())
	}
	h.key("i")
	h.typeText("Thanks! And can I cancel SO20260901?")
	h.key("enter")
	h.until("the new turn", func() bool { return num(h.m.timeline.tree.maxID) > 16 && h.at(num(h.m.timeline.tree.maxID)) })
	if n := h.m.timeline.tree.nodes["17"]; num(n.parent) != 8 || n.source != engine.SourceFork {
		t.Fatalf("sending on an older branch should fork from its end #8, got parent %s source %s", n.parent, n.source)
	}
}

func TestBreakpointPausesAndResumeFinishes(t *testing.T) {
	e := newEngine(t)
	h := newHarness(t, e, Settings{Thread: "bp", InterruptBefore: []string{ticket.NodeExecutor}}, 120, 40)
	h.until("empty", func() bool { return !h.m.timeline.loading })
	h.key("i")
	h.typeText(firstInput)
	h.key("enter")
	h.until("the pause", func() bool { return h.at(2) && h.m.status.text != "" })
	s := h.screen()
	for _, want := range []string{"paused before executor at @2", "Pending tasks (3)", `"id": "t-1-order"`, "⏸"} {
		if !strings.Contains(s, want) {
			t.Fatalf("a paused run should show %q:\n%s", want, s)
		}
	}
	for i := 0; i < 5 && !strings.Contains(h.m.status.text, "done"); i++ {
		h.key("r")
		h.until("the run to end", func() bool {
			return h.loaded() && h.m.live.run == nil && h.m.status.text != "" && !strings.Contains(h.m.status.text, "stopping")
		})
	}
	if !strings.Contains(h.m.status.text, "done at @8") {
		t.Fatalf("resuming should finish the turn at @8, flash %q:\n%s", h.m.status.text, h.screen())
	}
}

func TestDiscardAndDeleteAskFirst(t *testing.T) {
	e := newEngine(t)
	ctx := context.Background()
	if _, err := e.Run(ctx, "p", ticket.Input(firstInput), engine.RunConfig{InterruptBefore: []string{ticket.NodeExecutor}}); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, e, Settings{Thread: "p"}, 80, 24)
	h.until("loaded", func() bool { return h.at(2) })
	h.key("D")
	if !h.contains("Drop the 3 pending tasks of @2") {
		t.Fatalf("D should ask first:\n%s", h.screen())
	}
	h.key("n")
	if h.m.dialog != nil {
		t.Fatal("n should close the question")
	}
	h.key("D", "y")
	h.until("the discard", func() bool { return h.at(3) })
	if h.m.timeline.tree.nodes["3"].pending != 0 || h.m.timeline.tree.nodes["3"].source != engine.SourceUpdate {
		t.Fatalf("#3 should be an update with nothing pending: %+v", h.m.timeline.tree.nodes["3"])
	}

	h.key("t")
	h.until("threads", func() bool { return h.m.threads.loaded && len(h.m.threads.threads) == 1 })
	h.key("d")
	if !h.contains("Delete thread p") {
		t.Fatalf("d should ask before deleting:\n%s", h.screen())
	}
	h.key("y")
	h.until("the thread to go", func() bool { return h.m.threads.loaded && len(h.m.threads.threads) == 0 })
	if ts, _ := e.Threads(ctx); len(ts) != 0 {
		t.Fatalf("the store still has %d thread(s)", len(ts))
	}
	if !h.contains("No threads yet") {
		t.Fatalf("the list should say it is empty:\n%s", h.screen())
	}
}

func TestNewThreadDialogCreatesAndRuns(t *testing.T) {
	e := newEngine(t)
	h := newHarness(t, e, Settings{}, 80, 24)
	h.until("threads", func() bool { return h.m.threads.loaded })
	h.key("n")
	if !h.contains("New thread") || !h.contains("ticket-1") {
		t.Fatalf("n should open the new-thread form with a suggested name:\n%s", h.screen())
	}
	h.key("tab")
	h.typeText(firstInput)
	h.key("tab")
	h.typeText("s3://tickets/SO20260901/photo.jpg")
	h.key("enter")
	h.until("the first turn", func() bool { return h.m.sess.thread == "ticket-1" && h.at(8) })
	h.key("2")
	if !h.contains("s3://tickets/SO20260901/photo.jpg") || !h.contains("Attachments (1)") {
		t.Fatalf("the attachment reference should be listed intact:\n%s", h.screen())
	}
}

// A thread name with a bidi override would show as another name in every
// list: the form refuses it as it refuses an escape, and creates nothing.
func TestNewThreadDialogRefusesInvisibleCharacters(t *testing.T) {
	e := newEngine(t)
	h := newHarness(t, e, Settings{}, 80, 24)
	h.until("threads", func() bool { return h.m.threads.loaded })
	h.key("n")
	h.key("ctrl+u")
	h.typeText("evil\u202egnp.exe")
	h.key("tab")
	h.typeText(firstInput)
	h.key("enter")
	if !h.contains("invisible characters") {
		t.Fatalf("a bidi override in the name should be refused:\n%s", h.screen())
	}
	if ts, err := e.Threads(context.Background()); err != nil || len(ts) != 0 {
		t.Fatalf("nothing should be created: %v %v", ts, err)
	}
}

func TestUntrustedTextIsHarmless(t *testing.T) {
	e := newEngine(t)
	ctx := context.Background()
	evil := "hi \x1b]52;c;ZXZpbA==\x07 \x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\ \x1b[31mred\x1b[0m \u009b31m c1 \u202eevil\u202c back\rover"
	huge := strings.Repeat("0123456789 ", 200_000)
	msgs := []ticket.Message{
		{Role: ticket.RoleUser, Speaker: "user", Content: evil},
		{Role: ticket.RoleTool, Speaker: "tool[\x1b[2Jx]", Content: huge, ToolCallID: "c1"},
	}
	if _, err := e.UpdateState(ctx, "evil\x1b[31m", 0, []engine.Write{engine.Put("messages", msgs),
		engine.Put("attachments", []ticket.Attachment{{ID: "a\x07", Kind: "file", Ref: "s3://b/\x1b]8;;x\x07"}})}, ""); err != nil {
		t.Fatal(err)
	}
	for _, size := range [][2]int{{80, 24}, {160, 48}} {
		h := newHarness(t, e, Settings{Thread: "evil\x1b[31m"}, size[0], size[1])
		h.until("loaded", func() bool { return h.at(1) })
		for _, tab := range []string{"1", "2", "3"} {
			h.key(tab)
			v := h.m.View() // Ascii profile: the view itself must hold no control bytes
			if i := strings.IndexFunc(v, func(r rune) bool {
				return r == 0x1b || r == 0x07 || r == '\r' || (r >= 0x80 && r <= 0x9f) || r == 0x202e
			}); i >= 0 {
				t.Fatalf("tab %s at %v leaks a control character %q:\n%s", tab, size, v[i:min(i+12, len(v))], v)
			}
		}
		h.key("1")
		s := h.screen()
		for _, want := range []string{"␛]52;c;ZXZpbA==␇", "⟨U+009B⟩", "⟨U+202E⟩", "␍over"} {
			if !strings.Contains(s, want) && !strings.Contains(strings.Join(h.m.content.panes[paneConv].scroll.lines, "\n"), want) {
				t.Fatalf("%q should be shown visibly:\n%s", want, s)
			}
		}
		all := strings.Join(h.m.content.panes[paneConv].scroll.lines, "\n")
		if !strings.Contains(all, "more characters · z unfolds") {
			t.Fatal("a 2 MB tool result should be folded")
		}
		if got := len(h.m.content.panes[paneConv].scroll.lines); got > 200 {
			t.Fatalf("the folded conversation has %d lines", got)
		}
	}
}

func TestEveryLineFitsAtEverySize(t *testing.T) {
	e := newEngine(t)
	seed(t, e, "t")
	h := newHarness(t, e, Settings{Thread: "t"}, 80, 24)
	h.until("loaded", func() bool { return h.at(16) })
	for _, size := range [][2]int{{80, 24}, {100, 30}, {119, 35}, {120, 40}, {160, 48}, {240, 70}, {60, 12}, {81, 25}} {
		h.dispatch(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		for _, keys := range [][]string{{"1"}, {"2"}, {"3"}, {"?"}, {"esc", "f"}, {"esc", "b"}, {"esc", "t"}, {"esc"}} {
			h.key(keys...)
			h.drain()
			assertFits(t, h.m.View(), size, keys)
		}
		if h.m.screen == screenThreads {
			h.key("esc")
		}
	}
	h.dispatch(tea.WindowSizeMsg{Width: 40, Height: 10})
	if !h.contains("needs at least") {
		t.Fatalf("a tiny terminal should get a notice:\n%s", h.screen())
	}
}

func TestMouseWheelAndClick(t *testing.T) {
	e := newEngine(t)
	seed(t, e, "t")
	h := newHarness(t, e, Settings{Thread: "t"}, 80, 24)
	h.until("loaded", func() bool { return h.at(16) })
	// Click the first timeline row (y=1 is inside the frame's top border,
	// the turn 1 header; the row is under it).
	h.dispatch(tea.MouseMsg{X: 5, Y: 1, Action: tea.MouseActionPress, Button: tea.MouseButtonLeft})
	if num(h.m.timeline.tree.cursor) != 16 {
		t.Fatalf("a click on a turn header should move nothing, at @%s", h.m.timeline.tree.cursor)
	}
	h.dispatch(tea.MouseMsg{X: 5, Y: 2, Action: tea.MouseActionPress, Button: tea.MouseButtonLeft})
	h.until("#1 by click", func() bool { return h.at(1) })
	h.key("end")
	h.until("#16", func() bool { return h.at(16) })
	h.key("3")
	before := h.m.content.panes[paneInsp].scroll.off
	h.dispatch(tea.MouseMsg{X: 60, Y: 5, Action: tea.MouseActionPress, Button: tea.MouseButtonWheelDown})
	if after := h.m.content.panes[paneInsp].scroll.off; after <= before {
		t.Fatalf("the wheel should scroll the inspector: offset %d → %d", before, after)
	}
}

func TestFastTypedKeysAreSplit(t *testing.T) {
	e := newEngine(t)
	seed(t, e, "t")
	h := newHarness(t, e, Settings{Thread: "t"}, 80, 24)
	h.until("loaded", func() bool { return h.at(16) })
	h.key("g")
	h.until("#1", func() bool { return h.at(1) })
	h.dispatch(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("ll")})
	h.until("#9", func() bool { return h.at(9) })
}

func TestQuitStopsARunFirst(t *testing.T) {
	e := newEngine(t)
	h := newHarness(t, e, Settings{Thread: "q"}, 80, 24)
	h.until("empty", func() bool { return !h.m.timeline.loading })
	stuck := make(chan struct{})
	h.m.sess.deps.Runner = blockingRunner{stuck}
	h.key("i")
	h.typeText("hello")
	h.key("enter")
	h.until("the run", func() bool { return h.m.live.run != nil })
	// q asks first, saying the run stays resumable; n stays.
	h.key("q")
	if h.m.live.quitting || !h.contains("Quit during a run") || !h.contains("resumable") {
		t.Fatalf("q during a run should ask first:\n%s", h.screen())
	}
	h.key("n")
	if h.m.live.quitting || h.m.dialog != nil || h.m.live.run == nil {
		t.Fatal("n should keep the run and the screen")
	}
	h.key("q")
	_, cmd := h.m.Update(keyMsg("y"))
	if !h.m.live.quitting || cmd == nil {
		t.Fatal("q, y during a run should stop it first")
	}
	select {
	case <-stuck:
		t.Fatal("q cancelled the run inside Update: stopping a worker is a signal, it belongs in a Cmd")
	default:
	}
	h.exec(cmd)
	h.until("the run to be cancelled", func() bool {
		select {
		case <-stuck:
			return true
		default:
			return false
		}
	})
}

// blockingRunner's runs wait until cancelled.
type blockingRunner struct{ cancelled chan struct{} }

type blockingRun struct {
	out       chan RunUpdate
	cancelled chan struct{}
}

func (b blockingRunner) start() (RunHandle, error) {
	return &blockingRun{out: make(chan RunUpdate), cancelled: b.cancelled}, nil
}
func (b blockingRunner) Start(context.Context, string, Input, RunSettings) (RunHandle, error) {
	return b.start()
}
func (b blockingRunner) Resume(context.Context, string, RunSettings) (RunHandle, error) {
	return b.start()
}
func (b blockingRunner) Fork(context.Context, string, int64, Input, RunSettings) (RunHandle, error) {
	return b.start()
}
func (r *blockingRun) Updates() <-chan RunUpdate { return r.out }
func (r *blockingRun) Cancel() {
	select {
	case <-r.cancelled:
	default:
		close(r.cancelled)
	}
}

func TestCompactionIsShown(t *testing.T) {
	e := newEngine(t)
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		if _, err := e.Run(ctx, "long", ticket.Input(fmt.Sprintf("Turn %d: my order SO2026090%d hasn't arrived: where is the parcel, and can I get a refund?", i, i)), engine.RunConfig{}); err != nil {
			t.Fatal(err)
		}
	}
	var compacted int64
	cps, _ := e.History(ctx, "long", 0, 0)
	for _, l := range cps {
		cp, _ := e.Get(ctx, "long", l.ID)
		s, _ := ticket.Decode(cp.Values)
		if s.HistoryVersion == 1 && cp.Metadata.Writes["summarizer"] != nil {
			compacted = cp.ID
		}
	}
	if compacted == 0 {
		t.Fatal("the thread never compacted; the test needs a longer conversation")
	}
	h := newHarness(t, e, Settings{Thread: "long"}, 160, 48)
	h.until("loaded", func() bool { return h.loaded() })
	h.m.timeline.tree.jump(idOf(compacted))
	h.exec(h.m.cursorMoved())
	h.until("the compaction", func() bool { return h.at(compacted) })
	// The summary's header is pinned above the tail; z unfolds the summary.
	all := strings.Join(append(h.m.nav.convPins(h.m.cur, h.m.content.panes[paneConv].w, h.m.content.unfold), h.m.content.panes[paneConv].scroll.lines...), "\n")
	for _, want := range []string{"summary #1–", "history v1", "compacted at this checkpoint", "verbatim tail · #"} {
		if !strings.Contains(all, want) {
			t.Fatalf("the compaction checkpoint should show %q:\n%s", want, all)
		}
	}
	h.key("z")
	if all := strings.Join(h.m.content.panes[paneConv].scroll.lines, "\n"); !strings.Contains(all, "Summary · #1–") {
		t.Fatalf("z should unfold the summary:\n%s", all)
	}
	// ... in view (issue 33: it unfolded above the tail, out of view); z
	// again folds it and goes back to the tail.
	if !h.contains("Summary · #1–") {
		t.Fatalf("z should show the summary it unfolds:\n%s", h.screen())
	}
	h.key("z")
	if sc := h.m.content.panes[paneConv].scroll; !sc.atBottom() || h.contains("Summary · #1–") {
		t.Fatalf("z again should fold the summary and show the tail:\n%s", h.screen())
	}
	h.key("z")
	h.key("3")
	if !h.contains("replaced wholesale") {
		t.Fatalf("the inspector's diff should show the wholesale replace:\n%s", h.screen())
	}
}

// A fork from a paused checkpoint leaves the paused branch behind; `r` on
// that branch resumes it where it stopped, not the fork.
func TestResumeCarriesOnThePausedBranchOnScreen(t *testing.T) {
	e := newEngine(t)
	ctx := context.Background()
	if _, err := e.Run(ctx, "pb", ticket.Input(firstInput), engine.RunConfig{InterruptBefore: []string{ticket.NodeExecutor}}); err != nil {
		t.Fatal(err)
	}
	forked, err := e.Fork(ctx, "pb", 2, ticket.Input("Please send me the invoice for SO20260901."), engine.RunConfig{})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, e, Settings{Thread: "pb"}, 120, 40)
	h.until("loaded", func() bool { return h.loaded() && num(h.m.timeline.tree.maxID) == forked.Checkpoint })
	h.key("home")
	h.key("right")
	h.until("#2", func() bool { return h.at(2) })
	h.key("r")
	h.until("the paused branch to finish", func() bool {
		return h.loaded() && h.m.live.run == nil && strings.Contains(h.m.status.text, "done")
	})
	chain, err := e.Ancestors(ctx, "pb", num(h.m.timeline.tree.maxID))
	if err != nil {
		t.Fatal(err)
	}
	if chain[1].ID != 2 || chain[2].ParentID != 2 || chain[2].Source != engine.SourceLoop {
		t.Fatalf("the resume should continue #2 directly, chain %d→%d (%s)", chain[1].ID, chain[2].ID, chain[2].Source)
	}
}

// A scrub step shows its checkpoint at once: once the checkpoint under the
// cursor is shown, its neighbours on the branch are read ahead into the
// cache, so the step's own Update (no Cmd run yet) shows the parent whole.
func TestScrubStepShowsPrefetchedCheckpoint(t *testing.T) {
	e := newEngine(t)
	seed(t, e, "t")
	h := newHarness(t, e, Settings{Thread: "t"}, 120, 40)
	h.until("the newest checkpoint", func() bool { return h.at(16) })
	parent := h.m.timeline.tree.parentOf("16")
	h.until("its parent read ahead", func() bool {
		_, ok := h.m.cache.detail("t", parent)
		return ok && !h.m.cache.prefetching
	})
	_, cmd := h.m.Update(keyMsg("left"))
	if h.m.timeline.tree.cursor != parent || h.m.cur == nil || h.m.cur.id != parent || strings.Contains(h.m.View(), "(loading") {
		t.Fatalf("← should show @%s at once; showing @%v:\n%s", parent, h.m.cur != nil && h.m.cur.id == parent, h.m.View())
	}
	h.exec(cmd)
	h.until("the next step's read ahead", func() bool {
		_, ok := h.m.cache.detail("t", h.m.timeline.tree.parentOf(parent))
		return ok
	})
}

// Keys faster than loads (a repeated or fast-typed h) do not pile loads
// up: a load that starts after the cursor moved on skips its reads, and
// the one of the checkpoint the cursor stops on still reads.
func TestStaleLoadsSkipTheirReads(t *testing.T) {
	e := newEngine(t)
	seed(t, e, "t")
	m := New(context.Background(), depsFor(e), Settings{Thread: "t"})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	runSync(m, m.Init())
	if m.cur == nil || m.cur.cp.ID != 16 {
		t.Fatal("the thread did not open at @16")
	}
	_, cmd := m.Update(runes("hhhhh"))
	var loads []detailMsg
	queue := []tea.Cmd{cmd}
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		if c == nil {
			continue
		}
		switch msg := c().(type) {
		case tea.BatchMsg:
			queue = append(queue, msg...)
		case detailMsg:
			loads = append(loads, msg)
		}
	}
	read := 0
	for _, l := range loads {
		if !l.skipped {
			read++
			if l.id != m.timeline.tree.cursor || l.d == nil {
				t.Fatalf("the load that read is of @%s, the cursor is on @%s", l.id, m.timeline.tree.cursor)
			}
		}
	}
	if len(loads) < 2 || read != 1 {
		t.Fatalf("five steps back: %d loads, %d of them read; want only the last to read", len(loads), read)
	}
}

// costCounter counts the reads of a thread's costs.
type costCounter struct {
	Backend
	n *int
}

func (c costCounter) Costs(ctx context.Context, thread string) (engine.Costs, error) {
	*c.n++
	return c.Backend.(coster).Costs(ctx, thread)
}

// The thread's costs (a sum over every listing) are read for the
// inspector's header only: not on opening with the conversation shown,
// once when the inspector comes into view, not again for the same head.
func TestCostsAreReadForTheInspectorOnly(t *testing.T) {
	e := newEngine(t)
	seed(t, e, "t")
	reads := 0
	m := New(context.Background(), Deps{Source: e.Browse(browse.About{}), Backend: costCounter{EngineBackend(e), &reads}, Runner: NewLocalRunner(e), Extension: TicketExtension()}, Settings{Thread: "t"})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	runSync(m, m.Init())
	if m.cur == nil || reads != 0 {
		t.Fatalf("opened with the conversation shown: %d reads of the costs", reads)
	}
	_, cmd := m.Update(runes("3"))
	runSync(m, cmd)
	if reads != 1 || !strings.Contains(m.View(), "thread tokens") {
		t.Fatalf("the inspector shown: %d reads of the costs, want 1, and them in its header:\n%s", reads, m.View())
	}
	for _, msg := range []tea.Msg{runes("h"), runes("h"), runes("l"), runes("3"), tea.WindowSizeMsg{Width: 90, Height: 24}} {
		_, cmd := m.Update(msg)
		runSync(m, cmd)
	}
	if reads != 1 {
		t.Fatalf("scrubbing, 3 again and a resize read the costs again: %d reads", reads)
	}
}

// The new thread's suggested name (ticket-N) is selected: typing replaces
// it (it appended: "ticket-1refund my order 42"), backspace clears it, and
// tab keeps it.
func TestNewThreadNameSuggestionIsReplacedByTyping(t *testing.T) {
	e := newEngine(t)
	for _, tc := range []struct {
		keys func(h *harness)
		want string
	}{
		{func(h *harness) { h.typeText("refund-42") }, "refund-42"},
		{func(h *harness) { h.typeText("r"); h.typeText("efund") }, "refund"},
		{func(h *harness) { h.dispatch(tea.KeyMsg{Type: tea.KeyBackspace}); h.typeText("x") }, "x"},
		{func(h *harness) { h.key("tab"); h.dispatch(tea.KeyMsg{Type: tea.KeyShiftTab}); h.typeText("x") }, "ticket-1x"},
		{func(h *harness) { h.key("left"); h.typeText("x") }, "ticket-x1"},
	} {
		h := newHarness(t, e, Settings{}, 100, 30)
		h.until("the threads list", func() bool { return h.m.threads.loaded })
		h.key("n")
		f, ok := h.m.dialog.(*formDialog)
		if !ok || f.fields[0].input.Value() != "ticket-1" {
			t.Fatalf("n should open the new-thread form with ticket-1 suggested:\n%s", h.screen())
		}
		tc.keys(h)
		if got := f.fields[0].input.Value(); got != tc.want {
			t.Errorf("the thread name is %q, want %q", got, tc.want)
		}
	}
}
