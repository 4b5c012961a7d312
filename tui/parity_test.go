package tui

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"rewind/engine"
	"rewind/engine/ticket"
	"rewind/tui/termtext"
)

// p asks, then replays the due tasks of the cursor's checkpoint on a new
// branch that the cursor follows; the timeline marks the replay row.
func TestReplayKeyAsksThenRunsANewBranch(t *testing.T) {
	e := newEngine(t)
	seed(t, e, "t")
	h := newHarness(t, e, Settings{Thread: "t"}, 120, 40)
	h.until("the thread", h.loaded)
	h.key("home", "right")
	h.until("@2", func() bool { return h.at(2) })
	h.key("p")
	d, ok := h.m.dialog.(*confirmDialog)
	if !ok || !strings.Contains(d.title, "Replay from @2") || !strings.Contains(d.question, "executor ×3") {
		t.Fatalf("p should ask first, dialog %#v", h.m.dialog)
	}
	if h.m.busy() {
		t.Fatal("p ran before the answer")
	}
	h.key("y")
	h.until("the replay's end", func() bool { return h.loaded() && strings.Contains(h.m.status.text, "done at") })
	cur := h.m.timeline.tree.nodes[h.m.timeline.tree.cursor]
	if num(h.m.timeline.tree.cursor) <= 16 || !h.m.timeline.tree.isAncestor("17", cur.id) {
		t.Fatalf("the cursor should follow the new branch from @17, it is at @%s", h.m.timeline.tree.cursor)
	}
	first, err := e.Get(context.Background(), "t", 17)
	if err != nil || !first.Metadata.Replay || first.ParentID != 2 {
		t.Fatalf("@17 should be the replay of @2: %+v %v", first.Metadata, err)
	}
	if !h.contains("@17  replay of @2") {
		t.Fatalf("the timeline should mark the replay row:\n%s", h.screen())
	}
}

// A checkpoint with nothing due says why, and asks nothing.
func TestReplayWithNothingDueSaysWhy(t *testing.T) {
	e := newEngine(t)
	seed(t, e, "t")
	h := newHarness(t, e, Settings{Thread: "t"}, 120, 40)
	h.until("the thread", h.loaded)
	h.key("p")
	if h.m.dialog != nil || !strings.Contains(h.m.status.text, "nothing to replay at @16") || !h.m.status.isErr {
		t.Fatalf("p at a turn's end should say why: dialog %v, flash %q", h.m.dialog, h.m.status.text)
	}
}

// pickChannel opens e and chooses channel, up to the edit's file.
func pickChannel(t *testing.T, h *harness, channel string) *stateEdit {
	t.Helper()
	h.key("e")
	d, ok := h.m.dialog.(*channelDialog)
	if !ok {
		t.Fatalf("e should list the channels, dialog %#v flash %q", h.m.dialog, h.m.status.text)
	}
	for d.rows[d.sel].raw != channel {
		if d.sel == len(d.rows)-1 {
			t.Fatalf("no channel %s in the list", channel)
		}
		h.key("j")
	}
	h.key("enter")
	h.until("the file to edit", func() bool { return h.m.par.edit != nil })
	return h.m.par.edit
}

// editUser rewrites the newest user message of a messages file, as the
// EDITOR script of the end-to-end test does.
func editUser(t *testing.T, path, text string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "\n  {\n    \"content\"") {
		t.Fatalf("the value should be indented for the editor:\n%s", data)
	}
	var msgs []map[string]any
	if err := json.Unmarshal(data, &msgs); err != nil {
		t.Fatal(err)
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i]["role"] == "user" {
			msgs[i]["content"] = text
			break
		}
	}
	out, _ := json.MarshalIndent(msgs, "", "  ")
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
}

// e edits a channel at the cursor as an update checkpoint the cursor
// moves to; r resumes it, and the edited message is what the planner
// plans from.
func TestEditStateStoresAnUpdateThatResumes(t *testing.T) {
	e := newEngine(t)
	seed(t, e, "t")
	h := newHarness(t, e, Settings{Thread: "t"}, 120, 40)
	h.until("the thread", h.loaded)
	h.key("home")
	h.until("@1", func() bool { return h.at(1) })
	ed := pickChannel(t, h, "messages")
	editUser(t, ed.path, forkInput)
	h.dispatch(editedMsg{ed: ed})
	h.until("the update", func() bool { return h.at(17) })
	if !strings.Contains(h.m.status.text, "stored as update @17") || !strings.Contains(h.m.status.text, "r resumes it") {
		t.Fatalf("the status line should say how to run it: %q", h.m.status.text)
	}
	// The file is removed by a Cmd of its own, which may run after the
	// reload that shows @17 (this raced in CI).
	h.until("the edit's file removed", func() bool { _, err := os.Stat(ed.path); return os.IsNotExist(err) })
	up, _ := e.Get(context.Background(), "t", 17)
	if up.Source != engine.SourceUpdate || up.ParentID != 1 || len(up.Tasks) != 1 {
		t.Fatalf("@17 should be an update of @1 keeping its task: %s parent %d tasks %d", up.Source, up.ParentID, len(up.Tasks))
	}
	h.key("r")
	h.until("the resume's end", func() bool { return h.loaded() && strings.Contains(h.m.status.text, "done at") })
	latest, _ := e.Get(context.Background(), "t", num(h.m.timeline.tree.maxID))
	s, _ := ticket.Decode(latest.Values)
	topics := ""
	for _, st := range s.Subtasks {
		topics += st.Topic + " "
	}
	if !h.m.timeline.tree.isAncestor("17", idOf(latest.ID)) || topics != "invoice " {
		t.Fatalf("the branch from @17 should plan the edited question (invoice), planned %q at @%d", topics, latest.ID)
	}
}

// A value the channel cannot take stores nothing, says why, and offers to
// edit again; n drops the edit and its file.
func TestEditStateRefusedStoresNothing(t *testing.T) {
	e := newEngine(t)
	seed(t, e, "t")
	h := newHarness(t, e, Settings{Thread: "t"}, 120, 40)
	h.until("the thread", h.loaded)
	ed := pickChannel(t, h, "messages")
	if err := os.WriteFile(ed.path, []byte("[{\"role\": \"user\", \"content\": "), 0o600); err != nil {
		t.Fatal(err)
	}
	h.dispatch(editedMsg{ed: ed})
	h.until("the refusal", func() bool { return h.m.dialog != nil })
	d, ok := h.m.dialog.(*confirmDialog)
	if !ok || !strings.Contains(d.question, "cannot be stored") || !strings.Contains(d.question, "Edit it again?") || !h.m.status.isErr {
		t.Fatalf("a refused value should say why and offer to edit again: %#v flash %q", h.m.dialog, h.m.status.text)
	}
	if cps, _ := e.History(context.Background(), "t", 0, 0); len(cps) != 16 {
		t.Fatalf("a refused edit stored something: %d checkpoints", len(cps))
	}
	if _, err := os.Stat(ed.path); err != nil {
		t.Fatalf("the file to fix should still be there: %v", err)
	}
	h.key("n")
	h.until("the file removed", func() bool { _, err := os.Stat(ed.path); return os.IsNotExist(err) })
	if h.m.par.edit != nil || !strings.Contains(h.m.status.text, "dropped") {
		t.Fatalf("n should drop the edit: %q", h.m.status.text)
	}
}

// Issue 32, item 3: a value saved in the editor holds at most 64 KB, as
// the CLI's --value-file: a longer one is refused whole (nothing stored,
// no more than the limit read) and can be edited again.
func TestEditStateValueIsBounded(t *testing.T) {
	e := newEngine(t)
	seed(t, e, "t")
	h := newHarness(t, e, Settings{Thread: "t"}, 120, 40)
	h.until("the thread", h.loaded)
	ed := pickChannel(t, h, "messages")
	big := `[{"role": "user", "content": "` + strings.Repeat("x", termtext.MaxInput) + `"}]`
	if err := os.WriteFile(ed.path, []byte(big), 0o600); err != nil {
		t.Fatal(err)
	}
	h.dispatch(editedMsg{ed: ed})
	h.until("the refusal", func() bool { return h.m.dialog != nil })
	d, ok := h.m.dialog.(*confirmDialog)
	if !ok || !strings.Contains(d.question, "longer than the 64 KB one value may hold") || !strings.Contains(d.question, "Edit it again?") {
		t.Fatalf("a value over 64 KB should be refused and offered again: %#v flash %q", h.m.dialog, h.m.status.text)
	}
	if cps, _ := e.History(context.Background(), "t", 0, 0); len(cps) != 16 {
		t.Fatalf("a refused edit stored something: %d checkpoints", len(cps))
	}
	// Quitting here leaves no file behind in the temp folder.
	h.m.Shutdown(time.Second)
	if _, err := os.Stat(ed.path); !os.IsNotExist(err) {
		t.Fatalf("quitting with the refused edit open left %s behind: %v", ed.path, err)
	}
}

// m marks, = compares the cursor with the mark across branches and says
// how they stand; esc closes.
func TestCompareAcrossBranches(t *testing.T) {
	e := newEngine(t)
	seed(t, e, "t")
	h := newHarness(t, e, Settings{Thread: "t"}, 120, 40)
	h.until("the thread", h.loaded)
	h.key("=")
	if h.m.dialog != nil || !strings.Contains(h.m.status.text, "mark a checkpoint first") {
		t.Fatalf("= with no mark should say what to do: %q", h.m.status.text)
	}
	h.key("m")
	if num(h.m.par.mark) != 16 {
		t.Fatalf("m should mark @16, marked @%s", h.m.par.mark)
	}
	h.key("[")
	h.until("the other branch", func() bool { return h.at(8) })
	h.key("=")
	h.until("the diff", func() bool { d, ok := h.m.dialog.(*compareDialog); return ok && !d.loading })
	s := h.screen()
	for _, want := range []string{"Compare @16 (mark) → @8 (cursor)", "different branches, parting after @2", "@@ messages:"} {
		if !strings.Contains(s, want) {
			t.Fatalf("the compare lacks %q:\n%s", want, s)
		}
	}
	d := h.m.dialog.(*compareDialog)
	h.key("j", "j")
	if d.off != 2 {
		t.Fatalf("j should scroll the diff, off %d", d.off)
	}
	h.key("esc")
	if h.m.dialog != nil {
		t.Fatal("esc should close the compare")
	}
	// An ancestor is named as one.
	h.key("home")
	h.until("@1", func() bool { return h.at(1) })
	h.key("=")
	h.until("the diff", func() bool { d, ok := h.m.dialog.(*compareDialog); return ok && !d.loading })
	if !h.contains("@1 is an ancestor of @16") {
		t.Fatalf("the compare should say @1 is an ancestor:\n%s", h.screen())
	}
}

// v lights the node that wrote the cursor's checkpoint and marks the due
// ones; the drawing fits 60 columns.
func TestGraphViewLightsWriterAndDue(t *testing.T) {
	e := newEngine(t)
	seed(t, e, "t")
	h := newHarness(t, e, Settings{Thread: "t"}, 60, 20)
	h.until("the thread", h.loaded)
	h.key("home", "right")
	h.until("@2", func() bool { return h.at(2) })
	h.key("v")
	s := h.screen()
	for _, want := range []string{"Graph · @2", "● planner", "wrote @2", "◌ executor ×3", "due ×3", "· critic ⟲ executor", "· verify"} {
		if !strings.Contains(s, want) {
			t.Fatalf("the graph lacks %q:\n%s", want, s)
		}
	}
	assertFits(t, h.m.View(), [2]int{60, 20}, "v")
	// h scrubs under the drawing, which follows: at @1 the planner is due.
	h.key("h")
	h.until("@1 drawn", func() bool { return h.at(1) && h.contains("Graph · @1 (input)") })
	if s := h.screen(); !strings.Contains(s, "◌ planner") || strings.Contains(s, "wrote @") {
		t.Fatalf("at @1 the planner is due and no node wrote it:\n%s", s)
	}
	h.key("esc")
	h.key("G")
	h.until("@16", func() bool { return h.at(16) })
	h.key("v")
	if !h.contains("● reply") || h.contains("◌") && strings.Count(h.screen(), "◌") > 1 {
		t.Fatalf("at @16 reply wrote it and nothing is due:\n%s", h.screen())
	}
}

// The threads list shows each thread's run status and its last input,
// sanitized.
func TestThreadsListShowsStateAndLastInput(t *testing.T) {
	e := newEngine(t)
	seed(t, e, "t")
	ctx := context.Background()
	if _, err := e.Run(ctx, "p1", ticket.Input("Where is the parcel \x1b]0;owned\x07 for SO20260901?"), engine.RunConfig{InterruptBefore: []string{ticket.NodeExecutor}}); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, e, Settings{}, 120, 40)
	h.until("the states", func() bool { return h.m.threads.loaded && h.m.threads.inFlight == 0 && h.contains("paused") })
	s := h.screen()
	for _, want := range []string{"paused", "“Where is the parcel", "done", "“Please send me the invoice f"} {
		if !strings.Contains(s, want) {
			t.Fatalf("the threads list lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(h.m.View(), "owned\x07") || strings.Contains(h.m.View(), "\x1b]0") {
		t.Fatal("the last input reached the terminal unsanitized")
	}
}

// e in the approval dialog edits the draft; y approves it as edited, and
// the operation records the edited text.
func TestApproveAnEditedDraft(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir()) // e writes the draft's file; no editor runs here to remove it
	e, _ := newDraftEngine(t, ticket.NewMock())
	turn := ticket.Turn{Text: firstInput, Draft: true, Authorization: &ticket.Authorization{Ref: "grant:x", ExpiresAt: "2099-01-01T00:00:00Z"}}
	if _, err := e.Run(context.Background(), "g", turn.Writes(), engine.RunConfig{}); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, e, Settings{Thread: "g"}, 120, 40)
	h.until("the gate", func() bool { return h.loaded() && h.m.live.head != nil && h.m.live.head.gate != nil })
	h.key("a")
	a, ok := h.m.dialog.(*approvalDialog)
	if !ok {
		t.Fatalf("a should open the approval, flash %q", h.m.status.text)
	}
	h.key("e")
	if h.m.dialog != a {
		t.Fatal("e should keep the approval open while the draft is edited")
	}
	// What the editor would have saved comes back as the dialog reads it.
	const edited = "Dear customer, your parcel is on its way (edited by a person)."
	h.dispatch(draftReadMsg{dlg: a, text: edited})
	if !h.contains("EDITED") || !h.contains("edited by a person") {
		t.Fatalf("the dialog should show the edited draft:\n%s", h.screen())
	}
	h.key("y")
	h.until("the approval's end", func() bool { return h.loaded() && strings.Contains(h.m.status.text, "approved, done") })
	latest, _ := e.Get(context.Background(), "g", num(h.m.timeline.tree.maxID))
	s, _ := ticket.Decode(latest.Values)
	found := false
	for _, op := range s.Operations {
		found = found || op.Payload == edited
	}
	if !found {
		t.Fatalf("the operation should record the edited draft: %+v", s.Operations)
	}
}

// Keys typed fast arrive as one message ("jjj"): the channel list and the
// compare take each as its own key.
func TestParityBoxesSplitFastKeys(t *testing.T) {
	e := newEngine(t)
	seed(t, e, "t")
	h := newHarness(t, e, Settings{Thread: "t"}, 120, 40)
	h.until("the thread", h.loaded)
	h.key("e")
	d, ok := h.m.dialog.(*channelDialog)
	if !ok {
		t.Fatalf("e should list the channels: %q", h.m.status.text)
	}
	h.typeText("jjj")
	if d.sel != 3 {
		t.Fatalf("jjj should move three rows, moved %d", d.sel)
	}
	h.typeText("kq")
	if h.m.dialog != nil || d.sel != 2 {
		t.Fatalf("kq should move up and close: sel %d, dialog %v", d.sel, h.m.dialog)
	}
}

// An edited checkpoint that is no longer the newest (another edit came
// after it) still resumes where it is: r on it runs its tasks there.
func TestResumeAnOlderEditedBranchHead(t *testing.T) {
	e := newEngine(t)
	seed(t, e, "t")
	h := newHarness(t, e, Settings{Thread: "t"}, 120, 40)
	h.until("the thread", h.loaded)
	h.key("home")
	h.until("@1", func() bool { return h.at(1) })
	ed := pickChannel(t, h, "messages")
	editUser(t, ed.path, forkInput)
	h.dispatch(editedMsg{ed: ed})
	h.until("@17", func() bool { return h.at(17) })
	h.key("home")
	h.until("@1", func() bool { return h.at(1) })
	ed = pickChannel(t, h, "messages")
	editUser(t, ed.path, firstInput+" Thanks.")
	h.dispatch(editedMsg{ed: ed})
	h.until("@18", func() bool { return h.at(18) })
	// Back to @17, the other edit: a paused branch head, not the newest.
	h.key("[")
	h.until("@17", func() bool { return h.at(17) })
	h.key("r")
	h.until("the resume's end", func() bool { return h.loaded() && strings.Contains(h.m.status.text, "done at") })
	up, err := e.Get(context.Background(), "t", 19)
	if err != nil || up.ParentID != 17 {
		t.Fatalf("r on @17 should carry on from @17, @19 has parent @%d (%v)", up.ParentID, err)
	}
}

// The parity boxes fit the screen at every size, down to 60×12.
func TestParityBoxesFitAtEverySize(t *testing.T) {
	e := newEngine(t)
	seed(t, e, "t")
	h := newHarness(t, e, Settings{Thread: "t"}, 120, 40)
	h.until("the thread", h.loaded)
	h.key("m", "[", "home", "right")
	h.until("@2", func() bool { return h.at(2) })
	for _, size := range [][2]int{{80, 24}, {100, 30}, {120, 40}, {160, 48}, {60, 20}, {60, 12}, {61, 13}, {240, 70}} {
		h.dispatch(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		for _, k := range []string{"=", "v", "e", "p"} {
			h.key(k)
			h.until("the box", func() bool { d, ok := h.m.dialog.(*compareDialog); return h.m.dialog != nil && (!ok || !d.loading) })
			assertFits(t, h.m.View(), size, k)
			if box := h.m.dialog.View(h.m.theme, h.m.help); strings.Count(box, "\n")+1 > size[1]-2 {
				t.Fatalf("at %dx%d the box of %s is %d lines, more than the %d it has:\n%s", size[0], size[1], k, strings.Count(box, "\n")+1, size[1]-2, box)
			}
			h.key("G")
			assertFits(t, h.m.View(), size, []string{k, "G"})
			h.key("esc")
			if h.m.dialog != nil {
				t.Fatalf("esc should close the box of %s", k)
			}
		}
	}
	h.key("t")
	h.until("the states", func() bool { return h.m.threads.inFlight == 0 && h.contains("done") })
	for _, size := range [][2]int{{80, 24}, {60, 12}, {240, 70}} {
		h.dispatch(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		assertFits(t, h.m.View(), size, "t")
	}
}

// Two listings' state reads answered out of order: the newer answer stays,
// and the list settles (it once waited for ever, never reading again).
func TestThreadStatesAnsweredOutOfOrderSettle(t *testing.T) {
	e := newEngine(t)
	seed(t, e, "t")
	h := newHarness(t, e, Settings{}, 120, 40)
	h.until("the states", func() bool {
		return h.m.threads.loaded && h.m.threads.inFlight == 0 && !threadStatesMissing(h.m)
	})
	m := h.m
	ts := m.threads.threads
	read := m.sess.threadReads // two answers to the newest read
	_, first := m.Update(threadsMsg{threads: ts, read: read})
	_, second := m.Update(threadsMsg{threads: ts, read: read})
	if first == nil || second == nil {
		t.Fatal("each listing should read its rows' states")
	}
	newer, older := second(), first()
	m.Update(newer)
	m.Update(older)
	if threadStatesMissing(m) || m.threads.inFlight != 0 {
		t.Fatalf("the older answer undid the newer one: missing=%v in flight=%d", threadStatesMissing(m), m.threads.inFlight)
	}
	if !strings.Contains(m.View(), "done") {
		t.Fatalf("the rows lost their state:\n%s", m.View())
	}
}

// parKey routes key k to the parity features as the thread view does,
// returning the Cmd it starts.
func parKey(m *Model, k string) tea.Cmd {
	out, cmd := m.par.Update(parKeyMsg{keyMsg(k), m.timeline.tree.cursor, m.cur, m.busy()})
	if !out.handled {
		panic("parKey: " + k + " is not a parity key")
	}
	return m.applyPar(out, cmd)
}

// parityLoading: a parity box is still reading what it shows, or the
// threads list its rows' states.
func parityLoading(m *Model) bool {
	d, ok := m.dialog.(*compareDialog)
	saw, reading := m.dialog.(*sawDialog)
	return ok && d.loading || reading && saw.loading || m.threads.inFlight > 0 || threadStatesMissing(m)
}

// threadStatesMissing says a visible row of the threads list has no state
// read for the current listing yet.
func threadStatesMissing(m *Model) bool {
	return m.screen == screenThreads && m.threads.statesMissing()
}
