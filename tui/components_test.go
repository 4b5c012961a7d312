package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"rewind/engine"
	"rewind/engine/chainformat"
	"rewind/engine/ticket"
	"rewind/store/browse"
	"rewind/themes"
)

// The components own their state: each is driven here alone, through its
// Update, SetSize and View, without a root model or a store.

func runes(s string) tea.KeyMsg { return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)} }

func TestComposerAlone(t *testing.T) {
	c := newComposer(true)
	c.setTheme(themes.Or(themes.Dark))
	c.SetSize(80, 1)
	c.Focus()
	if out, _ := c.Update(runes("where is my parcel?")); out != (composerOutcome{}) {
		t.Fatalf("typing asks nothing of the root: %+v", out)
	}
	if out, _ := c.Update(tea.KeyMsg{Type: tea.KeyCtrlD}); !out.resized || !c.draft || !strings.Contains(c.View(""), "draft reply: awaits approval") {
		t.Fatalf("ctrl+d asks for a draft and says so: %+v, draft %v, %q", out, c.draft, c.View(""))
	}
	if out, _ := c.Update(tea.KeyMsg{Type: tea.KeyEnter}); out.send != "where is my parcel?" || c.Value() == "" {
		t.Fatalf("enter hands the text to send and keeps it until sent: %+v, kept %q", out, c.Value())
	}
	c.sent()
	if c.open || c.draft || c.Value() != "" {
		t.Fatalf("after sending the composer is empty, closed, and the draft request off: open %v draft %v %q", c.open, c.draft, c.Value())
	}
	c.Focus()
	c.Update(runes("half a thought"))
	c.Update(tea.KeyMsg{Type: tea.KeyEsc})
	if c.open || !strings.Contains(c.View("i: write a message"), "unsent: half a thought") {
		t.Fatalf("esc closes and keeps the text: open %v, %q", c.open, c.View("i: write a message"))
	}
	c.Focus()
	if out, _ := c.Update(tea.KeyMsg{Type: tea.KeyCtrlC}); out.cleared != "half a thought" || !c.open {
		t.Fatalf("the first ctrl+c clears (and says what it cleared), the composer stays: %+v open %v", out, c.open)
	}
	if c.Update(tea.KeyMsg{Type: tea.KeyCtrlC}); c.open {
		t.Fatal("the second ctrl+c closes the composer")
	}
}

func TestPagerAlone(t *testing.T) {
	p := newPager()
	p.SetSize(80, 24) // room: 19 lines
	p.open(false, 100)
	if !p.log || p.off != 100-p.room() {
		t.Fatalf("the log opens at its end: log %v off %d", p.log, p.off)
	}
	if closed, _ := p.Update(pagerKeyMsg{runes("j"), 100}); closed || p.off != 100-p.room() {
		t.Fatalf("j at the end stays there: closed %v off %d", closed, p.off)
	}
	p.Update(pagerKeyMsg{runes("g"), 100})
	p.Update(pagerKeyMsg{runes("k"), 100})
	if p.off != 0 {
		t.Fatalf("g goes to the top, k stops there: off %d", p.off)
	}
	lines := make([]string, 100)
	for i := range lines {
		lines[i] = "line"
	}
	if v := p.View(themes.Or(themes.Dark), "Status log", lines, 40); !strings.Contains(v, "1–19 of 100") {
		t.Fatalf("the box says which lines it shows:\n%s", v)
	}
	if closed, _ := p.Update(pagerKeyMsg{runes("x"), 100}); closed || !p.shown() {
		t.Fatalf("a key it does not bind leaves it open: closed %v shown %v", closed, p.shown())
	}
	if closed, _ := p.Update(pagerKeyMsg{runes("q"), 100}); !closed || p.shown() {
		t.Fatalf("q closes it: closed %v shown %v", closed, p.shown())
	}
}

func TestThreadListAlone(t *testing.T) {
	l := newThreadList()
	l.SetSize(80, 10)
	// The list read again is the list's message: it selects the chain
	// shown when nothing was selected, and asks the root for the rest.
	if a, _ := l.Update(threadsMsg{threads: []browse.Thread{{ID: "a", Checkpoints: 3}, {ID: "b", Checkpoints: 5}}, current: browse.Chain{Thread: "b"}}); a != listLoaded {
		t.Fatalf("a threadsMsg should return listLoaded, returns %v", a)
	}
	if sel, _, _ := l.selected(); sel.ID != "b" {
		t.Fatalf("the list read first should select the thread shown, b; selects %q", sel.ID)
	}
	l.set([]browse.Thread{{ID: "a", Checkpoints: 3}, {ID: "b", Checkpoints: 5}}, nil, browse.Chain{})
	l.move(-1)
	if a, _ := l.Update(runes("j")); a != listNone {
		t.Fatalf("j moves the selection itself: %v", a)
	}
	if sel, _, _ := l.selected(); sel.ID != "b" {
		t.Fatalf("j should select b, selects %q", sel.ID)
	}
	for key, want := range map[string]listAction{"o": listOpen, "d": listDelete, "n": listNew, "q": listQuit, "?": listHelp, "L": listLog} {
		if a, _ := l.Update(runes(key)); a != want {
			t.Errorf("%s: action %v, want %v", key, a, want)
		}
	}
	if v := l.View(themes.Or(themes.Dark), browse.Chain{Thread: "b"}, "memory:", 80, 10); !strings.Contains(v, "Threads · memory: · 2") || !strings.Contains(v, "▶ ● b") {
		t.Fatalf("the list names the store, counts the threads and marks the selected, open one:\n%s", v)
	}
}

type doneRun struct{ ch chan RunUpdate }

func (r doneRun) Updates() <-chan RunUpdate { return r.ch }
func (r doneRun) Cancel()                   {}

func TestLiveStripAlone(t *testing.T) {
	s := newLiveStrip(newThreadKeys(), newTimelineKeys(newThreadKeys()), func() bool { return true }, nil)
	s.theme = themes.Or(themes.Dark)
	s.SetSize(120, 40)
	s.render("t")
	if s.Height() != 0 || s.ShortHelp() != nil {
		t.Fatalf("nothing under way, nothing shown: %d lines, keys %v", s.Height(), s.ShortHelp())
	}
	s.start(runStartedMsg{kind: "run", run: doneRun{}}, true)
	s.render("t")
	if !s.busy() || !strings.Contains(s.View(), "live · run") || !strings.Contains(fmtKeys(s.ShortHelp()), "kill worker") ||
		!strings.Contains(fmtKeys(s.ShortHelp()), fmtKeys(newTimelineKeys(newThreadKeys()).ShortHelp())) {
		t.Fatalf("a run under way shows and puts kill in the footer:\n%s\n%v", s.View(), fmtKeys(s.ShortHelp()))
	}
	// Looking around first, the timeline's scrub, then what acts on the run.
	if got, want := fmtKeys(s.ShortHelp()), "pane, log, prev, next, stop, kill worker, quit, help"; got != want {
		t.Fatalf("the footer during a run:\n got %s\nwant %s", got, want)
	}
	saved, finished, final := s.apply([]RunUpdate{
		{Event: &engine.Event{Type: engine.EventCheckpointSaved}},
		{Done: true, Err: &KilledError{Pid: 42, Point: "before-commit"}},
	})
	if !saved || !finished {
		t.Fatalf("apply: saved %v finished %v", saved, finished)
	}
	s.end(final)
	s.render("t")
	if s.busy() || s.killed == nil || !strings.Contains(s.View(), "killed · worker pid 42") {
		t.Fatalf("a kill stays shown after the run:\n%s", s.View())
	}
	// Killed before its first commit: once the head read finds nothing,
	// the strip says so instead of waiting for a checkpoint forever.
	s.readingHead()
	s.render("t")
	if !strings.Contains(s.View(), "reading the last checkpoint") {
		t.Fatalf("while the head is read the strip says so:\n%s", s.View())
	}
	s.headRead(nil, true)
	s.render("t")
	if v := s.View(); strings.Contains(v, "reading the last checkpoint") || !strings.Contains(v, "nothing was committed before the kill") {
		t.Fatalf("a kill before the first commit says there is nothing to resume:\n%s", v)
	}
	if s.render(""); s.Height() != 0 {
		t.Fatal("off the thread view the strip shows nothing")
	}
	if !s.dismiss() || s.dismiss() {
		t.Fatal("esc hides what the run left, once")
	}
}

func fmtKeys(bs []key.Binding) string {
	var parts []string
	for _, b := range bs {
		parts = append(parts, b.Help().Desc)
	}
	return strings.Join(parts, ", ")
}

func TestTimelineKeysAlone(t *testing.T) {
	var p timelinePane
	p.keys = newTimelineKeys(newThreadKeys())
	tr := newTree()
	tr.merge([]*timelineNode{{id: "1"}, {id: "2", parent: "1"}, {id: "3", parent: "2"}})
	tr.jump("3")
	p.tree = tr
	if s, _ := p.Update(runes("h")); !s.handled || !s.moved || num(tr.cursor) != 2 {
		t.Fatalf("h steps back: %+v at @%s", s, tr.cursor)
	}
	if s, _ := p.Update(runes("g")); !s.handled || !s.moved || num(tr.cursor) != 1 {
		t.Fatalf("g goes to the first: %+v at @%s", s, tr.cursor)
	}
	if s, _ := p.Update(runes("i")); s.handled {
		t.Fatal("i is not the timeline's")
	}
	p.follow()
	if p.position != [2]int{1, 3} || num(p.leaf) != 3 || p.title() != "Timeline · 3" {
		t.Fatalf("position %v, leaf @%s, title %q", p.position, p.leaf, p.title())
	}
	p.reset("t1")
	p.total = 8000
	if p.title() != "Timeline · loading 0/8000" || num(p.leaf) != 0 || p.keys.Prev.Keys() == nil || p.tree.len() != 0 {
		t.Fatalf("a thread being opened: title %q, leaf @%s, keys kept %v, %d checkpoints", p.title(), p.leaf, p.keys.Prev.Keys(), p.tree.len())
	}
}

// A dialog takes the room SetSize gives it: the root sizes it when it opens
// and again when the terminal is resized under it.
func TestDialogTakesItsSize(t *testing.T) {
	th := themes.Or(themes.Default)
	d := &confirmDialog{title: "Delete thread", question: strings.Repeat("Delete it all? ", 12), keys: newConfirmKeys(), onYes: func() tea.Cmd { return nil }}
	widest := func(s string) int {
		w := 0
		for _, l := range strings.Split(s, "\n") {
			w = max(w, width(l))
		}
		return w
	}
	d.SetSize(40, 20)
	if w := widest(d.View(th, help.New())); w > 40 {
		t.Fatalf("given 40 columns the dialog is %d wide", w)
	}
	m := New(t.Context(), Deps{Extension: TicketExtension()}, Settings{Thread: "t"})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	m.openDialog(d)
	if w := widest(d.View(th, help.New())); w != 64 {
		t.Fatalf("opened on 120 columns the dialog is %d wide, want its 64", w)
	}
	m.Update(tea.WindowSizeMsg{Width: 60, Height: 20})
	if w := widest(d.View(th, help.New())); w > 56 {
		t.Fatalf("resized to 60 columns the dialog is still %d wide", w)
	}
	assertFits(t, m.View(), [2]int{60, 20}, "a resize under a dialog")
}

// The footer asks the component with the focus for its keys: the
// timeline's scrubbing always (h/l work from any focus), a pane's
// scrolling and folding when a pane has the focus, rebound keys as bound.
func TestFooterAsksTheFocusedComponent(t *testing.T) {
	// A rewind store's (a Backend): a read-only source's footer leaves the
	// writing keys out (TestReadOnlySourceRefusesTheWritingKeys).
	m := New(t.Context(), Deps{Backend: transcriptOnly{}, Extension: TicketExtension()}, Settings{Thread: "t", Keys: map[string][]string{"fold": {"Z"}}})
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 30})
	footer := func() string { return strings.Join(strings.Fields(ansi.Strip(m.viewHelpLine())), " ") }
	if f := footer(); !strings.Contains(f, "←/h prev • →/l next • i write") || !strings.HasSuffix(f, "q quit • ? help") || strings.Contains(f, "scroll") {
		t.Fatalf("the timeline has the focus: its keys, no pane's: %q", f)
	}
	m.cycleFocus(1)
	if f := footer(); !strings.Contains(f, "→/l next • ↓/j scroll • Z fold • i write") || !strings.HasSuffix(f, "q quit • ? help") {
		t.Fatalf("a pane has the focus: its keys (fold rebound to Z) first, quit and help last: %q", f)
	}
	if got := fmtKeys(m.content.ShortHelp()); !strings.Contains(got, "scroll") || !strings.Contains(got, "fold") {
		t.Fatalf("the panes' keys: %s", got)
	}
}

// The graph view asks the root to scrub (scrubMsg) and draws what the root
// passes in, never the root's tree.
func TestGraphDialogAlone(t *testing.T) {
	th := themes.Or(themes.Default)
	at := func(id int64, nodes ...string) *detail {
		return &detail{id: idOf(id), cp: engine.Checkpoint{ID: id, Source: "loop", Metadata: engine.Metadata{Nodes: nodes}}}
	}
	g := newGraphDialog(at(2, "planner"), layoutGraph(ticket.NewGraph()), newGraphKeys(newThreadKeys()))
	g.SetSize(76, 22)
	if done, cmd := g.Update(runes("h")); done || cmd == nil || cmd() != (scrubMsg{by: -1}) {
		t.Fatal("h asks the root to step back")
	}
	if done, cmd := g.Update(runes("l")); done || cmd == nil || cmd() != (scrubMsg{by: 1}) {
		t.Fatal("l asks the root to step on")
	}
	g.followCursor(at(2, "planner"), "3")
	if v := ansi.Strip(g.View(th, help.New())); !strings.Contains(v, "Graph · @2 (loop) · loading @3…") {
		t.Fatalf("the cursor went on to @3, not loaded yet:\n%s", v)
	}
	g.followCursor(at(3, "executor"), "3")
	if v := ansi.Strip(g.View(th, help.New())); !strings.Contains(v, "Graph · @3 (loop)") || strings.Contains(v, "loading") || !strings.Contains(v, "wrote @3") {
		t.Fatalf("@3 loaded:\n%s", v)
	}
	if done, _ := g.Update(runes("v")); !done {
		t.Fatal("v closes it")
	}
}

// The search results list as many hits as its room holds and asks the
// root to go to the one chosen (goHitMsg).
func TestSearchDialogAlone(t *testing.T) {
	th := themes.Or(themes.Default)
	d := &searchDialog{query: "refund", keys: newSearchKeys()}
	for i := 1; i <= 40; i++ {
		d.hits = append(d.hits, searchHit{id: idOf(int64(i)), where: "listing", text: "a refund", parts: []hitPart{{text: "a "}, {text: "refund", match: true}}})
	}
	d.SetSize(dialogRoom(80, 24))
	if d.rows() != 14 {
		t.Fatalf("on 80x24 it lists %d hits at once, want 14", d.rows())
	}
	if v := ansi.Strip(d.View(th, help.New())); !strings.Contains(v, "1–14 of 40") || !strings.Contains(v, "@2     listing            a refund") {
		t.Fatalf("view:\n%s", v)
	}
	d.SetSize(dialogRoom(80, 40))
	d.Update(runes("j"))
	if v := ansi.Strip(d.View(th, help.New())); d.rows() != 30 || !strings.Contains(v, "1–30 of 40") {
		t.Fatalf("taller: %d rows:\n%s", d.rows(), v)
	}
	if done, cmd := d.Update(keyMsg("enter")); !done || cmd == nil || cmd() != (goHitMsg{i: 1}) {
		t.Fatal("enter closes it and asks for hit 2 (index 1)")
	}
}

// A resume that finds the draft it was about to write by its operation id
// says so in its strip (the side-effect lesson's last step).
func TestResumeStripSaysTheDraftWasReused(t *testing.T) {
	s := newLiveStrip(newThreadKeys(), newTimelineKeys(newThreadKeys()), func() bool { return true }, nil)
	s.theme = themes.Or(themes.Dark)
	s.SetSize(160, 40)
	s.phase = &phase{from: 12, byID: map[string]*phaseTask{}}
	s.phase.apply(engine.Event{Type: ticket.EventSideEffectRecorded, Data: []byte(`{"operation":"op-draft-c12-abcd","reused":true}`)})
	s.phase.apply(engine.Event{Type: engine.EventCheckpointSaved})
	s.phase.figure = &phaseFigure{redispatched: 1, calls: 0, complete: true}
	s.render("t")
	if v := s.View(); !strings.Contains(v, "operation op-draft-c12-abcd") || !strings.Contains(v, "reused: found done by its id") {
		t.Fatalf("the strip does not say the draft was reused:\n%s", v)
	}
}

// The kill question closes itself when the run it asks about ends: there
// is no worker left to kill (issue 33: it stayed open over a finished run).
func TestKillDialogClosesWhenTheRunEnds(t *testing.T) {
	e := newEngine(t)
	seed(t, e, "t")
	h := newHarness(t, e, Settings{Thread: "t"}, 120, 40)
	h.until("the thread", func() bool { return h.at(16) })
	ch := make(chan RunUpdate, 1)
	run := doneRun{ch}
	h.dispatch(runStartedMsg{gen: h.m.sess.gen, thread: "t", kind: "run", run: run})
	h.m.openDialog(h.m.runs.killDialog(4242))
	h.dispatch(runUpdatesMsg{run: run, updates: []RunUpdate{{Done: true}}})
	if h.m.dialog != nil {
		t.Fatalf("the kill question stayed open over a finished run:\n%s", h.screen())
	}
}

// A long thread name leaves the last input room to be read: the name is
// cut (issue 33 saw the input squeezed to two characters at 80 columns).
func TestThreadListKeepsTheLastInputReadable(t *testing.T) {
	long := "customer-4711-order-SO20260901-late-delivery-and-refund"
	input := "My order SO20260901 has not arrived: where is the parcel?"
	for _, w := range []int{80, 120} {
		l := newThreadList()
		l.SetSize(w, 10)
		l.set([]browse.Thread{{ID: long, Checkpoints: 16, Latest: "16"}, {ID: "b", Checkpoints: 5}}, nil, browse.Chain{})
		l.states = map[string]threadState{
			long: {status: "stopped", lastInput: input, gen: l.gen},
			"b":  {status: "awaiting-approval", lastInput: "hi", gen: l.gen},
		}
		var row string
		for _, r := range l.lines(themes.Or(themes.Dark), browse.Chain{}) {
			if r = ansi.Strip(r); strings.Contains(r, "customer-") {
				row = r
			}
		}
		_, quoted, _ := strings.Cut(row, "“")
		if width(row) > w || width(quoted) < 20 {
			t.Errorf("%d columns: the last input has %d cells: %q", w, width(quoted), row)
		}
	}
}

// The status line says what a Cmd's outcome says, and nothing for one
// that has nothing to say (a kill that went out: the run's end tells).
func TestStatusLineReportsOutcomes(t *testing.T) {
	cp := engine.Checkpoint{ParentID: 5}
	cp.Metadata.Discarded = make([]chainformat.Task, 2)
	for _, c := range []struct {
		msg   tea.Msg
		want  string
		isErr bool
	}{
		{killSentMsg{pid: 42, err: errors.New("no such process")}, "kill worker pid 42: no such process", true},
		{killSentMsg{pid: 42}, "", false},
		{themeSavedMsg{name: "light", path: "/c.toml"}, "theme light (saved to /c.toml)", false},
		{themeSavedMsg{name: "light", err: errors.New("read-only")}, "theme light, not saved: read-only", true},
		{discardedMsg{cp: cp}, "discarded 2 pending tasks at @5", false},
		{discardedMsg{err: errors.New("no pending tasks")}, "no pending tasks", true},
	} {
		var s statusLine
		_, cmd := s.Update(c.msg)
		if s.text != c.want || s.isErr != c.isErr || (cmd == nil) != (c.want == "") {
			t.Errorf("%T: status %q (error %v, expiry %v), want %q (error %v)", c.msg, s.text, s.isErr, cmd != nil, c.want, c.isErr)
		}
	}
}

// A component with no root says something through flash: the status line
// shows it and keeps it in the log.
func TestFlashReachesTheStatusLine(t *testing.T) {
	var s statusLine
	s.Update(flash("breakpoint set", false)())
	if s.text != "breakpoint set" || len(s.log) != 1 || s.log[0].text != "breakpoint set" {
		t.Fatalf("a flash should show and be logged: %q, log %v", s.text, s.log)
	}
	s.Update(flash("no such checkpoint", true)())
	if !s.isErr || s.text != "no such checkpoint" {
		t.Fatalf("an error flash should show as one: %q err %v", s.text, s.isErr)
	}
}

// The parity features alone: m marks the checkpoint under the cursor of
// the chain open, = compares the cursor with it (a dialog and its read),
// and says what to do when there is no mark of this thread.
func TestParityMarksAndComparesAlone(t *testing.T) {
	s := &session{thread: "t"}
	p := newParity(s, newThreadKeys(), 0)
	key := func(k, cursor string) (parOutcome, tea.Cmd) {
		return p.Update(parKeyMsg{key: runes(k), cursor: cursor})
	}
	if out, _ := key("=", "5"); !out.handled || out.open != nil || !strings.Contains(out.say.text, "mark a checkpoint first: m marks") || !out.say.isErr {
		t.Fatalf("= with no mark should say what to do: %+v", out)
	}
	if out, _ := key("m", "3"); !strings.Contains(out.say.text, "marked @3") || out.say.isErr {
		t.Fatalf("m should mark @3: %+v", out)
	}
	out, cmd := key("=", "5")
	if d, ok := out.open.(*compareDialog); !ok || d.a != "3" || d.b != "5" || !d.loading || cmd == nil {
		t.Fatalf("= should open the compare of @3 → @5 and read it: %+v, read %v", out, cmd != nil)
	}
	s.thread = "u" // another thread open: the mark is t's
	if out, _ := key("=", "5"); out.open != nil || !strings.Contains(out.say.text, "mark a checkpoint first") {
		t.Fatalf("a mark on another thread should not compare: %+v", out)
	}
	if out, _ := key("j", "5"); out.handled {
		t.Fatalf("j is not a parity key: %+v", out)
	}
}

// The read-only policy refuses a rebound key under its new name, not its
// old one, and drops it from the footer; on a rewind store it refuses
// nothing.
func TestReadOnlyPolicyFollowsReboundKeys(t *testing.T) {
	tk := newThreadKeys()
	if err := tk.rebind(map[string][]string{"edit_state": {"E"}}); err != nil {
		t.Fatal(err)
	}
	p := newReadOnlyPolicy(true, tk, newThreadList().keys)
	if why, off := p.refuses(runes("E"), screenThread); !off || !strings.Contains(why, "editing the state is off") || !strings.Contains(why, readOnlyWhy) {
		t.Fatalf("E, edit state rebound, should be refused with why: %q %v", why, off)
	}
	if why, off := p.refuses(runes("e"), screenThread); off {
		t.Fatalf("e, no longer edit state, was refused: %q", why)
	}
	for _, b := range p.withoutOff([]key.Binding{tk.EditState, tk.Next}, screenThread) {
		if b.Help().Key == "E" {
			t.Fatal("the footer still lists E on a read-only source")
		}
	}
	if _, off := newReadOnlyPolicy(false, tk, newThreadList().keys).refuses(runes("E"), screenThread); off {
		t.Fatal("a rewind store refused E")
	}
}

// startsRunner records the runs a run control starts.
type startsRunner struct{ calls []string }

func (r *startsRunner) Start(_ context.Context, thread string, in Input, _ RunSettings) (RunHandle, error) {
	r.calls = append(r.calls, "start "+thread+" "+in.Text)
	return doneRun{}, nil
}

func (r *startsRunner) Resume(_ context.Context, thread string, rs RunSettings) (RunHandle, error) {
	r.calls = append(r.calls, fmt.Sprintf("resume %s at %d", thread, rs.At))
	return doneRun{}, nil
}

func (r *startsRunner) Fork(_ context.Context, thread string, cp int64, in Input, _ RunSettings) (RunHandle, error) {
	r.calls = append(r.calls, fmt.Sprintf("fork %s at %d %s", thread, cp, in.Text))
	return doneRun{}, nil
}

// The run control alone: where its keys start a run from the timeline's
// runAt, what it refuses with why, and that a started run makes it busy
// until the run's start message comes back.
func TestRunControlAlone(t *testing.T) {
	node := func(id string, pending int) *timelineNode {
		return &timelineNode{id: id, pending: pending, next: "executor"}
	}
	paused, end, head := node("3", 2), node("5", 0), node("9", 0)
	at := runAt{cursor: "3", newest: "9", cur: paused, leaf: end, end: end, head: head}
	cases := []struct {
		name    string
		msg     tea.Msg
		say     string // refused, saying this
		started string // or the run the runner was asked for
	}{
		{"r resumes the paused checkpoint under the cursor", runKeyMsg{keyMsg("r"), at}, "", "resume t at 3"},
		{"r with nothing paused on screen or at the head", runKeyMsg{keyMsg("r"), runAt{cursor: "5", newest: "9", cur: end, end: end, head: head}}, "nothing to resume: the newest checkpoint @9 has no pending tasks", ""},
		{"a message on an older branch forks from its end", sendMsg{text: "hi", at: at}, "", "fork t at 5 hi"},
		{"a message at the head is a new turn", sendMsg{text: "hi", at: runAt{cursor: "9", newest: "9", cur: head, leaf: head, end: head, head: head}}, "", "start t hi"},
		{"a message on a branch ending with pending tasks", sendMsg{text: "hi", at: runAt{cursor: "3", newest: "9", cur: paused, leaf: paused, end: paused, head: head}}, "this branch ends at @3 with pending tasks", ""},
		{"x with no run", runKeyMsg{keyMsg("x"), at}, "no run is under way", ""},
		{"D with nothing pending at the head", runKeyMsg{keyMsg("D"), at}, "the newest checkpoint has no pending tasks to discard", ""},
		{"K on in-process runs", runKeyMsg{keyMsg("K"), at}, "kill points need worker processes", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := &startsRunner{}
			// The backend only reads the head a resume starts from (none here).
			sess := &session{ctx: context.Background(), deps: Deps{Runner: r, Backend: EngineBackend(newEngine(t)), Extension: TicketExtension()}, thread: "t", gen: 1}
			live := newLiveStrip(newThreadKeys(), newTimelineKeys(newThreadKeys()), func() bool { return false }, nil)
			c0 := newRunControl(sess, &live, newThreadKeys(), Settings{})
			out, cmd := c0.Update(c.msg)
			if c.say != "" {
				if !strings.Contains(out.say, c.say) || cmd != nil || live.busy() {
					t.Fatalf("should refuse saying %q: said %q, busy %v", c.say, out.say, live.busy())
				}
				return
			}
			if !live.busy() || !out.relive || !out.clear || cmd == nil {
				t.Fatalf("a run starting is busy at once and asks the strip re-rendered, the status cleared: %+v busy %v", out, live.busy())
			}
			started, ok := cmd().(runStartedMsg)
			if !ok || len(r.calls) != 1 || r.calls[0] != c.started {
				t.Fatalf("the runner was asked for %v, want %q", r.calls, c.started)
			}
			if out, _ := c0.Update(started); !out.started || !out.shown || !live.busy() || live.starting {
				t.Fatalf("the run's start is followed on the thread shown, and under way: %+v", out)
			}
			if out, _ := c0.Update(runKeyMsg{keyMsg("f"), at}); out.say != "a run is under way: wait for it, or stop it with x" {
				t.Fatalf("f during a run should be refused, said %q", out.say)
			}
		})
	}
}

// turnTree is 1-2-3-4, turns starting at 1 and 3, the cursor on 4.
func turnTree() *tree {
	ns := []*timelineNode{node(1, 0), node(2, 1), node(3, 2), node(4, 3)}
	ns[0].turnStart, ns[2].turnStart = true, true
	tr := newTree()
	tr.merge(ns)
	tr.jump("4")
	return tr
}

// Navigation says where the cursor goes; the root moves it.
func TestNavigationAlone(t *testing.T) {
	tr := turnTree()
	s := &session{ctx: context.Background(), deps: Deps{Backend: EngineBackend(nil), Extension: TicketExtension()}, thread: "t", gen: 1}
	n := newNavState(s, newThreadKeys())
	n.setTheme(themes.Or(themes.Dark), 1)
	n.SetSize(60, 1)
	key := func(k tea.KeyMsg) navNews {
		news, _ := n.Update(navMsg{Msg: k, tree: tr})
		return news
	}
	typed := func(text string) navNews {
		key(runes(text))
		return key(tea.KeyMsg{Type: tea.KeyEnter})
	}
	if news := key(runes("{")); !news.handled || news.jump != "3" || tr.cursor != "4" {
		t.Fatalf("{ says the turn's start and leaves the tree to the root: %+v, cursor %s", news, tr.cursor)
	}
	tr.jump("1")
	if news := key(runes("{")); news.jump != "" || !strings.Contains(news.say, "no earlier turn") {
		t.Fatalf("{ on the first turn stays and says so: %+v", news)
	}
	if news := key(runes("f")); news.handled {
		t.Fatalf("f is not navigation's: %+v", news)
	}
	if key(runes(":")); !n.prompting() || !strings.Contains(n.View(), ": ") || len(n.ShortHelp()) == 0 || n.ShortHelp()[0].Help().Key != "enter" {
		t.Fatalf(": opens the prompt, its keys in the footer: %v %q", n.prompting(), n.View())
	}
	if news := typed("@9"); n.prompting() || news.jump != "" || !news.sayErr || !strings.Contains(news.say, "no checkpoint @9") {
		t.Fatalf("enter on a checkpoint not there closes the prompt and says so: %+v", news)
	}
	key(runes(":"))
	if news := typed("#3"); !strings.Contains(news.say, "names a message") {
		t.Fatalf("#3 is a message, not a checkpoint: %+v", news)
	}
	key(runes(":"))
	if news := typed("2"); news.jump != "2" || news.say != "" {
		t.Fatalf(": 2 goes to @2: %+v", news)
	}
	if news := key(runes("+")); !news.zoomed || !n.zoomStale(-1) {
		t.Fatalf("+ zooms and asks for a layout: %+v", news)
	}
	hit := searchHit{id: "3", where: "state"}
	if news, _ := n.Update(navMsg{Msg: searchMsg{gen: 0, thread: "t", query: "q", hits: []searchHit{hit}}, tree: tr}); news.dialog != nil || len(n.search.hits) != 0 {
		t.Fatalf("a search of an older opening is dropped: %+v", news)
	}
	news, _ := n.Update(navMsg{Msg: searchMsg{gen: 1, thread: "t", query: "q", hits: []searchHit{hit}}, tree: tr})
	if news.dialog == nil || !strings.Contains(news.say, "1 match(es)") {
		t.Fatalf("a search's hits open in a list: %+v", news)
	}
	if news, _ := n.Update(navMsg{Msg: goHitMsg{i: 0}, tree: tr}); news.jump != "3" || !strings.Contains(news.say, "match 1/1: @3 state") {
		t.Fatalf("enter on a hit goes to its checkpoint: %+v", news)
	}
	if news := key(runes("n")); news.jump != "3" {
		t.Fatalf("n steps to the next hit: %+v", news)
	}
	s.deps.Backend = nil // a read-only source: the root resolves a prefix
	key(runes(":"))
	if news := typed("1f1e"); !news.byPrefix || news.prefix != "1f1e" {
		t.Fatalf("on a read-only source : hands the root a prefix: %+v", news)
	}
}

// The loader drops what another opening asked for and says what the root
// does with the rest.
func TestLoaderAlone(t *testing.T) {
	tr := turnTree()
	s := &session{ctx: context.Background(), thread: "t", gen: 2}
	l := newThreadLoader(s, newCache(TicketExtension()))
	l.open(browse.Chain{Thread: "t"})
	read := func(msg tea.Msg) (loadNews, tea.Cmd) { return l.Update(loadMsg{Msg: msg, tree: tr}) }
	if news, cmd := read(historyMsg{gen: 1, thread: "t", more: true}); news != (loadNews{}) || cmd != nil {
		t.Fatalf("a page of an older opening is dropped: %+v", news)
	}
	if news, cmd := read(historyMsg{gen: 2, thread: "t", more: true, before: "5"}); news.page == nil || cmd == nil {
		t.Fatalf("a page goes to the timeline, the next one is read after: %+v, next %v", news, cmd != nil)
	}
	if news, cmd := read(historyMsg{gen: 2, thread: "t", sync: true, more: true}); news.page == nil || cmd != nil {
		t.Fatalf("a sync's page reads no older one: %+v", news)
	}
	if news, _ := read(historyMsg{gen: 2, thread: "t", err: errors.New("disk gone")}); !news.failed || news.say != "disk gone" || !news.opened {
		t.Fatalf("a history that fails says so, and the first screen is over: %+v", news)
	}
	if news, _ := read(detailMsg{gen: 2, thread: "t", err: errors.New("again")}); news.opened {
		t.Fatalf("what waited for the first screen starts once: %+v", news)
	}
	d := &detail{id: "4"}
	if news, _ := read(detailMsg{gen: 2, thread: "t", id: "3", d: &detail{id: "3"}}); news.show != nil {
		t.Fatalf("a checkpoint the cursor left is not shown: %+v", news)
	}
	if news, _ := read(detailMsg{gen: 2, thread: "t", id: "4", d: d, version: l.cache.version("t") + 1}); !news.reread || news.show != nil {
		t.Fatalf("a checkpoint read before the stored writes changed is read again: %+v", news)
	}
	if news, _ := read(detailMsg{gen: 2, thread: "t", id: "4", d: d, version: l.cache.version("t")}); news.show != d || !news.read {
		t.Fatalf("the checkpoint under the cursor is shown: %+v", news)
	}
}

// Reads of the threads list run at once and may end out of order (a read
// the first screen started, before a run created its thread, ending
// after the read t started): the older answer does not replace the newer
// list, which would show "No threads yet" beside a running thread.
func TestThreadListKeepsTheNewerOfTwoReads(t *testing.T) {
	l := newThreadList()
	l.SetSize(80, 10)
	if a, _ := l.Update(threadsMsg{threads: []browse.Thread{{ID: "x", Checkpoints: 4}}, read: 2}); a != listLoaded {
		t.Fatalf("the newer read should load the list, returns %v", a)
	}
	if a, _ := l.Update(threadsMsg{read: 1}); a == listLoaded {
		t.Errorf("an older read that ended later loaded the list again")
	}
	if !l.find("x") {
		t.Fatalf("an older read's empty answer replaced the newer list: %+v", l.threads)
	}
}
