package tui

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The main TUI on a read-only source (a LangGraph database, no Backend)
// says what `rewind show` says of every checkpoint: the conversation pane
// its messages, the State pane its channels, the inspector the writes of
// its superstep.
func TestMainTUIAndCLIShowACheckpointAlike(t *testing.T) {
	bin := rewindBinary(t)
	for _, tc := range []struct{ fixture, thread string }{
		{"sqlite-python.db", "t-main"}, {"sqlite-python.db", "t-fail"}, {"sqlite-js.db", "t-main"}, {"sqlite-js.db", "t-fail"},
	} {
		t.Run(strings.TrimSuffix(tc.fixture, ".db")+"/"+tc.thread, func(t *testing.T) {
			src, path := openFixture(t, tc.fixture)
			h := newHarnessDeps(t, Deps{Source: src, StoreLabel: "sqlite:" + path}, Settings{Thread: tc.thread}, 400, 300)
			h.until("the thread", h.loaded)
			checked := 0
			for _, id := range slices.Clone(h.m.timeline.tree.rows) {
				out, err := exec.Command(bin, "show", tc.thread, id, "--store", "sqlite:"+path).CombinedOutput()
				if err != nil {
					t.Fatalf("rewind show @%s: %v\n%s", id, err, out)
				}
				h.m.timeline.tree.jump(id)
				h.exec(h.m.cursorMoved())
				h.until("@"+id+" shown", func() bool { return h.loaded() && h.m.cur.id == id })
				sections := showSections(string(out))
				h.key("1")
				checked += sameText(t, id, "MESSAGES", sections["MESSAGES"], h.screen(), messageWants)
				h.key("2")
				checked += sameText(t, id, "STATE", sections["STATE"], h.screen(), stateWants)
				h.key("3")
				checked += sameText(t, id, "WRITES", sections["WRITES"], h.screen(), writeWants)
			}
			if checked < 20 {
				t.Fatalf("only %d lines of rewind show compared: the sections were not read", checked)
			}
		})
	}
}

// On a read-only source the keys that write are refused with why, ? lists
// them as off and the footer leaves them out; the keys that read still
// work (n is the next match in the thread view, not a new thread).
func TestReadOnlySourceRefusesTheWritingKeys(t *testing.T) {
	src, path := openFixture(t, "sqlite-python.db")
	h := newHarnessDeps(t, Deps{Source: src, StoreLabel: "sqlite:" + path}, Settings{Thread: "t-main"}, 160, 40)
	h.until("the thread", h.loaded)
	if s := h.screen(); strings.Contains(s, "i write") || strings.Contains(s, "f fork") || !strings.Contains(s, readOnlyWhy) {
		t.Fatalf("the footer offers writing keys, or the hint does not say why they are off:\n%s", s)
	}
	// A UUID is drawn in its short form (the timeline, the status bar).
	if id := h.m.timeline.tree.cursor; len(id) != 36 || !strings.Contains(h.screen(), "at @"+id[:8]+"…"+id[32:]+" ") {
		t.Fatalf("the status bar should name @%s by its short form:\n%s", id, h.screen())
	}
	for _, tc := range []struct{ key, what string }{
		{"i", "writing a message"}, {"f", "forking"}, {"r", "resuming"}, {"p", "replaying a checkpoint"},
		{"e", "editing the state"}, {"a", "answering an approval"}, {"K", "arming a kill point"}, {"m", "marking for a compare"},
	} {
		h.key(tc.key)
		if want := tc.what; !strings.Contains(h.m.status.text, want) || !strings.Contains(h.m.status.text, readOnlyWhy) {
			t.Errorf("%s: the status says %q, want %q and why", tc.key, h.m.status.text, want)
		}
		if h.m.composer.open || h.m.dialog != nil || h.m.busy() {
			t.Fatalf("%s was refused but something opened or ran", tc.key)
		}
	}
	h.key("left")
	h.until("the parent shown", h.loaded)
	if strings.Contains(h.m.status.text, "is off") && strings.Contains(h.m.status.text, "scrub") {
		t.Fatalf("h was refused: %q", h.m.status.text)
	}
	h.key("?")
	if s := h.screen(); !strings.Contains(s, "off: write a message") || !strings.Contains(s, "off: fork here") || strings.Contains(s, "off: next match") {
		t.Fatalf("? should list the writing keys as off, and only them:\n%s", s)
	}
	h.key("esc", "t")
	h.until("the threads list", func() bool { return h.m.screen == screenThreads && h.m.threads.loaded })
	h.key("n")
	if !strings.Contains(h.m.status.text, "starting a thread is off") || h.m.dialog != nil {
		t.Fatalf("n on the threads list: %q, dialog %v", h.m.status.text, h.m.dialog != nil)
	}
}

// On a read-only source : takes a LangGraph id by a prefix or the short
// form the timeline shows, and / searches the thread's messages through
// the Source (what `rewind search` scans), its hits on the timeline.
func TestReadOnlySourceGoesToAPrefixAndSearches(t *testing.T) {
	src, path := openFixture(t, "sqlite-python.db")
	h := newHarnessDeps(t, Deps{Source: src, StoreLabel: "sqlite:" + path}, Settings{Thread: "t-main"}, 160, 40)
	h.until("the thread", h.loaded)
	target := h.m.timeline.tree.rows[1]
	for _, given := range []string{target[:13], lgShortIDPlain(target)} {
		h.key("g")
		h.until("the first checkpoint", func() bool { return h.loaded() && h.m.timeline.tree.cursor != target })
		h.key(":")
		h.typeText(given)
		h.key("enter")
		h.until(":"+given+" → @"+target, func() bool { return h.loaded() && h.m.cur.id == target })
	}
	h.key(":")
	h.typeText("1f1ed296")
	h.key("enter")
	if !strings.Contains(h.m.status.text, "ambiguous: 1f1ed296 matches") {
		t.Fatalf("a prefix of every id should be ambiguous, the status says %q", h.m.status.text)
	}
	h.key("/")
	h.typeText("tables")
	h.key("enter")
	h.until("the hits", func() bool { return !h.m.nav.search.running && len(h.m.nav.search.hits) > 0 })
	for _, hit := range h.m.nav.search.hits {
		if h.m.timeline.tree.nodes[hit.id] == nil || !strings.Contains(strings.ToLower(hit.line()), "tables") {
			t.Fatalf("hit %+v: not a checkpoint of the timeline, or not about tables", hit)
		}
	}
}

// lgShortIDPlain is the short form the timeline draws, without styling.
func lgShortIDPlain(id string) string { return id[:8] + "…" + id[len(id)-4:] }
