package storetest

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"rewind/store"
)

// Drafts (capability Drafts): the side-effect table, keyed by operation id,
// and (with Fencing) fenced like the other writes.

// drafts is the store's side-effect table: every backend has one.
func drafts(t *testing.T, s store.Store) store.Drafts {
	t.Helper()
	ds, ok := s.(store.Drafts)
	if !ok {
		t.Fatalf("%T declares %s but does not implement store.Drafts", s, Drafts)
	}
	return ds
}

func draft(thread, op, body string) store.Draft {
	return store.Draft{ThreadID: thread, OperationID: op, Body: []byte(body)}
}

func createDraft(t *testing.T, ds store.Drafts, d store.Draft, wantCreated bool) store.Draft {
	t.Helper()
	got, created, err := ds.CreateDraft(t.Context(), d)
	if err != nil {
		t.Fatalf("CreateDraft(%s, %s): %v", clip(d.ThreadID), clip(d.OperationID), err)
	}
	if created != wantCreated {
		t.Errorf("CreateDraft(%s, %s) created = %v, want %v", clip(d.ThreadID), clip(d.OperationID), created, wantCreated)
	}
	if got.ThreadID != d.ThreadID || got.OperationID != d.OperationID || got.CreatedAt.IsZero() {
		t.Errorf("CreateDraft returned %s/%s at %v, want %s/%s and a CreatedAt", clip(got.ThreadID), clip(got.OperationID), got.CreatedAt, clip(d.ThreadID), clip(d.OperationID))
	}
	return got
}

func wantDraft(t *testing.T, got store.Draft, thread, op string, body []byte) {
	t.Helper()
	if got.ThreadID != thread || got.OperationID != op || !sameJSON(got.Body, body) || got.CreatedAt.IsZero() {
		t.Errorf("draft = %s/%s %s (at %v), want %s/%s %s", clip(got.ThreadID), clip(got.OperationID), clip(string(got.Body)), got.CreatedAt,
			clip(thread), clip(op), clip(string(body)))
	}
}

func wantDrafts(t *testing.T, ds store.Drafts, thread string, ops ...string) {
	t.Helper()
	got, err := ds.ListDrafts(t.Context(), thread)
	if err != nil {
		t.Fatalf("ListDrafts(%s): %v", clip(thread), err)
	}
	var ids []string
	for _, d := range got {
		ids = append(ids, d.OperationID)
		if d.ThreadID != thread {
			t.Errorf("ListDrafts(%s) gave a draft of thread %s", clip(thread), clip(d.ThreadID))
		}
	}
	if !slices.Equal(ids, ops) {
		t.Errorf("ListDrafts(%s) = %q, want %q", clip(thread), clipAll(ids), clipAll(ops))
	}
}

func mustListDrafts(t *testing.T, ds store.Drafts, thread string) []store.Draft {
	t.Helper()
	list, err := ds.ListDrafts(t.Context(), thread)
	if err != nil {
		t.Fatalf("ListDrafts(%s): %v", clip(thread), err)
	}
	return list
}

func draftEpoch(d store.Draft, epoch int64) store.Draft {
	d.Epoch = epoch
	return d
}

// A retried side effect finds the first draft: same key, one row, the
// first body kept.
func testDraftsIdempotent(t *testing.T, s store.Store) {
	ds := drafts(t, s)
	start := time.Now()
	first := createDraft(t, ds, draft("t", "op-1", `{"to":"customer","body":"first"}`), true)
	wantDraft(t, first, "t", "op-1", []byte(`{"to":"customer","body":"first"}`))
	if first.CreatedAt.Before(start.Add(-5*time.Minute)) || first.CreatedAt.After(time.Now().Add(5*time.Minute)) {
		t.Errorf("CreatedAt = %v, want about %v", first.CreatedAt, start)
	}
	time.Sleep(5 * time.Millisecond) // so a rewritten row would get a new CreatedAt
	for _, body := range []string{`{"to":"customer","body":"first"}`, `{"to":"customer","body":"second"}`} {
		again := createDraft(t, ds, draft("t", "op-1", body), false)
		wantDraft(t, again, "t", "op-1", first.Body)
		if !again.CreatedAt.Equal(first.CreatedAt) {
			t.Errorf("CreatedAt changed by a repeated CreateDraft: %v, then %v", first.CreatedAt, again.CreatedAt)
		}
	}
	got, err := ds.Draft(t.Context(), "t", "op-1")
	if err != nil {
		t.Fatalf("Draft: %v", err)
	}
	wantDraft(t, got, "t", "op-1", first.Body)
	wantDrafts(t, ds, "t", "op-1")
	// The same operation id in another thread is another draft.
	createDraft(t, ds, draft("u", "op-1", `{"u":true}`), true)
	wantDrafts(t, ds, "t", "op-1")
	if got, err := ds.Draft(t.Context(), "t", "op-1"); err != nil || !sameJSON(got.Body, first.Body) {
		t.Errorf("Draft(t, op-1) after u's = %s, %v; want the first body", got.Body, err)
	}
}

func testDraftsConcurrent(t *testing.T, s store.Store) {
	ds := drafts(t, s)
	const n = 8
	type result struct {
		d       store.Draft
		created bool
		err     error
	}
	for round := range 3 {
		op := fmt.Sprint("op-", round)
		results := make(chan result, n)
		start := make(chan struct{})
		for i := range n {
			go func() {
				<-start
				d, created, err := ds.CreateDraft(t.Context(), draft("t", op, fmt.Sprintf(`{"writer":%d}`, i)))
				results <- result{d, created, err}
			}()
		}
		close(start)
		var winners int
		var bodies [][]byte
		for range n {
			r := <-results
			if r.err != nil {
				t.Fatalf("racing CreateDraft: %v", r.err)
			}
			if r.created {
				winners++
			}
			bodies = append(bodies, r.d.Body)
		}
		if winners != 1 {
			t.Errorf("round %d: %d of %d racing CreateDraft calls created the draft, want exactly 1", round, winners, n)
		}
		stored, err := ds.Draft(t.Context(), "t", op)
		if err != nil {
			t.Fatalf("Draft: %v", err)
		}
		for _, b := range bodies {
			if !sameJSON(b, stored.Body) {
				t.Errorf("round %d: a racing caller got body %s, but the stored one is %s", round, b, stored.Body)
			}
		}
	}
	wantDrafts(t, ds, "t", "op-0", "op-1", "op-2")
}

func testDraftsList(t *testing.T, s store.Store) {
	ds := drafts(t, s)
	ctx := t.Context()
	ops := []string{"b", "a", "B", "a\u00e9", "a1", "10", "9"} // bytewise: 10 9 B a a1 aé b
	for _, op := range ops {
		createDraft(t, ds, draft("t", op, fmt.Sprintf(`{"op":%s}`, jsonString(op))), true)
	}
	createDraft(t, ds, draft("u", "z", `{}`), true)
	wantDrafts(t, ds, "t", "10", "9", "B", "a", "a1", "a\u00e9", "b")
	wantDrafts(t, ds, "u", "z")
	wantDrafts(t, ds, "nope")
	wantDrafts(t, ds, "")
	list, _ := ds.ListDrafts(ctx, "t")
	for _, d := range list {
		wantDraft(t, d, "t", d.OperationID, fmt.Appendf(nil, `{"op":%s}`, jsonString(d.OperationID)))
	}
	for _, tc := range []struct{ thread, op string }{{"t", "c"}, {"t", "z"}, {"u", "a"}, {"nope", "a"}, {"", "a"}, {"t", ""}} {
		_, err := ds.Draft(ctx, tc.thread, tc.op)
		if !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Draft(%q, %q) = %v, want ErrNotFound", tc.thread, tc.op, err)
		}
	}
	// Bytes are not shared with the caller.
	d := draft("t", "alias", `{"a":"b"}`)
	createDraft(t, ds, d, true)
	copy(d.Body, "xxxxxxxxx")
	got, _ := ds.Draft(ctx, "t", "alias")
	copy(got.Body, "yyyyyyyyy")
	if again, err := ds.Draft(ctx, "t", "alias"); err != nil || !sameJSON(again.Body, []byte(`{"a":"b"}`)) {
		t.Errorf("draft body changed with the caller's buffers: %s, %v", again.Body, err)
	}
	// A cancelled context does nothing.
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, err := ds.CreateDraft(cancelled, draft("t", "late", `{}`)); !errors.Is(err, context.Canceled) {
		t.Errorf("CreateDraft on a cancelled context = %v, want context.Canceled", err)
	}
	if _, err := ds.Draft(cancelled, "t", "b"); !errors.Is(err, context.Canceled) {
		t.Errorf("Draft on a cancelled context = %v, want context.Canceled", err)
	}
	if _, err := ds.ListDrafts(cancelled, "t"); !errors.Is(err, context.Canceled) {
		t.Errorf("ListDrafts on a cancelled context = %v, want context.Canceled", err)
	}
	if _, err := ds.Draft(ctx, "t", "late"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a draft was created on a cancelled context (Draft: %v)", err)
	}
}

func testDraftsDeleted(t *testing.T, s store.Store) {
	ds := drafts(t, s)
	ctx := t.Context()
	for _, th := range []string{"x", "y"} {
		put(t, s, checkpoint(th, 1, 0))
		createDraft(t, ds, draft(th, "op-1", `{}`), true)
		createDraft(t, ds, draft(th, "op-2", `{}`), true)
	}
	if err := s.DeleteThread(ctx, "x"); err != nil {
		t.Fatalf("DeleteThread: %v", err)
	}
	wantDrafts(t, ds, "x")
	if _, err := ds.Draft(ctx, "x", "op-1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Draft of a deleted thread = %v, want ErrNotFound", err)
	}
	wantDrafts(t, ds, "y", "op-1", "op-2")
	// A new run of the thread makes its draft anew.
	createDraft(t, ds, draft("x", "op-1", `{"new":true}`), true)

	// A thread that has only drafts is a thread to delete, once.
	createDraft(t, ds, draft("drafts only", "op", `{}`), true)
	if err := s.DeleteThread(ctx, "drafts only"); err != nil {
		t.Fatalf("DeleteThread of a thread with only drafts: %v", err)
	}
	wantDrafts(t, ds, "drafts only")
	wantIs(t, s.DeleteThread(ctx, "drafts only"), store.ErrNotFound)
}

func testDraftsHostile(t *testing.T, s store.Store) {
	ds := drafts(t, s)
	long := strings.Repeat("x", 64<<10)
	ids := []string{"'; drop table graph_drafts;--", "$1", "$tag$", "%", "_", `\`, "NULL", "e\u0301", "🙂", long, long + "y"}
	bodies := []string{`{"s":"a\u0000b","k\u0000":["\u0000"]}`, `{"s":"x\udc00\ud800y"}`, `{"s":"` + "\uE000" + `"}`, `{"n":1.50}`}
	for i, th := range ids {
		for j, op := range ids {
			body := bodies[(i+j)%len(bodies)]
			createDraft(t, ds, draft(th, op, body), true)
		}
	}
	sorted := slices.Clone(ids)
	slices.Sort(sorted)
	for i, th := range ids {
		wantDrafts(t, ds, th, sorted...)
		for j, op := range ids {
			got, err := ds.Draft(t.Context(), th, op)
			if err != nil {
				t.Fatalf("Draft(%s, %s): %v", clip(th), clip(op), err)
			}
			wantDraft(t, got, th, op, []byte(bodies[(i+j)%len(bodies)]))
		}
	}
	for _, th := range ids {
		if err := s.DeleteThread(t.Context(), th); err != nil {
			t.Fatalf("DeleteThread(%s): %v", clip(th), err)
		}
	}
	for _, th := range ids {
		wantDrafts(t, ds, th)
	}
}

func testDraftsInvalid(t *testing.T, s store.Store) {
	ds := drafts(t, s)
	for _, tc := range []struct {
		name string
		d    store.Draft
	}{
		{"empty thread", draft("", "op", `{}`)},
		{"empty operation", draft("t", "", `{}`)},
		{"thread with NUL", draft("t\x00", "op", `{}`)},
		{"operation with NUL", draft("t", "op\x00", `{}`)},
		{"operation not UTF-8", draft("t", "op\xff", `{}`)},
		{"nil body", draft("t", "op", ``)},
		{"body not JSON", draft("t", "op", `{"a":`)},
		{"body not UTF-8", draft("t", "op", "\"\xff\"")},
		{"body too deep", store.Draft{ThreadID: "t", OperationID: "op", Body: nested(10001)}},
		{"body number too large", draft("t", "op", `[1e131072]`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, created, err := ds.CreateDraft(t.Context(), tc.d)
			wantRefused(t, err, "draft")
			if created {
				t.Error("a refused CreateDraft says it created the draft")
			}
		})
	}
	wantDrafts(t, ds, "t")
}

// A fenced writer cannot create a draft, but still finds one that exists:
// only a new row is refused, after the lookup, as for checkpoints.
func testFencedDrafts(t *testing.T, s store.Store) {
	ctx := t.Context()
	ds := drafts(t, s)
	createDraft(t, ds, draft("t", "unfenced", `{"n":0}`), true)
	old := fence(t, s, "t")
	first := createDraft(t, ds, draftEpoch(draft("t", "op-1", `{"n":1}`), old), true)
	if first.Epoch != 0 {
		t.Errorf("CreateDraft returned epoch %d, want 0: epochs are checked, not kept", first.Epoch)
	}
	cur := fence(t, s, "t")

	// The old writer's new draft is refused and leaves nothing.
	got, created, err := ds.CreateDraft(ctx, draftEpoch(draft("t", "op-2", `{"n":2}`), old))
	wantFenced(t, err, "t")
	if created || got.OperationID != "" {
		t.Errorf("a fenced CreateDraft gave %+v, created %v", got, created)
	}
	if _, err := ds.Draft(ctx, "t", "op-2"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Draft(op-2) after a fenced create = %v, want ErrNotFound", err)
	}

	// An existing draft is still returned to it, whatever body it brings:
	// the lookup comes first, so a fenced retry finds what was done.
	for _, epoch := range []int64{old, cur, 0, cur + 1} {
		again := createDraft(t, ds, draftEpoch(draft("t", "op-1", `{"n":"other"}`), epoch), false)
		wantDraft(t, again, "t", "op-1", first.Body)
		if !again.CreatedAt.Equal(first.CreatedAt) || again.Epoch != 0 {
			t.Errorf("CreateDraft(op-1, epoch %d) = created %v epoch %d, want the first draft's %v and epoch 0", epoch, again.CreatedAt, again.Epoch, first.CreatedAt)
		}
	}

	// The new writer and unfenced writers create; an epoch never handed
	// out is invalid, on a fenced thread and an unfenced one.
	createDraft(t, ds, draftEpoch(draft("t", "op-3", `{"n":3}`), cur), true)
	createDraft(t, ds, draft("t", "op-4", `{"n":4}`), true)
	_, created, err = ds.CreateDraft(ctx, draftEpoch(draft("t", "op-5", `{}`), cur+1))
	wantRefused(t, err, "draft")
	// Epochs are numbered across threads: one above every epoch handed out.
	_, created2, err2 := ds.CreateDraft(ctx, draftEpoch(draft("u", "op-1", `{}`), cur+1))
	wantRefused(t, err2, "draft")
	if created || created2 {
		t.Error("a refused CreateDraft says it created the draft")
	}
	wantDrafts(t, ds, "t", "op-1", "op-3", "op-4", "unfenced")
	wantDrafts(t, ds, "u")
	for _, d := range mustListDrafts(t, ds, "t") {
		if d.Epoch != 0 {
			t.Errorf("ListDrafts gave %s with epoch %d, want 0", d.OperationID, d.Epoch)
		}
	}
	if d, err := ds.Draft(ctx, "t", "op-3"); err != nil || d.Epoch != 0 {
		t.Errorf("Draft(op-3) = epoch %d, %v; want 0", d.Epoch, err)
	}
	// A later fence refuses the writer that was current.
	fence(t, s, "t")
	_, _, err = ds.CreateDraft(ctx, draftEpoch(draft("t", "op-6", `{}`), cur))
	wantFenced(t, err, "t")
}

// A writer creating drafts is fenced mid-stream: every draft it made
// before Fence returned is there, none after, and its first refused call
// is ErrFenced.
func testFencedBetweenDrafts(t *testing.T, s store.Store) {
	ctx := t.Context()
	ds := drafts(t, s)
	for round := range 5 {
		thread := fmt.Sprint("race-", round)
		old := fence(t, s, thread)
		var acked atomic.Int64
		var fenced atomic.Bool
		done := make(chan error, 1)
		go func() {
			for n := int64(1); ; n++ {
				after := fenced.Load()
				if _, _, err := ds.CreateDraft(ctx, draftEpoch(draft(thread, fmt.Sprintf("op-%06d", n), `{}`), old)); err != nil {
					done <- err
					return
				}
				acked.Store(n)
				if after {
					done <- fmt.Errorf("draft op-%06d was created by the old writer after Fence returned", n)
					return
				}
			}
		}()
		for acked.Load() < int64(2+round*5) {
			select {
			case err := <-done:
				t.Fatalf("the old writer failed before the takeover: %v", err)
			default:
				runtime.Gosched()
			}
		}
		fence(t, s, thread)
		fenced.Store(true)
		atFence := mustListDrafts(t, ds, thread)
		wantFenced(t, <-done, thread)
		after := mustListDrafts(t, ds, thread)
		if len(after) != len(atFence) {
			t.Errorf("round %d: %d drafts when Fence returned, %d once the old writer stopped: it created drafts after the fence", round, len(atFence), len(after))
		}
		if last := acked.Load(); int64(len(after)) != last {
			t.Errorf("round %d: the old writer was told %d drafts were created, the store holds %d", round, last, len(after))
		}
	}
}
