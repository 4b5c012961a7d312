package tui

import (
	"context"
	"errors"
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
	if num(h.m.timeline.tree.cursor) != 1 || !strings.Contains(h.m.status.text, "no earlier turn") {
		t.Fatalf("{ on the first turn should stay and say so: at @%s, %q", h.m.timeline.tree.cursor, h.m.status.text)
	}
	h.key("end")
	h.until("@24", func() bool { return h.at(24) })
	h.key("}")
	if num(h.m.timeline.tree.cursor) != 24 || !strings.Contains(h.m.status.text, "no later turn") {
		t.Fatalf("} in the last turn should stay and say so: at @%s, %q", h.m.timeline.tree.cursor, h.m.status.text)
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
		if num(h.m.timeline.tree.cursor) != 17 || !strings.Contains(h.m.status.text, bad.want) || !h.m.status.isErr {
			t.Fatalf(": %s should stay at @17 and say %q: at @%s, %q", bad.text, bad.want, h.m.timeline.tree.cursor, h.m.status.text)
		}
	}
	h.key(":")
	h.typeText("9")
	h.key("esc")
	if h.m.nav.prompt != nil || num(h.m.timeline.tree.cursor) != 17 {
		t.Fatalf("esc should close the prompt and go nowhere: at @%s", h.m.timeline.tree.cursor)
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
	if num(h.m.timeline.tree.cursor) != 9 {
		t.Fatalf("a fast :9 should go to @9, at @%s", h.m.timeline.tree.cursor)
	}
}

// / searches every branch's messages (the store's index), the state and
// events under the cursor; enter jumps to a hit, n and N step through the
// hits across branches; the matched words are drawn in the theme's Match;
// / opens empty and ↑ brings back the queries before.
func TestSearchKeys(t *testing.T) {
	e := newEngine(t)
	seed(t, e, "t")
	h := newHarness(t, e, Settings{Thread: "t"}, 120, 40)
	h.until("loaded", func() bool { return h.at(16) })
	h.key("/")
	h.typeText("INVOI")
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
	if !h.contains(`Search "INVOI"`) {
		t.Fatalf("the results list should be on screen:\n%s", h.screen())
	}
	if view := h.m.dialog.View(h.m.theme, h.m.help); !strings.Contains(view, h.m.theme.Match.Render("invoice")) {
		t.Errorf("the matched word should be drawn in the theme's Match style:\n%q", view)
	}
	h.key("down", "enter")
	h.until("the second hit", func() bool { return h.at(num(hits[1].id)) })
	h.key("n")
	h.until("the third hit", func() bool { return h.at(num(hits[2].id)) })
	h.key("N", "N")
	h.until("the first hit", func() bool { return h.at(num(hits[0].id)) })
	// The events under the cursor are searched too, by their words.
	h.key("/")
	if v := h.m.nav.prompt.in.Value(); v != "" {
		t.Fatalf("/ should open empty, it holds %q", v)
	}
	h.typeText("model called")
	h.key("enter")
	h.until("the search ends", func() bool { return !h.m.nav.search.running })
	h.key("esc")
	// ↑ brings back the queries before, newest first; ↓ the line typed.
	h.key("/")
	h.typeText("half")
	h.key("up")
	if v := h.m.nav.prompt.in.Value(); v != "model called" {
		t.Fatalf("↑ should bring back the last query, the prompt holds %q", v)
	}
	h.key("up", "up")
	if v := h.m.nav.prompt.in.Value(); v != "INVOI" {
		t.Fatalf("↑ ↑ should bring back the one before (and stay at the oldest), the prompt holds %q", v)
	}
	h.key("down", "down")
	if v := h.m.nav.prompt.in.Value(); v != "half" {
		t.Fatalf("↓ past the newest should give back the line typed, the prompt holds %q", v)
	}
	h.key("esc")
	h.key("/")
	h.typeText("no such words anywhere")
	h.key("enter")
	h.until("no match", func() bool { return strings.Contains(h.m.status.text, "no match") })
	if h.m.dialog != nil {
		t.Fatal("no match should open no list")
	}
	h.key("/")
	h.typeText("?!")
	h.key("enter")
	if !strings.Contains(h.m.status.text, "give a word") || h.m.nav.search.running {
		t.Fatalf("a query without a word should be refused, status %q", h.m.status.text)
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
	k, ok := quoteOf(h.m.cur)
	if !ok {
		t.Fatal("the reply's question at @24 is in the summary: the ticket's pins quote it")
	}
	h.until("the original question", func() bool { return h.m.nav.orig[k].At == 17 })
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

// indexedMessages is a Backend whose messages are found by Search alone:
// reading them by index fails.
type indexedMessages struct {
	Backend
	msgs     []store.Message
	searches int
}

func (p *indexedMessages) Search(_ context.Context, _ string, query string, limit int) ([]store.Message, error) {
	p.searches++
	words := store.SearchQuery(query)
	var out []store.Message
	for _, m := range p.msgs {
		if store.HasWords(store.BodyWords(m.Body), words) && (limit <= 0 || len(out) < limit) {
			out = append(out, m)
		}
	}
	return out, nil
}

func (p *indexedMessages) MessagesIn(context.Context, string, int64, int64) ([]store.Message, error) {
	return nil, errors.New("a search must not read the messages one range at a time")
}

// A search asks the store's index once, for at most maxHits+1 messages:
// the list says when there were more.
func TestSearchAsksTheIndex(t *testing.T) {
	p := &indexedMessages{}
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
			p.msgs = append(p.msgs, msg(i, 2000, "a fork's needles")) // another branch's #700
		}
	}
	hits, more, err := runSearch(t.Context(), p, TicketExtension(), "t", "NEEDLE", nil, nil)
	if err != nil || more {
		t.Fatalf("search: %v (more %v)", err, more)
	}
	var got []string
	for _, h := range hits {
		got = append(got, fmt.Sprintf("%s@%s:%s", strings.Fields(h.where)[0], h.id, h.line()))
	}
	if want := "#3@3:a needle at 3 #700@700:a needle at 700 #1100@1100:a needle at 1100 #700@2000:a fork's needles"; strings.Join(got, " ") != want {
		t.Errorf("hits %q, want %s (sorted by checkpoint)", got, want)
	}
	if p.searches != 1 {
		t.Errorf("the search asked the index %d times, want once", p.searches)
	}
	if _, more, _ := runSearch(t.Context(), p, TicketExtension(), "t", "nothing", nil, nil); !more {
		t.Errorf("1,197 hits should say there are more than the %d listed", maxHits)
	}
}

// On a graph with no extension, a search reads each message the index
// found by its shape, as the Conversation pane does: a LangChain message's
// content blocks and name, an OpenAI call's name and arguments (the
// ticket's reading saw a JSON blob said by no one, and an empty call);
// the ticket's extension keeps its own speaker.
func TestSearchReadsAMessageByItsShape(t *testing.T) {
	p := &indexedMessages{msgs: []store.Message{
		{Index: 1, CheckpointID: 2, Body: []byte(`{"type":"human","name":"ana","content":[{"type":"text","text":"where is the parcel"}]}`)},
		{Index: 2, CheckpointID: 3, Body: []byte(`{"role":"assistant","content":"","tool_calls":[{"id":"c1","name":"track","args":{"id":"parcel-9"}}]}`)},
	}}
	hits, _, err := runSearch(t.Context(), p, nil, "t", "parcel", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range hits {
		got = append(got, h.where+": "+h.line())
	}
	if want := `#1 human (ana): where is the parcel|#2 ai: track({"id":"parcel-9"})`; strings.Join(got, "|") != want {
		t.Errorf("hits by shape %q, want %s", got, want)
	}
	p.msgs = []store.Message{{Index: 3, CheckpointID: 4, Body: []byte(`{"role":"user","speaker":"customer","content":"my parcel"}`)}}
	if hits, _, _ := runSearch(t.Context(), p, TicketExtension(), "t", "parcel", nil, nil); len(hits) != 1 || hits[0].where != "#3 customer" {
		t.Errorf("the ticket's hit reads %+v, want #3 customer", hits)
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
		return &timelineNode{id: idOf(id), parent: idOf(id - 1), source: "loop", turnStart: id%3 == 1}
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
