package tui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"rewind/engine"
	"rewind/engine/model"
	"rewind/store/memory"
)

// trailGraph is a graph rewind did not define (issue 37): two nodes, one
// channel. first and second each append their name to trail, a plain
// string each write replaces.
func trailGraph() *engine.Graph {
	step := func(name string) engine.NodeFunc {
		return func(_ context.Context, nc *engine.NodeContext) ([]engine.Write, error) {
			var s struct{ Trail string }
			if err := nc.Values.Decode(&s, "trail"); err != nil {
				return nil, err
			}
			return []engine.Write{engine.Put("trail", s.Trail+">"+name)}, nil
		}
	}
	return engine.NewGraph("trail", 1).
		Channel("trail", engine.LastValue, "").
		Node("first", step("first")).
		Node("second", step("second")).
		Entry("first").
		Edge("first", "second").
		Edge("second", engine.End)
}

func trailAt(t *testing.T, e *engine.Engine, thread string, id int64) string {
	t.Helper()
	cp, err := e.Get(context.Background(), thread, id)
	if err != nil {
		t.Fatal(err)
	}
	var s struct{ Trail string }
	if err := cp.Values.Decode(&s, "trail"); err != nil {
		t.Fatal(err)
	}
	return s.Trail
}

// TestOwnGraphRunForkReplayEditResume: the engine's operations a user
// reaches from rewind (run, fork, replay, edit, a stopped run resumed)
// work on a graph built inline, with nothing of the ticket graph.
func TestOwnGraphRunForkReplayEditResume(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newClockedEngine(t, memory.New(memory.WithClock(fixedClock)), trailGraph(), model.NewMock(nil))

	// Run: input @1, first @2, second @3.
	res, err := e.Run(ctx, "t", []engine.Write{engine.Put("trail", "go")}, engine.RunConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != "done" || res.Checkpoint != 3 {
		t.Fatalf("run: %s at @%d, want done at @3", res.Status, res.Checkpoint)
	}
	if got := trailAt(t, e, "t", 3); got != "go>first>second" {
		t.Fatalf("run's trail = %q", got)
	}

	// Fork @1 with new input: a new branch, the old one unchanged.
	fork, err := e.Fork(ctx, "t", 1, []engine.Write{engine.Put("trail", "again")}, engine.RunConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if got := trailAt(t, e, "t", fork.Checkpoint); got != "again>first>second" {
		t.Fatalf("fork's trail = %q", got)
	}
	if got := trailAt(t, e, "t", 3); got != "go>first>second" {
		t.Fatalf("the forked-from branch changed: @3's trail = %q", got)
	}

	// Replay @2 (second due): second runs again on a new branch.
	rep, err := e.Replay(ctx, "t", 2, engine.RunConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Status != "done" || rep.Checkpoint == 3 {
		t.Fatalf("replay: %s at @%d, want done on a new checkpoint", rep.Status, rep.Checkpoint)
	}
	if got := trailAt(t, e, "t", rep.Checkpoint); got != "go>first>second" {
		t.Fatalf("replay's trail = %q", got)
	}
	if _, err := e.Replay(ctx, "t", 3, engine.RunConfig{}); !errors.Is(err, engine.ErrNothingToReplay) {
		t.Fatalf("replay of a turn's end: %v, want ErrNothingToReplay", err)
	}

	// Edit the channel at @2, keeping its pending task; resume it there.
	ed, err := e.EditState(ctx, "t", 2, "trail", json.RawMessage(`"edited"`), engine.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := trailAt(t, e, "t", ed.ID); got != "edited" {
		t.Fatalf("edited trail = %q", got)
	}
	if got := engine.DescribeTasks(ed.Tasks); got != "second" {
		t.Fatalf("the edit's pending tasks: %q, want second", got)
	}
	res, err = e.ResumeAt(ctx, "t", ed.ID, engine.RunConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if got := trailAt(t, e, "t", res.Checkpoint); got != "edited>second" {
		t.Fatalf("resumed edit's trail = %q", got)
	}
	if _, err := e.EditState(ctx, "t", 2, "nope", json.RawMessage(`1`), engine.UpdateOptions{}); !errors.Is(err, engine.ErrBadEdit) || !strings.Contains(err.Error(), "channels: trail") {
		t.Fatalf("edit of an unknown channel: %v, want ErrBadEdit naming trail", err)
	}
}

// TestOwnGraphStoppedRunResumes: a run stopped mid-turn (an interrupt, and
// a run killed in-process after second's task finished, before its
// checkpoint was committed) resumes to the same end on a graph built
// inline.
func TestOwnGraphStoppedRunResumes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newClockedEngine(t, memory.New(memory.WithClock(fixedClock)), trailGraph(), model.NewMock(nil))

	res, err := e.Run(ctx, "t", []engine.Write{engine.Put("trail", "go")}, engine.RunConfig{InterruptBefore: []string{"second"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != "interrupted" || engine.DescribeTasks(res.Pending) != "second" {
		t.Fatalf("interrupt: %s pending %q, want interrupted before second", res.Status, engine.DescribeTasks(res.Pending))
	}
	res, err = e.Resume(ctx, "t", engine.RunConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if got := trailAt(t, e, "t", res.Checkpoint); res.Status != "done" || got != "go>first>second" {
		t.Fatalf("resume after interrupt: %s, trail %q", res.Status, got)
	}

	// The kill: cancel the run's context once second's task finished,
	// before the commit; its writes stay pending and a resume ends the turn.
	kctx, kill := context.WithCancel(ctx)
	defer kill()
	_, err = e.Run(kctx, "k", []engine.Write{engine.Put("trail", "go")}, engine.RunConfig{Hook: func(p engine.HookPoint, info engine.HookInfo) {
		if p == engine.HookTaskFinished && info.Task != nil && info.Task.Node == "second" {
			kill()
		}
	}})
	if err == nil {
		t.Fatal("the killed run reported no error")
	}
	head, err := e.Latest(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if head.ID != 2 || engine.DescribeTasks(head.Tasks) != "second" {
		t.Fatalf("after the kill the head is @%d pending %q, want @2 pending second", head.ID, engine.DescribeTasks(head.Tasks))
	}
	res, err = e.Resume(ctx, "k", engine.RunConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if got := trailAt(t, e, "k", res.Checkpoint); res.Status != "done" || got != "go>first>second" {
		t.Fatalf("resume after the kill: %s at @%d, trail %q", res.Status, res.Checkpoint, got)
	}
}

// trailOpened runs g's first turn (trail "go": @1 input, @2 first, @3
// second) on a new store and opens the TUI on thread t at its head, as an
// app that sets no extension does (shapeDeps).
func trailOpened(t *testing.T, g *engine.Graph) (*engine.Engine, *harness) {
	t.Helper()
	e := newClockedEngine(t, storeOnly{newStore()}, g, model.NewMock(nil))
	if _, err := e.Run(context.Background(), "t", []engine.Write{engine.Put("trail", "go")}, engine.RunConfig{}); err != nil {
		t.Fatal(err)
	}
	h := newHarnessDeps(t, shapeDeps(e), Settings{Thread: "t"}, 120, 40)
	h.until("the head loaded", func() bool { return h.at(3) })
	return e, h
}

// shapeDeps opens e as an app that sets no extension does: every pane
// shows the graph's channels by their shape.
func shapeDeps(e *engine.Engine) Deps {
	d := depsFor(e)
	d.Extension = nil
	return d
}

// ticketWords are what the ticket's extension prints in the State pane
// and the conversation: none belongs on another graph's screen.
var ticketWords = []string{"review rounds", "tool budget", "history", "Attachments", "Subtasks", "(no messages at this checkpoint)", "(no message)"}

// TestOwnGraphFirstScreen: the TUI opened on a thread of a graph built
// inline shows its checkpoints, the node that wrote each, its channel's
// value in the State pane and the inspector's diff, says it keeps no
// conversation, and shows nothing of the ticket.
func TestOwnGraphFirstScreen(t *testing.T) {
	t.Parallel()
	_, h := trailOpened(t, trailGraph())
	h.until("the turn's words loaded", func() bool { return h.contains("› trail: go") })
	scr := h.screen()
	for _, want := range []string{"@1", "@2   loop   first", "@3   loop   second", "trail", `+ "go>first>second"`, "› trail: go", "this graph keeps no conversation"} {
		if !strings.Contains(scr, want) {
			t.Errorf("first screen lacks %q:\n%s", want, scr)
		}
	}
	h.key("2")
	h.until("the State pane", func() bool { return h.contains(`trail • changed = "go>first>second"`) })
	scr = h.screen()
	for _, no := range ticketWords {
		if strings.Contains(scr, no) {
			t.Errorf("the screen of a graph that is not the ticket shows %q:\n%s", no, scr)
		}
	}
}

// chatGraph keeps a conversation of its own: chat, a list of {role,
// content}, to which answer adds the assistant's echo of the newest
// user message.
func chatGraph() *engine.Graph {
	type msg struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	answer := func(_ context.Context, nc *engine.NodeContext) ([]engine.Write, error) {
		var s struct{ Chat []msg }
		if err := nc.Values.Decode(&s, "chat"); err != nil {
			return nil, err
		}
		last := s.Chat[len(s.Chat)-1].Content
		return []engine.Write{engine.Put("chat", append(s.Chat, msg{"assistant", "echo: " + last}))}, nil
	}
	return engine.NewGraph("chat", 1).
		Channel("chat", engine.LastValue, nil).
		Channel("turns", engine.LastValue, 0).
		Node("answer", answer).
		Entry("answer").
		Edge("answer", engine.End)
}

// TestOwnGraphConversation: a graph whose channel holds a message list
// of its own shows it in the Conversation pane and the State pane, its
// input in the turn row and the threads list, and nothing of the ticket.
func TestOwnGraphConversation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newClockedEngine(t, storeOnly{newStore()}, chatGraph(), model.NewMock(nil))
	in := []engine.Write{engine.Put("chat", []map[string]string{{"role": "user", "content": "where is my parcel"}}), engine.Put("turns", 1)}
	if _, err := e.Run(ctx, "c", in, engine.RunConfig{}); err != nil {
		t.Fatal(err)
	}
	h := newHarnessDeps(t, shapeDeps(e), Settings{Thread: "c"}, 140, 40)
	h.until("the head and the turn's words loaded", func() bool { return h.at(2) && h.contains("› where is my parcel") })
	scr := h.screen()
	for _, want := range []string{"chat · 2 messages", "#1 human", "#2 ai", "› where is my parcel"} {
		if !strings.Contains(scr, want) {
			t.Errorf("first screen lacks %q:\n%s", want, scr)
		}
	}
	h.key("2")
	h.until("the State pane", func() bool { return h.contains("turns = 1") })
	scr = h.screen()
	if !strings.Contains(scr, "chat • changed · 2 messages") {
		t.Errorf("the State pane lacks chat as a conversation:\n%s", scr)
	}
	for _, no := range ticketWords {
		if strings.Contains(scr, no) {
			t.Errorf("the screen of a graph that is not the ticket shows %q:\n%s", no, scr)
		}
	}
	h.key("t")
	h.until("the threads list", func() bool { return h.contains("“where is my parcel”") })
}

// trailInput is an input hook for trailGraph: what the user types is the
// trail a turn starts from.
func trailInput(in engine.Input, _ time.Time) ([]engine.Write, error) {
	return []engine.Write{engine.Put("trail", in.Text)}, nil
}

// TestOwnGraphTakesTypedInput: on a graph that declares its input, i
// starts a turn and f forks with what the user typed, written as the
// graph says (not as the ticket's messages), and n names a new thread for
// the graph.
func TestOwnGraphTakesTypedInput(t *testing.T) {
	t.Parallel()
	e, h := trailOpened(t, trailGraph().Input(trailInput))
	if foot := footer(h); !strings.Contains(foot, "write") || !strings.Contains(foot, "fork") {
		t.Fatalf("the footer should offer write and fork: %q", foot)
	}
	h.key("i")
	// A draft reply is the ticket's: the composer offers none here.
	if h.contains("draft") || strings.Contains(footer(h), "ctrl+d") {
		t.Fatalf("the composer of a graph without the ticket extension offers a draft reply:\n%s", h.screen())
	}
	h.key("ctrl+d")
	h.typeText("hi")
	h.key("enter")
	h.until("the turn's end", func() bool { return h.m.live.run == nil && num(h.m.timeline.tree.maxID) >= 6 })
	if got := trailAt(t, e, "t", 6); got != "hi>first>second" {
		t.Fatalf("the typed turn's trail = %q (status %q)", got, h.m.status.text)
	}
	// Its end says where it is, and no ticket counts: trail's nodes call
	// no model and it has no messages channel.
	if st := h.m.status.text; !strings.HasPrefix(st, "done at @6") || strings.Contains(st, "model call") || strings.Contains(st, "messages") {
		t.Fatalf("the run's end on the status line: %q, want done at @6 without model calls or messages", st)
	}

	h.key("home")
	h.until("@1", func() bool { return h.at(1) })
	h.key("f")
	if !h.contains("Fork at @1") {
		t.Fatalf("f should open the fork dialog:\n%s", h.screen())
	}
	// The ticket's attachment field is the ticket extension's.
	if h.contains("Attachment") || h.contains("s3://") {
		t.Fatalf("the fork form of a graph without the ticket extension asks for an attachment:\n%s", h.screen())
	}
	h.typeText("again")
	h.key("enter")
	h.until("the fork's end", func() bool { return h.m.live.run == nil && num(h.m.timeline.tree.maxID) >= 9 })
	if got := trailAt(t, e, "t", 9); got != "again>first>second" {
		t.Fatalf("the fork's trail = %q (status %q)", got, h.m.status.text)
	}

	// A new thread is named for its graph, not the ticket.
	h.key("t")
	h.until("the threads list", func() bool { return h.m.screen == screenThreads && h.contains(" t ") })
	h.key("n")
	if !h.contains("New thread") || !h.contains("trail-2") || h.contains("ticket-") || h.contains("SO20260901") || h.contains("Attachment") {
		t.Fatalf("n should offer the thread name trail-2 and no ticket example or attachment:\n%s", h.screen())
	}
}

// TestOwnGraphWithoutInputSaysWhy: on a graph that declares no input, the
// keys that would start a run with typed input (i, f, the threads list's
// n) are off with a reason and not in the footer, and nothing is written;
// before this, f + enter failed with `write to unknown channel "messages"`.
func TestOwnGraphWithoutInputSaysWhy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, h := trailOpened(t, trailGraph())
	if foot := footer(h); strings.Contains(foot, "write") || strings.Contains(foot, "fork") || !strings.Contains(foot, "resume") {
		t.Fatalf("the footer should offer resume, not write or fork: %q", foot)
	}
	for _, k := range []struct{ key, what string }{{"f", "forking"}, {"i", "writing a message"}} {
		h.key(k.key)
		if h.m.dialog != nil || h.m.composer.open {
			t.Fatalf("%s opened a dialog or the composer:\n%s", k.key, h.screen())
		}
		if want := k.what + " is off: graph trail takes no typed input"; !strings.HasPrefix(h.m.status.text, want) {
			t.Fatalf("%s: status %q, want %q…", k.key, h.m.status.text, want)
		}
	}
	if !h.contains("graph trail takes no typed input") {
		t.Fatalf("the hint line should say why there is no i:\n%s", h.screen())
	}
	h.key("t")
	h.until("the threads list", func() bool { return h.m.screen == screenThreads })
	h.key("n")
	if h.m.dialog != nil || !strings.HasPrefix(h.m.status.text, "starting a thread is off: graph trail") {
		t.Fatalf("n on the threads list: dialog %v, status %q", h.m.dialog != nil, h.m.status.text)
	}
	if head, err := e.Latest(ctx, "t"); err != nil || head.ID != 3 {
		t.Fatalf("the head moved: @%d, %v", head.ID, err)
	}
}

// footer is the harness's screen's key line (its second-to-last line).
func footer(h *harness) string {
	lines := strings.Split(strings.TrimRight(h.screen(), "\n "), "\n")
	return strings.Join(lines[max(len(lines)-3, 0):], "\n")
}

// TestOwnGraphBreakpointsAndDrawing: the break dialog offers the graph's
// own nodes, and the graph view (v) draws its declaration: first, then a
// link down to second, second lit as the node that wrote @3.
func TestOwnGraphBreakpointsAndDrawing(t *testing.T) {
	t.Parallel()
	_, h := trailOpened(t, trailGraph())

	h.key("b")
	bd, ok := h.m.dialog.(*breakDialog)
	if !ok {
		t.Fatalf("b opened no break dialog:\n%s", h.screen())
	}
	if got := strings.Join(bd.nodes, ","); got != "first,second" {
		t.Fatalf("the break dialog offers %s, want first,second", got)
	}
	for _, want := range []string{"before first", "after  second"} {
		if !h.contains(want) {
			t.Errorf("the break dialog lacks %q:\n%s", want, h.screen())
		}
	}
	if strings.Contains(h.screen(), "planner") {
		t.Fatalf("the break dialog offers the ticket's nodes:\n%s", h.screen())
	}
	h.key("esc")

	h.key("v")
	h.until("the graph view", func() bool { _, ok := h.m.dialog.(*graphDialog); return ok })
	rows := drawnRows(h.screen(), "first", "second")
	if len(rows) != 3 || !strings.HasPrefix(rows[0], "· first") || rows[1] != "│" || !strings.HasPrefix(rows[2], "● second") || !strings.Contains(rows[2], "wrote @3") {
		t.Fatalf("the graph view should draw first │ second, second lit (wrote @3); rows %q:\n%s", rows, h.screen())
	}
	if strings.Contains(h.screen(), "planner") {
		t.Fatalf("the graph view draws the ticket's nodes:\n%s", h.screen())
	}
}

// drawnRows are the graph view's rows from the one naming first to the
// one naming last, each as drawn inside its box (trimmed): the box's
// cells start with a space after its border (the timeline's do not), and
// are all as wide as the first.
func drawnRows(screen, first, last string) []string {
	var rows []string
	width := 0
	for _, l := range strings.Split(screen, "\n") {
		for _, cell := range strings.Split(l, "┃") {
			in := strings.TrimSpace(cell)
			if !strings.HasPrefix(cell, " ") || in == "" || !strings.ContainsRune("·●◌│", []rune(in)[0]) {
				continue
			}
			if len(rows) == 0 && !strings.Contains(in, " "+first) || width > 0 && utf8.RuneCountInString(cell) != width {
				continue
			}
			rows, width = append(rows, in), utf8.RuneCountInString(cell)
			if strings.Contains(in, " "+last) {
				return rows
			}
		}
	}
	return nil
}

// TestGraphLayoutFromTheDeclaration: the drawing's order and links come
// from the declaration: parallel branches in the order declared (the
// first drawn says it leads on past the second), a Send
// fan-out (×N), a loop back (⟲), a link past the row below (→), and a
// router that declared no targets drawn as decided at run time.
func TestGraphLayoutFromTheDeclaration(t *testing.T) {
	t.Parallel()
	noop := func(context.Context, *engine.NodeContext) ([]engine.Write, error) { return nil, nil }
	pick := func(engine.Values) ([]engine.Target, error) { return nil, nil }
	g := engine.NewGraph("shape", 1).Channel("x", engine.LastValue, "").
		Node("start", noop).Node("left", noop).Node("right", noop).Node("join", noop).Node("check", noop).Node("free", noop).Node("alone", noop).
		Entry("start").
		Route("start", pick, engine.Goto("left"), engine.Send("right", nil), engine.Goto("join")).
		Edge("left", "join").Edge("right", "join").
		Edge("join", "check").
		Route("check", pick, engine.Goto("start"), engine.Goto(engine.End)).
		Route("free", pick)
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	d := newGraphDialog(&detail{id: "1", cp: engine.Checkpoint{ID: 1, Source: "loop"}}, layoutGraph(g), newGraphKeys(newThreadKeys()))
	var got []string
	for _, n := range d.nodes {
		got = append(got, fmt.Sprintf("%s|%v", n.label, n.next))
	}
	want := []string{"start → right, join|true", "left → join|false", "right ×N|true", "join|true", "check ⟲ start|false", "alone|false", "free → ? (decided at run time)|false"}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Fatalf("layout:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := strings.Join(graphNodes(g), ","); got != "start,left,right,join,check,alone,free" {
		t.Fatalf("breakpoint nodes %s, in the drawing's order", got)
	}
}

// gatedTrail is trail with a gate: publish waits until a person sets ok
// (the answer is state, as a graph without the ticket's dialog takes it).
func gatedTrail() *engine.Graph {
	return engine.NewGraph("gated", 1).
		Channel("trail", engine.LastValue, "").
		Channel("ok", engine.LastValue, false).
		Input(trailInput).
		Node("first", func(_ context.Context, nc *engine.NodeContext) ([]engine.Write, error) {
			var s struct{ Trail string }
			if err := nc.Values.Decode(&s, "trail"); err != nil {
				return nil, err
			}
			return []engine.Write{engine.Put("trail", s.Trail+">first")}, nil
		}).
		Node("publish", func(_ context.Context, nc *engine.NodeContext) ([]engine.Write, error) {
			var s struct{ OK bool }
			if err := nc.Values.Decode(&s, "ok"); err != nil {
				return nil, err
			}
			if !s.OK {
				return nil, engine.AwaitApproval("publish", "set ok")
			}
			return []engine.Write{engine.Put("trail", "published")}, nil
		}).
		Gate("publish").Entry("first").Edge("first", "publish").Edge("publish", engine.End)
}

// TestOwnGraphGateSaysHowToAnswer: a run of a graph without the ticket's
// extension that stops at its gate says how such a gate is answered (its
// state edited, then a resume), and a asks for no draft: before, the
// status said "a answers" and a then said "nothing waits for approval
// here (a draft turn asks for one: ctrl+d while writing)", and the
// resume's strip showed the gate's task as still running.
func TestOwnGraphGateSaysHowToAnswer(t *testing.T) {
	t.Parallel()
	e := newClockedEngine(t, storeOnly{newStore()}, gatedTrail(), model.NewMock(nil))
	if _, err := e.Run(context.Background(), "t", []engine.Write{engine.Put("trail", "go")}, engine.RunConfig{}); err != nil {
		t.Fatal(err)
	}
	h := newHarnessDeps(t, shapeDeps(e), Settings{Thread: "t"}, 120, 40)
	h.until("the head loaded", func() bool { return h.at(2) })
	h.key("r")
	h.until("the resume at the gate again", func() bool {
		return h.m.live.run == nil && strings.Contains(h.m.status.text, "waiting for approval at @2")
	})
	if st := h.m.status.text; strings.Contains(st, "a answers") || !strings.Contains(st, "e edits") {
		t.Fatalf("status at the gate: %q, want how a graph's gate is answered (e edits, r resumes)", st)
	}
	// The resume's strip: the gate's task stopped there, it is not running.
	if h.contains("redispatched · running") || !h.contains("stopped at its gate") {
		t.Fatalf("the resume strip after the gate stopped the run again:\n%s", h.screen())
	}
	h.key("a")
	if st := h.m.status.text; strings.Contains(st, "ctrl+d") || !strings.Contains(st, "e edits") {
		t.Fatalf("a at a graph's gate: %q, want how to answer it, no draft", st)
	}
}

// askGraph is a graph of one node that asks a model, in a role of its
// own, and keeps the answer in a channel.
func askGraph() *engine.Graph {
	ask := func(ctx context.Context, nc *engine.NodeContext) ([]engine.Write, error) {
		req := model.Simple("oracle", "Answer in one word.", "what is six times seven")
		req.KeepAnswer = true
		resp, err := nc.Model.Complete(ctx, req)
		if err != nil {
			return nil, err
		}
		return []engine.Write{engine.Put("answer", resp.Text)}, nil
	}
	return engine.NewGraph("ask", 1).
		Channel("answer", engine.LastValue, "").
		Node("ask", ask).
		Entry("ask").
		Edge("ask", engine.End)
}

// TestOwnGraphShowsWhatItsModelCallsStored: P on a graph whose extension
// builds no request lists each call as the engine stored it (its role,
// the hash sent, the answer kept) and says the request is not built
// again, never the ticket's roles ("no request of role …").
func TestOwnGraphShowsWhatItsModelCallsStored(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	answer := model.Text(func(model.Request) (string, error) { return "fortytwo", nil })
	e := newClockedEngine(t, memory.New(memory.WithClock(fixedClock)), askGraph(), model.NewMock(answer))
	if _, err := e.Run(ctx, "a", []engine.Write{engine.Put("answer", "")}, engine.RunConfig{}); err != nil {
		t.Fatal(err)
	}
	h := newHarnessDeps(t, shapeDeps(e), Settings{Thread: "a"}, 140, 40)
	h.until("the head", func() bool { return h.at(2) })
	h.key("P")
	h.until("the calls read", func() bool { return h.contains("call 1/1") })
	scr := h.screen()
	for _, want := range []string{"oracle 1", "not built again", "fortytwo"} {
		if !strings.Contains(scr, want) {
			t.Errorf("P lacks %q:\n%s", want, scr)
		}
	}
	if strings.Contains(scr, "no request of role") || strings.Contains(scr, "exactly as sent") {
		t.Errorf("P reads the calls as the ticket's:\n%s", scr)
	}
}

// A thread another graph wrote, opened from a screen that runs this one
// (the threads list holds every graph's threads), with no graph to open
// it on (a program's own, which passes no Options.Graphs, or a registry
// that does not build that graph) says whose it is and how to open it on
// its own graph: its panes read it as this graph's.
func TestAThreadOfAnotherGraphSaysSo(t *testing.T) {
	t.Parallel()
	st := storeOnly{newStore()}
	trail := newClockedEngine(t, st, trailGraph(), model.NewMock(nil))
	if _, err := trail.Run(context.Background(), "t", []engine.Write{engine.Put("trail", "go")}, engine.RunConfig{}); err != nil {
		t.Fatal(err)
	}
	chat := newClockedEngine(t, st, chatGraph(), model.NewMock(nil))
	none := func(_ context.Context, name string) (GraphDeps, error) {
		return GraphDeps{}, fmt.Errorf("graph %s: %w", name, ErrUnknownGraph)
	}
	for _, graphs := range []func(context.Context, string) (GraphDeps, error){nil, none} {
		h := newHarnessDeps(t, depsOf(Options{Engine: chat, StoreLabel: "memory:", Graphs: graphs}), Settings{Thread: "t"}, 160, 40)
		h.until("the screen says the thread is another graph's", func() bool {
			return h.contains("t was run on graph trail, not chat: its panes misread it")
		})
		if g := h.m.sess.graph().Name; g != "chat" {
			t.Fatalf("with no graph trail to open it on, t is read on graph %s", g)
		}
		if graphs == nil {
			continue
		}
		// A registry that does not build trail: `rewind tui t` would
		// refuse it too, so the fix named is trail's own program.
		if st := h.m.status.text; strings.Contains(st, "rewind tui t") || !strings.Contains(st, "the program that defines graph trail") {
			t.Errorf("a graph the registry does not build: the status names a fix that fails: %q", st)
		}
	}
}
