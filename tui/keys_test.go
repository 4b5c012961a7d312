package tui

import (
	"fmt"
	"github.com/charmbracelet/lipgloss"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"rewind/themes"
)

// j/k and the arrows move the timeline's row and scroll a pane; h/l scrub.
func TestJKMoveAndHLScrub(t *testing.T) {
	e := newEngine(t)
	seed(t, e, "t")
	h := newHarness(t, e, Settings{Thread: "t"}, 80, 24)
	h.until("the thread", h.loaded)
	start := h.m.timeline.tree.cursor
	h.key("k")
	h.until("k moved", h.loaded)
	up := h.m.timeline.tree.cursor
	if up == start {
		t.Fatalf("k should move the timeline's row up from #%s", start)
	}
	h.key("j")
	h.until("j moved", h.loaded)
	if h.m.timeline.tree.cursor != start {
		t.Fatalf("j should move back down to #%s, at #%s", start, h.m.timeline.tree.cursor)
	}
	h.key("h")
	h.until("h scrubbed", h.loaded)
	if h.m.timeline.tree.cursor == start {
		t.Fatal("h should step back a checkpoint")
	}
	h.key("l")
	h.until("l scrubbed", h.loaded)
	if h.m.timeline.tree.cursor != start {
		t.Fatalf("l should step forward to #%s, at #%s", start, h.m.timeline.tree.cursor)
	}
	// In a pane, k and j scroll.
	h.key("tab")
	p := h.m.focusedPane()
	sc := &h.m.content.panes[p].scroll
	if sc.maxOff() == 0 {
		t.Fatalf("the conversation should be longer than its pane:\n%s", h.screen())
	}
	off := sc.off
	h.key("k")
	if sc.off != off-1 {
		t.Fatalf("k should scroll the pane up: %d → %d", off, sc.off)
	}
	h.key("j")
	if sc.off != off {
		t.Fatalf("j should scroll the pane down: → %d", sc.off)
	}
	// g and G go to the pane's top and bottom; the checkpoint stays
	// (issue 33: they moved the timeline's cursor). home and end jump the
	// timeline from any focus, as h/l scrub.
	for _, k := range []struct {
		key  string
		want int
	}{{"g", 0}, {"G", sc.maxOff()}, {"g", 0}} {
		h.key(k.key)
		h.drain()
		if sc.off != k.want || h.m.timeline.tree.cursor != start {
			t.Fatalf("%s in a pane: scrolled to %d (want %d), the cursor at @%s (want @%s)", k.key, sc.off, k.want, h.m.timeline.tree.cursor, start)
		}
	}
	h.key("home")
	h.until("home: the first checkpoint of the branch", func() bool { return h.m.timeline.tree.cursor != start })
}

// ctrl+c in the composer clears its text first (the status log keeps it),
// then closes it; only then does it quit.
func TestCtrlCInTheComposerNeverLosesText(t *testing.T) {
	t.Parallel()
	e := newEngine(t)
	seed(t, e, "t")
	h := newHarness(t, e, Settings{Thread: "t"}, 80, 24)
	h.until("the thread", h.loaded)
	h.key("i")
	h.typeText("a message I typed with care")
	_, cmd := h.m.Update(keyMsg("ctrl+c"))
	if !h.m.composer.open || h.m.composer.Value() != "" {
		t.Fatalf("the first ctrl+c clears the text and keeps the composer: %q", h.m.composer.Value())
	}
	if cmd != nil {
		if _, quit := cmd().(tea.QuitMsg); quit {
			t.Fatal("ctrl+c with text quit the program")
		}
	}
	last := h.m.status.log[len(h.m.status.log)-1].text
	if !strings.Contains(last, "a message I typed with care") {
		t.Fatalf("the status log should keep the cleared text, has %q", last)
	}
	_, cmd = h.m.Update(keyMsg("ctrl+c"))
	if h.m.composer.open || cmd != nil {
		t.Fatal("the second ctrl+c closes the composer, nothing else")
	}
	_, cmd = h.m.Update(keyMsg("ctrl+c"))
	if cmd == nil {
		t.Fatal("ctrl+c outside the composer, with no run, quits")
	}
	if _, quit := cmd().(tea.QuitMsg); !quit {
		t.Fatal("ctrl+c outside the composer, with no run, quits")
	}
}

// The footer keeps `? help` at every width, whatever the screen shows.
func TestFooterAlwaysShowsHelp(t *testing.T) {
	e := newEngine(t)
	seed(t, e, "t")
	for _, w := range []int{60, 80, 120} {
		h := newHarness(t, e, Settings{Thread: "t"}, w, 24)
		h.until("the thread", h.loaded)
		footer := func() string {
			lines := strings.Split(h.screen(), "\n")
			return lines[len(lines)-1]
		}
		check := func(what string) {
			t.Helper()
			if f := footer(); !strings.HasSuffix(strings.TrimRight(f, " "), "? help") {
				t.Errorf("%d columns, %s: the footer should end with `? help`: %q", w, what, f)
			}
		}
		check("thread view")
		// Short of room, the footer keeps its first keys, the most
		// needed (h/l scrub, i write), and drops from its end, before
		// quit (issue 33: it dropped the leftmost first).
		if f := footer(); !strings.HasPrefix(strings.TrimSpace(f), "←/h prev • →/l next • i write") || !strings.Contains(f, "q quit") ||
			w < 120 && !strings.Contains(f, "… • q quit") {
			t.Errorf("%d columns: the footer should keep its first keys and quit: %q", w, f)
		}
		h.m.live.starting = true // a run under way: the key line changes
		check("during a run")
		h.m.live.starting = false
		h.key("i")
		if f := footer(); !strings.Contains(f, "ctrl+c") {
			t.Errorf("%d columns: the composer's footer should name ctrl+c: %q", w, f)
		}
		h.key("esc", "t")
		h.until("threads", func() bool { return h.m.threads.loaded })
		check("threads")
	}
}

// At 60×20 the help scrolls: every key of the thread view can be read.
func TestHelpScrollsToEveryKey(t *testing.T) {
	e := newEngine(t)
	seed(t, e, "t")
	h := newHarness(t, e, Settings{Thread: "t"}, 60, 20)
	h.until("the thread", h.loaded)
	h.key("?")
	seen := map[string]bool{}
	for i := 0; i < 200; i++ {
		s := h.screen()
		if n := len(strings.Split(s, "\n")); n != 20 {
			t.Fatalf("the screen has %d lines, want 20:\n%s", n, s)
		}
		for _, l := range strings.Split(s, "\n") {
			seen[strings.Join(strings.Fields(l), " ")] = true
		}
		before := h.m.pager.off
		h.key("j")
		if h.m.pager.off == before {
			break
		}
	}
	all := strings.Join(func() []string {
		var out []string
		for l := range seen {
			out = append(out, l)
		}
		return out
	}(), "\n")
	for _, g := range h.m.keys.FullHelp() {
		for _, b := range g {
			if want := b.Help().Key + " " + b.Help().Desc; !strings.Contains(all, want) {
				t.Errorf("scrolling the help never shows %q", want)
			}
		}
	}
	if !h.m.pager.help {
		t.Fatal("j scrolls the help, it does not close it")
	}
	h.key("esc")
	if h.m.pager.help {
		t.Fatal("esc closes the help")
	}
}

// A status line too long for the bar says (L); L shows it whole; a new run
// takes the old status off the bar.
func TestStatusLogKeepsEveryLineInFull(t *testing.T) {
	e := newEngine(t)
	seed(t, e, "t")
	h := newHarness(t, e, Settings{Thread: "t"}, 80, 24)
	h.until("the thread", h.loaded)
	words := strings.Fields("run failed: resume thread ticket-1 at checkpoint @87: the store said something long that the status bar cannot hold, ending with zebra")
	h.m.setFlash(strings.Join(words, " "), true)
	h.m.setFlash("a second, short line", false)
	h.m.setFlash(strings.Join(words, " "), true)
	if s := h.screen(); !strings.Contains(s, "(L)") || strings.Contains(s, "zebra") {
		t.Fatalf("the cut status should point at L:\n%s", s)
	}
	h.key("L")
	s := h.screen()
	for _, w := range append(words, "a second, short line", "Status log · 3") {
		if !strings.Contains(s, w) {
			t.Errorf("the status log lacks %q:\n%s", w, s)
		}
	}
	h.key("esc")
	if h.m.status.text == "" {
		t.Fatal("setup: a status should be up")
	}
	h.m.sess.deps.Runner = blockingRunner{make(chan struct{})}
	h.key("i")
	h.typeText("hello")
	h.key("enter")
	if h.m.status.text != "" {
		t.Fatalf("a new run should clear the old status, shows %q", h.m.status.text)
	}
}

// T cycles the theme and saves it in the config file, comments kept;
// under NO_COLOR it changes nothing.
func TestThemeIsSavedAndNoColorWins(t *testing.T) {
	e := newEngine(t)
	seed(t, e, "t")
	path := filepath.Join(t.TempDir(), "rewind", "config.toml")
	h := newHarness(t, e, Settings{Thread: "t", ConfigPath: path}, 80, 24)
	h.until("the thread", h.loaded)
	h.key("T")
	h.until("the theme saved", func() bool { return strings.Contains(h.m.status.text, "saved to") })
	c, err := LoadConfig(path)
	if err != nil || c.Theme != h.m.theme.Name || c.Theme == themes.Dark {
		t.Fatalf("the config should hold the new theme %s: %+v %v", h.m.theme.Name, c, err)
	}
	if err := os.WriteFile(path, []byte("# mine\nmouse = false # keep\n\n[keys]\nkill = \"ctrl+k\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h.key("T")
	h.until("the theme saved again", func() bool { return strings.Contains(h.m.status.text, "theme "+h.m.theme.Name+" (saved") })
	b, _ := os.ReadFile(path)
	for _, want := range []string{"# mine", "mouse = false # keep", "theme = \"" + h.m.theme.Name + "\"", "[keys]\nkill = \"ctrl+k\""} {
		if !strings.Contains(string(b), want) {
			t.Fatalf("the saved config lacks %q:\n%s", want, b)
		}
	}

	nc := newHarness(t, e, Settings{Thread: "t", Theme: themes.Or(themes.NoColor), NoColor: true, ConfigPath: path}, 80, 24)
	nc.until("the thread", nc.loaded)
	nc.key("T")
	nc.drain()
	if nc.m.theme.Name != themes.NoColor || !strings.Contains(nc.m.status.text, "NO_COLOR") {
		t.Fatalf("T under NO_COLOR should keep no-color and say why: %s, %q", nc.m.theme.Name, nc.m.status.text)
	}
	if b2, _ := os.ReadFile(path); string(b2) != string(b) {
		t.Fatal("T under NO_COLOR should not write the config")
	}
}

// T saves a theme only when it reads on the terminal's background (when the
// terminal told it): every theme rewind has paints its own screen, so each
// is saved on a light terminal; the light palette without its background
// (the theme issue 33 found unreadable on a dark terminal) is shown but not
// saved there, and the status line says why.
func TestThemeIsSavedOnlyWhenReadable(t *testing.T) {
	e := newEngine(t)
	seed(t, e, "t")
	path := filepath.Join(t.TempDir(), "config.toml")
	h := newHarness(t, e, Settings{Thread: "t", ConfigPath: path, TerminalBackground: themes.LightTerminal}, 80, 24)
	h.until("the thread", h.loaded)
	for range themes.Names() {
		h.key("T")
		h.until("theme "+h.m.theme.Name+" saved", func() bool {
			return strings.Contains(h.m.status.text, "theme "+h.m.theme.Name+" (saved")
		})
	}
	before, _ := os.ReadFile(path)
	faint := themes.Or(themes.Light)
	faint.Screen = lipgloss.NewStyle()
	h.m.themeConfig.terminalBg = themes.DarkTerminal
	h.m.setTheme(faint)
	h.exec(h.m.saveTheme(faint.Name))
	h.drain()
	if !strings.Contains(h.m.status.text, "theme light shown, not saved: too faint on this terminal's background #1e1e1e: Text: ") {
		t.Fatalf("the status should say why the theme is not saved: %q", h.m.status.text)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Fatalf("a faint theme was saved:\n%s", after)
	}
}

// Keys rebound in the config file work, and their help says so.
func TestKeysRebindFromTheConfig(t *testing.T) {
	e := newEngine(t)
	seed(t, e, "t")
	h := newHarness(t, e, Settings{Thread: "t", Keys: map[string][]string{"prev": {"w"}, "help": {"?", "f1"}}}, 80, 24)
	h.until("the thread", h.loaded)
	start := h.m.timeline.tree.cursor
	h.key("h")
	h.drain()
	if h.m.timeline.tree.cursor != start {
		t.Fatal("h is not prev any more")
	}
	h.key("w")
	h.until("w scrubbed", h.loaded)
	if h.m.timeline.tree.cursor == start {
		t.Fatal("w should be prev")
	}
	if got := h.m.keys.Prev.Help().Key; got != "w" {
		t.Fatalf("the help should show the new key, shows %q", got)
	}
}

// Checkpoints are written @16, messages #16: on one screen they cannot be
// taken for each other.
func TestCheckpointsAndMessagesAreNamedApart(t *testing.T) {
	e := newEngine(t)
	seed(t, e, "t")
	h := newHarness(t, e, Settings{Thread: "t"}, 120, 40)
	h.until("the thread", h.loaded)
	s := h.screen()
	for _, want := range []string{"@1 ", "@16 ", "Conversation · @16", "at @16 10/10", "branch 2/2 at @2", "#11 reply"} {
		if !strings.Contains(s, want) {
			t.Errorf("the screen lacks %q:\n%s", want, s)
		}
	}
	for _, bad := range []string{"#16 ", "· #16", "at #"} {
		if strings.Contains(s, bad) {
			t.Errorf("a checkpoint is written with #: %q:\n%s", bad, s)
		}
	}
}

// The help lists each key of the thread view once.
func TestHelpListsEachKeyOnce(t *testing.T) {
	seen := map[string]bool{}
	for _, g := range newThreadKeys().FullHelp() {
		for _, b := range g {
			if h := b.Help().Key + " " + b.Help().Desc; seen[h] {
				t.Errorf("the help lists %q twice", h)
			} else {
				seen[h] = true
			}
		}
	}
}

// The status bar keeps the position (@N i/n) on narrow screens, with a
// long thread name and a status line: the brand, the branch and then the
// name give way first (issue 33: at 80 and 60 columns it was cut off).
func TestStatusBarKeepsThePosition(t *testing.T) {
	e := newEngine(t)
	thread := "customer-4711-order-SO20260901-late-delivery"
	seed(t, e, thread)
	for _, w := range []int{60, 80, 120} {
		h := newHarness(t, e, Settings{Thread: thread}, w, 20)
		h.until("the thread", h.loaded)
		h.m.setFlash("stopped at @87: finished tasks are stored, r resumes the rest", false)
		lines := strings.Split(h.screen(), "\n")
		bar := lines[len(lines)-2]
		pos := fmt.Sprintf("at @%s %d/%d", h.m.timeline.tree.cursor, h.m.timeline.position[0], h.m.timeline.position[1])
		if !strings.Contains(bar, pos) || !strings.Contains(bar, "stopped at @87") {
			t.Errorf("%d columns: the status bar lost the position %q or the status:\n%s", w, pos, bar)
		}
	}
}

// Every key of every key map is a row of its table (threadKeyTable,
// threadListKeyTable, the pager's, each dialog's), with its keys and its
// help text: a binding added to a key map without a row (so without help,
// README and a config name) fails here, and a row is the only thing
// needed for the ? screen, the footer, README, [keys] and the read-only
// refusals to list it.
func TestEveryThreadKeyIsInTheTable(t *testing.T) {
	checkKeyTable(t, "threadKeys", threadKeyTable, helpGroups)
	checkKeyTable(t, "threadListKeys", threadListKeyTable, 3)
	checkKeyTable(t, "pagerKeys", pagerKeyTable, 1)
	checkKeyTable(t, "formKeys", formKeyTable, 1)
	checkKeyTable(t, "composerKeys", composerKeyTable, 1)
	checkKeyTable(t, "confirmKeys", confirmKeyTable, 1)
	checkKeyTable(t, "quitKeys", quitKeyTable, 1)
	checkKeyTable(t, "toggleKeys", toggleKeyTable, 1)
	checkKeyTable(t, "compareKeys", compareKeyTable, 1)
	checkKeyTable(t, "pickKeys", pickKeyTable, 1)
	checkKeyTable(t, "approvalKeys", approvalKeyTable, 2)
	checkKeyTable(t, "channelKeys", channelKeyTable, 1)
	checkKeyTable(t, "graphKeys", graphKeyTable, 1)
	checkKeyTable(t, "lessonKeys", lessonKeyTable, 2)
	checkKeyTable(t, "promptKeys", promptKeyTable, 1)
	checkKeyTable(t, "sawKeys", sawKeyTable, 1)
	checkKeyTable(t, "searchKeys", searchKeyTable, 1)
	checkKeyTable(t, "traceKeys", traceKeyTable, 1)
	checkKeyTable(t, "timelineKeys", timelineKeyTable, 2)
	checkKeyTable(t, "contentKeys", contentKeyTable, 2)
	checkKeyTable(t, "liveKeys", liveKeyTable, 3)
}

func checkKeyTable[K interface{ FullHelp() [][]key.Binding }](t *testing.T, name string, table keyTable[K], groups int) {
	t.Helper()
	var k K
	rows := map[*key.Binding]string{}
	names := map[string]bool{}
	for _, r := range table {
		b := r.field(&k)
		if prev, ok := rows[b]; ok {
			t.Errorf("%s: rows %q and %q fill the same binding", name, prev, r.desc)
		}
		rows[b] = r.desc
		// A row with neither is a binding its constructor copies (the
		// graph view's h/l, the thread view's as rebound).
		if (len(r.keys) == 0) != (strings.TrimSpace(r.desc) == "") {
			t.Errorf("%s: row %q (group %d) lacks its keys or its help text", name, r.name, r.group)
		}
		if r.group < 0 || r.group >= groups {
			t.Errorf("%s: row %q is in no help group (%d)", name, r.name, r.group)
		}
		if r.name != "" && names[r.name] {
			t.Errorf("%s: two rows are named %q in [keys]", name, r.name)
		}
		names[r.name] = true
	}
	v := reflect.ValueOf(&k).Elem()
	bindingT := reflect.TypeOf(key.Binding{})
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if f.Type != bindingT {
			t.Errorf("%s.%s is not a key.Binding: a key map's fields are its bindings only", name, f.Name)
			continue
		}
		if _, ok := rows[v.Field(i).Addr().Interface().(*key.Binding)]; !ok {
			t.Errorf("%s.%s has no row in its table (keys.go): it would be bound, but missing from ? and README", name, f.Name)
		}
	}
	// What the table says is what the ? screen shows.
	shown := map[string]bool{}
	for _, g := range table.bind().FullHelp() {
		for _, b := range g {
			shown[b.Help().Key+" "+b.Help().Desc] = true
		}
	}
	for _, r := range table {
		label := keyLabel(r.keys)
		if r.label != "" {
			label = r.label
		}
		if want := label + " " + r.desc; len(r.keys) > 0 && !shown[want] {
			t.Errorf("%s: the ? screen lacks %q", name, want)
		}
	}
}

// Every binding of every key map of the main TUI is in its FullHelp (the
// ? screen, a dialog's key line, README's tables): a binding added to a
// key map but not to its help fails here.
func TestEveryKeyMapHelpsWithEveryBinding(t *testing.T) {
	tk := newThreadKeys()
	maps := map[string]interface{ FullHelp() [][]key.Binding }{
		"threadKeys": tk, "threadListKeys": newThreadListKeys(), "pagerKeys": newPagerKeys(),
		"formKeys": newFormKeys(), "composerKeys": newComposerKeys(), "confirmKeys": newConfirmKeys(),
		"quitKeys": newQuitKeys(), "toggleKeys": newToggleKeys(), "lessonKeys": newLessonKeys(),
		"promptKeys": newPromptKeys(promptSearch), "contentKeys": newContentKeys(tk), "timelineKeys": newTimelineKeys(tk),
		"compareKeys": newCompareKeys(), "pickKeys": newPickKeys(), "approvalKeys": newApprovalKeys(),
		"channelKeys": newChannelKeys(), "graphKeys": newGraphKeys(tk), "sawKeys": newSawKeys(),
		"searchKeys": newSearchKeys(), "traceKeys": newTraceKeys(), "liveKeys": newLiveKeys(tk),
		"navKeys": newNavKeys(tk),
	}
	bindingT := reflect.TypeOf(key.Binding{})
	for name, km := range maps {
		helped := map[string]bool{}
		for _, g := range km.FullHelp() {
			for _, b := range g {
				helped[strings.Join(b.Keys(), " ")] = true
			}
		}
		v := reflect.ValueOf(km)
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if f.Type != bindingT {
				continue
			}
			b := v.Field(i).Interface().(key.Binding)
			if len(b.Keys()) == 0 || !b.Enabled() {
				continue // disabled here (a prompt that is not the search's)
			}
			if !helped[strings.Join(b.Keys(), " ")] {
				t.Errorf("%s.%s (%s) is bound but not in its FullHelp: the ? screen and README would not list it", name, f.Name, strings.Join(b.Keys(), "/"))
			}
		}
	}
}
