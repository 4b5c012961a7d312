package tui

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"

	"rewind/engine"
	"rewind/themes"
	"rewind/tui/termtext"
)

// FuzzSafe: whatever comes in, nothing a terminal acts on comes out, and
// the sanitized text renders in width (termtext's own tests hold its
// table).
func FuzzSafe(f *testing.F) {
	for _, s := range []string{"\x1b[31m", "\x9b", "\u202e", "a\rb", "\xff\xfe", "ok"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := termtext.Text(s)
		if !utf8.ValidString(out) {
			t.Fatalf("invalid UTF-8 out of %q", s)
		}
		for _, r := range out {
			if (r < 0x20 && r != '\n') || r == 0x7f || (r >= 0x80 && r <= 0x9f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
				t.Fatalf("Text(%q) kept %U", s, r)
			}
		}
		// Rendering it as a message never panics and stays in width.
		r := newRenderer(themes.Or(themes.Dark))
		for _, l := range r.body(s, 30, false, "   ", r.theme.Text, r.theme.Text) {
			if width(l) > 30 {
				t.Fatalf("line %q is wider than 30", l)
			}
		}
	})
}

func node(id, parent int64) *timelineNode {
	return &timelineNode{id: idOf(id), parent: idOf(parent), source: "loop", writer: "n"}
}

// tree: 1-2-3-4 with a fork 5 from 2 (5-6) and a fork 7 from 5.
func testTree() *tree {
	t := newTree()
	t.merge([]*timelineNode{node(1, 0), node(2, 1), node(3, 2), node(4, 3), node(5, 2), node(6, 5), node(7, 5)})
	return t
}

func TestTreeOrderAndAncestry(t *testing.T) {
	tr := testTree()
	// Forks come right after their branch point, indented; the original
	// line continues after them.
	want := []int64{1, 2, 5, 7, 6, 3, 4}
	for i, id := range want {
		if tr.rows[i] != idOf(id) {
			t.Fatalf("rows = %v, want %v", tr.rows, want)
		}
	}
	if n := tr.nodes["5"]; !n.fork || n.nest != 1 {
		t.Fatalf("#5 should be a fork at nest 1: %+v", n)
	}
	if !tr.isAncestor("2", "7") || tr.isAncestor("3", "7") || !tr.isAncestor("4", "4") || tr.isAncestor("7", "2") {
		t.Fatal("isAncestor is wrong")
	}
}

func TestTreeScrubbing(t *testing.T) {
	tr := testTree()
	tr.jump("4")
	if a, b := tr.position(); a != 4 || b != 4 || num(tr.leaf()) != 4 {
		t.Fatalf("at @4: position %d/%d leaf %s", a, b, tr.leaf())
	}
	tr.first()
	if num(tr.cursor) != 1 {
		t.Fatalf("first → %s", tr.cursor)
	}
	// → follows the branch last visited (through #3), not the newest child.
	tr.step(1)
	tr.step(1)
	if num(tr.cursor) != 3 {
		t.Fatalf("→→ from #1 should reach #3, at %s", tr.cursor)
	}
	// ] at @3 goes to the same distance from #2 on the next branch: #5.
	tr.switchBranch(1)
	if num(tr.cursor) != 5 || tr.branchInfo() != "branch 2/2 at @2" {
		t.Fatalf("] → %s (%s)", tr.cursor, tr.branchInfo())
	}
	// At a branch point the cursor stays and the branch ahead changes.
	before := tr.leaf()
	tr.switchBranch(1)
	if num(tr.cursor) != 5 || tr.leaf() == before {
		t.Fatalf("] at a branch point should change the leaf ahead, leaf %s → %s", before, tr.leaf())
	}
	tr.last()
	if tr.cursor != tr.leaf() || tr.step(1) {
		t.Fatal("last should stop at the leaf")
	}
	tr.jump("1")
	if !tr.switchBranch(1) {
		t.Fatal("above the first branch point, ] should switch the branch ahead")
	}
	if tr.step(-1) {
		t.Fatal("← at the root should not move")
	}
	if !tr.moveRow(1) || num(tr.cursor) != 2 {
		t.Fatalf("row down from #1 → %s", tr.cursor)
	}
}

func TestTreeOrphansAndCorruptParents(t *testing.T) {
	tr := newTree()
	// A partial load: #10's parent is not loaded yet; #11 claims a parent
	// that is newer than itself (corrupt) and must not make a cycle.
	tr.merge([]*timelineNode{node(10, 4), node(12, 10), node(11, 13), node(13, 11)})
	if len(tr.roots) != 2 || len(tr.rows) != 4 {
		t.Fatalf("roots %v rows %v", tr.roots, tr.rows)
	}
	tr.jump("12")
	if a, b := tr.position(); a != 2 || b != 2 {
		t.Fatalf("position %d/%d", a, b)
	}
	tr.merge([]*timelineNode{node(4, 0)})
	if a, _ := tr.position(); a != 3 {
		t.Fatalf("after the parent loads, #12 is third on its branch, got %d", a)
	}
}

func TestConfigAndThemeChoice(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rewind", "config.toml")
	if c, err := LoadConfig(path); err != nil || c.Theme != "" {
		t.Fatalf("a missing file is an empty config: %+v %v", c, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(s string) {
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("# mine\ntheme = \"light\" # comment\nmouse = false\n\n[keys]\nkill = \"ctrl+k\"\nup = [\"up\", \"w\"]\n")
	c, err := LoadConfig(path)
	if err != nil || c.Theme != "light" || c.Mouse == nil || *c.Mouse || len(c.Keys["kill"]) != 1 || len(c.Keys["up"]) != 2 {
		t.Fatalf("config: %+v %v", c, err)
	}
	// The line scanner's files keep loading: mouse = "off" was accepted.
	write("# mine\n[tui]\ntheme = 'dark' # comment\nmouse = \"off\"\n")
	if c, err := LoadConfig(path); err != nil || c.Theme != "dark" || c.Mouse == nil || *c.Mouse {
		t.Fatalf("an old config: %+v %v", c, err)
	}
	// Every error names the file, the line and the fix.
	for text, want := range map[string][]string{
		"# a\ntheme = \"neon\"\n":              {"line 2", "neon"},
		"\n\ntheme = neon\n":                   {"line 3", "quote text values"},
		"mouse = true\nmouse = maybe\n":        {"line 2", "quote text values"},
		"mouse = \"sometimes\"\n":              {"line 1", "mouse is true or false"},
		"[tui]\ntheme = \"neon\"\n":            {"line 2", "neon"},
		"just words\n":                         {"line 1", "key = value"},
		"theme = \"dark\"\nthem = \"light\"\n": {"line 2", `unknown setting "them"`, "theme, mouse and [keys]"},
		"[keys]\nkil = \"X\"\n":                {"line 2", `no key is named "kil"`, "kill"},
		"[keys]\n\nkill = []\n":                {"line 3", `kill = ["ctrl+k", "X"]`},
		"[keys]\nkill = \"j\"\n":               {"line 2", `"j" would do both`, "down", "kill"},
	} {
		write(text)
		_, err := LoadConfig(path)
		if err == nil {
			t.Errorf("%q should be refused", text)
			continue
		}
		for _, w := range append(want, path) {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q: the error %q lacks %q", text, err, w)
			}
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: the error is not one line: %q", text, err)
		}
	}
	t.Setenv("XDG_CONFIG_HOME", dir)
	if ConfigPath() != path {
		t.Fatalf("ConfigPath = %s", ConfigPath())
	}

	env := func(noColor string) func(string) string {
		return func(k string) string {
			if k == "NO_COLOR" {
				return noColor
			}
			return ""
		}
	}
	pick := func(flag string, cfg Config, noColor string) string {
		th, err := ResolveTheme(flag, cfg, env(noColor))
		if err != nil {
			t.Fatal(err)
		}
		return th.Name
	}
	if got := pick("", Config{}, ""); got != themes.Dark {
		t.Errorf("default: %s", got)
	}
	if got := pick("", Config{}, "1"); got != themes.NoColor {
		t.Errorf("NO_COLOR: %s", got)
	}
	if got := pick("", Config{Theme: "light"}, ""); got != themes.Light {
		t.Errorf("the config file: %s", got)
	}
	if got := pick("high-contrast", Config{Theme: "light"}, ""); got != themes.HighContrast {
		t.Errorf("the flag wins over the config: %s", got)
	}
	if got := pick("high-contrast", Config{Theme: "light"}, "1"); got != themes.NoColor {
		t.Errorf("NO_COLOR always wins: %s", got)
	}
	if _, err := ResolveTheme("neon", Config{}, env("")); err == nil {
		t.Error("an unknown --theme should be an error")
	}
}

func TestProgressCountsEachEventOnce(t *testing.T) {
	p := newProgress("run")
	at := time.Now()
	evs := []engine.Event{
		{Type: engine.EventStepStarted, Data: json.RawMessage(`{"tasks":3,"toRun":3}`), At: at},
		{Type: engine.EventNodeStarted, Node: "executor", Task: "a", Data: json.RawMessage(`{"args":null}`), At: at},
		{Type: engine.EventNodeStarted, Node: "executor", Task: "b", Data: json.RawMessage(`{"args":null}`), At: at.Add(1)},
		{Type: engine.EventModelCalled, Node: "executor", Task: "a", Data: json.RawMessage(`{"role":"executor"}`), At: at.Add(2)},
		{Type: engine.EventNodeFinished, Node: "executor", Task: "a", Data: json.RawMessage(`{"durationMs":0}`), At: at.Add(3)},
	}
	for _, ev := range evs {
		p.apply(ev)
	}
	// The engine reports task events again when it commits them.
	for _, ev := range evs[1:] {
		ev.Checkpoint, ev.Seq = 3, 7
		p.apply(ev)
	}
	if got := p.line(); got != "executor · 1/3 done · 1 pending · 1 model call" {
		t.Fatalf("progress line: %q", got)
	}
}

// An event whose data does not decode is said on the progress line, not
// counted as a call of no role.
func TestProgressSaysAnEventThatDoesNotDecode(t *testing.T) {
	p := newProgress("run")
	p.apply(engine.Event{Type: engine.EventModelCalled, Node: "executor", Task: "a", Data: json.RawMessage(`{"role":7}`), At: time.Now()})
	if got := p.line(); !strings.Contains(got, "! the model.called event's data does not decode") {
		t.Fatalf("progress line: %q", got)
	}
}

// An engine error's fixes are said in the thread view's keys, rebound
// ones as they are bound.
func TestRunErrorsNameTheKeysThatFixThem(t *testing.T) {
	k := newThreadKeys()
	k.Resume = bind("resume", "R")
	err := fmt.Errorf("resume: %w", &engine.BudgetError{Thread: "b", Used: 900, Budget: 800})
	if got := k.fixes(err); got != ": R resumes" {
		t.Errorf("a budget error's fix reads %q", got)
	}
	ended := &engine.RunEndedError{Thread: "c", RunStatus: engine.RunStatus{Status: engine.RunCancelled, Checkpoint: 3}}
	if got := k.fixes(ended); got != ": i/enter writes a new turn, f forks" {
		t.Errorf("an ended run's fixes read %q", got)
	}
	// A node's fixes (a failed verification's: review it, a new turn),
	// as a worker passes them on.
	failed := &engine.FixError{Err: errors.New("verify failed the run"), Fix: []engine.Fix{engine.ShowFix("v"), engine.NewTurnFix("v")}}
	if got := k.fixes(failed); got != ": i/enter writes a new turn" {
		t.Errorf("a failed verification's fixes read %q", got)
	}
	held := engine.Fixable("t", 0, errors.New("held"), engine.Fix{Action: engine.FixWait, Thread: "t"}, engine.Fix{Action: engine.FixTakeOver, Thread: "t"})
	if got := k.fixes(held); got != ": wait for the other process to finish, or stop it" {
		t.Errorf("a held thread's fixes read %q", got)
	}
	if got := k.fixes(errors.New("boom")); got != "" {
		t.Errorf("an error without fixes reads %q", got)
	}
}

// T's save keeps the file's other lines and replaces the theme where it is,
// also inside an old [tui] table.
func TestSaveThemeKeepsTheRest(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rewind", "config.toml")
	if err := SaveTheme(path, "light"); err != nil {
		t.Fatal(err)
	}
	if c, err := LoadConfig(path); err != nil || c.Theme != "light" {
		t.Fatalf("a new file: %+v %v", c, err)
	}
	for before, after := range map[string]string{
		"# mine\n[tui]\ntheme = \"dark\"\nmouse = false\n":              "# mine\n[tui]\ntheme = \"light\"\nmouse = false\n",
		"mouse = true # yes\n\n[keys]\nkill = \"ctrl+k\"\n":             "mouse = true # yes\n\ntheme = \"light\"\n[keys]\nkill = \"ctrl+k\"\n",
		"theme = \"dark\"   # the old one\n[keys]\nkill = \"ctrl+k\"\n": "theme = \"light\"  # the old one\n[keys]\nkill = \"ctrl+k\"\n",
	} {
		if err := os.WriteFile(path, []byte(before), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := SaveTheme(path, "light"); err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(path)
		if string(got) != after {
			t.Errorf("saving into %q gave %q, want %q", before, got, after)
		}
	}
	// A file that does not load is left alone, and the error says so.
	bad := "mouse = maybe\n"
	if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := SaveTheme(path, "light"); err == nil || !strings.Contains(err.Error(), "fix it by hand") {
		t.Errorf("saving into a broken file: %v", err)
	}
	if got, _ := os.ReadFile(path); string(got) != bad {
		t.Errorf("a broken file was changed: %q", got)
	}
}

// Counted words read as English: "1 model call" (issue 33 saw "model
// call(s)"; the ticket's conversation title is ticketview's
// TestCountsReadAsEnglish).
func TestCountsReadAsEnglish(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{plural(1, "model call", "model calls"), "1 model call"},
		{plural(0, "model call", "model calls"), "0 model calls"},
	} {
		if c.got != c.want {
			t.Errorf("%q, want %q", c.got, c.want)
		}
	}
}

// Long JSON in the diff and the state wraps at token boundaries (spaces,
// commas), never inside a key: it wrapped compact JSON wherever
// the line ended ("add / i / tional_kwargs").
func TestJSONWrapsAtTokenBoundaries(t *testing.T) {
	r := newRenderer(themes.Or(themes.Dark))
	msg := `{"content":"look up the order status","additional_kwargs":{},"response_metadata":{},"type":"human","name":null,"example":false}`
	keys := []string{"additional_kwargs", "response_metadata", "content", "example"}
	for _, w := range []int{30, 41, 57, 64} {
		diff := r.diffLines([]engine.ChannelDiff{{Channel: "messages", Summary: "1 added", Lines: []string{"+" + msg}}}, w, true)
		state := r.json([]byte(`{"messages":[`+msg+`]}`), w, "  ", true)
		for name, lines := range map[string][]string{"diff": diff, "state": state} {
			var text []string
			for _, l := range lines {
				text = append(text, strings.TrimLeft(ansi.Strip(l), " +"))
			}
			for _, k := range keys {
				if !slices.ContainsFunc(text, func(l string) bool { return strings.Contains(l, `"`+k+`"`) }) {
					t.Errorf("%s at %d columns splits %q across lines:\n%s", name, w, k, strings.Join(text, "\n"))
				}
			}
		}
	}
}
