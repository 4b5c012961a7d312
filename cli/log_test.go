package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"rewind/engine"
	"rewind/engine/ticket"
	"rewind/store"
	"rewind/store/browse"
	"rewind/store/langgraph/lgtest"
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

// rewind log --values streams every checkpoint of every branch, oldest
// first, one JSON line each, with the values show --json prints for it;
// -n and --before choose the same checkpoints as log's listing; a
// LangGraph database is refused with what to run instead.
func TestLogValuesStreamsEveryState(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db string) {
		must := func(args ...string) string {
			t.Helper()
			code, out, stderr := run(t, append(args, "--store", db)...)
			if code != ExitOK {
				t.Fatalf("%q: exit %d: %s", args, code, stderr)
			}
			return out
		}
		for _, in := range []string{"Where is SO20260902?", "Please send the invoice for SO20260903.", "Can I still cancel SO20260904?"} {
			must("run", "--thread", "v", "--input", in)
		}
		must("fork", "v", "9", "--input", "Change the delivery address of SO20260905 to my office.")
		var listed struct {
			Checkpoints []logRow `json:"checkpoints"`
		}
		if err := json.Unmarshal([]byte(must("log", "v", "--json")), &listed); err != nil {
			t.Fatal(err)
		}
		lines := func(args ...string) []valuesLine {
			t.Helper()
			var out []valuesLine
			for _, l := range strings.Split(strings.TrimSuffix(must(append([]string{"log", "v", "--values"}, args...)...), "\n"), "\n") {
				var r valuesLine
				if err := json.Unmarshal([]byte(l), &r); err != nil {
					t.Fatalf("log --values %q: a line does not decode: %v\n%.300s", args, err, l)
				}
				out = append(out, r)
			}
			return out
		}
		all := lines()
		if len(all) != len(listed.Checkpoints) {
			t.Fatalf("log --values streams %d checkpoints, log --json lists %d", len(all), len(listed.Checkpoints))
		}
		if !valuesAsShown(t, all, listed.Checkpoints, must) {
			t.Fatal("no line is the fork's first checkpoint: the test lost its branch")
		}
		var ids []int64
		for _, r := range lines("-n", "5", "--before", "12") {
			ids = append(ids, r.ID)
		}
		if !slices.Equal(ids, []int64{7, 8, 9, 10, 11}) {
			t.Fatalf("log --values -n 5 --before 12 streams %v, want 7…11", ids)
		}
		if code, _, stderr := run(t, "log", "nope", "--values", "--store", db); code != ExitFail || !strings.Contains(stderr, `thread "nope" not found`) {
			t.Fatalf("log --values of an unknown thread: exit %d, %s", code, stderr)
		}
	})
	for _, file := range []string{"sqlite-js.db", "sqlite-python.db"} {
		langGraphValuesAsShown(t, "sqlite:"+lgtest.Copy(t, file))
	}
}

// langGraphValuesAsShown: on a LangGraph database, log --values streams
// log --json's listings oldest first, each with the graph's channels as
// show --json reads them, and -n picks the newest.
func langGraphValuesAsShown(t *testing.T, db string) {
	t.Helper()
	must := func(args ...string) string {
		t.Helper()
		code, out, stderr := run(t, append(args, "--store", db)...)
		if code != ExitOK {
			t.Fatalf("%q on %s: exit %d: %s", args, db, code, stderr)
		}
		return out
	}
	var listed struct {
		Checkpoints []browse.Listing `json:"checkpoints"`
	}
	if err := json.Unmarshal([]byte(must("log", "t-main", "--json")), &listed); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(must("log", "t-main", "--values"), "\n"), "\n")
	if len(lines) != len(listed.Checkpoints) || len(lines) < 5 {
		t.Fatalf("log --values streams %d lines; log --json lists %d checkpoints", len(lines), len(listed.Checkpoints))
	}
	for i, l := range lines {
		var got struct {
			browse.Listing
			Values map[string]any `json:"values"`
		}
		if err := json.Unmarshal([]byte(l), &got); err != nil {
			t.Fatalf("line %d does not decode: %v\n%.300s", i, err, l)
		}
		if want := listed.Checkpoints[i]; !reflect.DeepEqual(got.Listing, want) {
			t.Fatalf("line %d is %+v; log --json lists %+v there", i, got.Listing, want)
		}
		var shown struct {
			Checkpoint browse.Checkpoint `json:"checkpoint"`
		}
		if err := json.Unmarshal([]byte(must("show", "t-main", got.ID, "--json")), &shown); err != nil {
			t.Fatal(err)
		}
		want := map[string]any{}
		for _, ch := range shown.Checkpoint.Channels {
			if !ch.Internal {
				want[ch.Name] = ch.Value
			}
		}
		if !reflect.DeepEqual(got.Values, want) {
			t.Fatalf("checkpoint %s streams the values %v; show --json shows %v", got.ID, got.Values, want)
		}
	}
	newest := strings.Split(strings.TrimSpace(must("log", "t-main", "--values", "-n", "2")), "\n")
	if len(newest) != 2 || newest[0] != lines[len(lines)-2] || newest[1] != lines[len(lines)-1] {
		t.Fatalf("log --values -n 2 streams %d lines, not the newest two of the whole stream", len(newest))
	}
}

// valuesLine is a line of log --values as a reader decodes it.
type valuesLine struct {
	logRow
	Values map[string]json.RawMessage `json:"values"`
}

// valuesAsShown wants each line to be the listing log --json gives at its
// place and, for a sample, the fork's and the newest, the values show
// --json prints; it says whether a line was a fork's first checkpoint.
func valuesAsShown(t *testing.T, all []valuesLine, listed []logRow, show func(args ...string) string) (forked bool) {
	t.Helper()
	for i, r := range all {
		if want := listed[i]; !reflect.DeepEqual(r.logRow, want) {
			t.Fatalf("line %d is checkpoint %+v; log --json lists %+v there", i, r.logRow, want)
		}
		branch := r.Parent != 0 && r.Parent != r.ID-1
		forked = forked || branch
		if r.ID%7 != 0 && i != len(all)-1 && !branch {
			continue // show is a process's worth of work: a sample, the fork and the newest
		}
		var shown struct {
			Checkpoint struct {
				Values map[string]json.RawMessage `json:"values"`
			} `json:"checkpoint"`
		}
		if err := json.Unmarshal([]byte(show("show", "v", fmt.Sprint(r.ID), "--json")), &shown); err != nil {
			t.Fatal(err)
		}
		if got, want := jsonOf(t, r.Values), jsonOf(t, shown.Checkpoint.Values); got != want {
			t.Fatalf("checkpoint %d streams the values\n%.600s\nshow --json prints\n%.600s", r.ID, got, want)
		}
	}
	return forked
}

// jsonOf is v as JSON with its keys sorted, compact: two decodings of
// the same values compare equal.
func jsonOf(t *testing.T, v map[string]json.RawMessage) string {
	t.Helper()
	m := map[string]any{}
	for k, raw := range v {
		var x any
		if err := json.Unmarshal(raw, &x); err != nil {
			t.Fatalf("channel %s: %v", k, err)
		}
		m[k] = x
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
