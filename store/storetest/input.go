package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"rewind/store"
)

// Input (store.Store's doc): ids and documents stored exactly, JSON compared
// as jsonb compares it, anything else refused with ErrInvalid before
// anything is written, and errors that name long ids clipped.

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
