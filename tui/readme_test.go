package tui

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"rewind/store/browse"
	"rewind/themes"
)

const (
	keysBegin = "<!-- keys: generated from tui/keys.go by `go test ./tui -run TestREADMEListsEveryKey -update`; do not edit by hand -->"
	keysEnd   = "<!-- keys: end -->"
)

const (
	readOnlyBegin = "<!-- langgraph keys: generated from tui/readonly.go by `go test ./tui -run TestREADMEListsEveryKey -update`; do not edit by hand -->"
	readOnlyEnd   = "<!-- langgraph keys: end -->"
)

// readOnlyKeyTable is README's table of the keys that are off on a
// LangGraph database, from offKeys itself (the threads list's, then the
// thread view's).
func readOnlyKeyTable() string {
	ro := newReadOnlyPolicy(true, newThreadKeys(), newThreadList().keys)
	var b strings.Builder
	b.WriteString("\n| Key | On a LangGraph database |\n|---|---|\n")
	for _, sc := range []struct {
		s     screen
		where string
	}{{screenThreads, " (threads list)"}, {screenThread, ""}} {
		for _, o := range ro.offKeys(sc.s) {
			b.WriteString("| `" + o.b.Help().Key + "`" + sc.where + " | off: " + o.what + " |\n")
		}
	}
	return b.String()
}

// readmeKeyTable is README's key table, written from the bindings themselves.
func readmeKeyTable() string {
	var b strings.Builder
	row := func(k key.Binding, name string) {
		h := k.Help()
		if name != "" {
			name = "`" + name + "`"
		}
		b.WriteString("| `" + h.Key + "` | " + h.Desc + " | " + name + " |\n")
	}
	section := func(title string, bs []key.Binding) {
		b.WriteString("\n" + title + "\n\n| Key | Does |\n|---|---|\n")
		for _, k := range bs {
			b.WriteString("| `" + k.Help().Key + "` | " + k.Help().Desc + " |\n")
		}
	}
	// A key map's section is its FullHelp, which has every binding it
	// declares (TestEveryKeyMapHelpsWithEveryBinding).
	all := func(km help.KeyMap) []key.Binding {
		var bs []key.Binding
		for _, g := range km.FullHelp() {
			bs = append(bs, g...)
		}
		return bs
	}
	section("**Threads** (the first screen):", all(newThreadListKeys()))

	// The thread view's rows come from the table the bindings are made
	// from (threadKeyTable), in the ? screen's order.
	tk := newThreadKeys()
	b.WriteString("\n**Thread view** (the last column is the name to rebind it under `[keys]` in the config file):\n\n| Key | Does | `[keys]` name |\n|---|---|---|\n")
	for g := range helpGroups {
		for _, r := range threadKeyTable {
			if r.group == g {
				row(*r.field(&tk), r.name)
			}
		}
	}
	section("**Writing a message** (`i`):", all(newComposerKeys()))
	section("**Help and status log** (`?`, `L`; esc, q, ? or L closes them; other keys do nothing):", all(newPagerKeys()))
	yn, qk := newConfirmKeys(), newQuitKeys()
	section("**Questions** (kill, quit during a run, delete, discard):", []key.Binding{yn.Yes, yn.No, qk.Yes})
	return b.String()
}

// README lists every key as the bindings define it: the table between the
// markers is generated, so it cannot drift from the code. And its first
// steps start where the program does, on the threads list (n).
func TestREADMEListsEveryKey(t *testing.T) {
	path := filepath.Join("..", "README.md")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	i, j := strings.Index(readme, keysBegin), strings.Index(readme, keysEnd)
	if i < 0 || j < i {
		t.Fatalf("README lacks the key table markers %q … %q", keysBegin, keysEnd)
	}
	want := readmeKeyTable()
	got := readme[i+len(keysBegin) : j]
	if f := flag.Lookup("update"); f != nil && f.Value.String() == "true" && got != want+"\n" {
		readme = readme[:i+len(keysBegin)] + want + "\n" + readme[j:]
		if err := os.WriteFile(path, []byte(readme), 0o644); err != nil {
			t.Fatal(err)
		}
		got = want + "\n"
	}
	if got != want+"\n" {
		t.Errorf("README's key table is not the bindings': run `go test ./tui -run TestREADMEListsEveryKey -update`; want:\n%s", want)
	}
	i, j = strings.Index(readme, readOnlyBegin), strings.Index(readme, readOnlyEnd)
	if i < 0 || j < i {
		t.Fatalf("README lacks the LangGraph key table markers %q … %q", readOnlyBegin, readOnlyEnd)
	}
	want, got = readOnlyKeyTable(), readme[i+len(readOnlyBegin):j]
	if f := flag.Lookup("update"); f != nil && f.Value.String() == "true" && got != want {
		readme = readme[:i+len(readOnlyBegin)] + want + readme[j:]
		if err := os.WriteFile(path, []byte(readme), 0o644); err != nil {
			t.Fatal(err)
		}
		got = want
	}
	if got != want {
		t.Errorf("README's LangGraph key table is not offKeys': run `go test ./tui -run TestREADMEListsEveryKey -update`; want:\n%s", want)
	}
	// The first screen (no threads yet) asks for n; README's first steps too.
	var l threadList
	l.set(nil, nil, browse.Chain{})
	first := strings.Join(l.lines(themes.Or(themes.Dark), browse.Chain{}), "\n")
	if !strings.Contains(first, "No threads yet.") || !strings.Contains(first, "Press n") || !strings.Contains(readme, "says *No threads yet*. Press `n`") {
		t.Errorf("the first screen says %q; README's first steps should say the same (\"says *No threads yet*. Press `n`\")", first)
	}
}

// README's "Run it" names what the screen shows at each step: the threads
// list, the new-thread dialog with its suggested name and fields, and the
// thread with its run in the live strip.
func TestREADMERunItMatchesTheScreen(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	i, j := strings.Index(readme, "## Run it"), strings.Index(readme, "## Test it")
	if i < 0 || j < i {
		t.Fatal("README has no Run it section")
	}
	runIt := readme[i:j]
	for _, w := range []string{"*No threads yet*", "Press `n`", "*New thread*", "`ticket-1`", "Tab to *First message*", "live strip", "`X`", "`y`/`n`", "`r` resumes"} {
		if !strings.Contains(runIt, w) {
			t.Errorf("README's Run it lacks %q", w)
		}
	}
	e := newEngine(t)
	h := newHarness(t, e, Settings{}, 120, 40)
	h.until("the threads list", func() bool { return h.contains("No threads yet.") })
	h.key("n")
	h.until("the new-thread dialog", func() bool {
		return h.contains("New thread") && h.contains("ticket-1") && h.contains("First message")
	})
	h.key("tab")
	for _, r := range "My order SO20260901 hasn't arrived: where is the parcel?" {
		h.dispatch(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
	}
	h.key("enter")
	h.until("the thread with its run", func() bool { return h.contains("thread ticket-1") && h.contains("@1   › My order SO2026090") })
}
