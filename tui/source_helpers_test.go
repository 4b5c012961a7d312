package tui

// What the tests of a read-only source (a LangGraph fixture) share: the
// fixture opened, and rewind show's text cut into what a pane must say.

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"rewind/store/browse"
	"rewind/store/langgraph"
	"rewind/store/langgraph/lgtest"
)

// openFixture opens a copy of a LangGraph fixture, closed when the test
// ends, and returns it with the copy's path.
func openFixture(t *testing.T, name string) (browse.Source, string) {
	t.Helper()
	path := lgtest.Copy(t, name)
	src, err := langgraph.Open(context.Background(), "sqlite:"+path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = src.Close() })
	return src, path
}

// showSections cuts rewind show's text into its sections by heading
// (MESSAGES, STATE, NEXT, STORED, WRITES), each its indented lines.
func showSections(out string) map[string][]string {
	s := map[string][]string{}
	cur := ""
	for _, line := range strings.Split(out, "\n") {
		if line != "" && line[0] != ' ' {
			cur, _, _ = strings.Cut(line, " ")
			continue
		}
		if line != "" {
			s[cur] = append(s[cur], line)
		}
	}
	return s
}

// sameText checks that screen says what each line of a section says (as
// wants reads it) and returns how many lines it compared.
func sameText(t *testing.T, id, section string, lines []string, screen string, wants func(string) []string) int {
	t.Helper()
	n := 0
	for _, line := range lines {
		for _, w := range wants(line) {
			n++
			if !strings.Contains(screen, w) {
				t.Errorf("@%s: rewind show's %s says %q, the TUI lacks %q:\n%s", id, section, strings.TrimSpace(line), w, screen)
			}
		}
	}
	return n
}

var (
	showHead  = regexp.MustCompile(`^  #(\d+) (\S+)( \([^)]*\))?( ← call (\S+)( of #\d+)?)?:$`)
	showCall  = regexp.MustCompile(`^      tool call (\S+) ([^(]+)\((.*)\) (→ #\d+|no result yet)$`)
	showTask  = regexp.MustCompile(`^  task (\S+) (.+): (\d+) write\(s\)$`)
	showWrite = regexp.MustCompile(`^\s+(-?\d+) (\S+)( \[\w+\])? = (.*)$`)
)

// messageWants is what the conversation pane must say of a MESSAGES line.
func messageWants(line string) []string {
	if g := showHead.FindStringSubmatch(line); g != nil {
		w := []string{"#" + g[1] + " " + g[2] + g[3]}
		if g[5] != "" {
			w = append(w, "← "+g[5]+g[6])
		}
		return w
	}
	if g := showCall.FindStringSubmatch(line); g != nil {
		return []string{"┌ " + g[2] + " " + g[1] + " " + cut(g[3], 60)}
	}
	return []string{cut(strings.TrimSpace(line), 60)}
}

// stateWants is what the state pane must say of a STATE line: a plain
// value as name = JSON, a list or an object its name (the pane opens it
// as a tree).
func stateWants(line string) []string {
	name, value, _ := strings.Cut(strings.TrimSpace(line), " = ")
	if strings.HasPrefix(value, "[") || strings.HasPrefix(value, "{") {
		return []string{" " + name + " = "}
	}
	return []string{name + " = " + cut(value, 60)}
}

// writeWants is what the writes pane must say of a WRITES line.
func writeWants(line string) []string {
	if g := showTask.FindStringSubmatch(line); g != nil {
		return []string{g[2] + " task " + ansi.Strip(lgShortID(g[1])) + " · " + g[3] + " write(s)"}
	}
	if g := showWrite.FindStringSubmatch(line); g != nil {
		idx := fmt.Sprintf("%3s ", g[1])
		if g[3] != "" {
			return []string{idx + strings.TrimSpace(g[3]) + " " + g[2] + " = " + cut(g[4], 60)}
		}
		return []string{idx + g[2] + " = " + cut(g[4], 60)}
	}
	if s := strings.TrimSpace(line); strings.HasPrefix(s, "error: ") {
		return []string{cut(s, 60)}
	}
	return nil
}

// paneText is every line pane p holds, on the screen or scrolled off,
// without styling.
func (h *harness) paneText(p int) string {
	return ansi.Strip(strings.Join(h.m.content.panes[p].scroll.lines, "\n"))
}

var (
	fullID      = regexp.MustCompile(`@([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})`)
	storedHead  = regexp.MustCompile(`(?m)^STORED \((.*)\)$`)
	deltaPrefix = "a DeltaChannel snapshot: "
)

// storedAlike checks that the State pane (its text: pane) says what
// rewind show's NOT STORED and STORED sections say (show: its output),
// the wrapping aside and ids in their short form, and says neither when
// show does not; it returns how many lines it compared.
func storedAlike(t *testing.T, id, show, pane string) int {
	t.Helper()
	words := func(s string) string { return " " + strings.Join(strings.Fields(s), " ") + " " }
	got := words(pane)
	sections := showSections(show)
	n := 0
	want := func(section, w string) {
		n++
		if !strings.Contains(got, words(w)) {
			t.Errorf("@%s: rewind show's %s says %q, the State pane lacks it:\n%s", id, section, w, pane)
		}
	}
	absent := sections["NOT"]
	if has := strings.Contains(pane, "\nnot stored"); has != (absent != nil) {
		t.Errorf("@%s: rewind show has a NOT STORED section: %v, the State pane a \"not stored\" row: %v", id, absent != nil, has)
	}
	for _, line := range absent {
		want("NOT STORED", line)
		if names, _, ok := strings.Cut(strings.TrimSpace(line), ": no value here"); ok { // the row counts the channels named
			want("NOT STORED", fmt.Sprintf("not stored (%d)", len(strings.Split(names, ", "))))
		}
	}
	head := storedHead.FindStringSubmatch(show)
	if has := strings.Contains(pane, "\nas stored"); has != (head != nil) {
		t.Errorf("@%s: rewind show has a STORED section: %v, the State pane an \"as stored\" row: %v", id, head != nil, has)
	}
	if head == nil {
		return n
	}
	want("STORED", head[1])
	for _, line := range sections["STORED"] {
		line = fullID.ReplaceAllStringFunc(line, func(m string) string { return "@" + ansi.Strip(lgShortID(m[1:])) })
		name, value, held := strings.Cut(strings.TrimSpace(line), " = ")
		switch {
		case !held: // name: what it stores instead, or next: the stored due tasks
			want("STORED", line)
		case strings.HasPrefix(value, deltaPrefix):
			want("STORED", name+" = "+strings.TrimSuffix(deltaPrefix, " "))
		case strings.HasPrefix(value, "[") || strings.HasPrefix(value, "{"):
			want("STORED", name+" =")
		default:
			want("STORED", name+" = "+value)
		}
	}
	return n
}

// cut is s's first n bytes (the panes cut long values at their width).
func cut(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
