// Package storetest is the one conformance suite every store backend passes.
// Run asserts the behaviour the engine relies on, through the Store interface
// only; Bench measures the hot paths so backends can be compared.
package storetest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"rewind/store"
	"rewind/store/internal/check"
)

// Run runs the suite. open must return a fresh, empty store and close it
// with t.Cleanup.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	tests := []struct {
		name string
		run  func(t *testing.T, s store.Store)
	}{
		{"RoundTrip", testRoundTrip},
		{"Latest", testLatest},
		{"NotFound", testNotFound},
		{"History", testHistory},
		{"Forks", testForks},
		{"SameContentIsNoOp", testSameContent},
		{"Conflict", testConflict},
		{"SameValueNotSameBytes", testSameValue},
		{"Stale", testStale},
		{"RejectedPutWritesNothing", testRejectedPut},
		{"InvalidCheckpoint", testInvalidCheckpoint},
		{"Writes", testWrites},
		{"InvalidWrites", testInvalidWrites},
		{"Events", testEvents},
		{"Threads", testThreads},
		{"DeleteThread", testDeleteThread},
		{"Lock", testLock},
		{"HostilePayloads", testHostilePayloads},
		{"HostileThreadIDs", testHostileThreadIDs},
		{"LongIDsClippedInErrors", testLongIDsInErrors},
		{"NoAliasing", testNoAliasing},
		{"CancelledContext", testCancelled},
		{"ConcurrentPuts", testConcurrent},
		{"DraftsIdempotent", testDraftsIdempotent},
		{"DraftsConcurrent", testDraftsConcurrent},
		{"DraftsList", testDraftsList},
		{"DraftsDeleted", testDraftsDeleted},
		{"DraftsHostile", testDraftsHostile},
		{"DraftsInvalid", testDraftsInvalid},
		{"FenceEpochs", testFenceEpochs},
		{"FencedWrites", testFencedWrites},
		{"FencedBetweenWrites", testFencedBetweenWrites},
		{"FencedDrafts", testFencedDrafts},
		{"FencedBetweenDrafts", testFencedBetweenDrafts},
		{"FencedAcrossDelete", testFencedAcrossDelete},
		{"DeleteRacesFencedWriter", testDeleteRacesWriter},
		{"TxHook", testTxHook},
		{"PruneDeletesEveryRow", testPruneDeletes},
		{"PruneReroots", testPruneReroots},
		{"PruneRerootsFork", testPruneRerootsFork},
		{"PruneIsAtomic", testPruneAtomic},
		{"PruneKeepsTheHead", testPruneHead},
		{"PrunedIDsStayStale", testPrunedIDsStale},
		{"PruneRerootedSameContent", testPruneSameContent},
		{"PruneRacesWriters", testPruneRaces},
		{"HistoryReadsMetadataOnly", testHistoryMetaOnly},
		{"ChainStopsAtBase", testChain},
		{"MessagesStoredOnce", testMessagesOnce},
		{"BlobsStoredOnce", testBlobsOnce},
		{"PutSettlesWrites", testSettles},
		{"PruneRebasesAndFreesBlobs", testPruneRebase},
		{"Size", testSize},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, open(t)) })
	}
}

func testRoundTrip(t *testing.T, s store.Store) {
	start := time.Now()
	want := checkpoint("t", 1, 0)
	put(t, s, want, event("node.started", `{"node":"planner"}`))
	got, err := s.Get(t.Context(), "t", 1)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	wantCheckpoint(t, got, want)
	if got.CreatedAt.Before(start.Add(-5*time.Minute)) || got.CreatedAt.After(time.Now().Add(5*time.Minute)) {
		t.Errorf("CreatedAt = %v, want about %v", got.CreatedAt, start)
	}
	latest, err := s.Latest(t.Context(), "t")
	if err != nil {
		t.Fatalf("Latest: %v", err)
	}
	wantCheckpoint(t, latest, want)
}

func testLatest(t *testing.T, s store.Store) {
	put(t, s, checkpoint("t", 1, 0))
	put(t, s, checkpoint("t", 2, 1))
	put(t, s, checkpoint("t", 5, 1)) // a fork with a gap in the ids
	put(t, s, checkpoint("u", 9, 0))
	got, err := s.Latest(t.Context(), "t")
	if err != nil {
		t.Fatalf("Latest: %v", err)
	}
	wantCheckpoint(t, got, checkpoint("t", 5, 1))
	put(t, s, checkpoint("t", 7, 2))
	if got, err := s.Latest(t.Context(), "t"); err != nil || got.ID != 7 || got.ParentID != 2 {
		t.Errorf("Latest after a fork from 2 = %d (parent %d), %v; want 7 (parent 2)", got.ID, got.ParentID, err)
	}
}

func testNotFound(t *testing.T, s store.Store) {
	put(t, s, checkpoint("a", 1, 0))
	put(t, s, checkpoint("a", 2, 1))
	put(t, s, checkpoint("b", 1, 0))
	ctx := t.Context()
	for _, tc := range []struct {
		name string
		call func() error
	}{
		{"unknown thread", func() error { _, err := s.Get(ctx, "nope", 1); return err }},
		{"unknown id", func() error { _, err := s.Get(ctx, "a", 3); return err }},
		{"id of another thread", func() error { _, err := s.Get(ctx, "b", 2); return err }},
		{"id zero", func() error { _, err := s.Get(ctx, "a", 0); return err }},
		{"negative id", func() error { _, err := s.Get(ctx, "a", -1); return err }},
		{"empty thread", func() error { _, err := s.Get(ctx, "", 1); return err }},
		{"latest of unknown thread", func() error { _, err := s.Latest(ctx, "nope"); return err }},
		{"latest of empty thread id", func() error { _, err := s.Latest(ctx, ""); return err }},
	} {
		t.Run(tc.name, func(t *testing.T) { wantIs(t, tc.call(), store.ErrNotFound) })
	}
}

func testHistory(t *testing.T, s store.Store) {
	for id := int64(1); id <= 10; id++ {
		put(t, s, checkpoint("t", id, id-1))
	}
	for id := int64(1); id <= 3; id++ {
		put(t, s, checkpoint("other", id, id-1))
	}
	for _, tc := range []struct {
		before int64
		limit  int
		want   []int64
	}{
		{0, 0, ids(10, 1)},
		{-1, -1, ids(10, 1)},
		{5, 0, ids(4, 1)},
		{0, 3, ids(10, 8)},
		{5, 2, ids(4, 3)},
		{11, 0, ids(10, 1)},
		{100, 1, ids(10, 10)},
		{1, 0, nil},
		{0, 100, ids(10, 1)},
	} {
		t.Run(fmt.Sprintf("before=%d,limit=%d", tc.before, tc.limit), func(t *testing.T) {
			got, err := s.History(t.Context(), "t", tc.before, tc.limit)
			if err != nil {
				t.Fatalf("History: %v", err)
			}
			if !slices.Equal(idsOf(got), tc.want) {
				t.Fatalf("History ids = %v, want %v", idsOf(got), tc.want)
			}
			for _, cp := range got {
				wantCheckpoint(t, cp, checkpoint("t", cp.ID, cp.ID-1))
			}
		})
	}
	t.Run("unknown thread", func(t *testing.T) {
		got, err := s.History(t.Context(), "nope", 0, 0)
		if err != nil || len(got) != 0 {
			t.Errorf("History of an unknown thread = %v, %v; want an empty list and no error", idsOf(got), err)
		}
	})
}

func testForks(t *testing.T, s store.Store) {
	// 1 ← 2 ← 3, and 2 has three more children: 4, 5 and 6 (← 7).
	parents := map[int64]int64{1: 0, 2: 1, 3: 2, 4: 2, 5: 2, 6: 2, 7: 6}
	for id := int64(1); id <= 7; id++ {
		put(t, s, checkpoint("t", id, parents[id]))
	}
	for id, parent := range parents {
		got, err := s.Get(t.Context(), "t", id)
		if err != nil {
			t.Fatalf("Get %d: %v", id, err)
		}
		wantCheckpoint(t, got, checkpoint("t", id, parent))
	}
	history, err := s.History(t.Context(), "t", 0, 0)
	if err != nil || !slices.Equal(idsOf(history), ids(7, 1)) {
		t.Errorf("History = %v, %v; want %v", idsOf(history), err, ids(7, 1))
	}

	// The parent must exist in the same thread; a failed put leaves no trace,
	// so the next id is still free afterwards.
	put(t, s, checkpoint("u", 1, 0))
	for _, cp := range []store.Checkpoint{
		checkpoint("t", 8, 99),
		checkpoint("t", 8, 8),
		checkpoint("u", 2, 7), // 7 exists, but in thread t
		checkpoint("new", 1, 1),
	} {
		err := s.PutCheckpoint(t.Context(), cp, []store.Event{event("x", `{}`)})
		wantIs(t, err, store.ErrNotFound)
		if _, err := s.Get(t.Context(), cp.ThreadID, cp.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("checkpoint %d of %s with a missing parent was stored (Get: %v)", cp.ID, cp.ThreadID, err)
		}
	}
	put(t, s, checkpoint("t", 8, 3))
	put(t, s, checkpoint("u", 2, 1))
}

func testSameContent(t *testing.T, s store.Store) {
	evs := []store.Event{event("a", `{"n":1}`), event("b", `{"n":2}`), event("c", `{}`)}
	put(t, s, checkpoint("t", 1, 0))
	put(t, s, checkpoint("t", 2, 1), evs...)
	first, err := s.Get(t.Context(), "t", 2)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	put(t, s, checkpoint("t", 3, 2))
	time.Sleep(5 * time.Millisecond) // so a rewritten row would get a new CreatedAt

	// Re-delivered puts, also after a newer checkpoint exists, and with the
	// same JSON written differently (jsonb normalises it anyway).
	reformatted := checkpoint("t", 2, 1)
	reformatted.State = reformat(t, reformatted.State)
	numbered := slices.Clone(evs)
	for i := range numbered {
		numbered[i].Seq = i + 1
		numbered[i].Payload = reformat(t, numbered[i].Payload)
	}
	for name, put := range map[string]func() error{
		"identical":   func() error { return s.PutCheckpoint(t.Context(), checkpoint("t", 2, 1), evs) },
		"reformatted": func() error { return s.PutCheckpoint(t.Context(), reformatted, numbered) },
		"no events":   func() error { return s.PutCheckpoint(t.Context(), checkpoint("t", 3, 2), nil) },
		"newest":      func() error { return s.PutCheckpoint(t.Context(), checkpoint("t", 3, 2), []store.Event{}) },
	} {
		if err := put(); err != nil {
			t.Errorf("%s re-put: %v, want nil", name, err)
		}
	}
	got, err := s.Get(t.Context(), "t", 2)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	wantCheckpoint(t, got, first)
	if !got.CreatedAt.Equal(first.CreatedAt) {
		t.Errorf("CreatedAt changed by a no-op put: %v, then %v", first.CreatedAt, got.CreatedAt)
	}
	wantEvents(t, s, "t", 2, evs)
	if all, _ := s.Events(t.Context(), "t", 0); len(all) != len(evs) {
		t.Errorf("thread has %d events after no-op puts, want %d", len(all), len(evs))
	}
	if h, _ := s.History(t.Context(), "t", 0, 0); len(h) != 3 {
		t.Errorf("History has %d checkpoints after no-op puts, want 3", len(h))
	}
}

func testConflict(t *testing.T, s store.Store) {
	evs := []store.Event{event("a", `{"n":1}`), event("b", `{"n":2}`), event("c", `{}`)}
	put(t, s, checkpoint("t", 1, 0))
	orig := put(t, s, checkpoint("t", 2, 1), evs...)
	put(t, s, checkpoint("t", 3, 2))
	other := orig
	other.State = []byte(`{"step":2,"other":true}`)
	changed := func(i int, e store.Event) []store.Event {
		c := slices.Clone(evs)
		c[i] = e
		return c
	}
	for _, tc := range []struct {
		name   string
		cp     store.Checkpoint
		events []store.Event
	}{
		{"other state", other, evs},
		{"other parent, a root", checkpoint("t", 2, 0), evs},
		{"other parent, a newer one", checkpoint("t", 2, 3), evs},
		{"other event payload", orig, changed(1, event("b", `{"n":3}`))},
		{"other event type", orig, changed(1, event("B", `{"n":2}`))},
		{"other event seq", orig, changed(2, store.Event{Seq: 7, Type: "c", Payload: []byte(`{}`)})},
		{"one event fewer", orig, evs[:2]},
		{"one event more", orig, append(slices.Clone(evs), event("d", `{}`))},
		{"no events", orig, nil},
		{"events on a checkpoint that had none", checkpoint("t", 3, 2), evs[:1]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantIs(t, s.PutCheckpoint(t.Context(), tc.cp, tc.events), store.ErrConflict)
			got, err := s.Get(t.Context(), "t", 2)
			if err != nil {
				t.Fatalf("Get: %v", err)
			}
			wantCheckpoint(t, got, orig)
			wantEvents(t, s, "t", 2, evs)
			wantEvents(t, s, "t", 3, nil)
		})
	}
}

// Whether two documents are "the same content" is decided as jsonb decides
// it, by every store: no-op for the same value, ErrConflict for another.
func testSameValue(t *testing.T, s store.Store) {
	for i, tc := range []struct {
		a, b string
		same bool
	}{
		{`{"n":1.5}`, `{"n":1.50}`, true},
		{`{"n":1e3}`, `{"n":1000}`, true},
		{`{"n":15e-1}`, `{"n":1.5}`, true},
		{`{"n":-0}`, `{"n":0}`, true},
		{`{"n":0.000}`, `{"n":0e5}`, true},
		{`{"n":123456789012345678901234567890}`, `{"n":1.2345678901234567890123456789e29}`, true},
		{`{"a":1,"a":2}`, `{"a":2}`, true},
		{`{"b":[1,2],"a":{}}`, " { \"a\" : { } ,\n\"b\" : [ 1 , 2 ] } ", true},
		{`{"s":"\u00e9\/"}`, `{"s":"é/"}`, true},
		{`{"s":"\ud83d\ude00"}`, `{"s":"😀"}`, true},
		{`{"s":"\uD800"}`, `{"s":"\ud800"}`, true},
		{`{"s":"\ud800"}`, `{"s":"\udc00"}`, false},
		{`{"s":"\ud800"}`, `{"s":"\ufffd"}`, false},
		{`{"\udbff":1}`, `{"\udfff":1}`, false},
		{`{"s":"\ud800\udc00"}`, `{"s":"\ud800"}`, false},
		{`{"s":"\u0000"}`, `{"s":""}`, false},
		{`{"s":"e\u0301"}`, `{"s":"é"}`, false},
		{`{"n":1}`, `{"n":"1"}`, false},
		{`{"n":1.5}`, `{"n":1.51}`, false},
		{`{"n":-1}`, `{"n":1}`, false},
		{`{"n":123456789012345678901234567890}`, `{"n":123456789012345678901234567891}`, false},
		{`{"n":1e400}`, `{"n":1e401}`, false},
		{`{"a":[1,2]}`, `{"a":[2,1]}`, false},
		{`{"a":null}`, `{}`, false},
		{`{"a":1,"a":2}`, `{"a":1}`, false},
		{`[true]`, `[false]`, false},
	} {
		t.Run(fmt.Sprintf("%s vs %s", tc.a, tc.b), func(t *testing.T) {
			thread := fmt.Sprint("same-", i)
			put(t, s, store.Checkpoint{ThreadID: thread, ID: 1, State: []byte(tc.a)}, event("e", tc.a))
			putWrites(t, s, store.TaskWrites{ThreadID: thread, CheckpointID: 1, TaskID: "t", Writes: []byte(tc.a)})
			var want error
			if !tc.same {
				want = store.ErrConflict
			}
			for what, err := range map[string]error{
				"state":   s.PutCheckpoint(t.Context(), store.Checkpoint{ThreadID: thread, ID: 1, State: []byte(tc.b)}, []store.Event{event("e", tc.a)}),
				"payload": s.PutCheckpoint(t.Context(), store.Checkpoint{ThreadID: thread, ID: 1, State: []byte(tc.a)}, []store.Event{event("e", tc.b)}),
				"writes":  s.PutWrites(t.Context(), store.TaskWrites{ThreadID: thread, CheckpointID: 1, TaskID: "t", Writes: []byte(tc.b)}),
			} {
				if !errors.Is(err, want) {
					t.Errorf("re-put with the other %s = %v, want %v", what, err, want)
				}
			}
		})
	}
}

func testStale(t *testing.T, s store.Store) {
	put(t, s, checkpoint("t", 1, 0), event("one", `{}`))
	put(t, s, checkpoint("t", 3, 1), event("three", `{}`))
	put(t, s, checkpoint("u", 5, 0))
	for _, tc := range []struct {
		name string
		cp   store.Checkpoint
	}{
		{"lower id", checkpoint("t", 2, 1)},
		{"lower id, a root", checkpoint("t", 2, 0)},
		{"lower id, missing parent", checkpoint("t", 2, 99)}, // staleness is checked first
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantIs(t, s.PutCheckpoint(t.Context(), tc.cp, []store.Event{event("two", `{}`)}), store.ErrStale)
			if _, err := s.Get(t.Context(), "t", 2); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("stale checkpoint was stored (Get: %v)", err)
			}
			wantEvents(t, s, "t", 0, []store.Event{
				{CheckpointID: 1, Seq: 1, Type: "one", Payload: []byte(`{}`)},
				{CheckpointID: 3, Seq: 1, Type: "three", Payload: []byte(`{}`)},
			})
			if got, err := s.Latest(t.Context(), "t"); err != nil || got.ID != 3 {
				t.Errorf("Latest = %d, %v; want 3", got.ID, err)
			}
		})
	}
	put(t, s, checkpoint("u", 6, 5)) // other threads keep their own newest
}

func testRejectedPut(t *testing.T, s store.Store) {
	ok := event("ok", `{}`)
	for _, tc := range []struct {
		name   string
		cp     store.Checkpoint
		events []store.Event
	}{
		{"bad third event", checkpoint("t", 1, 0), []store.Event{ok, ok, event("bad", `{"n":`)}},
		{"duplicate seq", checkpoint("t", 1, 0), []store.Event{{Seq: 1, Type: "a"}, {Seq: 2, Type: "b"}, {Seq: 1, Type: "c"}}},
		{"missing parent", checkpoint("t", 1, 5), []store.Event{ok, ok}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := s.PutCheckpoint(t.Context(), tc.cp, tc.events); err == nil {
				t.Fatal("PutCheckpoint succeeded, want an error")
			}
			if th, err := s.Threads(t.Context()); err != nil || len(th) != 0 {
				t.Errorf("Threads after a rejected put = %v, %v; want none", th, err)
			}
			wantEvents(t, s, "t", 0, nil)
		})
	}
	// Nothing of the rejected puts remains: id 1 is neither stale nor taken.
	put(t, s, checkpoint("t", 1, 0), ok)
	wantEvents(t, s, "t", 1, []store.Event{ok})
}

// A refused call fails with ErrInvalid and none of the other sentinels (the
// call is wrong, not the stored data), and says what failed.
func wantRefused(t *testing.T, err error, what string) {
	t.Helper()
	switch {
	case err == nil:
		t.Error("call succeeded, want it refused")
	case !errors.Is(err, store.ErrInvalid):
		t.Errorf("refused with %v, want an error matching ErrInvalid", clip(err.Error()))
	case errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrConflict),
		errors.Is(err, store.ErrStale), errors.Is(err, store.ErrLocked):
		t.Errorf("refused with %v, want only ErrInvalid, not another sentinel", clip(err.Error()))
	case !strings.Contains(err.Error(), what):
		t.Errorf("error %q does not say it is about a %s", clip(err.Error()), what)
	}
}

func testInvalidCheckpoint(t *testing.T, s store.Store) {
	withState := func(state string) store.Checkpoint {
		return store.Checkpoint{ThreadID: "t", ID: 1, State: []byte(state)}
	}
	withEvents := func(evs ...store.Event) []store.Event { return evs }
	for _, tc := range []struct {
		name   string
		cp     store.Checkpoint
		events []store.Event
	}{
		{"empty thread", checkpoint("", 1, 0), nil},
		{"thread with NUL", checkpoint("a\x00b", 1, 0), nil},
		{"thread not UTF-8", checkpoint("a\xffb", 1, 0), nil},
		{"id zero", checkpoint("t", 0, 0), nil},
		{"negative id", checkpoint("t", -1, 0), nil},
		{"negative parent", checkpoint("t", 1, -1), nil},
		{"nil state", withState(""), nil},
		{"truncated state", withState(`{"a":`), nil},
		{"trailing garbage", withState(`{"a":1} x`), nil},
		{"raw NUL in a string", withState("{\"a\":\"x\x00y\"}"), nil},
		{"raw invalid UTF-8", withState("{\"a\":\"x\xffy\"}"), nil},
		{"NaN", withState(`{"a":NaN}`), nil},
		{"nested 20,000 deep", store.Checkpoint{ThreadID: "t", ID: 1, State: nested(20000)}, nil},
		{"nested 10,001 deep", store.Checkpoint{ThreadID: "t", ID: 1, State: nested(10001)}, nil},
		// Beyond PostgreSQL's numeric: refused by every store alike.
		{"number too large", withState(`{"n":1e131072}`), nil},
		{"number too large, spelt out", withState(`{"n":` + "1" + strings.Repeat("0", 131072) + `}`), nil},
		{"number too precise", withState(`{"n":1e-16384}`), nil},
		{"zero too precise", withState(`{"n":0.0e-16383}`), nil},
		{"exponent beyond int64", withState(`[1e99999999999999999999]`), nil},
		{"number too large in a payload", checkpoint("t", 1, 0), withEvents(event("a", `[-1e131072]`))},
		{"negative epoch", store.Checkpoint{ThreadID: "t", ID: 1, State: []byte(`{}`), Epoch: -1}, nil},
		{"bad event payload", checkpoint("t", 1, 0), withEvents(event("a", `nope`))},
		{"event payload not UTF-8", checkpoint("t", 1, 0), withEvents(event("a", "\"\xff\""))},
		{"event without type", checkpoint("t", 1, 0), withEvents(event("", `{}`))},
		{"event type with NUL", checkpoint("t", 1, 0), withEvents(event("a\x00", `{}`))},
		{"negative seq", checkpoint("t", 1, 0), withEvents(store.Event{Seq: -1, Type: "a"})},
		{"seq beyond int32", checkpoint("t", 1, 0), withEvents(store.Event{Seq: 1 << 31, Type: "a"})},
		{"duplicate seq", checkpoint("t", 1, 0), withEvents(store.Event{Seq: 2, Type: "a"}, store.Event{Seq: 2, Type: "b"})},
		{"event of another thread", checkpoint("t", 1, 0), withEvents(store.Event{ThreadID: "u", Type: "a"})},
		{"event of another checkpoint", checkpoint("t", 1, 0), withEvents(store.Event{CheckpointID: 2, Type: "a"})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantRefused(t, s.PutCheckpoint(t.Context(), tc.cp, tc.events), "checkpoint")
		})
	}
	if th, err := s.Threads(t.Context()); err != nil || len(th) != 0 {
		t.Errorf("Threads after refused puts = %v, %v; want none", th, err)
	}
}

func testWrites(t *testing.T, s store.Store) {
	put(t, s, checkpoint("t", 1, 0))
	put(t, s, checkpoint("t", 2, 1))
	put(t, s, checkpoint("u", 3, 0))
	start := time.Now()
	tasks := []string{"b", "a", "B", "a\u00e9", "a1"} // sorted bytewise: B a a1 aé b
	for _, task := range tasks {
		putWrites(t, s, writes("t", 2, task))
	}
	putWrites(t, s, writes("t", 1, "x"))
	got, err := s.Writes(t.Context(), "t", 2)
	if err != nil {
		t.Fatalf("Writes: %v", err)
	}
	var order []string
	for _, w := range got {
		order = append(order, w.TaskID)
		want := writes("t", 2, w.TaskID)
		if w.ThreadID != "t" || w.CheckpointID != 2 || !sameJSON(w.Writes, want.Writes) {
			t.Errorf("Writes returned %s/%d/%q %s, want %s", w.ThreadID, w.CheckpointID, w.TaskID, clip(string(w.Writes)), want.Writes)
		}
		if w.CreatedAt.Before(start.Add(-5*time.Minute)) || w.CreatedAt.After(time.Now().Add(5*time.Minute)) {
			t.Errorf("CreatedAt = %v, want about %v", w.CreatedAt, start)
		}
	}
	if want := []string{"B", "a", "a1", "a\u00e9", "b"}; !slices.Equal(order, want) {
		t.Errorf("Writes task order = %q, want %q (bytewise)", order, want)
	}
	wantTasks(t, s, "t", 1, "x")
	wantTasks(t, s, "t", 3)
	// Checkpoint 0: the whole thread's, by checkpoint then task.
	all, err := s.Writes(t.Context(), "t", 0)
	if err != nil {
		t.Fatalf("Writes of the whole thread: %v", err)
	}
	var keys []string
	for _, w := range all {
		keys = append(keys, fmt.Sprintf("%d/%s", w.CheckpointID, w.TaskID))
		if want := writes("t", w.CheckpointID, w.TaskID); w.ThreadID != "t" || !sameJSON(w.Writes, want.Writes) {
			t.Errorf("Writes(0) returned %s/%d/%q %s, want %s", w.ThreadID, w.CheckpointID, w.TaskID, clip(string(w.Writes)), want.Writes)
		}
	}
	if want := []string{"1/x", "2/B", "2/a", "2/a1", "2/a\u00e9", "2/b"}; !slices.Equal(keys, want) {
		t.Errorf("Writes(0) = %q, want %q (by checkpoint, then task bytewise)", keys, want)
	}
	wantTasks(t, s, "u", 0)
	wantTasks(t, s, "nope", 0)
	wantTasks(t, s, "nope", 1)
	wantTasks(t, s, "u", 3)

	// Idempotence and conflicts.
	putWrites(t, s, writes("t", 2, "a"))
	again := writes("t", 2, "a")
	again.Writes = reformat(t, again.Writes)
	putWrites(t, s, again)
	changed := writes("t", 2, "a")
	changed.Writes = []byte(`{"other":true}`)
	wantIs(t, s.PutWrites(t.Context(), changed), store.ErrConflict)
	got, _ = s.Writes(t.Context(), "t", 2)
	if len(got) != len(tasks) {
		t.Errorf("Writes has %d entries after re-puts, want %d", len(got), len(tasks))
	}
	for _, w := range got {
		if w.TaskID == "a" && !sameJSON(w.Writes, writes("t", 2, "a").Writes) {
			t.Errorf("a conflicting put changed the writes to %s", w.Writes)
		}
	}

	// The checkpoint must exist, in the same thread.
	for _, w := range []store.TaskWrites{writes("t", 9, "a"), writes("nope", 1, "a"), writes("u", 1, "a"), writes("t", 3, "a")} {
		wantIs(t, s.PutWrites(t.Context(), w), store.ErrNotFound)
		wantTasks(t, s, w.ThreadID, w.CheckpointID)
	}
}

func testInvalidWrites(t *testing.T, s store.Store) {
	put(t, s, checkpoint("t", 1, 0))
	with := func(f func(w *store.TaskWrites)) store.TaskWrites {
		w := writes("t", 1, "task")
		f(&w)
		return w
	}
	for _, tc := range []struct {
		name string
		w    store.TaskWrites
	}{
		{"empty thread", with(func(w *store.TaskWrites) { w.ThreadID = "" })},
		{"empty task", with(func(w *store.TaskWrites) { w.TaskID = "" })},
		{"task with NUL", with(func(w *store.TaskWrites) { w.TaskID = "a\x00" })},
		{"task not UTF-8", with(func(w *store.TaskWrites) { w.TaskID = "a\xff" })},
		{"checkpoint zero", with(func(w *store.TaskWrites) { w.CheckpointID = 0 })},
		{"nil writes", with(func(w *store.TaskWrites) { w.Writes = nil })},
		{"invalid JSON", with(func(w *store.TaskWrites) { w.Writes = []byte(`[1,`) })},
		{"invalid UTF-8", with(func(w *store.TaskWrites) { w.Writes = []byte("\"\xff\"") })},
		{"number too large", with(func(w *store.TaskWrites) { w.Writes = []byte(`{"n":1e131072}`) })},
		{"negative epoch", with(func(w *store.TaskWrites) { w.Epoch = -1 })},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantRefused(t, s.PutWrites(t.Context(), tc.w), "writes")
		})
	}
	wantTasks(t, s, "t", 1)
}

func testEvents(t *testing.T, s store.Store) {
	start := time.Now()
	// Given out of order; listed by Seq.
	put(t, s, checkpoint("t", 1, 0),
		store.Event{Seq: 3, Type: "c", Payload: []byte(`{"i":3}`)},
		store.Event{Seq: 1, Type: "a", Payload: []byte(`{"i":1}`)},
		store.Event{Seq: 2, Type: "b", Payload: []byte(`{"i":2}`)})
	put(t, s, checkpoint("t", 2, 1))
	// Unnumbered events take their position; an empty payload is {}.
	put(t, s, checkpoint("t", 3, 2), store.Event{Type: "d"}, store.Event{Type: "e", Payload: []byte(`[1]`)})
	put(t, s, checkpoint("t", 4, 1), event("f", `{"fork":true}`))
	put(t, s, checkpoint("u", 1, 0), event("other", `{}`))
	e := func(cp int64, seq int, typ, payload string) store.Event {
		return store.Event{CheckpointID: cp, Seq: seq, Type: typ, Payload: []byte(payload)}
	}
	e1 := []store.Event{e(1, 1, "a", `{"i":1}`), e(1, 2, "b", `{"i":2}`), e(1, 3, "c", `{"i":3}`)}
	e3 := []store.Event{e(3, 1, "d", `{}`), e(3, 2, "e", `[1]`)}
	e4 := []store.Event{e(4, 1, "f", `{"fork":true}`)}
	wantEvents(t, s, "t", 1, e1)
	wantEvents(t, s, "t", 2, nil)
	wantEvents(t, s, "t", 3, e3)
	wantEvents(t, s, "t", 0, slices.Concat(e1, e3, e4))
	wantEvents(t, s, "t", 9, nil)
	wantEvents(t, s, "nope", 0, nil)
	all, _ := s.Events(t.Context(), "t", 0)
	for _, ev := range all {
		if ev.ThreadID != "t" || ev.CreatedAt.Before(start.Add(-5*time.Minute)) || ev.CreatedAt.After(time.Now().Add(5*time.Minute)) {
			t.Errorf("event %d/%d has thread %q and CreatedAt %v, want t and about %v", ev.CheckpointID, ev.Seq, ev.ThreadID, ev.CreatedAt, start)
		}
	}
}

func testThreads(t *testing.T, s store.Store) {
	if th, err := s.Threads(t.Context()); err != nil || len(th) != 0 {
		t.Fatalf("Threads of an empty store = %v, %v; want none", th, err)
	}
	start := time.Now()
	for id := int64(1); id <= 3; id++ {
		put(t, s, checkpoint("b", id, id-1))
	}
	put(t, s, checkpoint("a", 1, 0))
	put(t, s, checkpoint("B", 1, 0))
	put(t, s, checkpoint("B", 4, 1))
	got, err := s.Threads(t.Context())
	if err != nil {
		t.Fatalf("Threads: %v", err)
	}
	want := []store.Thread{{ID: "B", Checkpoints: 2, LatestID: 4}, {ID: "a", Checkpoints: 1, LatestID: 1}, {ID: "b", Checkpoints: 3, LatestID: 3}}
	if len(got) != len(want) {
		t.Fatalf("Threads = %+v, want %+v", got, want)
	}
	for i, th := range got {
		if th.ID != want[i].ID || th.Checkpoints != want[i].Checkpoints || th.LatestID != want[i].LatestID {
			t.Errorf("Threads[%d] = %q %d %d, want %q %d %d (ordered bytewise)", i, th.ID, th.Checkpoints, th.LatestID, want[i].ID, want[i].Checkpoints, want[i].LatestID)
		}
		if th.UpdatedAt.Before(start.Add(-5*time.Minute)) || th.UpdatedAt.After(time.Now().Add(5*time.Minute)) {
			t.Errorf("Threads[%d].UpdatedAt = %v, want about %v", i, th.UpdatedAt, start)
		}
	}
}

func testDeleteThread(t *testing.T, s store.Store) {
	for _, th := range []string{"x", "y"} {
		put(t, s, checkpoint(th, 1, 0), event("a", `{}`))
		put(t, s, checkpoint(th, 2, 1), event("b", `{}`), event("c", `{}`))
		putWrites(t, s, writes(th, 1, "task"))
		putWrites(t, s, writes(th, 2, "task"))
	}
	if err := s.DeleteThread(t.Context(), "x"); err != nil {
		t.Fatalf("DeleteThread: %v", err)
	}
	ctx := t.Context()
	_, err := s.Get(ctx, "x", 1)
	wantIs(t, err, store.ErrNotFound)
	_, err = s.Latest(ctx, "x")
	wantIs(t, err, store.ErrNotFound)
	if h, err := s.History(ctx, "x", 0, 0); err != nil || len(h) != 0 {
		t.Errorf("History after delete = %v, %v; want empty", idsOf(h), err)
	}
	wantTasks(t, s, "x", 1)
	wantTasks(t, s, "x", 2)
	wantEvents(t, s, "x", 0, nil)
	if th, err := s.Threads(ctx); err != nil || len(th) != 1 || th[0].ID != "y" || th[0].Checkpoints != 2 {
		t.Errorf("Threads after delete = %+v, %v; want only y with 2 checkpoints", th, err)
	}

	// The other thread is untouched.
	if got, err := s.Get(ctx, "y", 2); err != nil {
		t.Errorf("Get y/2: %v", err)
	} else {
		wantCheckpoint(t, got, checkpoint("y", 2, 1))
	}
	wantTasks(t, s, "y", 1, "task")
	wantTasks(t, s, "y", 2, "task")
	if evs, err := s.Events(ctx, "y", 0); err != nil || len(evs) != 3 {
		t.Errorf("Events of y = %d, %v; want 3", len(evs), err)
	}

	// No leftovers: the thread starts afresh at 1, without old events or writes.
	put(t, s, checkpoint("x", 1, 0))
	wantEvents(t, s, "x", 0, nil)
	wantTasks(t, s, "x", 1)
	if err := s.DeleteThread(ctx, "x"); err != nil {
		t.Fatalf("DeleteThread: %v", err)
	}
	wantIs(t, s.DeleteThread(ctx, "x"), store.ErrNotFound)
	wantIs(t, s.DeleteThread(ctx, "never"), store.ErrNotFound)
}

func testLock(t *testing.T, s store.Store) {
	ctx := t.Context()
	lock := func(thread string) func() error {
		t.Helper()
		release, err := s.Lock(ctx, thread)
		if err != nil {
			t.Fatalf("Lock(%s): %v", clip(thread), err)
		}
		return release
	}
	locked := func(thread string) {
		t.Helper()
		release, err := s.Lock(ctx, thread)
		if !errors.Is(err, store.ErrLocked) {
			if err == nil {
				release()
			}
			t.Fatalf("second Lock(%s) = %v, want ErrLocked", clip(thread), err)
		}
	}
	release := lock("a")
	locked("a")
	other := lock("b")
	locked("b")
	if err := release(); err != nil {
		t.Fatalf("release: %v", err)
	}
	if err := release(); err != nil {
		t.Errorf("second release: %v, want nil", err)
	}
	again := lock("a")
	// A stale release must not free the new holder's lock.
	if err := release(); err != nil {
		t.Errorf("third release: %v, want nil", err)
	}
	locked("a")
	for _, r := range []func() error{again, other} {
		if err := r(); err != nil {
			t.Errorf("release: %v", err)
		}
	}
	lock("a")()
	lock("b")()
}

func testHostilePayloads(t *testing.T, s store.Store) {
	size := 10 << 20
	if testing.Short() {
		size = 1 << 20
	}
	big := fmt.Appendf(nil, `{"messages":[{"role":"user","text":%s}]}`, jsonString(hugeText(size)))
	for _, tc := range []struct {
		name  string
		state []byte
	}{
		{"NUL escapes", []byte(`{"s":"a\u0000b","k\u0000":["\u0000"]}`)},
		{"lone high surrogate", []byte(`{"s":"\ud800"}`)},
		{"reversed surrogates", []byte(`{"s":"x\udc00\ud800y"}`)},
		{"escapes", []byte(`{"s":"\"\\\/\b\f\n\r\t\u2028\u2029\uffff\u00e9"}`)},
		{"non-ASCII", []byte(`{"s":"日本語 🙂 e\u0301 ` + "\u2028" + `"}`)},
		{"SQL in strings", []byte(`{"s":"'); drop table graph_checkpoints;-- $1 $tag$ %_ \\"}`)},
		{"numbers beyond float64", []byte(`{"n":123456789012345678901234567890,"f":1.5e308,"e":1E-7,"z":-0}`)},
		{"not an object", []byte(`[null,true,"x",1]`)},
		{"10 MB message (1 MB with -short)", big},
		{"numbers at numeric's limits", []byte(`{"big":1e131071,"neg":-9.9999e131071,"small":1e-16383,"zero":0e-16383,"exp":0e1073741822}`)},
		{"arrays 2,000 deep", nested(2000)},
		{"arrays 10,000 deep", nested(10000)},
		{"objects 2,000 deep", []byte(strings.Repeat(`{"a":`, 2000) + "1" + strings.Repeat("}", 2000))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			thread := "hostile " + tc.name
			cp := store.Checkpoint{ThreadID: thread, ID: 1, State: tc.state}
			ev := store.Event{Type: "payload", Payload: tc.state}
			if err := s.PutCheckpoint(t.Context(), cp, []store.Event{ev}); err != nil {
				t.Fatalf("PutCheckpoint: %v", err)
			}
			if err := s.PutWrites(t.Context(), store.TaskWrites{ThreadID: thread, CheckpointID: 1, TaskID: "t", Writes: tc.state}); err != nil {
				t.Fatalf("PutWrites: %v", err)
			}
			got, err := s.Get(t.Context(), thread, 1)
			if err != nil {
				t.Fatalf("Get: %v", err)
			}
			wantCheckpoint(t, got, cp)
			wantEvents(t, s, thread, 1, []store.Event{ev})
			if ws, err := s.Writes(t.Context(), thread, 1); err != nil || len(ws) != 1 || !sameJSON(ws[0].Writes, tc.state) {
				t.Errorf("Writes did not round-trip (%d entries, %v)", len(ws), err)
			}
			// The same content again is recognised as the same.
			if err := s.PutCheckpoint(t.Context(), cp, []store.Event{ev}); err != nil {
				t.Errorf("re-put: %v, want nil", err)
			}
		})
	}
}

func testHostileThreadIDs(t *testing.T, s store.Store) {
	long := strings.Repeat("x", 64<<10)
	threads := []string{
		"'; drop table x;--", `"; drop table x;--`, "); DELETE FROM graph_checkpoints; --",
		"$1", "?", ":name", "@p1", "$tag$", "$$", "%", "_", "a%", "a_", "ab", "aXb",
		`\`, `\\`, `a\_b`, `a\%`, `\x00`, "*", "/* c */", "NULL", "null",
		"a", "A", "a ", " a", "\u00e9", "e\u0301", "日本語", "🙂",
		long, long[:len(long)-1] + "y", long + "x",
	}
	ctx := t.Context()
	for i, th := range threads {
		put(t, s, checkpoint(th, 1, 0), event("e", fmt.Sprintf(`{"i":%d}`, i)))
		put(t, s, checkpoint(th, 2, 1))
		putWrites(t, s, writes(th, 1, fmt.Sprint(i)))
	}
	for i, th := range threads {
		got, err := s.Get(ctx, th, 2)
		if err != nil {
			t.Fatalf("Get(%s): %v", clip(th), err)
		}
		wantCheckpoint(t, got, checkpoint(th, 2, 1))
		if h, err := s.History(ctx, th, 0, 0); err != nil || !slices.Equal(idsOf(h), ids(2, 1)) {
			t.Errorf("History(%s) = %v, %v; want [2 1]", clip(th), idsOf(h), err)
		}
		wantEvents(t, s, th, 0, []store.Event{{CheckpointID: 1, Seq: 1, Type: "e", Payload: fmt.Appendf(nil, `{"i":%d}`, i)}})
		wantTasks(t, s, th, 1, fmt.Sprint(i))
	}
	wantThreads := func(want []string) {
		t.Helper()
		want = slices.Clone(want)
		slices.Sort(want)
		got, err := s.Threads(ctx)
		if err != nil {
			t.Fatalf("Threads: %v", err)
		}
		var names []string
		for _, th := range got {
			names = append(names, th.ID)
			if th.Checkpoints != 2 || th.LatestID != 2 {
				t.Errorf("thread %s: %d checkpoints, latest %d; want 2, 2", clip(th.ID), th.Checkpoints, th.LatestID)
			}
		}
		if !slices.Equal(names, want) {
			t.Errorf("Threads lists %d ids, want %d, exactly and in byte order:\n got %q\nwant %q", len(names), len(want), clipAll(names), clipAll(want))
		}
	}
	wantThreads(threads)
	for _, th := range []string{"%", "_", `\`} {
		if err := s.DeleteThread(ctx, th); err != nil {
			t.Fatalf("DeleteThread(%q): %v", th, err)
		}
	}
	wantThreads(slices.DeleteFunc(slices.Clone(threads), func(th string) bool { return th == "%" || th == "_" || th == `\` }))

	var releases []func() error
	for _, th := range threads {
		release, err := s.Lock(ctx, th)
		if err != nil {
			t.Fatalf("Lock(%s) while other odd ids are locked: %v", clip(th), err)
		}
		releases = append(releases, release)
	}
	for _, release := range releases {
		if err := release(); err != nil {
			t.Errorf("release: %v", err)
		}
	}
}

// Every error about a 64 KB id names it clipped (check.Name): a message
// is one readable line, not the id again. Random ids do not compress, so
// PostgreSQL refuses them for its index; repeated ones it stores.
func testLongIDsInErrors(t *testing.T, s store.Store) {
	ctx := t.Context()
	raw := make([]byte, 32<<10)
	_, _ = rand.Read(raw)
	ids := map[string]string{"repeated": strings.Repeat("x", 64<<10), "random": hex.EncodeToString(raw)}
	ds, _ := s.(store.Drafts)
	for name, long := range ids {
		t.Run(name, func(t *testing.T) {
			errs := map[string]error{}
			call := func(what string, err error) {
				if err != nil {
					errs[what] = err
				}
			}
			call("get", func() error { _, err := s.Get(ctx, long, 1); return err }())
			call("latest", func() error { _, err := s.Latest(ctx, long); return err }())
			call("chain", func() error { _, err := s.Chain(ctx, long, 1); return err }())
			call("delete", s.DeleteThread(ctx, long))
			call("prune", func() error { _, err := s.Prune(ctx, long, []int64{1}, nil); return err }())
			call("missing parent", s.PutCheckpoint(ctx, checkpoint(long, 2, 1), nil))
			call("missing checkpoint", s.PutWrites(ctx, writes(long, 1, long)))
			call("epoch never handed out", s.PutCheckpoint(ctx, withEpoch(checkpoint(long, 1, 0), 1<<40), nil))
			if err := s.PutCheckpoint(ctx, checkpoint(long, 1, 0), nil); err != nil {
				call("first put", err) // PostgreSQL: too long for its index
				t.Logf("refused: %.300s", err)
			} else {
				diff := checkpoint(long, 1, 0)
				diff.State = []byte(`{"other":true}`)
				call("conflict", s.PutCheckpoint(ctx, diff, nil))
				put(t, s, checkpoint(long, 2, 1))
				call("stale", s.PutCheckpoint(ctx, checkpoint(long, 1, 0), []store.Event{event("x", `{}`)}))
				old := fence(t, s, long)
				fence(t, s, long)
				call("fenced", s.PutCheckpoint(ctx, withEpoch(checkpoint(long, 3, 2), old), nil))
				call("fenced writes", s.PutWrites(ctx, writesEpoch(writes(long, 2, long), old)))
				call("writes conflict", func() error {
					if err := s.PutWrites(ctx, writes(long, 2, long)); err != nil {
						return err
					}
					w := writes(long, 2, long)
					w.Writes = []byte(`{"other":true}`)
					return s.PutWrites(ctx, w)
				}())
				call("prune the head", func() error { _, err := s.Prune(ctx, long, []int64{2}, nil); return err }())
				release, err := s.Lock(ctx, long)
				if err != nil {
					t.Fatalf("Lock: %v", err)
				}
				call("locked", func() error { _, err := s.Lock(ctx, long); return err }())
				release()
			}
			if ds != nil {
				call("draft not found", func() error { _, err := ds.Draft(ctx, long, long); return err }())
				call("draft invalid", func() error {
					_, _, err := ds.CreateDraft(ctx, store.Draft{ThreadID: long, OperationID: long, Body: []byte(`{`)})
					return err
				}())
			}
			cancelled, cancel := context.WithCancel(ctx)
			cancel()
			call("cancelled put", s.PutCheckpoint(cancelled, checkpoint(long, 9, 0), nil))
			call("cancelled lock", func() error { _, err := s.Lock(cancelled, long); return err }())
			if len(errs) < 10 {
				t.Fatalf("only %d calls failed: the test provokes too little", len(errs))
			}
			for what, err := range errs {
				if msg := err.Error(); len(msg) > 1000 || strings.Contains(msg, long[:65]) { // check.Name keeps 64 bytes
					t.Errorf("%s: a %d-byte error for a 64 KB id; ids must be clipped (check.Name): %s…", what, len(msg), clip(msg))
				}
			}
		})
	}
}

func testNoAliasing(t *testing.T, s store.Store) {
	ctx := t.Context()
	cp := checkpoint("t", 1, 0)
	ev := event("e", `{"a":"b"}`)
	w := writes("t", 1, "task")
	orig, origEv, origW := bytes.Clone(cp.State), bytes.Clone(ev.Payload), bytes.Clone(w.Writes)
	put(t, s, cp, ev)
	putWrites(t, s, w)
	scribble := func(b []byte) {
		for i := range b {
			b[i] = ' '
		}
	}
	scribble(cp.State)
	scribble(ev.Payload)
	scribble(w.Writes)
	for range 2 {
		got, _ := s.Get(ctx, "t", 1)
		latest, _ := s.Latest(ctx, "t")
		history, _ := s.History(ctx, "t", 0, 0)
		evs, _ := s.Events(ctx, "t", 1)
		ws, _ := s.Writes(ctx, "t", 1)
		if len(history) != 1 || len(evs) != 1 || len(ws) != 1 {
			t.Fatalf("History, Events, Writes = %d, %d, %d entries; want 1 each", len(history), len(evs), len(ws))
		}
		for _, b := range []struct{ got, want []byte }{
			{got.State, orig}, {latest.State, orig}, {history[0].State, orig}, {evs[0].Payload, origEv}, {ws[0].Writes, origW},
		} {
			if !sameJSON(b.got, b.want) {
				t.Fatalf("stored bytes changed with the caller's buffer: %q, want %q", clip(string(b.got)), b.want)
			}
			scribble(b.got) // must not reach the store either
		}
	}
}

func testCancelled(t *testing.T, s store.Store) {
	put(t, s, checkpoint("t", 1, 0))
	putWrites(t, s, writes("t", 1, "a"))
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	expired, cancel2 := context.WithDeadline(t.Context(), time.Now().Add(-time.Second))
	defer cancel2()
	calls := []struct {
		name string
		call func(ctx context.Context) error
	}{
		{"PutCheckpoint", func(ctx context.Context) error {
			return s.PutCheckpoint(ctx, checkpoint("t", 2, 1), []store.Event{event("e", `{}`)})
		}},
		{"PutCheckpoint new thread", func(ctx context.Context) error { return s.PutCheckpoint(ctx, checkpoint("new", 1, 0), nil) }},
		{"PutWrites", func(ctx context.Context) error { return s.PutWrites(ctx, writes("t", 1, "b")) }},
		{"Get", func(ctx context.Context) error { _, err := s.Get(ctx, "t", 1); return err }},
		{"Latest", func(ctx context.Context) error { _, err := s.Latest(ctx, "t"); return err }},
		{"History", func(ctx context.Context) error { _, err := s.History(ctx, "t", 0, 0); return err }},
		{"Writes", func(ctx context.Context) error { _, err := s.Writes(ctx, "t", 1); return err }},
		{"Events", func(ctx context.Context) error { _, err := s.Events(ctx, "t", 0); return err }},
		{"Threads", func(ctx context.Context) error { _, err := s.Threads(ctx); return err }},
		{"DeleteThread", func(ctx context.Context) error { return s.DeleteThread(ctx, "t") }},
		{"Prune", func(ctx context.Context) error { _, err := s.Prune(ctx, "t", []int64{1}, nil); return err }},
		{"Lock", func(ctx context.Context) error {
			release, err := s.Lock(ctx, "t")
			if err == nil {
				release()
			}
			return err
		}},
	}
	for _, c := range []struct {
		ctx  context.Context
		want error
	}{{cancelled, context.Canceled}, {expired, context.DeadlineExceeded}} {
		for _, tc := range calls {
			t.Run(fmt.Sprintf("%s/%v", tc.name, c.want), func(t *testing.T) {
				done := make(chan error, 1)
				go func() { done <- tc.call(c.ctx) }()
				select {
				case err := <-done:
					wantIs(t, err, c.want)
				case <-time.After(10 * time.Second):
					t.Fatal("call hangs on a cancelled context")
				}
			})
		}
	}
	// Nothing happened.
	if got, err := s.Latest(t.Context(), "t"); err != nil || got.ID != 1 {
		t.Errorf("Latest after cancelled calls = %d, %v; want 1", got.ID, err)
	}
	wantTasks(t, s, "t", 1, "a")
	wantEvents(t, s, "t", 0, nil)
	if th, err := s.Threads(t.Context()); err != nil || len(th) != 1 {
		t.Errorf("Threads after cancelled calls = %+v, %v; want only t", th, err)
	}
	release, err := s.Lock(t.Context(), "t")
	if err != nil {
		t.Fatalf("Lock after a cancelled Lock: %v", err)
	}
	release()
}

// Racing writers of one key: exactly one wins, the others see a conflict
// (or a no-op for the same content), and nothing is written twice.
func testConcurrent(t *testing.T, s store.Store) {
	const n = 8
	race := func(put func(i int) error) (wins, conflicts int) {
		errs := make(chan error, n)
		for i := range n {
			go func() { errs <- put(i) }()
		}
		for range n {
			switch err := <-errs; {
			case err == nil:
				wins++
			case errors.Is(err, store.ErrConflict):
				conflicts++
			default:
				t.Errorf("racing put: %v", err)
			}
		}
		return wins, conflicts
	}
	ctx := t.Context()
	mine := func(i int) []byte { return fmt.Appendf(nil, `{"writer":%d}`, i) }
	wins, _ := race(func(i int) error {
		return s.PutCheckpoint(ctx, store.Checkpoint{ThreadID: "t", ID: 1, State: mine(i)}, []store.Event{event("e", string(mine(i)))})
	})
	got, err := s.Get(ctx, "t", 1)
	if wins != 1 || err != nil {
		t.Fatalf("%d of %d different puts of one id won (Get: %v), want exactly 1", wins, n, err)
	}
	wantEvents(t, s, "t", 1, []store.Event{{Type: "e", Payload: got.State}})

	if wins, _ := race(func(int) error { return s.PutCheckpoint(ctx, checkpoint("t", 2, 1), []store.Event{event("e", `{}`)}) }); wins != n {
		t.Errorf("%d of %d identical puts succeeded, want all", wins, n)
	}
	wantEvents(t, s, "t", 2, []store.Event{event("e", `{}`)})

	wins, _ = race(func(i int) error {
		return s.PutWrites(ctx, store.TaskWrites{ThreadID: "t", CheckpointID: 2, TaskID: "task", Writes: mine(i)})
	})
	if ws, err := s.Writes(ctx, "t", 2); wins != 1 || err != nil || len(ws) != 1 {
		t.Errorf("%d of %d different writes of one task won, %d stored (%v); want 1 and 1", wins, n, len(ws), err)
	}

	// Writers of separate threads and readers do not disturb each other.
	done := make(chan error, n)
	for i := range n {
		go func() {
			thread := fmt.Sprint("w", i)
			for id := int64(1); id <= 10; id++ {
				if err := s.PutCheckpoint(ctx, checkpoint(thread, id, id-1), nil); err != nil {
					done <- err
					return
				}
				if h, err := s.History(ctx, thread, 0, 0); err != nil || len(h) != int(id) {
					done <- fmt.Errorf("History(%s) = %d checkpoints, %v; want %d", thread, len(h), err, id)
					return
				}
			}
			done <- nil
		}()
	}
	for range n {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

// drafts is the store's side-effect table: every backend has one.
func drafts(t *testing.T, s store.Store) store.Drafts {
	t.Helper()
	ds, ok := s.(store.Drafts)
	if !ok {
		t.Fatalf("%T does not implement store.Drafts; every backend must", s)
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

func fence(t *testing.T, s store.Store, thread string) int64 {
	t.Helper()
	e, err := s.Fence(t.Context(), thread)
	if err != nil {
		t.Fatalf("Fence(%s): %v", clip(thread), err)
	}
	return e
}

func testFenceEpochs(t *testing.T, s store.Store) {
	ctx := t.Context()
	for want := int64(1); want <= 3; want++ {
		if got := fence(t, s, "t"); got != want {
			t.Errorf("Fence #%d = %d, want %d", want, got, want)
		}
	}
	// One counter for the store: every epoch is higher than every one
	// before it, whichever thread had it.
	last := int64(3)
	higher := func(th string) {
		t.Helper()
		if got := fence(t, s, th); got <= last {
			t.Errorf("Fence(%s) = %d after %d: epochs never go back, whatever the thread", clip(th), got, last)
		} else {
			last = got
		}
	}
	higher("u")
	long := strings.Repeat("x", 64<<10)
	for _, th := range []string{"'; drop table graph_epochs;--", "$1", "%", long, long + "y"} {
		higher(th)
	}
	for name, th := range map[string]string{"empty": "", "NUL": "a\x00", "not UTF-8": "a\xff"} {
		_, err := s.Fence(ctx, th)
		t.Run(name, func(t *testing.T) { wantRefused(t, err, "fence") })
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.Fence(cancelled, "t"); !errors.Is(err, context.Canceled) {
		t.Errorf("Fence on a cancelled context = %v, want context.Canceled", err)
	}
	if got := fence(t, s, "t"); got != last+1 {
		t.Errorf("Fence after a cancelled one = %d, want %d", got, last+1)
	}
	last++
	// An epoch is not a checkpoint: the thread has none to list or read.
	if th, err := s.Threads(ctx); err != nil || len(th) != 0 {
		t.Errorf("Threads after fencing only = %+v, %v; want none", th, err)
	}
	_, err := s.Latest(ctx, "t")
	wantIs(t, err, store.ErrNotFound)

	// DeleteThread removes the epoch, also of a thread that has nothing
	// else, but not the counter: the thread's next epoch is higher still.
	put(t, s, checkpoint("t", 1, 0))
	if err := s.DeleteThread(ctx, "t"); err != nil {
		t.Fatalf("DeleteThread: %v", err)
	}
	if n, err := s.Size(ctx, "t"); err != nil || n != 0 {
		t.Errorf("Size after DeleteThread = %d, %v; want 0: nothing of the thread stays", n, err)
	}
	higher("t")
	if err := s.DeleteThread(ctx, "u"); err != nil {
		t.Errorf("DeleteThread of a thread with only an epoch: %v", err)
	}
	wantIs(t, s.DeleteThread(ctx, "u"), store.ErrNotFound)
	higher("u")
	if err := s.DeleteThread(ctx, long); err != nil {
		t.Errorf("DeleteThread of a thread with only an epoch: %v", err)
	}
	higher(long)
}

func withEpoch(cp store.Checkpoint, epoch int64) store.Checkpoint {
	cp.Epoch = epoch
	return cp
}

func writesEpoch(w store.TaskWrites, epoch int64) store.TaskWrites {
	w.Epoch = epoch
	return w
}

// wantFenced: refused as fenced, and not as anything else.
func wantFenced(t *testing.T, err error, thread string) {
	t.Helper()
	switch {
	case !errors.Is(err, store.ErrFenced):
		t.Errorf("error = %v, want ErrFenced", err)
	case errors.Is(err, store.ErrConflict), errors.Is(err, store.ErrStale), errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrInvalid):
		t.Errorf("error = %v, want only ErrFenced", err)
	case !strings.Contains(err.Error(), "newer writer took over thread "+fmt.Sprintf("%q", thread)):
		t.Errorf("error %q does not say a newer writer took over thread %q", err, thread)
	}
}

func testFencedWrites(t *testing.T, s store.Store) {
	ctx := t.Context()
	// Unfenced writes are accepted before and after any fencing.
	put(t, s, checkpoint("t", 1, 0))
	old := fence(t, s, "t") // the writer that will be taken over
	put(t, s, withEpoch(checkpoint("t", 2, 1), old), event("by-old", `{}`))
	putWrites(t, s, writesEpoch(writes("t", 2, "a"), old))
	cur := fence(t, s, "t") // the takeover
	if cur <= old {
		t.Fatalf("Fence = %d after %d, want it higher", cur, old)
	}

	// The old writer's new work is refused and leaves nothing.
	diff := withEpoch(checkpoint("t", 2, 1), old)
	diff.State = []byte(`{"different":true}`)
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"next checkpoint", s.PutCheckpoint(ctx, withEpoch(checkpoint("t", 3, 2), old), []store.Event{event("late", `{}`)})},
		{"different content at a stored id, not a conflict", s.PutCheckpoint(ctx, diff, nil)},
		{"a stale id", s.PutCheckpoint(ctx, withEpoch(checkpoint("t", 1, 0), old), []store.Event{event("x", `{}`)})},
		{"a missing parent", s.PutCheckpoint(ctx, withEpoch(checkpoint("t", 9, 8), old), nil)},
		{"a new task's writes", s.PutWrites(ctx, writesEpoch(writes("t", 2, "b"), old))},
		{"different writes of a stored task, not a conflict", s.PutWrites(ctx, store.TaskWrites{ThreadID: "t", CheckpointID: 2, TaskID: "a", Writes: []byte(`{"other":1}`), Epoch: old})},
		{"writes of a missing checkpoint", s.PutWrites(ctx, writesEpoch(writes("t", 9, "a"), old))},
	} {
		t.Run(tc.name, func(t *testing.T) { wantFenced(t, tc.err, "t") })
	}
	if got, err := s.Latest(ctx, "t"); err != nil || got.ID != 2 {
		t.Errorf("Latest after refused writes = %d, %v; want 2", got.ID, err)
	}
	wantEvents(t, s, "t", 0, []store.Event{{CheckpointID: 2, Type: "by-old"}})
	wantTasks(t, s, "t", 2, "a")

	// Its redelivered identical writes are harmless no-ops: epoch is not content.
	for name, err := range map[string]error{
		"identical checkpoint":      s.PutCheckpoint(ctx, withEpoch(checkpoint("t", 2, 1), old), []store.Event{event("by-old", `{}`)}),
		"identical writes":          s.PutWrites(ctx, writesEpoch(writes("t", 2, "a"), old)),
		"identical, current epoch":  s.PutCheckpoint(ctx, withEpoch(checkpoint("t", 2, 1), cur), []store.Event{event("by-old", `{}`)}),
		"identical, unfenced":       s.PutCheckpoint(ctx, checkpoint("t", 2, 1), []store.Event{event("by-old", `{}`)}),
		"identical writes, current": s.PutWrites(ctx, writesEpoch(writes("t", 2, "a"), cur)),
	} {
		if err != nil {
			t.Errorf("%s re-put: %v, want nil", name, err)
		}
	}

	// Epochs are checked, not kept: reads give 0.
	if got, err := s.Get(ctx, "t", 2); err != nil || got.Epoch != 0 {
		t.Errorf("Get of a fenced write = epoch %d, %v; want 0", got.Epoch, err)
	}
	if ws, err := s.Writes(ctx, "t", 2); err != nil || len(ws) != 1 || ws[0].Epoch != 0 {
		t.Errorf("Writes of a fenced write = %+v, %v; want one with epoch 0", ws, err)
	}

	// The new writer goes on; a conflict under the current epoch is still a conflict.
	put(t, s, withEpoch(checkpoint("t", 3, 2), cur))
	putWrites(t, s, writesEpoch(writes("t", 3, "a"), cur))
	wantIs(t, s.PutCheckpoint(ctx, withEpoch(diff, cur), nil), store.ErrConflict)
	wantIs(t, s.PutCheckpoint(ctx, withEpoch(checkpoint("t", 2, 1), cur), nil), store.ErrConflict)
	put(t, s, checkpoint("u", 1, 0))
	put(t, s, checkpoint("t", 4, 3)) // unfenced is still accepted

	// An epoch never handed out is invalid, on a fenced thread and an
	// unfenced one (cur is the store's newest).
	wantRefused(t, s.PutCheckpoint(ctx, withEpoch(checkpoint("t", 5, 4), cur+1), nil), "checkpoint")
	wantRefused(t, s.PutWrites(ctx, writesEpoch(writes("t", 4, "a"), cur+1)), "writes")
	wantRefused(t, s.PutCheckpoint(ctx, withEpoch(checkpoint("u", 2, 1), cur+1), nil), "checkpoint")
	wantRefused(t, s.PutWrites(ctx, writesEpoch(writes("u", 1, "a"), cur+1)), "writes")
	if got, err := s.Latest(ctx, "t"); err != nil || got.ID != 4 {
		t.Errorf("Latest = %d, %v; want 4", got.ID, err)
	}

	// Epochs survive in the store, not in the writer: a fresh fence is higher.
	if got := fence(t, s, "t"); got != cur+1 {
		t.Errorf("next Fence = %d, want %d", got, cur+1)
	}
	wantFenced(t, s.PutCheckpoint(ctx, withEpoch(checkpoint("t", 5, 4), cur), nil), "t")
}

// A writer is stuck (say, SIGSTOPped) while the thread is deleted and a
// new writer starts it again: the stuck writer's late work is refused
// (ErrFenced), before and after the new writer fenced, whatever it would
// otherwise have been (a new root, a child of the new writer's checkpoint,
// a conflict, writes), and leaves nothing behind.
func testFencedAcrossDelete(t *testing.T, s store.Store) {
	ctx := t.Context()
	old := fence(t, s, "t")
	put(t, s, withEpoch(checkpoint("t", 1, 0), old), event("by-old", `{}`))
	put(t, s, withEpoch(checkpoint("t", 2, 1), old))
	putWrites(t, s, writesEpoch(writes("t", 2, "a"), old))
	if err := s.DeleteThread(ctx, "t"); err != nil {
		t.Fatalf("DeleteThread: %v", err)
	}
	late := func(stage string) map[string]error {
		next := withEpoch(checkpoint("t", 2, 1), old)
		next.State = []byte(`{"late":"` + stage + `"}`)
		root := withEpoch(checkpoint("t", 1, 0), old)
		root.State = []byte(`{"late root":"` + stage + `"}`)
		return map[string]error{
			"a new root":                s.PutCheckpoint(ctx, root, []store.Event{event("late", `{}`)}),
			"the next checkpoint":       s.PutCheckpoint(ctx, next, nil),
			"a checkpoint far ahead":    s.PutCheckpoint(ctx, withEpoch(checkpoint("t", 9, 1), old), nil),
			"writes of checkpoint 1":    s.PutWrites(ctx, writesEpoch(writes("t", 1, "late"), old)),
			"writes of a gone one":      s.PutWrites(ctx, writesEpoch(writes("t", 2, "late"), old)),
			"its deleted root, again":   s.PutCheckpoint(ctx, withEpoch(checkpoint("t", 1, 0), old), []store.Event{event("by-old", `{}`)}),
			"its deleted writes, again": s.PutWrites(ctx, writesEpoch(writes("t", 2, "a"), old)),
		}
	}
	// Before anyone takes the thread again.
	for name, err := range late("deleted") {
		t.Run("deleted/"+name, func(t *testing.T) { wantFenced(t, err, "t") })
	}
	if n, err := s.Size(ctx, "t"); err != nil || n != 0 {
		t.Errorf("Size after the late writes to a deleted thread = %d, %v; want 0", n, err)
	}
	// A new writer starts the thread afresh at 1, with a higher epoch.
	cur := fence(t, s, "t")
	if cur <= old {
		t.Fatalf("Fence after DeleteThread = %d, want more than the deleted thread's %d", cur, old)
	}
	mine := withEpoch(checkpoint("t", 1, 0), cur)
	mine.State = []byte(`{"by":"the new writer"}`)
	put(t, s, mine, event("new", `{}`))
	for name, err := range late("taken") {
		t.Run("taken/"+name, func(t *testing.T) { wantFenced(t, err, "t") })
	}
	h, err := s.History(ctx, "t", 0, 0)
	if err != nil || len(h) != 1 || h[0].ID != 1 {
		t.Fatalf("History after the late writes = %v, %v; want only the new writer's 1", idsOf(h), err)
	}
	if got, err := s.Get(ctx, "t", 1); err != nil || !sameJSON(got.State, mine.State) {
		t.Errorf("checkpoint 1 = %s, %v; want the new writer's", got.State, err)
	}
	wantEvents(t, s, "t", 0, []store.Event{{CheckpointID: 1, Type: "new"}})
	wantTasks(t, s, "t", 1)
	// The new writer goes on; an epoch never handed out is still invalid.
	put(t, s, withEpoch(checkpoint("t", 2, 1), cur))
	putWrites(t, s, writesEpoch(writes("t", 2, "a"), cur))
	wantRefused(t, s.PutCheckpoint(ctx, withEpoch(checkpoint("t", 3, 2), cur+1), nil), "checkpoint")
	if err := s.DeleteThread(ctx, "t"); err != nil {
		t.Fatalf("DeleteThread: %v", err)
	}
	wantRefused(t, s.PutCheckpoint(ctx, withEpoch(checkpoint("t", 1, 0), cur+1), nil), "checkpoint")
	wantFenced(t, s.PutCheckpoint(ctx, withEpoch(checkpoint("t", 1, 0), cur), nil), "t")
}

// A fenced writer's thread is deleted under it, mid-stream: what it wrote
// before goes with the thread, what it writes after is refused, and
// nothing of it is left, not even a write that was in flight.
func testDeleteRacesWriter(t *testing.T, s store.Store) {
	ctx := t.Context()
	for round := range 5 {
		thread := fmt.Sprint("race-", round)
		old := fence(t, s, thread)
		var acked atomic.Int64
		done := make(chan error, 1)
		go func() {
			for id := int64(1); ; id++ {
				if err := s.PutCheckpoint(ctx, withEpoch(checkpoint(thread, id, id-1), old), []store.Event{event("old", `{}`)}); err != nil {
					done <- err
					return
				}
				if err := s.PutWrites(ctx, writesEpoch(writes(thread, id, "task"), old)); err != nil {
					done <- err
					return
				}
				acked.Store(id)
			}
		}()
		for acked.Load() < int64(3+round*7) {
			select {
			case err := <-done:
				t.Fatalf("the writer failed before the delete: %v", err)
			default:
				runtime.Gosched()
			}
		}
		if err := s.DeleteThread(ctx, thread); err != nil {
			t.Fatalf("DeleteThread: %v", err)
		}
		wantFenced(t, <-done, thread)
		if cp, err := s.Latest(ctx, thread); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("round %d: after DeleteThread, checkpoint %d of the writer is there (%v): a write in flight outlived the delete", round, cp.ID, err)
		}
		if n, err := s.Size(ctx, thread); err != nil || n != 0 {
			t.Errorf("round %d: Size after DeleteThread = %d, %v; want 0", round, n, err)
		}
	}
}

// A writer is fenced between two of its writes: everything it wrote before
// the fence is there, nothing it wrote after is, and the new writer
// continues the chain from exactly where the old one stopped.
func testFencedBetweenWrites(t *testing.T, s store.Store) {
	ctx := t.Context()
	for round := range 5 {
		thread := fmt.Sprint("race-", round)
		old := fence(t, s, thread)
		var acked atomic.Int64 // the old writer's last fully stored checkpoint
		done := make(chan error, 1)
		go func() {
			for id := int64(1); ; id++ {
				if err := s.PutCheckpoint(ctx, withEpoch(checkpoint(thread, id, id-1), old), []store.Event{event("old", `{}`)}); err != nil {
					done <- err
					return
				}
				if err := s.PutWrites(ctx, writesEpoch(writes(thread, id, "task"), old)); err != nil {
					done <- err
					return
				}
				acked.Store(id)
			}
		}()
		// Let the old writer get going, then take over mid-stream.
		for acked.Load() < int64(3+round*7) {
			select {
			case err := <-done:
				t.Fatalf("the old writer failed before the takeover: %v", err)
			default:
				runtime.Gosched()
			}
		}
		cur := fence(t, s, thread)
		latest, err := s.Latest(ctx, thread)
		if err != nil {
			t.Fatalf("Latest: %v", err)
		}
		put(t, s, withEpoch(checkpoint(thread, latest.ID+1, latest.ID), cur), event("new", `{}`))

		wantFenced(t, <-done, thread)
		if last := acked.Load(); last > latest.ID {
			t.Errorf("round %d: the old writer's put of %d succeeded after the fence (the new writer saw %d as the latest)", round, last, latest.ID)
		}
		h, err := s.History(ctx, thread, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(h) == 0 || h[0].ID != latest.ID+1 {
			t.Fatalf("round %d: history %v, want the new writer's %d on top", round, idsOf(h), latest.ID+1)
		}
		for i, cp := range h {
			if want := h[0].ID - int64(i); cp.ID != want || cp.ParentID != want-1 {
				t.Fatalf("round %d: the chain forked or has a gap: %d (parent %d) at position %d, want %d (parent %d)", round, cp.ID, cp.ParentID, i, want, want-1)
			}
		}
		// Writes of the old writer are there only for checkpoints before the fence.
		for id := int64(1); id <= latest.ID+1; id++ {
			ws, err := s.Writes(ctx, thread, id)
			if err != nil {
				t.Fatal(err)
			}
			if id == latest.ID+1 && len(ws) != 0 {
				t.Errorf("round %d: the old writer stored writes at the new writer's checkpoint %d", round, id)
			}
		}
	}
}

func draftEpoch(d store.Draft, epoch int64) store.Draft {
	d.Epoch = epoch
	return d
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

func mustListDrafts(t *testing.T, ds store.Drafts, thread string) []store.Draft {
	t.Helper()
	list, err := ds.ListDrafts(t.Context(), thread)
	if err != nil {
		t.Fatalf("ListDrafts(%s): %v", clip(thread), err)
	}
	return list
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

// txHooker is a store that can call back in the middle of PutCheckpoint's
// transaction (the crash drills' "mid-transaction" kill point).
type txHooker interface {
	SetTxHook(func(stage string))
}

func testTxHook(t *testing.T, s store.Store) {
	h, ok := s.(txHooker)
	if !ok {
		t.Fatalf("%T has no SetTxHook; every backend must", s)
	}
	ctx := t.Context()
	var stages []string
	h.SetTxHook(func(stage string) { stages = append(stages, stage) })
	put(t, s, checkpoint("t", 1, 0), event("a", `{}`))
	if want := []string{"checkpoint-written"}; !slices.Equal(stages, want) {
		t.Fatalf("hook calls after a new checkpoint = %q, want %q", stages, want)
	}
	// Calls that write nothing do not reach the point.
	put(t, s, checkpoint("t", 1, 0), event("a", `{}`))
	e := fence(t, s, "t")
	for _, err := range []error{
		s.PutCheckpoint(ctx, checkpoint("t", 1, 0), nil),                 // conflict
		s.PutCheckpoint(ctx, checkpoint("t", 3, 2), nil),                 // missing parent
		s.PutCheckpoint(ctx, checkpoint("", 1, 0), nil),                  // invalid
		s.PutCheckpoint(ctx, withEpoch(checkpoint("t", 2, 1), e+1), nil), // epoch never handed out
	} {
		if err == nil {
			t.Fatal("a put that should fail succeeded")
		}
	}
	if len(stages) != 1 {
		t.Errorf("hook calls after puts that wrote nothing = %q, want only the first", stages)
	}
	put(t, s, withEpoch(checkpoint("t", 2, 1), e))
	if len(stages) != 2 {
		t.Errorf("hook calls = %q, want two after the second new checkpoint", stages)
	}
	h.SetTxHook(nil)
	put(t, s, checkpoint("t", 3, 2))
	if len(stages) != 2 {
		t.Errorf("hook called after it was removed: %q", stages)
	}
	if h, err := s.History(ctx, "t", 0, 0); err != nil || len(h) != 3 {
		t.Errorf("History = %v, %v; want 3 checkpoints", idsOf(h), err)
	}
}

// Helpers.

// checkpoint is a small, deterministic checkpoint whose state names its thread and id.
func checkpoint(thread string, id, parent int64) store.Checkpoint {
	state := fmt.Appendf(nil, `{"v":2,"thread":%s,"step":%d,"messages":[{"index":0,"role":"user","text":"hello %d"}]}`, jsonString(thread), id, id)
	return store.Checkpoint{ThreadID: thread, ID: id, ParentID: parent, State: state, Base: true}
}

func event(typ, payload string) store.Event {
	return store.Event{Type: typ, Payload: []byte(payload)}
}

func writes(thread string, cp int64, task string) store.TaskWrites {
	return store.TaskWrites{ThreadID: thread, CheckpointID: cp, TaskID: task,
		Writes: fmt.Appendf(nil, `{"task":%s,"writes":[{"channel":"messages","value":{"text":"from %d"}}]}`, jsonString(task), cp)}
}

func put(t *testing.T, s store.Store, cp store.Checkpoint, events ...store.Event) store.Checkpoint {
	t.Helper()
	if err := s.PutCheckpoint(t.Context(), cp, events); err != nil {
		t.Fatalf("PutCheckpoint(%s, %d, parent %d): %v", clip(cp.ThreadID), cp.ID, cp.ParentID, err)
	}
	return cp
}

func putWrites(t *testing.T, s store.Store, w store.TaskWrites) {
	t.Helper()
	if err := s.PutWrites(t.Context(), w); err != nil {
		t.Fatalf("PutWrites(%s, %d, %q): %v", clip(w.ThreadID), w.CheckpointID, w.TaskID, err)
	}
}

func wantIs(t *testing.T, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("error = %v, want %v", err, target)
	}
}

func wantCheckpoint(t *testing.T, got, want store.Checkpoint) {
	t.Helper()
	if got.ThreadID != want.ThreadID || got.ID != want.ID || got.ParentID != want.ParentID || got.RerootedFrom != want.RerootedFrom {
		t.Errorf("got checkpoint %s/%d (parent %d, rerooted from %d), want %s/%d (parent %d, rerooted from %d)",
			clip(got.ThreadID), got.ID, got.ParentID, got.RerootedFrom, clip(want.ThreadID), want.ID, want.ParentID, want.RerootedFrom)
	}
	if !sameJSON(got.State, want.State) {
		t.Errorf("checkpoint %d state = %s, want %s", want.ID, clip(string(got.State)), clip(string(want.State)))
	}
	if got.CreatedAt.IsZero() {
		t.Errorf("checkpoint %d has no CreatedAt", want.ID)
	}
}

// wantEvents compares type, checkpoint, seq and payload; a zero CheckpointID
// or Seq in want means "the one asked for" and "its position".
func wantEvents(t *testing.T, s store.Store, thread string, cp int64, want []store.Event) {
	t.Helper()
	got, err := s.Events(t.Context(), thread, cp)
	if err != nil {
		t.Fatalf("Events(%s, %d): %v", clip(thread), cp, err)
	}
	if len(got) != len(want) {
		t.Fatalf("Events(%s, %d) has %d events, want %d", clip(thread), cp, len(got), len(want))
	}
	for i, w := range want {
		if w.CheckpointID == 0 {
			w.CheckpointID = cp
		}
		if w.Seq == 0 {
			w.Seq = i + 1
		}
		if len(w.Payload) == 0 {
			w.Payload = []byte(`{}`)
		}
		g := got[i]
		if g.CheckpointID != w.CheckpointID || g.Seq != w.Seq || g.Type != w.Type || !sameJSON(g.Payload, w.Payload) {
			t.Errorf("Events(%s, %d)[%d] = %d/%d %q %s, want %d/%d %q %s", clip(thread), cp, i,
				g.CheckpointID, g.Seq, g.Type, clip(string(g.Payload)), w.CheckpointID, w.Seq, w.Type, clip(string(w.Payload)))
		}
	}
}

func wantTasks(t *testing.T, s store.Store, thread string, cp int64, tasks ...string) {
	t.Helper()
	got, err := s.Writes(t.Context(), thread, cp)
	if err != nil {
		t.Fatalf("Writes(%s, %d): %v", clip(thread), cp, err)
	}
	var ids []string
	for _, w := range got {
		ids = append(ids, w.TaskID)
	}
	if !slices.Equal(ids, tasks) {
		t.Errorf("Writes(%s, %d) tasks = %q, want %q", clip(thread), cp, ids, tasks)
	}
}

func ids(from, to int64) []int64 {
	var out []int64
	for id := from; id >= to; id-- {
		out = append(out, id)
	}
	return out
}

func idsOf(cps []store.Checkpoint) []int64 {
	var out []int64
	for _, cp := range cps {
		out = append(out, cp.ID)
	}
	return out
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func nested(depth int) []byte {
	return []byte(strings.Repeat("[", depth) + strings.Repeat("]", depth))
}

// hugeText is n bytes of varied text, quotes and non-ASCII included.
func hugeText(n int) string {
	const chunk = `Line with "quotes", a \ backslash, tabs	and ünïcödé — 日本語 🙂. `
	return strings.ToValidUTF8(strings.Repeat(chunk, n/len(chunk)+1)[:n], "")
}

// reformat writes the same JSON value differently: indented, keys reversed.
func reformat(t *testing.T, doc []byte) []byte {
	t.Helper()
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Fatalf("reformat: %v", err)
	}
	if m, ok := v.(map[string]any); ok {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		var b bytes.Buffer
		b.WriteString("{\n")
		for i := len(keys) - 1; i >= 0; i-- {
			val, _ := json.MarshalIndent(m[keys[i]], "  ", "   ")
			fmt.Fprintf(&b, "  %s : %s", jsonString(keys[i]), val)
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString("\n")
		}
		b.WriteString("}")
		return b.Bytes()
	}
	out, _ := json.MarshalIndent(v, "", "    ")
	return out
}

// sameJSON is the one definition of "the same JSON value" (tested on its
// own in store/internal/check): stores must agree with it.
func sameJSON(a, b []byte) bool { return check.SameJSON(a, b) }

// clip keeps failure messages readable when ids and payloads are huge.
func clip(s string) string {
	if len(s) <= 80 {
		return s
	}
	return fmt.Sprintf("%s…(%d bytes)", s[:80], len(s))
}

func clipAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = clip(s)
	}
	return out
}
