package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"rewind/engine"
	"rewind/engine/ticket"
	"rewind/store"
	"rewind/store/backend/backendtest"
	"rewind/store/memory"
)

// Stores under test: every store (backendtest.All), each read again
// through a new handle where it can be reopened.
type storeCase struct {
	name string
	// open returns an empty store and a function that opens a new handle
	// on the same data (nil when the store cannot be reopened).
	open func(t testing.TB) (store.Store, func() store.Store)
}

var storeCases = func() (out []storeCase) {
	for _, b := range backendtest.All {
		out = append(out, storeCase{name: b.Name, open: func(t testing.TB) (store.Store, func() store.Store) {
			if !b.Shared {
				return b.Open(t, "storage"), nil
			}
			open := b.Reopener(t, "storage")
			return open(), open
		}})
	}
	return out
}()

// ticketEngine is the ticket graph with the mock model on st.
func ticketEngine(t testing.TB, st store.Store) *engine.Engine {
	t.Helper()
	e, err := ticket.NewEngine(st, ticket.NewMock())
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// reference records every checkpoint's values as the writer had them when
// it committed: the whole state the stored deltas must rebuild.
type reference struct {
	mu     sync.Mutex
	values map[int64]engine.Values
	// tasks are each checkpoint's pending tasks and the tasks whose writes
	// made it, as the writer had them.
	tasks map[int64]string
	// valid says which written values are JSON: each is compared after
	// many steps, and json.Valid on it every time was 2% of
	// TestRandomHistoriesRebuildExactly's CPU under -race.
	valid map[string]bool
	// decoded are values as json.Unmarshal reads them, by their bytes: a
	// channel written otherwise than it rebuilds (the summary's fields in
	// another order) is compared decoded at every check, and decoding
	// both sides every time was 4% of that test's CPU.
	decoded map[string]decodedValue
	// taskMemo are taskIDs by the stored bytes they are made of
	// (taskBytes): a checkpoint is read at many checks, and decoding and
	// encoding its tasks each time was 2% of that test's CPU.
	taskMemo map[string]string
}

// taskBytes is what taskIDs(cp) is made of, as stored (each part's length
// before it, so that no two lists of parts give one key).
func taskBytes(cp engine.Checkpoint) string {
	var b strings.Builder
	part := func(s string) {
		b.WriteString(strconv.Itoa(len(s)))
		b.WriteByte(':')
		b.WriteString(s)
	}
	b.WriteString(strconv.Itoa(len(cp.Tasks)))
	for _, t := range cp.Tasks {
		part(t.ID)
		part(t.Node)
		part(string(t.Args))
	}
	b.WriteString(strconv.Itoa(len(cp.Applied)))
	for _, g := range cp.Applied {
		part(g.Task)
		part(g.Node)
		b.WriteString(strconv.Itoa(len(g.Calls)))
		for _, ev := range g.Calls {
			part(string(ev.Data))
		}
	}
	return b.String()
}

// taskIDs is taskIDs(cp), made once per distinct taskBytes.
func (r *reference) taskIDs(cp engine.Checkpoint) string {
	key := taskBytes(cp)
	r.mu.Lock()
	got, seen := r.taskMemo[key]
	r.mu.Unlock()
	if seen {
		return got
	}
	got = taskIDs(cp)
	r.mu.Lock()
	if r.taskMemo == nil {
		r.taskMemo = map[string]string{}
	}
	r.taskMemo[key] = got
	r.mu.Unlock()
	return got
}

// decodedValue is one value's bytes decoded (ok: without error).
type decodedValue struct {
	v  any
	ok bool
}

// decode is json.Unmarshal(b) into an any, read once per distinct value.
func (r *reference) decode(b []byte) (any, bool) {
	if d, seen := r.decoded[string(b)]; seen {
		return d.v, d.ok
	}
	if r.decoded == nil {
		r.decoded = map[string]decodedValue{}
	}
	var v any
	ok := json.Unmarshal(b, &v) == nil
	r.decoded[string(b)] = decodedValue{v, ok}
	return v, ok
}

// isValid is json.Valid(b), read once per distinct value.
func (r *reference) isValid(b []byte) bool {
	if ok, seen := r.valid[string(b)]; seen {
		return ok
	}
	if r.valid == nil {
		r.valid = map[string]bool{}
	}
	ok := json.Valid(b)
	r.valid[string(b)] = ok
	return ok
}

// taskIDs is what a checkpoint holds of tasks: its pending tasks (id, node,
// arguments) and which tasks' writes made it.
func taskIDs(cp engine.Checkpoint) string {
	type task struct {
		ID, Node string
		Args     any
	}
	var pending []task
	for _, t := range cp.Tasks {
		var args any
		if len(t.Args) > 0 {
			_ = json.Unmarshal(t.Args, &args)
		}
		pending = append(pending, task{t.ID, t.Node, args})
	}
	var made []task
	for _, g := range cp.Applied {
		var calls []any // the roles and tokens of its model calls
		for _, ev := range g.Calls {
			var data any
			_ = json.Unmarshal(ev.Data, &data)
			calls = append(calls, data)
		}
		made = append(made, task{ID: g.Task, Node: g.Node, Args: calls})
	}
	b, _ := json.Marshal([]any{pending, made})
	return string(b)
}

func (r *reference) hook(point engine.HookPoint, info engine.HookInfo) {
	if point == engine.HookAfterCommit && info.Committed != nil {
		r.mu.Lock()
		r.values[info.Committed.ID] = info.Committed.Values
		if r.tasks == nil {
			r.tasks = map[int64]string{}
		}
		r.tasks[info.Committed.ID] = taskIDs(*info.Committed)
		r.mu.Unlock()
	}
}

func (r *reference) ids() []int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Sorted(maps.Keys(r.values))
}

// sameValues compares two states channel by channel as JSON values. The
// same valid bytes are the same value, read without decoding either: a
// rebuilt channel mostly is its written bytes, and decoding both sides of
// every check was a third of TestRandomHistoriesRebuildExactly's CPU.
func sameValues(a, b engine.Values) (string, bool) {
	return sameValuesWith(a, b, json.Valid, decodeAny)
}

// decodeAny is json.Unmarshal(b) into an any (ok: without error).
func decodeAny(b []byte) (any, bool) {
	var v any
	return v, json.Unmarshal(b, &v) == nil
}

// sameValuesWith is sameValues with valid saying whether bytes are JSON
// and decode reading them.
func sameValuesWith(a, b engine.Values, valid func([]byte) bool, decode func([]byte) (any, bool)) (string, bool) {
	for _, name := range unionKeys(a, b) {
		if bytes.Equal(a[name], b[name]) && valid(a[name]) {
			continue
		}
		x, okA := decode(a[name])
		y, okB := decode(b[name])
		if !okA || !okB || !reflect.DeepEqual(x, y) {
			return name, false
		}
	}
	return "", true
}

func unionKeys(a, b engine.Values) []string {
	var out []string
	for k := range a {
		out = append(out, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// check reads every checkpoint through e (which may have them cached) and
// through a new engine on the same store, which must rebuild them.
func (r *reference) check(t *testing.T, e *engine.Engine, thread, when string) {
	t.Helper()
	fresh, err := ticket.NewEngine(e.Store(), ticket.NewMock())
	if err != nil {
		t.Fatal(err)
	}
	r.checkWith(t, e, thread, when+" (this process)")
	r.checkWith(t, fresh, thread, when+" (rebuilt)")
}

// checkNew is check for an engine that has read nothing yet (a new one on
// a reopened store): its reads are already the rebuilt ones, and check's
// second new engine on the same store would read them again the same way.
func (r *reference) checkNew(t *testing.T, e *engine.Engine, thread, when string) {
	t.Helper()
	r.checkWith(t, e, thread, when+" (rebuilt)")
}

func (r *reference) checkWith(t *testing.T, e *engine.Engine, thread, when string) {
	t.Helper()
	r.checkIDs(t, e, thread, when, r.ids())
}

// checkSome checks the checkpoints newer than since and a sample of the
// older ones (a full check after every step would be quadratic).
func (r *reference) checkSome(t *testing.T, e *engine.Engine, thread, when string, since int64, rng *rand.Rand) {
	t.Helper()
	var ids []int64
	for _, id := range r.ids() {
		if id > since || rng.IntN(8) == 0 {
			ids = append(ids, id)
		}
	}
	fresh, err := ticket.NewEngine(e.Store(), ticket.NewMock())
	if err != nil {
		t.Fatal(err)
	}
	r.checkIDs(t, e, thread, when+" (this process)", ids)
	r.checkIDs(t, fresh, thread, when+" (rebuilt)", ids)
}

func (r *reference) checkIDs(t *testing.T, e *engine.Engine, thread, when string, ids []int64) {
	t.Helper()
	for _, id := range ids {
		cp, err := e.Get(t.Context(), thread, id)
		if err != nil {
			t.Fatalf("%s: Get(%d): %v", when, id, err)
		}
		r.mu.Lock()
		want, tasks := r.values[id], r.tasks[id]
		r.mu.Unlock()
		if ch, ok := sameValuesWith(cp.Values, want, r.isValid, r.decode); !ok {
			t.Fatalf("%s: checkpoint %d rebuilt channel %q as\n%s\nbut it was written as\n%s", when, id, ch, cp.Values[ch], want[ch])
		}
		if got := r.taskIDs(cp); got != tasks {
			t.Fatalf("%s: checkpoint %d rebuilt its tasks as\n%s\nbut they were written as\n%s", when, id, got, tasks)
		}
	}
}

var sentences = []string{
	"My order SO20260901 hasn't arrived: what is the order status, where is the parcel, and can I get a refund?",
	"Where is SO20260902?",
	"Please send the invoice for SO20260903.",
	"Can I still cancel SO20260904?",
	"Change the delivery address of SO20260905 to my office, and is it refundable?",
}

// TestRandomHistoriesRebuildExactly runs run, fork, resume after a kill,
// discard and prune in a random order (compaction happens as the thread
// grows) and checks after each that every checkpoint still rebuilds to the
// values it was written with, on every store, and again after reopening it.
// Each seed's base interval is its engines' own (engine.Tune), so the
// seeds and stores run at once, beside the package's other tests: as the
// process's setting, it kept the test serial, 84 s alone under -race.
func TestRandomHistoriesRebuildExactly(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		seed      uint64
		baseEvery int
	}{{1, 2}, {2, 6}, {3, 64}, {7, 32}} { // short and long delta chains (seed 7's hold summary patches an older one's fields outlive)
		for _, sc := range storeCases {
			t.Run(fmt.Sprintf("seed%d/%s", c.seed, sc.name), func(t *testing.T) {
				t.Parallel()
				st, reopen := sc.open(t)
				randomHistory(t, st, reopen, c.seed, c.baseEvery)
				checkReplayAll(t, st, randomThread)
			})
		}
	}
}

// randomThread is the thread randomHistory writes.
const randomThread = "random"

// randomHistory writes a random history on st and checks it as it goes;
// reopen (nil for memory) gives another handle on the same store.
func randomHistory(t *testing.T, st store.Store, reopen func() store.Store, seed uint64, baseEvery int) {
	ctx := t.Context()
	rng := rand.New(rand.NewPCG(seed, 99))
	ref := &reference{values: map[int64]engine.Values{}}
	e := ticketEngine(t, st)
	engine.Tune(e, baseEvery, false)
	const thread = randomThread
	cfg := engine.RunConfig{Hook: ref.hook}
	var log []string
	defer func() {
		if t.Failed() {
			t.Logf("operations: %s", strings.Join(log, "; "))
		}
	}()
	var since int64
	for step := 0; step < 40; step++ {
		latest, err := e.Latest(ctx, thread)
		pending := err == nil && len(latest.Tasks) > 0
		ids := ref.ids()
		op := rng.IntN(10)
		switch {
		case pending:
			log = append(log, "resume")
			if _, err := e.Resume(ctx, thread, cfg); err != nil {
				t.Fatalf("resume: %v", err)
			}
		case op < 5 || len(ids) == 0:
			log = append(log, "run")
			if _, err := e.Run(ctx, thread, ticket.Input(sentences[rng.IntN(len(sentences))]), cfg); err != nil {
				t.Fatalf("run: %v", err)
			}
		case op < 7:
			at := ids[rng.IntN(len(ids))]
			log = append(log, fmt.Sprint("fork@", at))
			if _, err := e.Fork(ctx, thread, at, ticket.Input(sentences[rng.IntN(len(sentences))]), cfg); err != nil {
				t.Fatalf("fork at %d: %v", at, err)
			}
		case op < 9:
			// A kill: the run stops after some tasks finished (their writes
			// stored), as a SIGKILL would leave it; the next step resumes.
			after := int64(1 + rng.IntN(4))
			log = append(log, fmt.Sprint("kill after ", after, " tasks"))
			runCtx, cancel := context.WithCancel(ctx)
			var finished atomic.Int64
			kcfg := cfg
			kcfg.Hook = func(point engine.HookPoint, info engine.HookInfo) {
				ref.hook(point, info)
				if point == engine.HookTaskFinished && finished.Add(1) == after {
					cancel()
				}
			}
			_, err := e.Run(runCtx, thread, ticket.Input(sentences[rng.IntN(len(sentences))]), kcfg)
			cancel()
			if err != nil && !errors.Is(err, context.Canceled) {
				t.Fatalf("killed run: %v", err)
			}
		default:
			keep := 3 + rng.IntN(15)
			log = append(log, fmt.Sprint("prune keep-last ", keep))
			res, err := e.Prune(ctx, thread, engine.PrunePolicy{KeepLast: keep})
			if err != nil {
				t.Fatalf("prune: %v", err)
			}
			ref.mu.Lock()
			for _, id := range res.Pruned {
				delete(ref.values, id)
			}
			ref.mu.Unlock()
		}
		when := fmt.Sprintf("after %s", log[len(log)-1])
		if strings.HasPrefix(log[len(log)-1], "prune") {
			ref.check(t, e, thread, when) // everything kept must still read
		} else {
			ref.checkSome(t, e, thread, when, since, rng)
		}
		if ids := ref.ids(); len(ids) > 0 {
			since = ids[len(ids)-1]
		}
	}
	ref.check(t, e, thread, "at the end")
	ref.checkEachState(t, st, thread, "at the end")
	checkReaders(t, e, st, thread)
	if reopen != nil {
		ref.checkNew(t, ticketEngine(t, reopen()), thread, "after reopening the store")
	}
	if last, err := e.Latest(ctx, thread); err != nil || last.ID < 100 {
		t.Fatalf("the history ends at checkpoint %d (%v): too short to test anything", last.ID, err)
	}
}

// TestForkValuesNeverCollide is langgraphjs#1812 turned into a test: a fork
// and the branch it left both carry on, and every checkpoint of each reads
// its own branch's values, before and after compaction.
func TestForkValuesNeverCollide(t *testing.T) {
	t.Cleanup(engine.SetBaseEvery(5)) // the process's: once, for the stores in parallel
	for _, sc := range storeCases {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			st, reopen := sc.open(t)
			e, err := ticket.NewEngine(st, ticket.NewMock())
			if err != nil {
				t.Fatal(err)
			}
			ref := &reference{values: map[int64]engine.Values{}}
			cfg := engine.RunConfig{Hook: ref.hook}
			if _, err := e.Run(ctx, "f", ticket.Input(sentences[0]), cfg); err != nil {
				t.Fatal(err)
			}
			first, err := e.Latest(ctx, "f")
			if err != nil {
				t.Fatal(err)
			}
			// Branch B from the end of turn 1, then both branches go on.
			if _, err := e.Fork(ctx, "f", first.ID, ticket.Input(sentences[2]), cfg); err != nil {
				t.Fatal(err)
			}
			bHead, _ := e.Latest(ctx, "f")
			for i := 0; i < 3; i++ {
				// Branch A: fork again from its own head (its continuation).
				aHead := first.ID
				if i > 0 {
					aHead = ref.branchHead(t, e, "f", first.ID, bHead.ID)
				}
				if _, err := e.Fork(ctx, "f", aHead, ticket.Input(sentences[1]), cfg); err != nil {
					t.Fatal(err)
				}
				if _, err := e.Fork(ctx, "f", bHead.ID, ticket.Input(sentences[3]), cfg); err != nil {
					t.Fatal(err)
				}
				bHead, _ = e.Latest(ctx, "f")
			}
			ref.check(t, e, "f", "both branches written")
			last, _ := e.Latest(ctx, "f")
			s, _ := ticket.Decode(last.Values)
			if s.HistoryVersion == 0 {
				t.Fatal("no compaction happened: the branches are too short to test it")
			}
			if reopen != nil {
				e2, err := ticket.NewEngine(reopen(), ticket.NewMock())
				if err != nil {
					t.Fatal(err)
				}
				ref.checkNew(t, e2, "f", "after reopening")
			}
		})
	}
}

// branchHead is the newest checkpoint that descends from from without
// passing through not (the other branch).
func (r *reference) branchHead(t *testing.T, e *engine.Engine, thread string, from, not int64) int64 {
	t.Helper()
	best := from
	for _, id := range r.ids() {
		chain, err := e.Ancestors(t.Context(), thread, id)
		if err != nil {
			t.Fatal(err)
		}
		onA, onB := false, false
		for _, c := range chain {
			onA = onA || c.ID == from
			onB = onB || c.ID == not
		}
		if onA && !onB && id > best {
			best = id
		}
	}
	return best
}

// One unreadable listing does not hide the thread: History lists it as
// unreadable, with why, and the rest reads as before.
func TestHistoryListsAnUnreadableRow(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	st := memory.New()
	e, err := ticket.NewEngine(st, ticket.NewMock())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Run(ctx, "u", ticket.Input(sentences[1]), engine.RunConfig{}); err != nil {
		t.Fatal(err)
	}
	head, err := st.Latest(ctx, "u")
	if err != nil {
		t.Fatal(err)
	}
	bad := store.Checkpoint{ThreadID: "u", ID: head.ID + 1, ParentID: head.ID, Meta: []byte(`{"step":"not a number"}`), State: []byte(`{}`)}
	if err := st.PutCheckpoint(ctx, bad, nil); err != nil {
		t.Fatal(err)
	}
	h, err := e.History(ctx, "u", 0, 0)
	if err != nil {
		t.Fatalf("History with one unreadable row: %v", err)
	}
	if len(h) != int(bad.ID) || h[0].Source != engine.SourceUnreadable || !strings.Contains(h[0].Unreadable, "corrupt") || h[1].Source == engine.SourceUnreadable {
		t.Fatalf("History = %d rows, newest %q (%q)", len(h), h[0].Source, h[0].Unreadable)
	}
	if chain, err := e.Ancestors(ctx, "u", bad.ID); err != nil || len(chain) != int(bad.ID) {
		t.Fatalf("Ancestors past the unreadable row: %d, %v", len(chain), err)
	}
	_, err = e.Get(ctx, "u", bad.ID)
	var fixes engine.Fixer
	if !errors.Is(err, engine.ErrCorrupt) || !errors.As(err, &fixes) || !slices.ContainsFunc(fixes.Fixes(), func(f engine.Fix) bool { return f.Action == engine.FixRemove }) {
		t.Fatalf("Get of the unreadable row: %v; want ErrCorrupt whose fixes delete the thread", err)
	}
	if strings.Contains(err.Error(), "rewind ") {
		t.Fatalf("the engine's error spells a command (the CLI words fixes): %v", err)
	}
}
