package tui

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"rewind/store/browse"
	"rewind/store/langgraph"
	"rewind/store/langgraph/lgtest"
)

// The main TUI on a read-only source (a LangGraph database, no Backend)
// says what `rewind show` says of every checkpoint: the conversation pane
// its messages, the State pane its channels, the inspector the writes of
// its superstep.
func TestMainTUIAndCLIShowACheckpointAlike(t *testing.T) {
	t.Parallel()
	bin := rewindBinary(t)
	for _, tc := range []struct {
		fixture, thread string
		some            bool // one checkpoint of each kind of stored DeltaChannel, not all 233
	}{
		{"sqlite-python.db", "t-main", false}, {"sqlite-python.db", "t-fail", false}, {"sqlite-js.db", "t-main", false}, {"sqlite-js.db", "t-fail", false},
		{"sqlite-js-cases.db", "t-delta", true},
	} {
		t.Run(strings.TrimSuffix(tc.fixture, ".db")+"/"+tc.thread, func(t *testing.T) {
			src, path := openFixture(t, tc.fixture)
			h := newHarnessDeps(t, Deps{Source: src, StoreLabel: "sqlite:" + path}, Settings{Thread: tc.thread}, 400, 300)
			h.until("the thread", h.loaded)
			var ids []string
			if tc.some {
				ids = oneOfEachStoredKind(t, src, browse.Chain{Thread: tc.thread}, h.m.timeline.tree.rows)
			}
			checked := showsAlike(t, h, bin, path, "", ids...)
			if checked < 20 {
				t.Fatalf("only %d lines of rewind show compared: the sections were not read", checked)
			}
		})
	}
}

// oneOfEachStoredKind is the first of rows for each way a checkpoint
// stores its DeltaChannels (a snapshot, rebuilt from an ancestor's, from
// [] with no snapshot before it), failing t when one is missing.
func oneOfEachStoredKind(t *testing.T, src browse.Source, c browse.Chain, rows []string) []string {
	t.Helper()
	seen := map[string]bool{}
	var ids []string
	for _, id := range rows {
		cp, err := src.Checkpoint(context.Background(), c, id)
		if err != nil {
			t.Fatal(err)
		}
		if cp.Stored == nil {
			continue
		}
		for _, ch := range cp.Stored.Channels {
			kind := fmt.Sprint(ch.Held, ch.RebuiltFrom != "", ch.Replayed > 0)
			if ch.Delta && !seen[kind] {
				seen[kind] = true
				ids = append(ids, id)
			}
		}
	}
	if len(seen) < 3 {
		t.Fatalf("%s holds %d kinds of stored DeltaChannel (%v), want a snapshot, a rebuilt one and one with no snapshot", c.Thread, len(seen), seen)
	}
	return ids
}

// showsAlike compares, at every checkpoint of the chain open in h (or at
// only these), its three panes with what `rewind show` (--ns ns) says of
// the checkpoint, and returns how many lines it compared.
func showsAlike(t *testing.T, h *harness, bin, path, ns string, only ...string) int {
	t.Helper()
	checked := 0
	ids := only
	if len(ids) == 0 {
		ids = slices.Clone(h.m.timeline.tree.rows)
	}
	for _, id := range ids {
		out, err := exec.Command(bin, "show", h.m.sess.thread, id, "--ns", ns, "--store", "sqlite:"+path).CombinedOutput()
		if err != nil {
			t.Fatalf("rewind show @%s: %v\n%s", id, err, out)
		}
		h.m.timeline.tree.jump(id)
		h.exec(h.m.cursorMoved())
		h.until("@"+id+" shown", func() bool { return h.loaded() && h.m.cur.id == id })
		sections := showSections(string(out))
		h.key("1")
		checked += sameText(t, id, "MESSAGES", sections["MESSAGES"], h.screen()+"\n"+h.paneText(paneConv), messageWants)
		h.key("2")
		checked += sameText(t, id, "STATE", sections["STATE"], h.screen(), stateWants)
		checked += storedAlike(t, id, string(out), h.paneText(paneState))
		h.key("3")
		checked += sameText(t, id, "WRITES", sections["WRITES"], h.screen(), writeWants)
	}
	return checked
}

// A LangGraph thread's subgraph runs are rows under it in the threads
// list; opening one shows that chain: its own checkpoints in the
// timeline, its namespace in the status bar, and at each checkpoint its
// own messages, state and writes (what `rewind show --ns` says), not the
// parent's.
func TestReadOnlySourceOpensASubgraphChain(t *testing.T) {
	bin := rewindBinary(t)
	src, path := openFixture(t, "sqlite-python.db")
	ts, err := src.Threads(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var want browse.Chain
	for _, th := range ts {
		for _, ns := range th.Namespaces {
			if th.ID == "t-main" && ns.NS != "" {
				want = browse.Chain{Thread: th.ID, NS: ns.NS}
			}
		}
	}
	if want.NS == "" {
		t.Fatal("the fixture's t-main has no subgraph chain")
	}
	h := newHarnessDeps(t, Deps{Source: src, StoreLabel: "sqlite:" + path}, Settings{}, 400, 300)
	h.until("the threads", func() bool { return h.m.threads.loaded })
	if !h.contains("└ " + lgShortNS(want.NS)) {
		t.Fatalf("the threads list does not show t-main's subgraph run %s:\n%s", want.NS, h.screen())
	}
	for i := 0; i < len(h.m.threads.rows); i++ {
		if _, c, _ := h.m.threads.selected(); c == want {
			break
		}
		h.key("j")
	}
	h.key("enter")
	h.until("the subgraph's chain", h.loaded)
	if h.m.chain() != want || !h.contains("thread t-main › review:") {
		t.Fatalf("enter on the subgraph's row opened %v, want %v:\n%s", h.m.chain(), want, h.screen())
	}
	ls, err := src.History(context.Background(), want, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	got := slices.Clone(h.m.timeline.tree.rows)
	slices.Sort(got)
	ids := make([]string, len(ls))
	for i, l := range ls {
		ids[i] = l.ID
	}
	slices.Sort(ids)
	if !slices.Equal(got, ids) {
		t.Fatalf("the timeline shows %v, the subgraph's chain holds %v", got, ids)
	}
	if n := showsAlike(t, h, bin, path, want.NS); n < 5 {
		t.Fatalf("only %d lines of rewind show --ns compared: the sections were not read", n)
	}
	h.key("t")
	if _, c, _ := h.m.threads.selected(); h.m.screen != screenThreads || c != want || !h.contains("▶ ●   └ review:") {
		t.Fatalf("t should come back to the threads list on the subgraph's row, got screen %v on %v", h.m.screen, c)
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

// A LangGraph turn row says what its input was: the input checkpoint
// holds no messages yet, so the words come from what its superstep
// writes (the row showed "…" before).
func TestReadOnlySourceTurnRowsSayTheirInput(t *testing.T) {
	for _, fixture := range []string{"sqlite-python.db", "sqlite-js.db"} {
		t.Run(strings.TrimSuffix(fixture, ".db"), func(t *testing.T) {
			src, path := openFixture(t, fixture)
			h := newHarnessDeps(t, Deps{Source: src, StoreLabel: "sqlite:" + path}, Settings{Thread: "t-main"}, 200, 60)
			h.until("the thread", h.loaded)
			h.until("the turn rows' words", func() bool { return len(h.m.timeline.words) > 0 && len(h.m.timeline.loadingWords) == 0 })
			for id, w := range h.m.timeline.words {
				if w == "" {
					t.Errorf("the turn at @%s has no words:\n%s", id, h.screen())
				}
			}
			if !h.contains("› research lang") {
				t.Fatalf("no turn row says its input:\n%s", h.screen())
			}
		})
	}
}

// A read-only source is polled: checkpoints another process writes (a
// running LangGraph app, here a writer on the same file) join the
// timeline; the cursor follows the head when it was on it and stays where
// it was otherwise.
func TestReadOnlySourceFollowsNewCheckpoints(t *testing.T) {
	t.Parallel()
	src, path := openFixture(t, "sqlite-python.db")
	h := newHarnessDeps(t, Deps{Source: src, StoreLabel: "sqlite:" + path}, Settings{Thread: "t-fail"}, 160, 40)
	h.until("the thread", h.loaded)
	head, rows := h.m.timeline.tree.cursor, h.m.timeline.tree.len()
	w := lgtest.OpenWriter(t, path)
	parent := head
	for i := 1; i <= 3; i++ {
		id := fmt.Sprintf("1f1ed297-0000-6000-8000-%012d", i)
		w.Checkpoint("t-fail", "", id, parent, "loop", 3+i, map[string]any{
			"messages": []any{map[string]any{"type": "human", "content": fmt.Sprintf("new %d", i)}}}, "agent")
		parent = id
	}
	h.until("the new head", func() bool { return h.loaded() && h.m.timeline.tree.cursor == parent })
	if n := h.m.timeline.tree.len(); n != rows+3 || !h.contains("new 3") {
		t.Fatalf("after 3 new checkpoints: %d rows, want %d, and the new head shown:\n%s", n, rows+3, h.screen())
	}
	h.key("k")
	at := h.m.timeline.tree.cursor
	w.Checkpoint("t-fail", "", "1f1ed297-0000-6000-8000-000000000004", parent, "loop", 7, nil, "")
	h.until("the fourth", func() bool { return h.m.timeline.tree.len() == rows+4 })
	if h.m.timeline.tree.cursor != at {
		t.Errorf("a new checkpoint moved the cursor off the middle: at %s, want %s", h.m.timeline.tree.cursor, at)
	}
}

// On a read-only source the threads list offers no key that writes (n
// and d say why they are off when pressed), and each thread's row says
// what `rewind threads` says of it: its status and its root chain's
// checkpoints.
func TestReadOnlySourceThreadsListAsTheCLI(t *testing.T) {
	bin := rewindBinary(t)
	for _, fixture := range []string{"sqlite-python.db", "sqlite-js.db"} {
		t.Run(strings.TrimSuffix(fixture, ".db"), func(t *testing.T) {
			src, path := openFixture(t, fixture)
			h := newHarnessDeps(t, Deps{Source: src, StoreLabel: "sqlite:" + path}, Settings{}, 160, 30)
			h.until("the threads with their states", func() bool { return h.m.threads.loaded && !h.m.threads.statesMissing() })
			if s := h.screen(); strings.Contains(s, "n new thread") || strings.Contains(s, "d delete") {
				t.Fatalf("the threads list's footer offers a key that writes:\n%s", s)
			}
			for k, what := range map[string]string{"n": "starting a thread is off", "d": "deleting a thread is off"} {
				h.key(k)
				if !h.contains(what+": "+readOnlyWhy) || h.m.screen != screenThreads {
					t.Fatalf("%s on the threads list should say %q:\n%s", k, what, h.screen())
				}
			}
			out, err := exec.Command(bin, "threads", "--store", "sqlite:"+path).CombinedOutput()
			if err != nil {
				t.Fatalf("rewind threads: %v\n%s", err, out)
			}
			rows := cliThreadCells(string(out))
			flat := strings.Join(strings.Fields(h.screen()), " ")
			for thread, want := range rows {
				if !strings.Contains(flat, thread+" "+want) {
					t.Errorf("rewind threads says %q of %s; the threads list:\n%s", want, thread, h.screen())
				}
			}
			if len(rows) != 2 {
				t.Fatalf("compared %d threads of rewind threads, want 2:\n%s", len(rows), out)
			}
		})
	}
}

// cliThreadCells is, for each thread row of `rewind threads`, its STATUS
// and CHECKPOINTS cells as the threads list words them ("error at worker
// 5 checkpoints").
func cliThreadCells(out string) map[string]string {
	cells := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "t-") {
			continue
		}
		var f []string
		for _, c := range strings.Split(line, "  ") {
			if c = strings.TrimSpace(c); c != "" {
				f = append(f, c)
			}
		}
		if len(f) >= 3 {
			cells[f[0]] = f[1] + " " + f[2] + " checkpoints"
		}
	}
	return cells
}

// On a read-only source the inspector diffs the checkpoint against its
// parent in its own chain, as `rewind diff T PARENT ID --ns NS` does:
// every channel it names, at every checkpoint of a root chain and of a
// subgraph's (whose first checkpoint has no parent there: it says so
// rather than show the parent graph's diff), after the view switched
// chains too.
func TestReadOnlySourceDiffsAgainstTheParentInItsChain(t *testing.T) {
	bin := rewindBinary(t)
	src, path := openFixture(t, "sqlite-python.db")
	h := newHarnessDeps(t, Deps{Source: src, StoreLabel: "sqlite:" + path}, Settings{Thread: "t-fail"}, 400, 200)
	h.until("t-fail", h.loaded)
	compared := 0
	for _, c := range []browse.Chain{{Thread: "t-main"}, {Thread: "t-main", NS: "review:43a3a66f-710b-a293-51f3-ab25d2c8ecc4"}} {
		h.exec(h.m.openChain(c))
		h.until("the chain "+c.NS, func() bool { return h.loaded() && h.m.chain() == c })
		firsts := 0
		for _, id := range slices.Clone(h.m.timeline.tree.rows) {
			first, n := diffsAlike(t, h, bin, path, src, c, id)
			if first {
				firsts++
			}
			compared += n
		}
		if firsts != 1 {
			t.Errorf("%v: %d checkpoints without a parent, want 1", c, firsts)
		}
	}
	if compared < 10 {
		t.Fatalf("only %d channel diffs compared", compared)
	}
}

// On a read-only source the mouse reaches no writing action: a click on
// every fourth cell of the thread view and of the threads list (and the
// wheel) moves the cursor or the focus only. No dialog opens, nothing
// runs (there is no runner: a run would panic) and the file is unchanged.
func TestReadOnlySourceClicksWriteNothing(t *testing.T) {
	src, path := openFixture(t, "sqlite-python.db")
	before := lgtest.Sum(t, path)
	const w, hgt = 120, 40
	h := newHarnessDeps(t, Deps{Source: src, StoreLabel: "sqlite:" + path}, Settings{Thread: "t-main"}, w, hgt)
	h.until("the thread", h.loaded)
	clicks := 0
	for _, sc := range []screen{screenThread, screenThreads} {
		if sc == screenThreads {
			h.key("t")
			h.until("the threads", func() bool { return h.m.threads.loaded })
		}
		for y := 0; y < hgt; y++ {
			for x := 0; x < w; x += 4 {
				for _, b := range []tea.MouseButton{tea.MouseButtonLeft, tea.MouseButtonWheelDown} {
					h.dispatch(tea.MouseMsg{X: x, Y: y, Button: b, Action: tea.MouseActionPress})
					h.dispatch(tea.MouseMsg{X: x, Y: y, Button: b, Action: tea.MouseActionRelease})
					clicks++
				}
				if h.m.dialog != nil || h.m.busy() || h.m.screen != sc {
					t.Fatalf("a click at %d,%d opened a dialog, started a run or left the screen:\n%s", x, y, h.screen())
				}
			}
		}
		h.until("settled", h.loaded)
	}
	if lgtest.Sum(t, path) != before {
		t.Fatal("the clicks changed the database")
	}
	if clicks < 2000 {
		t.Fatalf("only %d clicks", clicks)
	}
}

// diffsAlike puts the cursor on id of chain c and checks the inspector's
// diff against what `rewind diff` says of id and its parent: first is
// whether id has no parent in c, n how many channel lines it compared.
func diffsAlike(t *testing.T, h *harness, bin, path string, src browse.Source, c browse.Chain, id string) (first bool, n int) {
	t.Helper()
	h.m.timeline.tree.jump(id)
	h.exec(h.m.cursorMoved())
	h.until("@"+id+" shown", func() bool { return h.loaded() && h.m.cur.id == id })
	h.key("3")
	cp, err := src.Checkpoint(context.Background(), c, id)
	if err != nil {
		t.Fatal(err)
	}
	if cp.Parent == "" {
		if !h.contains("the first checkpoint of this chain: no parent to diff against") || h.contains("Diff against parent") {
			t.Errorf("@%s of %v has no parent in its chain; the inspector should say so:\n%s", id, c, h.screen())
		}
		return true, 0
	}
	out, err := exec.Command(bin, "diff", c.Thread, cp.Parent, id, "--ns", c.NS, "--store", "sqlite:"+path).CombinedOutput()
	if err != nil {
		t.Fatalf("rewind diff: %v\n%s", err, out)
	}
	if !h.contains("Diff against parent @" + lgShortIDPlain(cp.Parent)) {
		t.Errorf("@%s: the inspector does not diff against its parent @%s:\n%s", id, cp.Parent, h.screen())
	}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "@@ ") {
			n++
			if !h.contains(line) {
				t.Errorf("@%s: rewind diff says %q, the inspector does not:\n%s", id, line, h.screen())
			}
		}
	}
	return false, n
}

// An empty LangGraph database opens on a threads list that says so and
// offers nothing rewind would write: not the rewind store's "press n".
func TestReadOnlySourceEmptySaysItStartsNoThread(t *testing.T) {
	path := filepath.Join(t.TempDir(), "empty.db")
	lgtest.OpenWriter(t, path) // LangGraph's tables, no row
	src, err := langgraph.Open(context.Background(), "sqlite:"+path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = src.Close() })
	h := newHarnessDeps(t, Deps{Source: src, StoreLabel: "sqlite:" + path}, Settings{}, 100, 24)
	h.until("the empty list", func() bool { return h.contains("No threads in this database.") })
	if h.contains("Press n") {
		t.Fatalf("an empty read-only database offers to start a thread:\n%s", h.screen())
	}
	h.key("n")
	if !h.contains("off") || h.m.screen != screenThreads {
		t.Fatalf("n on an empty read-only database did not say it is off:\n%s", h.screen())
	}
}

// On a read-only source ctrl+d is page down only: the composer, whose
// draft key it is, never opens there, so ? lists ctrl+d once (it listed
// it twice, as page down and as the refused draft reply) and the key is
// not refused.
func TestReadOnlySourceHelpListsCtrlDOnce(t *testing.T) {
	src, path := openFixture(t, "sqlite-python.db")
	h := newHarnessDeps(t, Deps{Source: src, StoreLabel: "sqlite:" + path}, Settings{Thread: "t-main"}, 160, 40)
	h.until("the thread", h.loaded)
	h.key("ctrl+d")
	if strings.Contains(h.m.status.text, "is off") {
		t.Fatalf("ctrl+d (page down) was refused: %q", h.m.status.text)
	}
	h.key("?")
	_, lines, _ := h.m.helpLines()
	if s := strings.Join(lines, "\n"); strings.Count(s, "ctrl+d") != 1 || strings.Contains(s, "draft reply") {
		t.Fatalf("? should list ctrl+d once, as page down, and no draft reply:\n%s", s)
	}
}
