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
