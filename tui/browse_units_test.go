package tui

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"rewind/store/browse"
	"rewind/store/langgraph/lgtest"
	"rewind/themes"
)

// openBrowser opens the browser on src at thread, every read done.
func openBrowser(t *testing.T, src browse.Source, thread string, w, h int) (*Browser, func(...string)) {
	t.Helper()
	m := NewBrowser(context.Background(), src, "test", thread, themes.Or(themes.Dark))
	run := runBrowser(m)
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	run(m.Init())
	if !m.Settled() {
		t.Fatalf("the browser did not settle on thread %s: %s", thread, ansi.Strip(m.View()))
	}
	return m, func(keys ...string) {
		for _, k := range keys {
			_, cmd := m.Update(keyMsg(k))
			run(cmd)
		}
	}
}

func screenOf(m *Browser) string { return ansi.Strip(m.View()) }

// The timeline is a tree: t-main's fork points (89fd: the update_state
// branch; 8a03: the replay) have two children; the later child starts a
// branch one column in; ids are their shortest unique prefix; : goes to
// one by prefix, and says when a prefix is ambiguous or unknown.
func TestBrowseTimelineTree(t *testing.T) {
	src, _ := openFixture(t, "sqlite-python.db")
	m, press := openBrowser(t, src, "t-main", 120, 40)
	tl := m.timeline
	var forks, branches []string
	for _, r := range tl.rows {
		if r.children > 1 {
			forks = append(forks, r.l.ID[:13])
		}
		if r.branch {
			branches = append(branches, r.l.ID[:13]+"/"+r.l.Source)
		}
	}
	if fmt.Sprint(forks) != "[1f1ed296-89fd 1f1ed296-8a03]" || fmt.Sprint(branches) != "[1f1ed296-8a4a/update 1f1ed296-8a09/loop]" {
		t.Errorf("fork points %v, branches %v", forks, branches)
	}
	if tl.short != 13 || tl.Short(tl.head) != "1f1ed296-8a69" {
		t.Errorf("unique prefix length %d, head shown as %q", tl.short, tl.Short(tl.head))
	}
	screen := screenOf(m)
	for _, want := range []string{"⑂ 1f1ed296-89fd", "└✎ 1f1ed296-8a4a  2 update", "└● 1f1ed296-8a09  4 → review ⤷review", "▸ ● 1f1ed296-8a69", "@1f1ed296-8a69-6983-8004-28d55692a089"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the screen lacks %q:\n%s", want, screen)
		}
	}
	press(":", "1", "f", "1", "e", "d", "2", "9", "6", "-", "8", "a", "4", "a", "enter")
	if l, _ := tl.Current(); l.Source != browse.SourceUpdate {
		t.Errorf("goto 1f1ed296-8a4a: at %s (%s)", l.ID, l.Source)
	}
	press(":", "1", "f", "enter")
	if !strings.Contains(screenOf(m), "12 checkpoints start with 1f: type more of the id") {
		t.Errorf("an ambiguous prefix is not named:\n%s", screenOf(m))
	}
	press(":", "z", "enter")
	if !strings.Contains(screenOf(m), "no checkpoint of this chain starts with z") {
		t.Errorf("an unknown prefix is not named:\n%s", screenOf(m))
	}
}

func TestUniquePrefix(t *testing.T) {
	ls := func(ids ...string) []browse.Listing {
		out := make([]browse.Listing, len(ids))
		for i, id := range ids {
			out[i].ID = id
		}
		return out
	}
	for _, c := range []struct {
		ids  []string
		want int
	}{{nil, 1}, {[]string{"abc"}, 1}, {[]string{"1", "12", "2"}, 2}, {[]string{"abcd", "abce", "b"}, 4}} {
		if got := uniquePrefix(ls(c.ids...)); got != c.want {
			t.Errorf("uniquePrefix(%v) = %d, want %d", c.ids, got, c.want)
		}
	}
}

// The conversation: the AI message's tool call drawn joined to the tool
// message that answers it, the tool message pointing back; a chain whose
// checkpoint has no messages channel says so.
func TestBrowseConversation(t *testing.T) {
	src, _ := openFixture(t, "sqlite-python.db")
	m, press := openBrowser(t, src, "t-main", 120, 40)
	screen := screenOf(m)
	for _, want := range []string{"#2 ai · 1 tool call(s)", "┌ search call_1", "└→ #3 tool: 3 hits for tables", "#3 tool (search) ← call_1 of #2"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the conversation lacks %q:\n%s", want, screen)
		}
	}
	press("g") // the input checkpoint: no messages yet
	if s := screenOf(m); !strings.Contains(s, "no messages channel at this checkpoint") {
		t.Errorf("a checkpoint without messages does not say so:\n%s", s)
	}
}

// The state: every channel of the graph's as a tree, internal ones
// hidden but for the queued Sends; a node opens and closes; an opaque
// value shows its type and size.
func TestBrowseStateTree(t *testing.T) {
	src, _ := openFixture(t, "sqlite-python.db")
	m, press := openBrowser(t, src, "t-main", 120, 40)
	press(gotoID("8a03")...)
	press("2")
	s := screenOf(m)
	for _, want := range []string{"▾ messages = [4]", "▸ [1] = AIMessage {9}", "note = Note {2}", "queued Sends (__pregel_tasks) = 3", "internal channel(s) hidden"} {
		if !strings.Contains(s, want) {
			t.Errorf("the state lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "branch:to:") {
		t.Errorf("an internal channel shows:\n%s", s)
	}
	press("j", "enter") // messages closes
	if s := screenOf(m); !strings.Contains(s, "▸ messages = [4]") || strings.Contains(s, "[1] = AIMessage") {
		t.Errorf("enter does not close the node:\n%s", s)
	}
	st := newBrowseState(themes.Or(themes.Dark))
	st.SetSize(60, 10)
	st.SetCheckpoint(&browse.Checkpoint{Channels: []browse.Channel{{Name: "blob", Value: map[string]any{"$opaque": "pickle", "$size": int64(1234)}}}})
	if v := ansi.Strip(st.View()); !strings.Contains(v, "blob = ‹opaque pickle, 1234 bytes›") {
		t.Errorf("an opaque value: %q", v)
	}
	// Values exact: an integer past int64, JavaScript's undefined, a
	// user's dict shaped like a marker (its "$" keys read "$$") and an
	// object's field named like one show as what they are.
	st.SetSize(80, 20)
	st.SetCheckpoint(&browse.Checkpoint{Channels: []browse.Channel{
		{Name: "big", Value: json.Number("1180591620717411303425")},
		{Name: "gone", Value: map[string]any{"$type": "undefined"}},
		{Name: "mine", Value: map[string]any{"$$type": "uuid.UUID", "$$value": "x"}},
		{Name: "note", Value: map[string]any{"$type": "app.Note", "$$type": "kept", "title": "t"}},
	}})
	v := ansi.Strip(st.View())
	if strings.Contains(v, "undefined {") {
		t.Errorf("undefined shows as an object:\n%s", v)
	}
	for _, want := range []string{"big = 1180591620717411303425", "gone = undefined", "mine = {2}", "note = Note {2}"} {
		if !strings.Contains(v, want) {
			t.Errorf("the state lacks %q:\n%s", want, v)
		}
	}
	st.SetCheckpoint(&browse.Checkpoint{Channels: []browse.Channel{{Name: "mine", Value: map[string]any{"$$type": "uuid.UUID"}}}})
	if v := ansi.Strip(st.View()); !strings.Contains(v, `$$type = "uuid.UUID"`) {
		t.Errorf("a user's $type key: %s", v)
	}
}

// The state at t-fail's newest checkpoint is LangGraph's get_state: the
// finished workers' findings applied; the queue (__pregel_tasks) and the
// stored value show beside it.
func TestBrowseStateAppliesFinishedTasks(t *testing.T) {
	src, _ := openFixture(t, "sqlite-python.db")
	m, press := openBrowser(t, src, "t-fail", 120, 40)
	press(gotoID("8a78")...)
	press("2")
	s := screenOf(m)
	for _, want := range []string{"findings = [2]", "queued Sends (__pregel_tasks) = 3", "as stored (pending writes applied above) = 1", "findings = no value"} {
		if !strings.Contains(s, want) {
			t.Errorf("the state lacks %q:\n%s", want, s)
		}
	}
}

// The writes: the failed fan-out's, by task, the error write named and
// its text shown; the interrupt of the subgraph's task on t-main.
func TestBrowseWrites(t *testing.T) {
	src, _ := openFixture(t, "sqlite-python.db")
	m, press := openBrowser(t, src, "t-fail", 120, 40)
	press("3")
	s := screenOf(m)
	for _, want := range []string{"✗ worker task", "[error] __error__", "error: RuntimeError('worker 1 exploded')", "✓ worker task", "findings = [\"boom#part2\"]"} {
		if !strings.Contains(s, want) {
			t.Errorf("the writes lack %q:\n%s", want, s)
		}
	}
	m2, press2 := openBrowser(t, src, "t-main", 120, 40)
	press2(gotoID("8a09")...)
	press2("3")
	if s := screenOf(m2); !strings.Contains(s, "[interrupt] __interrupt__") || !strings.Contains(s, "⏸") {
		t.Errorf("the interrupt is not named:\n%s", s)
	}
}

// The diff: mark the head of one branch, compare with a checkpoint of
// the other; then descend into the subgraph's run and come back.
func TestBrowseDiffAndSubgraph(t *testing.T) {
	src, _ := openFixture(t, "sqlite-python.db")
	m, press := openBrowser(t, src, "t-main", 120, 40)
	press("=")
	if !strings.Contains(screenOf(m), "nothing marked in this chain") {
		t.Errorf("= without a mark:\n%s", screenOf(m))
	}
	press("m", "g", "j", "j", "j", "j", "=")
	s := screenOf(m)
	for _, want := range []string{"@1f1ed296-8a69 → @1f1ed296-8a4f", "different branches, parting after @1f1ed296-89fd", "@@ "} {
		if !strings.Contains(s, want) {
			t.Errorf("the diff lacks %q:\n%s", want, s)
		}
	}
	press(gotoID("8a09")...)
	press("enter")
	if m.chain.NS == "" || !strings.Contains(screenOf(m), "subgraph review:") {
		t.Fatalf("enter on ⤷review does not open the run:\n%s", screenOf(m))
	}
	press("esc")
	if m.chain.NS != "" || !strings.HasPrefix(m.timeline.CurrentID(), "1f1ed296-8a09") {
		t.Errorf("esc does not come back to the parent's checkpoint: %v at %s", m.chain, m.timeline.CurrentID())
	}
}

// Follow: another connection appends checkpoints to a copy of the
// fixture as SqliteSaver does; the polls show them. The cursor stays
// where it was when it was not at the head, and follows the head when it
// was.
func TestBrowseFollowsNewCheckpoints(t *testing.T) {
	src, path := openFixture(t, "sqlite-python.db")
	m, press := openBrowser(t, src, "t-fail", 120, 40)
	w := lgtest.OpenWriter(t, path)
	head := m.timeline.CurrentID()
	poll := func() {
		m.follow.on = true
		cmd := m.follow.Poll(m.ctx, m.src, browseFollowTick{m.follow.gen}, m.chain)
		if cmd == nil {
			t.Fatal("no poll")
		}
		_, next := m.Update(cmd())
		m.follow.on = false
		runBrowser(m)(next)
	}
	done := make(chan struct{})
	go func() { // another writer, as a running LangGraph app
		defer close(done)
		parent := head
		for i := 1; i <= 3; i++ {
			id := fmt.Sprintf("1f1ed297-0000-6000-8000-%012d", i)
			w.Checkpoint("t-fail", "", id, parent, "loop", 3+i, map[string]any{
				"messages": []any{map[string]any{"type": "human", "content": fmt.Sprintf("new %d", i)}}}, "agent")
			parent = id
		}
	}()
	<-done
	poll()
	if n := len(m.timeline.rows); n != 8 || !strings.HasPrefix(m.timeline.CurrentID(), "1f1ed297-0000-6000-8000-000000000003") {
		t.Fatalf("after 3 new checkpoints: %d rows, cursor %s; want 8, on the new head", n, m.timeline.CurrentID())
	}
	if s := screenOf(m); !strings.Contains(s, "#1 human") || !strings.Contains(s, "new 3") {
		t.Errorf("the new head is not shown:\n%s", s)
	}
	press("k", "k")
	at := m.timeline.CurrentID()
	w.Checkpoint("t-fail", "", "1f1ed297-0000-6000-8000-000000000004", "1f1ed297-0000-6000-8000-000000000003", "loop", 7, nil, "")
	poll()
	if len(m.timeline.rows) != 9 || m.timeline.CurrentID() != at {
		t.Errorf("a new checkpoint moved the cursor off the middle: %d rows, at %s, want %s", len(m.timeline.rows), m.timeline.CurrentID(), at)
	}
	_ = time.Second
}

// One interface, two sources: the same browser on rewind's own engine
// (engine.Browse over a store holding a thread with a fork) shows the
// fork in its timeline and the checkpoint's channels in its state.
func TestBrowseRewindEngine(t *testing.T) {
	e := newEngine(t)
	seed(t, e, "t1")
	src := e.Browse(browse.About{Backend: "memory", Where: "memory:"})
	m, press := openBrowser(t, src, "t1", 120, 40)
	var fork *timelineRow
	for i, r := range m.timeline.rows {
		if r.children > 1 {
			fork = &m.timeline.rows[i]
		}
	}
	if fork == nil || fork.l.ID != "2" || len(m.timeline.rows) != 16 {
		t.Fatalf("want 16 checkpoints with a fork at 2, got %d rows, fork %+v", len(m.timeline.rows), fork)
	}
	s := screenOf(m)
	if !strings.Contains(s, "⑂ 2 ") || !strings.Contains(s, "└") || !strings.Contains(s, "rewind store") {
		t.Errorf("the timeline does not show the fork:\n%s", s)
	}
	press("2")
	cp, _ := m.cps.get(cacheKey(m.chain, m.timeline.CurrentID()))
	if cp == nil || len(cp.Channels) == 0 {
		t.Fatalf("no checkpoint read: %+v", cp)
	}
	s = screenOf(m)
	for _, ch := range cp.Channels {
		if !ch.Internal && !strings.Contains(s, ch.Name+" = ") {
			t.Errorf("the state lacks channel %s:\n%s", ch.Name, s)
		}
	}
}

// gotoID is the keys of ": 1f1ed296-<suffix> enter".
func gotoID(suffix string) []string {
	keys := []string{":"}
	for _, r := range "1f1ed296-" + suffix {
		keys = append(keys, string(r))
	}
	return append(keys, "enter")
}

// README's browser key table names every key the browser binds.
func TestREADMEListsBrowserKeys(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	i := strings.Index(readme, "<!-- browser keys:")
	if i < 0 {
		t.Fatal("README has no browser key table")
	}
	table := readme[i:]
	table = table[:strings.Index(table, "\n\n")]
	m := NewBrowser(context.Background(), nil, "", "", themes.Or(themes.Dark))
	var all []key.Binding
	for _, g := range (browserHelp{m}).FullHelp() {
		all = append(all, g...)
	}
	all = append(all, m.prompt.KeyMap().Go)
	for _, k := range all {
		if label := k.Help().Key; !strings.Contains(table, "`"+label+"`") {
			t.Errorf("README's browser key table lacks `%s` (%s)", label, k.Help().Desc)
		}
	}
}

// The threads list says where each thread stands, and follows it: a
// checkpoint another process writes with nothing due makes t-main idle,
// one with a task due after it makes it wait again (an idle thread's
// status is kept between polls only while its newest checkpoint is the
// same).
func TestBrowseThreadsShowStatus(t *testing.T) {
	src, path := openFixture(t, "sqlite-python.db")
	m, _ := openBrowser(t, src, "", 120, 40)
	row := func(thread string) string {
		for _, line := range strings.Split(screenOf(m), "\n") {
			if f := strings.Fields(strings.TrimPrefix(line, "▸")); len(f) > 0 && f[0] == thread {
				return strings.Join(f, " ")
			}
		}
		t.Fatalf("no row of %s:\n%s", thread, screenOf(m))
		return ""
	}
	if r := row("t-main"); !strings.HasPrefix(r, "t-main interrupted before review 12 checkpoints") {
		t.Errorf("t-main's row %q", r)
	}
	if r := row("t-fail"); !strings.HasPrefix(r, "t-fail error at worker 5 checkpoints") || !strings.HasSuffix(r, "RuntimeError('worker 1 exploded')") {
		t.Errorf("t-fail's row %q", r)
	}
	w := lgtest.OpenWriter(t, path)
	latest := ""
	for _, th := range m.threads.ts {
		if th.ID == "t-main" {
			latest = th.Latest
		}
	}
	w.Checkpoint("t-main", "", "1f1ed297-0000-6000-8000-000000000001", latest, "loop", 5, nil, "")
	runBrowser(m)(m.readThreads())
	if r := row("t-main"); !strings.HasPrefix(r, "t-main idle 13 checkpoints") {
		t.Errorf("after a checkpoint with nothing due, t-main's row %q", r)
	}
	w.Checkpoint("t-main", "", "1f1ed297-0000-6000-8000-000000000002", "1f1ed297-0000-6000-8000-000000000001", "update", 6, nil, "agent")
	runBrowser(m)(m.readThreads())
	if r := row("t-main"); !strings.HasPrefix(r, "t-main interrupted before agent 14 checkpoints") {
		t.Errorf("after a checkpoint with agent due, t-main's row %q", r)
	}
}
