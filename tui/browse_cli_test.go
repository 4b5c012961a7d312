package tui

import (
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"rewind/store/browse"
)

// The browser and `rewind log` say the same of each checkpoint of a
// LangGraph chain: the timeline row's step, source and tasks due, and the
// inspector's "next" line, are the CLI listing's STEP, SOURCE and NEXT
// cells (one describer, browse.DescribeNext: they had drifted to
// "worker(Send)×3" against "worker (Send)×3", and "executor ×3" on a
// rewind store).
func TestBrowserAndCLIListCheckpointsAlike(t *testing.T) {
	bin := rewindBinary(t)
	for _, tc := range []struct{ fixture, thread string }{{"sqlite-python.db", "t-main"}, {"sqlite-js.db", "t-fail"}} {
		t.Run(tc.thread, func(t *testing.T) {
			src, path := openFixture(t, tc.fixture)
			out, err := exec.Command(bin, "log", tc.thread, "--store", "sqlite:"+path).CombinedOutput()
			if err != nil {
				t.Fatalf("rewind log: %v\n%s", err, out)
			}
			cli := logCells(t, string(out))
			m, _ := openBrowser(t, src, tc.thread, 200, 60)
			ls := m.timeline.Listings()
			if len(ls) != len(cli) {
				t.Fatalf("the browser lists %d checkpoints, rewind log %d:\n%s", len(ls), len(cli), out)
			}
			sends := false
			for _, l := range ls {
				cells, ok := cli[l.ID]
				if !ok {
					t.Fatalf("rewind log does not list @%s:\n%s", l.ID, out)
				}
				sends = sends || strings.Contains(cells["NEXT"], "(Send)")
				m.timeline.MoveTo(l.ID)
				checkRowAgainstLog(t, l.ID, screenOf(m), cells)
			}
			if tc.thread == "t-main" && !sends {
				t.Fatalf("t-main's log shows no queued Send:\n%s", out)
			}
		})
	}
}

// checkRowAgainstLog checks the browser's screen at checkpoint id: the
// inspector's next line and the timeline row say what rewind log's cells
// say.
func checkRowAgainstLog(t *testing.T, id, screen string, cells map[string]string) {
	t.Helper()
	if want := "next " + withArrow(cells["NEXT"]) + " · "; !strings.Contains(screen, want) {
		t.Errorf("@%s: the inspector lacks %q (rewind log's NEXT):\n%s", id, want, screen)
	}
	row := cursorRow(screen)
	want := " " + cells["STEP"]
	if cells["SOURCE"] != browse.SourceLoop {
		want += " " + cells["SOURCE"]
	}
	if cells["NEXT"] != "—" {
		want += " " + withArrow(cells["NEXT"])
	}
	if !strings.Contains(row, want) {
		t.Errorf("@%s: the timeline row %q lacks %q (rewind log's STEP, SOURCE, NEXT)", id, row, want)
	}
}

// withArrow is a NEXT cell as the browser shows it.
func withArrow(next string) string {
	if next == "—" {
		return next
	}
	return "→ " + next
}

// cursorRow is the timeline row under the cursor, without the inspector
// beside it.
func cursorRow(screen string) string {
	for _, line := range strings.Split(screen, "\n") {
		if strings.HasPrefix(line, "▸ ") {
			row, _, _ := strings.Cut(line, "│")
			row, _, _ = strings.Cut(row, "┃")
			return strings.TrimRight(row, " ")
		}
	}
	return ""
}

// logCells reads rewind log's table: each checkpoint's cells by column.
func logCells(t *testing.T, out string) map[string]map[string]string {
	t.Helper()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	head := []rune(lines[0])
	var names []string
	var starts []int
	for i := 0; i < len(head); i++ {
		if head[i] != ' ' && (i == 0 || head[i-1] == ' ' && head[i-2] == ' ') {
			starts = append(starts, i)
			end := i
			for end < len(head) && !(head[end] == ' ' && (end+1 >= len(head) || head[end+1] == ' ')) {
				end++
			}
			names = append(names, string(head[i:end]))
		}
	}
	rows := map[string]map[string]string{}
	for _, line := range lines[1:] {
		r := []rune(line)
		if len(r) < starts[len(starts)-1] || strings.HasPrefix(line, "subgraph ") {
			continue
		}
		cells := map[string]string{}
		for i, s := range starts {
			end := len(r)
			if i+1 < len(starts) {
				end = starts[i+1]
			}
			cells[names[i]] = strings.TrimSpace(string(r[s:end]))
		}
		rows[cells["ID"]] = cells
	}
	if len(rows) == 0 || names[len(names)-1] != "NEXT" {
		t.Fatalf("rewind log printed no table ending in NEXT:\n%s", out)
	}
	return rows
}

// The browser and `rewind show` show the same text for each checkpoint
// of a LangGraph chain: each message's head (index, role, name, the call
// it answers), its lines and tool calls (conversation pane); each channel
// holding a plain value, as name = JSON (state pane); each task's writes
// (writes pane: who, the task, how many, each write's index, channel,
// kind and value, the error). The two print through different layouts
// (a pane of width w, a text page), so the test compares what each says,
// not where.
func TestBrowserAndCLIShowACheckpointAlike(t *testing.T) {
	bin := rewindBinary(t)
	for _, tc := range []struct{ fixture, thread string }{
		{"sqlite-python.db", "t-main"}, {"sqlite-python.db", "t-fail"}, {"sqlite-js.db", "t-main"}, {"sqlite-js.db", "t-fail"},
	} {
		t.Run(strings.TrimSuffix(tc.fixture, ".db")+"/"+tc.thread, func(t *testing.T) {
			src, path := openFixture(t, tc.fixture)
			m, press := openBrowser(t, src, tc.thread, 400, 300)
			run := runBrowser(m)
			checked := 0
			for _, l := range m.timeline.Listings() {
				out, err := exec.Command(bin, "show", tc.thread, l.ID, "--store", "sqlite:"+path).CombinedOutput()
				if err != nil {
					t.Fatalf("rewind show @%s: %v\n%s", l.ID, err, out)
				}
				m.timeline.MoveTo(l.ID)
				run(m.load())
				sections := showSections(string(out))
				press("1")
				checked += sameText(t, l.ID, "MESSAGES", sections["MESSAGES"], screenOf(m), messageWants)
				press("2")
				checked += sameText(t, l.ID, "STATE", sections["STATE"], screenOf(m), stateWants)
				press("3")
				checked += sameText(t, l.ID, "WRITES", sections["WRITES"], screenOf(m), writeWants)
			}
			if checked < 20 {
				t.Fatalf("only %d lines of rewind show compared: the sections were not read", checked)
			}
		})
	}
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
				t.Errorf("@%s: rewind show's %s says %q, the browser lacks %q:\n%s", id, section, strings.TrimSpace(line), w, screen)
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

// cut is s's first n bytes (the panes cut long values at their width).
func cut(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
