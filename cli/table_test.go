package cli

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// The tables of threads, log and a LangGraph store line up by terminal
// cells: text/tabwriter counted runes, so a thread id in CJK or emoji
// pushed the rest of its row right.
func TestTableAlignsByCells(t *testing.T) {
	var out bytes.Buffer
	tw := newTable(&out)
	fmt.Fprintln(tw, "THREAD\tSTATUS\tCHECKPOINTS")
	for _, id := range []string{"plain", "工单-一", `"🎫ticket"`, "é"} {
		fmt.Fprintf(tw, "%s\tdone\t8\n", id)
	}
	if err := tw.Flush(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 5 {
		t.Fatalf("%d lines: %q", len(lines), out.String())
	}
	for _, line := range lines {
		status := strings.Index(line, "done")
		if strings.HasPrefix(line, "THREAD") {
			status = strings.Index(line, "STATUS")
		}
		if col := ansi.StringWidth(line[:status]); col != 12 {
			t.Errorf("%q: its second column starts at cell %d, want %d (the widest id, 10 cells, and two spaces)", line, col, 12)
		}
		if strings.HasSuffix(line, " ") {
			t.Errorf("%q ends in a space", line)
		}
	}
}
