package tui

import (
	"os/exec"
	"strings"
	"testing"

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
