package tui

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"rewind/store"
	"rewind/themes"
)

// { and } go from turn to turn on the branch; the timeline groups rows
// under "turn N" headers and a turn's first row shows the customer's words.
func TestTurnKeys(t *testing.T) {
	h := newHarness(t, longEngine(t), Settings{Thread: "t"}, 80, 24)
	h.until("loaded", func() bool { return h.at(24) })
	h.until("the words of turn 3", func() bool { return h.contains("› Turn 3: my") })
	if !h.contains("┄ turn 3") {
		t.Fatalf("the timeline should show turn headers:\n%s", h.screen())
	}
	for _, step := range []struct {
		key  string
		want int64
	}{{"{", 17}, {"{", 9}, {"}", 17}, {"{", 9}, {"{", 1}} {
		h.key(step.key)
		h.until(step.key+" to @"+itoa(step.want), func() bool { return h.at(step.want) })
	}
	h.key("{")
	if h.m.timeline.tree.cursor != 1 || !strings.Contains(h.m.status.text, "no earlier turn") {
		t.Fatalf("{ on the first turn should stay and say so: at @%d, %q", h.m.timeline.tree.cursor, h.m.status.text)
	}
	h.key("end")
	h.until("@24", func() bool { return h.at(24) })
	h.key("}")
	if h.m.timeline.tree.cursor != 24 || !strings.Contains(h.m.status.text, "no later turn") {
		t.Fatalf("} in the last turn should stay and say so: at @%d, %q", h.m.timeline.tree.cursor, h.m.status.text)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// : goes to a checkpoint, @N or N; an unknown one or a message number is
// refused on the status line; esc leaves the prompt.
func TestGotoKey(t *testing.T) {
	h := newHarness(t, longEngine(t), Settings{Thread: "t"}, 80, 24)
	h.until("loaded", func() bool { return h.at(24) })
	h.key(":")
	if !strings.Contains(h.screen(), ": ") || h.m.nav.prompt == nil {
		t.Fatalf(": should open the prompt:\n%s", h.screen())
	}
	h.typeText("@9")
	h.key("enter")
	h.until("@9", func() bool { return h.at(9) })
	h.key(":")
	h.typeText("17")
	h.key("enter")
	h.until("@17", func() bool { return h.at(17) })
	for _, bad := range []struct{ text, want string }{
		{"999", "no checkpoint @999"},
		{"#5", "names a message"},
		{"abc", "not a checkpoint"},
	} {
		h.key(":")
		h.typeText(bad.text)
		h.key("enter")
		if h.m.timeline.tree.cursor != 17 || !strings.Contains(h.m.status.text, bad.want) || !h.m.status.isErr {
			t.Fatalf(": %s should stay at @17 and say %q: at @%d, %q", bad.text, bad.want, h.m.timeline.tree.cursor, h.m.status.text)
		}
	}
	h.key(":")
	h.typeText("9")
	h.key("esc")
	if h.m.nav.prompt != nil || h.m.timeline.tree.cursor != 17 {
		t.Fatalf("esc should close the prompt and go nowhere: at @%d", h.m.timeline.tree.cursor)
	}
	// Keys typed into the prompt are not commands (q does not quit).
	h.key(":")
	h.typeText("q")
	if h.m.nav.prompt == nil || h.m.nav.prompt.in.Value() != "q" {
		t.Fatal("q in the prompt should be text")
	}
	h.key("esc")
	// ":9" typed fast arrives as one message: 9 is the prompt's text.
	h.typeText(":9")
	h.key("enter")
	if h.m.timeline.tree.cursor != 9 {
		t.Fatalf("a fast :9 should go to @9, at @%d", h.m.timeline.tree.cursor)
	}
}

// / searches messages, state and events; enter jumps to a hit, n and N
// step through the hits.
func TestSearchKeys(t *testing.T) {
	e := newEngine(t)
	seed(t, e, "t")
	h := newHarness(t, e, Settings{Thread: "t"}, 120, 40)
	h.until("loaded", func() bool { return h.at(16) })
	h.key("/")
	h.typeText("invoice")
	h.key("enter")
	h.until("the results", func() bool { _, ok := h.m.dialog.(*searchDialog); return ok })
	hits := h.m.nav.search.hits
	kinds := map[string]bool{}
	for _, hit := range hits {
		kinds[strings.Fields(hit.where)[0]] = true
	}
	if !kinds["#2"] || !kinds["state"] {
		t.Fatalf("the search should find the fork's message #2 and the state: %+v", hits)
	}
	if !h.contains(`Search "invoice"`) {
		t.Fatalf("the results list should be on screen:\n%s", h.screen())
	}
	h.key("down", "enter")
	h.until("the second hit", func() bool { return h.at(hits[1].id) })
	h.key("n")
	h.until("the third hit", func() bool { return h.at(hits[2].id) })
	h.key("N", "N")
	h.until("the first hit", func() bool { return h.at(hits[0].id) })
	// Events are searched too.
	h.key("/")
	h.m.nav.prompt.in.SetValue("")
	h.typeText("model.called")
	h.key("enter")
	h.until("event hits", func() bool { return !h.m.nav.search.running })
	if len(h.m.nav.search.hits) == 0 || !strings.HasPrefix(h.m.nav.search.hits[0].where, "event") {
		t.Fatalf("model.called should be found in the events: %+v", h.m.nav.search.hits)
	}
	h.key("esc")
	h.key("/")
	h.m.nav.prompt.in.SetValue("")
	h.typeText("no such words anywhere")
	h.key("enter")
	h.until("no match", func() bool { return strings.Contains(h.m.status.text, "no match") })
	if h.m.dialog != nil {
		t.Fatal("no match should open no list")
	}
}

// + zooms the focused pane to the whole width and back.
func TestZoomKey(t *testing.T) {
	e := newEngine(t)
	seed(t, e, "t")
	h := newHarness(t, e, Settings{Thread: "t"}, 120, 40)
	h.until("loaded", func() bool { return h.at(16) })
	h.key("tab", "+")
	first := strings.SplitN(h.screen(), "\n", 2)[0]
	if h.m.content.panes[paneConv].w != 118 || strings.Contains(first, "Timeline") || !strings.Contains(first, "Conversation") {
		t.Fatalf("+ should show the conversation alone, %d wide:\n%s", h.m.content.panes[paneConv].w, h.screen())
	}
	h.key("tab") // the zoom follows the focus
	if first := strings.SplitN(h.screen(), "\n", 2)[0]; !strings.Contains(first, "Inspector") || h.m.content.panes[paneInsp].w != 118 {
		t.Fatalf("tab while zoomed should zoom the next pane:\n%s", h.screen())
	}
	h.key("+")
	if first := strings.SplitN(h.screen(), "\n", 2)[0]; !strings.Contains(first, "Timeline") || h.m.content.panes[paneInsp].w == 118 {
		t.Fatalf("+ again should bring the layout back:\n%s", h.screen())
	}
	assertFits(t, h.m.View(), [2]int{120, 40}, "+")
}

// ✝ and ⟲ mark a stopped run and the resume that reused its writes; o
// lists what it reused and redispatched.
func TestTraceKey(t *testing.T) {
	h := newHarness(t, resumedEngine(t), Settings{Thread: "t"}, 120, 40)
	h.until("loaded", func() bool { return h.loaded() })
	if !h.contains("@2  ✝") || !h.contains("@3  ⟲") {
		t.Fatalf("the timeline should mark @2 ✝ and @3 ⟲:\n%s", h.screen())
	}
	h.key("home")
	h.until("@1", func() bool { return h.at(1) })
	h.key("o")
	if h.m.dialog != nil || !strings.Contains(h.m.status.text, "no resume at @1") {
		t.Fatalf("o off a resume should say so: %q", h.m.status.text)
	}
	for _, id := range []int64{2, 3} {
		h.key(":")
		h.typeText(itoa(id))
		h.key("enter")
		h.until("@"+itoa(id), func() bool { return h.at(id) })
		h.key("o")
		h.until("the trace", func() bool { _, ok := h.m.dialog.(*traceDialog); return ok })
		for _, want := range []string{"Resume @2 → @3", "reused (stored writes, not run again): 1", "redispatched (run again): 2"} {
			if !h.contains(want) {
				t.Fatalf("the trace from @%d should say %q:\n%s", id, want, h.screen())
			}
		}
		h.key("esc")
	}
}

// The summary's header and the question the reply answers stay above the
// tail while it scrolls; the question, gone into the summary, is read as
// stored (Engine.Message).
func TestPinnedSummaryAndQuestion(t *testing.T) {
	h := newHarness(t, longEngine(t), Settings{Thread: "t"}, 80, 24)
	h.until("loaded", func() bool { return h.at(24) })
	k := reqKey(h.m.cur)
	h.until("the original question", func() bool { return h.m.nav.orig[k].at == 17 })
	// The pins come off the pane's height: the tail's last line still shows.
	if !h.contains("working days.") {
		t.Fatalf("the reply's last line should be on screen under the pins:\n%s", h.screen())
	}
	// Before and after the conversation (focused by tab) scrolls to its top.
	for i := 0; i < 2; i++ {
		lines := strings.Split(h.screen(), "\n")
		if !strings.Contains(lines[1], "▤ summary #1–") || !strings.Contains(lines[2], "? answering #33 (summary, @17): Turn") {
			t.Fatalf("the summary and the question should be pinned on top:\n%s", h.screen())
		}
		if i > 0 {
			break
		}
		h.key("tab")
		for j := 0; j < 40; j++ {
			h.key("up")
		}
		if h.m.content.panes[paneConv].scroll.off != 0 {
			t.Fatal("the conversation should have scrolled to its top")
		}
	}
	h.key("z")
	if all := strings.Join(h.m.content.panes[paneConv].scroll.lines, "\n"); !strings.Contains(all, "Summary · #1–") {
		t.Fatal("z should unfold the summary into the pane")
	}
}

// pagedMessages is a Backend whose messages are a list read by
// MessagesIn; it counts the reads.
type pagedMessages struct {
	Backend
	msgs  []store.Message // by index
	reads int
}

func (p *pagedMessages) MessagesIn(_ context.Context, _ string, from, to int64) ([]store.Message, error) {
	p.reads++
	var out []store.Message
	for _, m := range p.msgs {
		if m.Index >= from && m.Index <= to {
			out = append(out, m)
		}
	}
	return out, nil
}

// A search reads the messages a page of indexes at a time, every branch's
// message of an index, up to the first index none has.
func TestSearchReadsMessagesByThePage(t *testing.T) {
	p := &pagedMessages{}
	msg := func(index, at int64, text string) store.Message {
		return store.Message{Index: index, CheckpointID: at, Body: fmt.Appendf(nil, `{"role":"user","speaker":"user","content":%q}`, text)}
	}
	for i := int64(1); i <= 1200; i++ {
		text := "nothing here"
		if i == 3 || i == 700 || i == 1100 {
			text = "a needle at " + itoa(i)
		}
		p.msgs = append(p.msgs, msg(i, i, text))
		if i == 700 {
			p.msgs = append(p.msgs, msg(i, 2000, "a fork's needle")) // another branch's #700
		}
	}
	p.msgs = append(p.msgs, msg(1202, 1202, "a needle past the gap"))
	hits, more, err := runSearch(t.Context(), p, "t", "NEEDLE", nil, nil, nil)
	if err != nil || more {
		t.Fatalf("search: %v (more %v)", err, more)
	}
	var got []string
	for _, h := range hits {
		got = append(got, fmt.Sprintf("%s@%d", strings.Fields(h.where)[0], h.id))
	}
	if want := "#3@3 #700@700 #1100@1100 #700@2000"; strings.Join(got, " ") != want {
		t.Errorf("hits %v, want %s (sorted by checkpoint; nothing past #1201, which no message has)", got, want)
	}
	if p.reads != 3 {
		t.Errorf("the search read the messages %d times, want 3 (512 indexes a read)", p.reads)
	}
}

// While a long thread's history loads (newest page first), a turn whose
// chain back to the root is not read yet has no number to show: the
// timeline says "turn …", never a number counted from the page's oldest
// row (issue 33 saw "turn 23 … 773" before "998"), and the right numbers
// once the older pages are in.
func TestTurnNumbersWhileLoading(t *testing.T) {
	p := newTimelinePane(newTimelineKeys(newThreadKeys()), "t")
	p.reset("t")
	p.setTheme(themes.Or(themes.Dark), 1)
	p.SetSize(40, 20)
	// Three turns of three checkpoints: @1, @4 and @7 take input.
	node := func(id int64) *timelineNode {
		return &timelineNode{id: id, parent: id - 1, source: "loop", turnStart: id%3 == 1}
	}
	var newer, older []*timelineNode
	for id := int64(9); id >= 5; id-- {
		newer = append(newer, node(id))
	}
	for id := int64(4); id >= 1; id-- {
		older = append(older, node(id))
	}
	headers := func() []string {
		var out []string
		for _, l := range p.View() {
			if l = ansi.Strip(l); strings.Contains(l, "┄ turn") {
				out = append(out, strings.TrimRight(strings.TrimSpace(strings.Trim(l, "┄ ")), "┄ "))
			}
		}
		return out
	}
	p.takePage(newer, false, false)
	p.follow()
	if got := headers(); len(got) != 1 || got[0] != "turn …" {
		t.Fatalf("turn 3 with turns 1 and 2 unread: headers %q, want [turn …]", got)
	}
	p.takePage(older, false, true)
	p.follow()
	if got := headers(); strings.Join(got, ", ") != "turn 1, turn 2, turn 3" {
		t.Fatalf("the whole thread read: headers %q", got)
	}
}
