package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"rewind/engine"
	"rewind/engine/ticket"
	"rewind/store"
	"rewind/store/memory"
)

// rewind log streams a long thread a page at a time, oldest first, and
// prints what it printed when it held the whole history: the JSON byte
// for byte, every checkpoint once in the table.
func TestLogStreamsTheWholeHistory(t *testing.T) {
	t.Parallel()
	db := "sqlite:" + filepath.Join(t.TempDir(), "log.db")
	// The fixture comes from the built binary; the log under test runs here.
	code, out, stderr := runBuilt(t, "bench", "--store", db, "--turns", "70", "--json", "--sqlite-sync", "normal")
	if code != ExitOK {
		t.Fatalf("bench: %d %s", code, stderr)
	}
	var rep struct {
		Thread      string `json:"thread"`
		Checkpoints int64  `json:"checkpoints"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Checkpoints <= logPage {
		t.Fatalf("%d checkpoints: the log fits in one page", rep.Checkpoints)
	}
	code, got, stderr := run(t, "log", rep.Thread, "--store", db, "--json")
	if code != ExitOK {
		t.Fatalf("log --json: %d %s", code, stderr)
	}
	var doc struct {
		Thread      string   `json:"thread"`
		Checkpoints []logRow `json:"checkpoints"`
	}
	if err := json.Unmarshal([]byte(got), &doc); err != nil {
		t.Fatalf("log --json is not JSON: %v\n%.300s", err, got)
	}
	ids := make([]int64, len(doc.Checkpoints))
	for i, r := range doc.Checkpoints {
		ids[i] = r.ID
	}
	if doc.Thread != rep.Thread || int64(len(ids)) != rep.Checkpoints || !slices.IsSorted(ids) || ids[0] != 1 {
		t.Fatalf("log --json lists %d checkpoints (%v … %v) of %d", len(ids), ids[:3], ids[len(ids)-3:], rep.Checkpoints)
	}
	var whole strings.Builder
	if err := writeJSON(&whole, map[string]any{"thread": doc.Thread, "checkpoints": doc.Checkpoints}); err != nil {
		t.Fatal(err)
	}
	if got != whole.String() {
		t.Fatalf("log --json streamed differs from the whole document written at once:\n%.400s\n…\nwant\n%.400s", got, whole.String())
	}
	code, text, stderr := run(t, "log", rep.Thread, "--store", db)
	if code != ExitOK {
		t.Fatalf("log: %d %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if int64(len(lines)) != rep.Checkpoints+1 || !strings.HasPrefix(lines[0], "ID  ") {
		t.Fatalf("log: %d lines for %d checkpoints:\n%.300s", len(lines), rep.Checkpoints, text)
	}
	for i, line := range lines[1:] {
		if !strings.HasPrefix(line, fmt.Sprint(i+1)+" ") {
			t.Fatalf("log: line %d is %q", i+1, line)
		}
	}
	// The columns line up across pages: PARENT starts where it did.
	col := strings.Index(lines[0], "PARENT")
	if last := lines[len(lines)-1]; len(last) < col || last[col-1] != ' ' || last[col] == ' ' {
		t.Fatalf("log: the last line's columns do not line up with the header:\n%s\n%s", lines[0], last)
	}
}

// historyPages records the largest History read.
type historyPages struct {
	store.Store
	most int
}

func (h *historyPages) History(ctx context.Context, thread string, before int64, limit int) ([]store.Checkpoint, error) {
	rows, err := h.Store.History(ctx, thread, before, limit)
	h.most = max(h.most, len(rows))
	return rows, err
}

// rewind log never reads more than a page of listings at once, however
// long the thread: it streams.
func TestLogReadsAPageAtATime(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	st := &historyPages{Store: memory.New()}
	e, err := ticket.NewEngine(st, ticket.NewMock())
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 70; i++ {
		if _, err := e.Run(ctx, "long", ticket.Input(fmt.Sprintf("Where is SO%d?", i)), engine.RunConfig{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, asJSON := range []bool{false, true} {
		st.most = 0
		c := &cobra.Command{}
		var out strings.Builder
		c.SetOut(&out)
		c.SetContext(ctx)
		print := func() error { return runLog(ctx, rewindReader(e), "long", "", "", 0, false, false, &out) }
		if asJSON {
			print = func() error { return printLogJSON(c, e, "long", 0, 0) }
		}
		if err := print(); err != nil {
			t.Fatal(err)
		}
		if st.most > logPage || strings.Count(out.String(), "\n") < 560 {
			t.Errorf("json %v: a History read of %d listings (a page is %d), %d lines printed", asJSON, st.most, logPage, strings.Count(out.String(), "\n"))
		}
	}
}
