package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"rewind/cli/app"
	"rewind/engine"
	"rewind/engine/bench"
	"rewind/engine/ticket"
	"rewind/store"
	"rewind/store/backend/backendtest"
	"rewind/store/memory"
)

// `rewind threads` racing `rewind rm`: a thread listed and then deleted
// before its row reads it again (--tokens) drops from the list; the
// command does not fail with `thread "B-18" not found` (it did, when rm
// won the race). Without --tokens the rows are the list as it was read:
// each thread's status came with it.
func TestThreadsLeaveOutAThreadDeletedMeanwhile(t *testing.T) {
	t.Parallel()
	db := "sqlite:" + filepath.Join(t.TempDir(), "r.db")
	for _, th := range []string{"A", "B-18"} {
		if code, out, stderr := run(t, "run", "--store", db, "--thread", th, "--input", "Where is SO20260901?"); code != ExitOK {
			t.Fatalf("run %s: %d %s %s", th, code, out, stderr)
		}
	}
	a, err := app.Open(t.Context(), app.Config{Store: db})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	e := a.Engine
	ts, err := e.Threads(t.Context())
	if err != nil || len(ts) != 2 {
		t.Fatalf("threads: %v %v", ts, err)
	}
	// Another process's rm, between the list and the rows.
	if code, out, stderr := run(t, "rm", "--store", db, "B-18"); code != ExitOK {
		t.Fatalf("rm: %d %s %s", code, out, stderr)
	}
	for _, tokens := range []bool{false, true} {
		rows, err := threadRows(t.Context(), e, ts, tokens)
		if err != nil {
			t.Fatalf("tokens %v: %v", tokens, err)
		}
		want := []string{"A"}
		if !tokens {
			want = append(want, "B-18")
		}
		var got []string
		for _, r := range rows {
			got = append(got, r.ID)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("tokens %v: rows %q, want %q", tokens, got, want)
		}
	}
}

// callCounter counts the store's read calls a command makes.
type callCounter struct {
	store.Store
	calls atomic.Int64
}

func (s *callCounter) Threads(ctx context.Context) ([]store.Thread, error) {
	s.calls.Add(1)
	return s.Store.Threads(ctx)
}

func (s *callCounter) RecentThreads(ctx context.Context, before store.ThreadCursor, limit int) ([]store.Thread, int, error) {
	s.calls.Add(1)
	return s.Store.RecentThreads(ctx, before, limit)
}

func (s *callCounter) Get(ctx context.Context, thread string, id int64) (store.Checkpoint, error) {
	s.calls.Add(1)
	return s.Store.Get(ctx, thread, id)
}

func (s *callCounter) Latest(ctx context.Context, thread string) (store.Checkpoint, error) {
	s.calls.Add(1)
	return s.Store.Latest(ctx, thread)
}

func (s *callCounter) History(ctx context.Context, thread string, before int64, limit int) ([]store.Checkpoint, error) {
	s.calls.Add(1)
	return s.Store.History(ctx, thread, before, limit)
}

func (s *callCounter) Chain(ctx context.Context, thread string, id int64) ([]store.Checkpoint, error) {
	s.calls.Add(1)
	return s.Store.Chain(ctx, thread, id)
}

func (s *callCounter) Writes(ctx context.Context, thread string, id int64) ([]store.TaskWrites, error) {
	s.calls.Add(1)
	return s.Store.Writes(ctx, thread, id)
}

func (s *callCounter) Events(ctx context.Context, thread string, id int64) ([]store.Event, error) {
	s.calls.Add(1)
	return s.Store.Events(ctx, thread, id)
}

// copies stores what the engine puts for thread tI (I < real) under
// threads tI+real, tI+2·real, … below n as well: n threads of one turn
// each, thread J's turn on the input thread J%real had, for the CPU of
// real turns in this raced process (the test took 16 s of CPU with 1,000
// real turns, 3.4 s with 10). Only those real threads are warm in the
// engine: the copies are cold to it, as every thread is to a new
// `rewind threads` process.
type copies struct {
	store.Store
	real, n int
}

// each calls put with each copy's thread of thread, if it has any.
func (c copies) each(thread string, put func(copy string) error) error {
	var i int
	if _, err := fmt.Sscanf(thread, "t%04d", &i); err != nil || i >= c.real {
		return nil
	}
	for j := i + c.real; j < c.n; j += c.real {
		if err := put(fmt.Sprintf("t%04d", j)); err != nil {
			return err
		}
	}
	return nil
}

func (c copies) PutCheckpoint(ctx context.Context, cp store.Checkpoint, events []store.Event) error {
	if err := c.Store.PutCheckpoint(ctx, cp, events); err != nil {
		return err
	}
	return c.each(cp.ThreadID, func(thread string) error {
		cp := cp
		cp.ThreadID, cp.Epoch = thread, 0 // unfenced: the copy's thread was never fenced
		cp.Messages = slices.Clone(cp.Messages)
		for i := range cp.Messages {
			cp.Messages[i].ThreadID = thread
		}
		events := slices.Clone(events)
		for i := range events {
			events[i].ThreadID = thread
		}
		return c.Store.PutCheckpoint(ctx, cp, events)
	})
}

func (c copies) PutWrites(ctx context.Context, w store.TaskWrites) error {
	if err := c.Store.PutWrites(ctx, w); err != nil {
		return err
	}
	return c.each(w.ThreadID, func(thread string) error {
		w := w
		w.ThreadID, w.Epoch = thread, 0
		return c.Store.PutWrites(ctx, w)
	})
}

// threadsCalls writes n threads of one turn each (a turn on each of
// bench.Sentences, copied to the others: copies) and says how many store
// reads `rewind threads` makes over them, and how many rows it printed.
func threadsCalls(t *testing.T, n int) (calls int64, lines int) {
	t.Helper()
	ctx := t.Context()
	real := min(n, len(bench.Sentences))
	st := &callCounter{Store: copies{Store: memory.New(), real: real, n: n}}
	e, err := ticket.NewEngine(st, ticket.NewMock(), ticket.WithSources(ticket.NewMemorySources()))
	if err != nil {
		t.Fatal(err)
	}
	for i := range real {
		if _, err := e.Run(ctx, fmt.Sprintf("t%04d", i), ticket.Input(bench.Sentences[i%len(bench.Sentences)]), engine.RunConfig{}); err != nil {
			t.Fatal(err)
		}
	}
	st.calls.Store(0)
	var out strings.Builder
	if err := runThreads(ctx, rewindReader(e), threadsArgs{}, &out); err != nil {
		t.Fatal(err)
	}
	return st.calls.Load(), strings.Count(out.String(), "\n") - 1
}

// `rewind threads` reads every thread's status with the list (issue 31:
// one read a thread was most of its time at 1,001 threads): as many
// store reads at 1,000 threads as at 10.
func TestThreadsReadsDoNotGrowWithThreads(t *testing.T) {
	t.Parallel()
	few, fewLines := threadsCalls(t, 10)
	many, manyLines := threadsCalls(t, 1000)
	if fewLines != 10 || manyLines != 1000 {
		t.Fatalf("threads printed %d and %d rows, want 10 and 1000", fewLines, manyLines)
	}
	if few != 1 || many != 1 {
		t.Errorf("threads made %d store reads at 10 threads, %d at 1,000: want the one list", few, many)
	}
}

// threadsOut is `rewind threads` with a, its output and its error.
func threadsOut(t *testing.T, e *engine.Engine, a threadsArgs) (string, error) {
	t.Helper()
	var out strings.Builder
	err := runThreads(t.Context(), rewindReader(e), a, &out)
	return out.String(), err
}

// threadIDs is the THREAD column of threads' table lines (the head and
// footer lines left out).
func threadIDs(out string) []string {
	var ids []string
	for l := range strings.Lines(out) {
		if f := strings.Fields(l); len(f) > 0 && f[0] != "THREAD" && f[0] != "…" && !strings.HasPrefix(f[0], "(") {
			ids = append(ids, f[0])
		}
	}
	return ids
}

// `rewind threads` pages like `rewind log` (issue 31 item 3), on every
// store: a screenful of the most recently updated threads, a footer
// counting the rest with the command that lists them, pages by
// --before/--limit reaching every thread once, everything piped and in
// --json a page at a time, and a --before naming no thread refused.
func TestThreadsPageNewestByUpdate(t *testing.T) {
	t.Parallel()
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		e, err := ticket.NewEngine(b.Open(t, "threads-pages"), ticket.NewMock(), ticket.WithSources(ticket.NewMemorySources()))
		if err != nil {
			t.Fatal(err)
		}
		const n = 12
		// Written in an order that is not the ids', then t03 again: the
		// most recently updated first is t03, then t11 down to t00 but t03.
		order := []int{0, 5, 1, 6, 2, 7, 3, 8, 4, 9, 10, 11}
		for _, i := range order {
			if _, err := e.Run(t.Context(), fmt.Sprintf("t%02d", i), ticket.Input(bench.Sentences[i%len(bench.Sentences)]), engine.RunConfig{}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := e.Run(t.Context(), "t03", ticket.Input("And the invoice?"), engine.RunConfig{}); err != nil {
			t.Fatal(err)
		}
		want := []string{"t03", "t11", "t10", "t09", "t04", "t08", "t07", "t02", "t06", "t01", "t05", "t00"}

		out, err := threadsOut(t, e, threadsArgs{last: 5, screen: true})
		if err != nil {
			t.Fatal(err)
		}
		if got := threadIDs(out); !slices.Equal(got, want[:5]) {
			t.Errorf("first screen lists %q, want the 5 most recently updated %q:\n%s", got, want[:5], out)
		}
		// The footer's cursor is t04's place: its id and update time.
		t04, _, err := e.RecentThreads(t.Context(), store.ThreadCursor{ID: "t09"}, 1)
		if err != nil || len(t04) != 1 || t04[0].ID != "t04" {
			t.Fatalf("the thread after t09: %v, %v; want t04", t04, err)
		}
		footer := "… 7 more threads, updated earlier: rewind threads --before t04@" + t04[0].UpdatedAt.UTC().Format(time.RFC3339Nano) + " --limit 5\n(the most recently updated screenful; every thread: rewind threads -n 0)\n"
		if !strings.HasSuffix(out, footer) {
			t.Errorf("first screen ends\n%s\nwant the footer\n%s", out, footer)
		}

		// Paging on with the footer's command reaches every thread once.
		if paged := pageThreads(t, e, n); !slices.Equal(paged, want) {
			t.Errorf("paged by --before/--limit 5: %q, want every thread once, %q", paged, want)
		}
		wantPipedThreads(t, e, want)
		_, err = threadsOut(t, e, threadsArgs{last: 5, before: "t99"})
		var u usageError
		if !errors.As(err, &u) || !strings.Contains(err.Error(), `--before t99: no thread of that id`) {
			t.Errorf("--before t99 (no such thread): %v, want a usage error naming it", err)
		}
	})
}

// pageThreads lists threads 5 at a time, each page --before the thread
// the last one's footer names, and says what they listed.
func pageThreads(t *testing.T, e *engine.Engine, most int) []string {
	t.Helper()
	var paged []string
	before := ""
	for range most {
		out, err := threadsOut(t, e, threadsArgs{last: 5, before: before})
		if err != nil {
			t.Fatalf("--before %q: %v", before, err)
		}
		paged = append(paged, threadIDs(out)...)
		_, cmd, ok := strings.Cut(out, "rewind threads --before ")
		if !ok {
			break
		}
		before, _, _ = strings.Cut(cmd, " ")
	}
	return paged
}

// wantPipedThreads: piped (no screen) and in --json, threads lists want, newest first, under one head and with no footer.
func wantPipedThreads(t *testing.T, e *engine.Engine, want []string) {
	t.Helper()
	out, err := threadsOut(t, e, threadsArgs{})
	if err != nil {
		t.Fatal(err)
	}
	if got := threadIDs(out); !slices.Equal(got, want) || strings.Contains(out, "more thread") || strings.Count(out, "THREAD") != 1 {
		t.Errorf("piped, lists %q, want %q under one head and no footer:\n%s", got, want, out)
	}
	out, err = threadsOut(t, e, threadsArgs{asJSON: true})
	if err != nil {
		t.Fatal(err)
	}
	var rows []threadRow
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("--json is not one JSON array: %v\n%s", err, out)
	}
	var ids []string
	for _, r := range rows {
		ids = append(ids, r.ID)
	}
	if !slices.Equal(ids, want) {
		t.Errorf("--json lists %q, want %q", ids, want)
	}
}

// writeBetween runs write once, after the first page of threads is read:
// a thread written while `rewind threads` lists them.
type writeBetween struct {
	store.Store
	write func(last string)
	done  bool
}

func (w *writeBetween) RecentThreads(ctx context.Context, before store.ThreadCursor, limit int) ([]store.Thread, int, error) {
	ts, rest, err := w.Store.RecentThreads(ctx, before, limit)
	if err == nil && !w.done && len(ts) > 0 {
		w.done = true
		w.write(ts[len(ts)-1].ID)
	}
	return ts, rest, err
}

// Listing every thread (piped, --json) neither repeats nor skips one
// when a thread is written meanwhile: the last thread of a page run
// again moved to the top, and paging on after it listed the others a
// second time.
func TestThreadsWrittenWhileListedAreListedOnce(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	st := &writeBetween{Store: memory.New()}
	e, err := ticket.NewEngine(st, ticket.NewMock(), ticket.WithSources(ticket.NewMemorySources()))
	if err != nil {
		t.Fatal(err)
	}
	st.done = true
	var want []string
	for i := range 6 {
		id := fmt.Sprintf("t%02d", i)
		if _, err := e.Run(ctx, id, ticket.Input(bench.Sentences[i%len(bench.Sentences)]), engine.RunConfig{}); err != nil {
			t.Fatal(err)
		}
		want = append(want, id)
	}
	st.done = false
	st.write = func(last string) {
		if _, err := e.Run(ctx, last, ticket.Input("And the invoice?"), engine.RunConfig{}); err != nil {
			t.Error(err)
		}
	}
	out, err := threadsOut(t, e, threadsArgs{})
	if err != nil {
		t.Fatal(err)
	}
	got := threadIDs(out)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("threads written while listed: listed %q, want each of %q once:\n%s", threadIDs(out), want, out)
	}
}

// An empty store says so, under no table head.
func TestThreadsOfAnEmptyStore(t *testing.T) {
	t.Parallel()
	e, err := ticket.NewEngine(memory.New(), ticket.NewMock(), ticket.WithSources(ticket.NewMemorySources()))
	if err != nil {
		t.Fatal(err)
	}
	out, err := threadsOut(t, e, threadsArgs{})
	if err != nil {
		t.Fatal(err)
	}
	if want := "no threads yet: start one with `rewind run --thread T --input TEXT`\n"; out != want {
		t.Errorf("threads of an empty store printed\n%q\nwant\n%q", out, want)
	}
}

// Paging on with the footer's cursor while the last thread listed is
// written again between pages lists every thread once, on every store:
// the cursor is where that thread was (its id and update time), not the
// thread, which moved to the top (with its id as --before the next page
// started over from the top and listed the first page again). --json
// gives each row's cursor, which pages on the same way.
func TestThreadsPageOnPastAThreadWrittenBetweenPages(t *testing.T) {
	t.Parallel()
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		e, err := ticket.NewEngine(b.Open(t, "threads-cursor"), ticket.NewMock(), ticket.WithSources(ticket.NewMemorySources()))
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for i := range 9 {
			if _, err := e.Run(t.Context(), fmt.Sprintf("t%02d", i), ticket.Input(bench.Sentences[i%len(bench.Sentences)]), engine.RunConfig{}); err != nil {
				t.Fatal(err)
			}
			want = append([]string{fmt.Sprintf("t%02d", i)}, want...)
		}
		wantJSONCursors(t, e, want)

		// The footer's pages of 3, the first page's last thread written
		// again after it was listed.
		paged := pageWritingOnce(t, e, len(want))
		if !slices.Equal(paged, want) {
			t.Errorf("paged by the footer's --before, %s written after the first page: %q, want every thread once, %q", want[2], paged, want)
		}
	})
}

// wantJSONCursors: --json gives each row its cursor (its id and update
// time), and --before a row's cursor lists the threads after it.
func wantJSONCursors(t *testing.T, e *engine.Engine, want []string) {
	t.Helper()
	out, err := threadsOut(t, e, threadsArgs{asJSON: true, last: 4})
	if err != nil {
		t.Fatal(err)
	}
	var rows []threadRow
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 4 {
		t.Fatalf("--json -n 4: %d rows, %v\n%s", len(rows), err, out)
	}
	for _, r := range rows {
		if c := threadCursor(r.Cursor); c.ID != r.ID || !c.UpdatedAt.Equal(r.UpdatedAt) {
			t.Errorf("--json row %s updated %v: cursor %q, want its id and update time", r.ID, r.UpdatedAt, r.Cursor)
		}
	}
	out, err = threadsOut(t, e, threadsArgs{asJSON: true, last: 4, before: rows[3].Cursor})
	if err != nil {
		t.Fatal(err)
	}
	var next []threadRow
	if err := json.Unmarshal([]byte(out), &next); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range next {
		ids = append(ids, r.ID)
	}
	if !slices.Equal(ids, want[4:8]) {
		t.Errorf("--json --before %s: %q, want %q", rows[3].Cursor, ids, want[4:8])
	}
}

// pageWritingOnce pages 3 at a time by the footer's --before, runs the
// first page's last thread again once it is listed, and says what the
// pages listed.
func pageWritingOnce(t *testing.T, e *engine.Engine, most int) []string {
	t.Helper()
	var paged []string
	before := ""
	for n := range most {
		out, err := threadsOut(t, e, threadsArgs{last: 3, before: before})
		if err != nil {
			t.Fatalf("--before %q: %v", before, err)
		}
		page := threadIDs(out)
		paged = append(paged, page...)
		if n == 0 {
			if _, err := e.Run(t.Context(), page[len(page)-1], ticket.Input("And the invoice?"), engine.RunConfig{}); err != nil {
				t.Fatal(err)
			}
		}
		_, cmd, ok := strings.Cut(out, "rewind threads --before ")
		if !ok {
			break
		}
		before, _, _ = strings.Cut(cmd, " ")
	}
	return paged
}

// --before reads THREAD@TIME as a place, cut at the last '@' and only
// when an RFC 3339 time follows; anything else is a thread's id. The
// footer writes the cursor of any id so that a shell reads it back whole.
func TestThreadCursorText(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 1, 12, 0, 0, 123456000, time.UTC)
	for _, c := range []struct {
		arg  string
		want store.ThreadCursor
	}{
		{"t-0412", store.ThreadCursor{ID: "t-0412"}},
		{"t-0412@2026-03-01T12:00:00.123456Z", store.ThreadCursor{ID: "t-0412", UpdatedAt: at}},
		{"a@b@2026-03-01T13:00:00.123456+01:00", store.ThreadCursor{ID: "a@b", UpdatedAt: at}},
		{"@2026-03-01T12:00:00.123456Z", store.ThreadCursor{UpdatedAt: at}},
		{"mail@example.com", store.ThreadCursor{ID: "mail@example.com"}},
		{"t@2026-03-01", store.ThreadCursor{ID: "t@2026-03-01"}},
		{"t@0001-01-01T00:00:00Z", store.ThreadCursor{ID: "t@0001-01-01T00:00:00Z"}},
	} {
		if got := threadCursor(c.arg); got.ID != c.want.ID || !got.UpdatedAt.Equal(c.want.UpdatedAt) {
			t.Errorf("threadCursor(%q) = %+v, want %+v", c.arg, got, c.want)
		}
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash to read the footer's cursors back")
	}
	for _, id := range []string{"t-0412", "a@b", "it's $HOME", "tab\there \"q\" \\ `x`", "bidi\u202eevil", "ünï ☃"} {
		c := store.ThreadCursor{ID: id, UpdatedAt: at}
		text := cursorText(c)
		got, err := exec.Command(bash, "-c", "printf %s "+text).Output()
		if err != nil {
			t.Fatalf("bash printf %s: %v", text, err)
		}
		if back := threadCursor(string(got)); string(got) != cursorArg(c) || back.ID != id || !back.UpdatedAt.Equal(at) {
			t.Errorf("the footer's cursor of %q, %s, reads back in bash as %q, want %q", id, text, got, cursorArg(c))
		}
	}
}
