package storetest_test

// The suite must be able to fail: each mutant below is the memory store with
// one plausible bug, and the suite, run in a child process, must reject it.

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"regexp"
	"slices"
	"sync"
	"testing"
	"time"

	"rewind/store"
	"rewind/store/memory"
	"rewind/store/storetest"
)

// bugs are the mutants, each with the suite's subtest that caught it
// when it was added: a child runs that one first, and the whole suite
// only if it passes (80 children each running the suite until its first
// failure took 148 s of CPU under -race, half of the package's time).
var bugs = []struct{ bug, caughtBy string }{
	{"conflict ignored", "SameValueNotSameBytes"},
	{"stale ignored", "Stale"},
	{"missing parent ignored", "RejectedPutWritesNothing"},
	{"put ignores context", "CancelledContext"},
	{"latest is oldest", "Stale"},
	{"history ignores limit", "History"},
	{"history ignores before", "History"},
	{"history oldest first", "HostileThreadIDs"},
	{"get crosses threads", "NotFound"},
	{"long ids truncated", "HostileThreadIDs"},
	{"state aliased", "NoAliasing"},
	{"created at unset", "HostilePayloads"},
	{"writes unordered", "Writes"},
	{"writes need no checkpoint", "Writes"},
	{"events unordered", "SameContentIsNoOp"},
	{"events leak across checkpoints", "Conflict"},
	{"threads miscounted", "HostileThreadIDs"},
	{"delete is a no-op", "HostileThreadIDs"},
	{"delete unknown succeeds", "DeleteThread"},
	{"lock never held", "Lock"},
	{"release frees the next holder", "Lock"},
	{"nul escapes refused", "SameValueNotSameBytes"},
	{"big states refused", "HostilePayloads"},
	{"surrogates collapse", "SameValueNotSameBytes"},
	{"numbers compared as text", "SameValueNotSameBytes"},
	{"refusals unmarked", "InvalidCheckpoint"},
	{"draft recreated", "DraftsIdempotent"},
	{"draft body overwritten", "DraftsIdempotent"},
	{"drafts survive delete", "DraftsDeleted"},
	{"drafts unordered", "DraftsConcurrent"},
	{"fence ignored", "InvalidCheckpoint"},
	{"conflict before fence", "HostilePayloads"},
	{"fence before no-op", "EpochReads"},
	{"epoch survives delete", "FenceEpochs"},
	{"epoch reset by delete", "FenceEpochs"},
	{"epoch too new accepted", "PutSettlesWrites"},
	{"hook never called", "TxHook"},
	{"fence checked before the transaction", "PutSettlesWrites"},
	{"prune not atomic", "ThreadCounts"},
	{"prune ignores context", "CancelledContext"},
	{"head prune accepted", "PruneIsAtomic"},
	{"pruned writes linger", "PruneDeletesEveryRow"},
	{"pruned events linger", "PruneDeletesEveryRow"},
	{"drafts pruned", "PruneDeletesEveryRow"},
	{"reroot skipped", "ThreadCounts"},
	{"rerooted from lost", "ThreadCounts"},
	{"pruned ids reused", "ThreadCounts"},
	{"rerooted put conflicts", "PruneRerootedSameContent"},
	{"draft fence ignored", "FencedDrafts"},
	{"draft fence before lookup", "FencedDrafts"},
	{"draft epoch too new accepted", "FencedDrafts"},
	{"long ids echoed", "LongIDsClippedInErrors"},
	{"drafts declared but missing", "DeleteErases"},
	{"watch never wakes", "Watch"},
	{"delete wakes nobody", "WatchDelete"},
	{"lock holder unnamed", "LockHolder"},
	{"bodies cross threads", "BodiesAreMessagesAndBlobs"},
	{"bodies drop blobs", "BodiesAreMessagesAndBlobs"},
	{"chain by id range", "ChainStopsAtBase"},
	{"writer's created at ignored", "WritersCreatedAt"},
	{"messages range open at the end", "MessagesInRange"},
	{"messages range by checkpoint", "MessagesInRange"},
	{"head snapshot dropped", "HeadSnapshot"},
	{"head snapshot is content", "HeadSnapshot"},
	{"chain passes the head snapshot", "HeadSnapshot"},
	{"epoch read is the counter", "EpochReads"},
	{"epoch read fences", "EpochReads"},
	{"deleted message hashes kept", "DeleteForgetsBodies"},
	{"deleted text left unerased", "DeleteErases"},
	{"search ignores limit", "Search"},
	{"search keeps one message an index", "Search"},
	{"search matches whole words", "Search"},
	{"thread counts keep the pruned", "ThreadCounts"},
	{"thread updated at the latest time", "ThreadCounts"},
	{"threads list the oldest listing", "ThreadCounts"},
	{"tenant claim forgotten", "TenantIsolation"},
	{"tenant survives delete", "TenantIsolation"},
	{"claimed threads unlisted", "TenantIsolation"},
	{"reseal skips the head", "Reseal"},
	{"reseal not atomic", "Reseal"},
}

func TestSuiteCatchesBugs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the suite once per bug")
	}
	for _, b := range bugs {
		t.Run(b.bug, func(t *testing.T) {
			t.Parallel()
			failed, out := runMutant(t, b.bug, "^TestMutant$/^"+regexp.QuoteMeta(b.caughtBy)+"$")
			if !failed {
				// Not caught where it was: the whole suite must catch it.
				t.Logf("%s no longer catches it alone; running the whole suite", b.caughtBy)
				if failed, out = runMutant(t, b.bug, "^TestMutant$"); !failed {
					t.Fatalf("the suite passed a store whose %s:\n%s", b.bug, out)
				}
			}
			if m := regexp.MustCompile(`--- FAIL: TestMutant/(\S+)`).FindSubmatch(out); m != nil {
				t.Logf("caught by %s", m[1])
			} else {
				t.Fatalf("child failed without a failing subtest:\n%s", out)
			}
		})
	}
}

// runMutant runs the suite's tests that run matches on the store with
// bug, in a child process, and says whether they failed.
func runMutant(t *testing.T, bug, run string) (failed bool, out []byte) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run="+run, "-test.short", "-test.failfast")
	// GORACE: under -race, a process sleeps a second as it exits.
	cmd.Env = append(os.Environ(), "STORETEST_BUG="+bug, "GORACE=atexit_sleep_ms=0")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("run the suite on the store whose %s: %v\n%s", bug, err, out)
	}
	return err != nil, out
}

// memoryCaps are the memory store's capabilities (as store/memory's
// conformance test declares them): all but Processes.
var memoryCaps = []storetest.Capability{storetest.Drafts, storetest.Fencing, storetest.TxHook, storetest.Watch, storetest.Erasure}

// TestMutant runs the suite on one buggy store, in the child process only.
func TestMutant(t *testing.T) {
	bug := os.Getenv("STORETEST_BUG")
	if bug == "" {
		t.Skip("child of TestSuiteCatchesBugs")
	}
	if !slices.ContainsFunc(bugs, func(b struct{ bug, caughtBy string }) bool { return b.bug == bug }) {
		t.Fatalf("unknown bug %q", bug)
	}
	if bug == "drafts declared but missing" {
		storetest.Run(t, storetest.Backend{Caps: memoryCaps, Open: openNoDrafts})
		return
	}
	storetest.Run(t, storetest.Backend{Caps: memoryCaps, Open: func(t *testing.T) store.Store {
		return &buggy{Store: memory.New(), bug: bug, aliased: map[[2]any][]byte{}, releases: map[string]func() error{}, epochs: map[string]int64{},
			pruned: map[[2]any][2][]byte{}, local: map[string]map[int64]int64{}, gone: map[[2]string]bool{}}
	}})
}

type buggy struct {
	*memory.Store
	bug      string
	aliased  map[[2]any][]byte
	releases map[string]func() error
	mu       sync.Mutex       // for epochs: Fence and writes race in the suite
	epochs   map[string]int64 // as handed out by Fence
	// For "epoch reset by delete": epochs counted per thread since its
	// last delete (what this store hands out), and the real ones they stand for.
	local map[string]map[int64]int64
	// For "deleted message hashes kept": thread, hash of every message
	// a delete removed.
	gone map[[2]string]bool
	// pruned keeps, by thread and checkpoint id, what Prune deleted: the
	// first task's writes and the first event's payload (nil when none).
	pruned map[[2]any][2][]byte
	// deleted: DeleteThread was called.
	deleted bool
}

func (b *buggy) Reseal(ctx context.Context, thread string, fn func(store.DocKind, string, []byte) ([]byte, error)) (int, error) {
	switch b.bug {
	case "reseal skips the head":
		inner := fn
		fn = func(kind store.DocKind, hash string, doc []byte) ([]byte, error) {
			if kind == store.DocHead {
				return doc, nil
			}
			return inner(kind, hash, doc)
		}
	case "reseal not atomic": // what came before an error of fn stays
		var failed error
		n, err := b.Store.Reseal(ctx, thread, func(kind store.DocKind, hash string, doc []byte) ([]byte, error) {
			out, err := fn(kind, hash, doc)
			if err != nil {
				failed = err
				return doc, nil
			}
			if failed != nil {
				return doc, nil
			}
			return out, nil
		})
		if err == nil {
			err = failed
		}
		return n, err
	}
	return b.Store.Reseal(ctx, thread, fn)
}

func (b *buggy) wasPruned(thread string, id int64) ([2][]byte, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	p, ok := b.pruned[[2]any{thread, id}]
	return p, ok
}

func (b *buggy) Prune(ctx context.Context, thread string, ids []int64, rebase []store.Rebase) (store.PruneResult, error) {
	switch b.bug {
	case "prune ignores context":
		ctx = context.Background()
	case "prune not atomic": // one id at a time
		var res store.PruneResult
		for _, id := range ids {
			r, err := b.prune(ctx, thread, []int64{id}, rebase)
			if err != nil {
				return res, err
			}
			res.Deleted, res.Rerooted = append(res.Deleted, r.Deleted...), append(res.Rerooted, r.Rerooted...)
			res.Writes, res.Events = res.Writes+r.Writes, res.Events+r.Events
		}
		return res, nil
	case "head prune accepted":
		if head, err := b.Store.Latest(ctx, thread); err == nil {
			ids = slices.DeleteFunc(slices.Clone(ids), func(id int64) bool { return id == head.ID })
		}
	}
	return b.prune(ctx, thread, ids, rebase)
}

// prune prunes and remembers what was pruned, for the read-side bugs.
func (b *buggy) prune(ctx context.Context, thread string, ids []int64, rebase []store.Rebase) (store.PruneResult, error) {
	kept := map[int64][2][]byte{}
	for _, id := range ids {
		var p [2][]byte
		if ws, _ := b.Store.Writes(ctx, thread, id); len(ws) > 0 {
			p[0] = ws[0].Writes
		}
		if evs, _ := b.Store.Events(ctx, thread, id); len(evs) > 0 && id != 0 {
			p[1] = evs[0].Payload
		}
		kept[id] = p
	}
	res, err := b.Store.Prune(ctx, thread, ids, rebase)
	if err == nil {
		b.mu.Lock()
		for id, p := range kept {
			b.pruned[[2]any{thread, id}] = p
		}
		b.pruned[[2]any{thread, int64(0)}] = [2][]byte{}
		b.mu.Unlock()
	}
	return res, err
}

// read applies the read-side bugs of Prune to a checkpoint read back.
func (b *buggy) read(cp store.Checkpoint) store.Checkpoint {
	switch b.bug {
	case "reroot skipped":
		if cp.RerootedFrom != 0 {
			cp.ParentID, cp.RerootedFrom = cp.RerootedFrom, 0
		}
	case "rerooted from lost":
		cp.RerootedFrom = 0
	}
	return cp
}

func (b *buggy) epoch(thread string) int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.epochs[thread]
}

// real is the epoch a write carries to the memory store: for "epoch reset
// by delete", the real epoch behind the per-thread one this store handed out.
func (b *buggy) real(thread string, epoch int64) int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	if r, ok := b.local[thread][epoch]; ok && b.bug == "epoch reset by delete" {
		return r
	}
	return epoch
}

func (b *buggy) PutCheckpoint(ctx context.Context, cp store.Checkpoint, events []store.Event) error {
	cp.Epoch = b.real(cp.ThreadID, cp.Epoch)
	if b.bug == "deleted message hashes kept" { // a hash index the delete missed: a re-put looks stored
		b.mu.Lock()
		cp.Messages = slices.DeleteFunc(slices.Clone(cp.Messages), func(m store.Message) bool { return b.gone[[2]string{cp.ThreadID, m.Hash}] })
		b.mu.Unlock()
	}
	switch {
	case b.bug == "put ignores context":
		ctx = context.Background()
	case b.bug == "long ids truncated" && len(cp.ThreadID) > 1000:
		cp.ThreadID = cp.ThreadID[:1000]
	case b.bug == "nul escapes refused" && bytes.Contains(cp.State, []byte(`\u0000`)),
		b.bug == "big states refused" && len(cp.State) > 512<<10:
		return errors.New("put checkpoint: refused")
	}
	if b.bug == "writer's created at ignored" {
		cp.CreatedAt = time.Time{} // the store's clock stamps it
	}
	switch b.bug {
	case "head snapshot dropped":
		cp.Head = nil
	case "head snapshot is content":
		if old, err := b.Store.Get(ctx, cp.ThreadID, cp.ID); err == nil && len(cp.Head) > 0 && !decodedEqual(old.Head, cp.Head) {
			return store.ErrConflict
		}
	}
	switch {
	case b.bug == "fence ignored":
		cp.Epoch = 0
	case b.bug == "conflict before fence":
		if old, err := b.Store.Get(ctx, cp.ThreadID, cp.ID); err == nil && !decodedEqual(old.State, cp.State) {
			return store.ErrConflict
		}
	case b.bug == "fence before no-op" && cp.Epoch > 0 && cp.Epoch < b.epoch(cp.ThreadID):
		return fmt.Errorf("fenced: %w", store.ErrFenced)
	case b.bug == "epoch too new accepted" && cp.Epoch > b.epoch(cp.ThreadID):
		cp.Epoch = 0
	case b.bug == "fence checked before the transaction" && cp.Epoch > 0:
		if cp.Epoch < b.epoch(cp.ThreadID) {
			return fmt.Errorf("fenced: %w", store.ErrFenced)
		}
		time.Sleep(100 * time.Microsecond) // the window a real store would have
		cp.Epoch = 0
	}
	if b.bug == "numbers compared as text" {
		// The old memory store: json.Number kept 1.50 and 1.5 apart.
		if old, err := b.Store.Get(ctx, cp.ThreadID, cp.ID); err == nil && !sameAsText(old.State, cp.State) {
			return store.ErrConflict
		}
	}
	if b.bug == "rerooted put conflicts" {
		if old, err := b.Store.Get(ctx, cp.ThreadID, cp.ID); err == nil && old.RerootedFrom != 0 && old.ParentID != cp.ParentID {
			return store.ErrConflict
		}
	}
	err := b.Store.PutCheckpoint(ctx, cp, events)
	if err != nil && b.bug == "long ids echoed" {
		err = fmt.Errorf("put checkpoint of thread %q: %w", cp.ThreadID, err)
	}
	if _, ok := b.wasPruned(cp.ThreadID, cp.ID); ok && b.bug == "pruned ids reused" && errors.Is(err, store.ErrStale) {
		return nil
	}
	switch {
	case b.bug == "surrogates collapse" && errors.Is(err, store.ErrConflict):
		// The old memory store: encoding/json made every lone surrogate U+FFFD.
		if old, gerr := b.Store.Get(ctx, cp.ThreadID, cp.ID); gerr == nil && decodedEqual(old.State, cp.State) {
			return nil
		}
	case b.bug == "refusals unmarked" && errors.Is(err, store.ErrInvalid):
		return errors.New(err.Error())
	case b.bug == "conflict ignored" && errors.Is(err, store.ErrConflict),
		b.bug == "stale ignored" && errors.Is(err, store.ErrStale),
		b.bug == "missing parent ignored" && errors.Is(err, store.ErrNotFound):
		return nil
	case b.bug == "state aliased" && err == nil:
		b.aliased[[2]any{cp.ThreadID, cp.ID}] = cp.State
	}
	return err
}

func (b *buggy) Get(ctx context.Context, thread string, id int64) (store.Checkpoint, error) {
	if b.bug == "long ids truncated" && len(thread) > 1000 {
		thread = thread[:1000]
	}
	cp, err := b.Store.Get(ctx, thread, id)
	switch {
	case b.bug == "get crosses threads" && errors.Is(err, store.ErrNotFound):
		threads, _ := b.Store.Threads(ctx)
		for _, th := range threads {
			if cp, err := b.Store.Get(ctx, th.ID, id); err == nil {
				return cp, nil
			}
		}
	case b.bug == "state aliased" && b.aliased[[2]any{thread, id}] != nil:
		cp.State = b.aliased[[2]any{thread, id}]
	case b.bug == "created at unset":
		cp.CreatedAt = time.Time{}
	}
	return b.read(cp), err
}

func (b *buggy) Latest(ctx context.Context, thread string) (store.Checkpoint, error) {
	if b.bug == "latest is oldest" {
		h, err := b.Store.History(ctx, thread, 0, 0)
		if err == nil && len(h) > 0 {
			return h[len(h)-1], nil
		}
	}
	cp, err := b.Store.Latest(ctx, thread)
	return b.read(cp), err
}

func (b *buggy) History(ctx context.Context, thread string, before int64, limit int) ([]store.Checkpoint, error) {
	switch b.bug {
	case "history ignores limit":
		limit = 0
	case "history ignores before":
		before = 0
	}
	h, err := b.Store.History(ctx, thread, before, limit)
	if b.bug == "history oldest first" {
		slices.Reverse(h)
	}
	for i := range h {
		h[i] = b.read(h[i])
	}
	return h, err
}

func (b *buggy) PutWrites(ctx context.Context, w store.TaskWrites) error {
	w.Epoch = b.real(w.ThreadID, w.Epoch)
	switch {
	case b.bug == "fence ignored":
		w.Epoch = 0
	case b.bug == "epoch too new accepted" && w.Epoch > b.epoch(w.ThreadID):
		w.Epoch = 0
	}
	err := b.Store.PutWrites(ctx, w)
	if b.bug == "writes need no checkpoint" && errors.Is(err, store.ErrNotFound) {
		return nil
	}
	return err
}

func (b *buggy) Writes(ctx context.Context, thread string, id int64) ([]store.TaskWrites, error) {
	ws, err := b.Store.Writes(ctx, thread, id)
	if b.bug == "writes unordered" {
		slices.Reverse(ws)
	}
	if p, ok := b.wasPruned(thread, id); ok && b.bug == "pruned writes linger" && p[0] != nil {
		ws = append(ws, store.TaskWrites{ThreadID: thread, CheckpointID: id, TaskID: "task", Writes: p[0]})
	}
	return ws, err
}

func (b *buggy) Events(ctx context.Context, thread string, id int64) ([]store.Event, error) {
	if b.bug == "events leak across checkpoints" {
		id = 0
	}
	evs, err := b.Store.Events(ctx, thread, id)
	if b.bug == "events unordered" {
		slices.Reverse(evs)
	}
	if p, ok := b.wasPruned(thread, id); ok && b.bug == "pruned events linger" && p[1] != nil {
		evs = append(evs, store.Event{ThreadID: thread, CheckpointID: id, Seq: 1, Type: "a", Payload: p[1]})
	}
	return evs, err
}

func (b *buggy) Threads(ctx context.Context) ([]store.Thread, error) {
	th, err := b.Store.Threads(ctx)
	for i := range th {
		switch b.bug {
		case "threads miscounted":
			th[i].Checkpoints++
		case "thread counts keep the pruned": // a count kept at put, never taken down
			b.mu.Lock()
			for k := range b.pruned {
				if k[0] == th[i].ID {
					th[i].Checkpoints++
				}
			}
			b.mu.Unlock()
		case "threads list the oldest listing":
			if h, _ := b.Store.History(ctx, th[i].ID, 0, 0); len(h) > 0 {
				th[i].Latest = h[len(h)-1]
			}
		case "thread updated at the latest time": // max(created_at), not the newest's
			h, _ := b.Store.History(ctx, th[i].ID, 0, 0)
			for _, cp := range h {
				if cp.CreatedAt.After(th[i].UpdatedAt) {
					th[i].UpdatedAt = cp.CreatedAt
				}
			}
		}
	}
	return th, err
}

// Unerased, for "deleted text left unerased": a store that never clears
// its pending erasure once it has deleted, as sqlite's wipe would if it
// forgot that the WAL was emptied after all.
func (b *buggy) Unerased(ctx context.Context) (string, error) {
	b.mu.Lock()
	deleted := b.deleted
	b.mu.Unlock()
	if b.bug == "deleted text left unerased" && deleted {
		return "a read by pid 1", nil
	}
	return b.Store.Unerased(ctx)
}

func (b *buggy) DeleteThread(ctx context.Context, thread string) error {
	b.mu.Lock()
	b.deleted = true
	b.mu.Unlock()
	if b.bug == "delete is a no-op" {
		return nil
	}
	if b.bug == "epoch survives delete" {
		err := b.Store.DeleteThread(ctx, thread)
		for range b.epoch(thread) {
			b.Store.Fence(ctx, thread)
		}
		return err
	}
	if b.bug == "deleted message hashes kept" {
		ms, _ := b.Store.MessagesIn(ctx, thread, 0, 1<<40)
		b.mu.Lock()
		for _, m := range ms {
			b.gone[[2]string{thread, m.Hash}] = true
		}
		b.mu.Unlock()
	}
	b.mu.Lock()
	delete(b.epochs, thread)
	delete(b.local, thread)
	b.mu.Unlock()
	if b.bug == "drafts survive delete" {
		kept, _ := b.Store.ListDrafts(ctx, thread)
		err := b.Store.DeleteThread(ctx, thread)
		for _, d := range kept {
			b.Store.CreateDraft(ctx, d)
		}
		return err
	}
	owner, _ := b.Store.ThreadTenant(ctx, thread)
	err := b.Store.DeleteThread(ctx, thread)
	if b.bug == "tenant survives delete" && err == nil && owner != store.DefaultTenant {
		b.Store.ClaimThread(ctx, thread, owner)
	}
	if b.bug == "delete unknown succeeds" && errors.Is(err, store.ErrNotFound) {
		return nil
	}
	return err
}

// ClaimThread, for "tenant claim forgotten": says the thread is the
// tenant's and stores nothing, so it stays the default tenant's.
func (b *buggy) ClaimThread(ctx context.Context, thread, tenant string) (string, error) {
	if b.bug == "tenant claim forgotten" {
		return tenant, nil
	}
	return b.Store.ClaimThread(ctx, thread, tenant)
}

func (b *buggy) ThreadTenants(ctx context.Context) (map[string]string, error) {
	if b.bug == "claimed threads unlisted" {
		return map[string]string{}, nil
	}
	return b.Store.ThreadTenants(ctx)
}

func (b *buggy) Lock(ctx context.Context, thread string) (func() error, error) {
	if b.bug == "lock never held" {
		return func() error { return nil }, ctx.Err()
	}
	release, err := b.Store.Lock(ctx, thread)
	if b.bug != "release frees the next holder" || err != nil {
		return release, err
	}
	// Every call releases whoever holds the thread now.
	b.releases[thread] = release
	return func() error { return b.releases[thread]() }, nil
}

func decodedEqual(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

func sameAsText(a, b []byte) bool {
	x, y := json.NewDecoder(bytes.NewReader(a)), json.NewDecoder(bytes.NewReader(b))
	x.UseNumber()
	y.UseNumber()
	var u, v any
	return x.Decode(&u) == nil && y.Decode(&v) == nil && reflect.DeepEqual(u, v)
}

func (b *buggy) CreateDraft(ctx context.Context, d store.Draft) (store.Draft, bool, error) {
	switch {
	case b.bug == "draft fence ignored":
		d.Epoch = 0
	case b.bug == "draft fence before lookup" && d.Epoch > 0 && d.Epoch < b.epoch(d.ThreadID):
		return store.Draft{}, false, fmt.Errorf("fenced: %w", store.ErrFenced)
	case b.bug == "draft epoch too new accepted" && d.Epoch > b.epoch(d.ThreadID):
		d.Epoch = 0
	}
	got, created, err := b.Store.CreateDraft(ctx, d)
	switch {
	case err != nil:
	case b.bug == "draft recreated":
		created = true
	case b.bug == "draft body overwritten":
		got.Body = d.Body
	}
	return got, created, err
}

func (b *buggy) ListDrafts(ctx context.Context, thread string) ([]store.Draft, error) {
	ds, err := b.Store.ListDrafts(ctx, thread)
	if b.bug == "drafts unordered" {
		slices.Reverse(ds)
	}
	if _, ok := b.wasPruned(thread, 0); ok && b.bug == "drafts pruned" {
		ds = nil
	}
	return ds, err
}

func (b *buggy) Epoch(ctx context.Context, thread string) (int64, error) {
	switch b.bug {
	case "epoch read is the counter": // the newest epoch of any thread
		var newest int64
		b.mu.Lock()
		for _, e := range b.epochs {
			newest = max(newest, e)
		}
		b.mu.Unlock()
		return newest, ctx.Err()
	case "epoch read fences":
		return b.Fence(ctx, thread)
	}
	return b.Store.Epoch(ctx, thread)
}

func (b *buggy) Fence(ctx context.Context, thread string) (int64, error) {
	e, err := b.Store.Fence(ctx, thread)
	if err == nil {
		b.mu.Lock()
		b.epochs[thread] = e
		if b.bug == "epoch reset by delete" { // the old stores: 1, 2, ... per thread, from 1 again after a delete
			if b.local[thread] == nil {
				b.local[thread] = map[int64]int64{}
			}
			n := int64(len(b.local[thread]) + 1)
			b.local[thread][n] = e
			e = n
		}
		b.mu.Unlock()
	}
	return e, err
}

func (b *buggy) SetTxHook(hook func(string)) {
	if b.bug != "hook never called" {
		b.Store.SetTxHook(hook)
	}
}

func (b *buggy) Watch(ctx context.Context, thread string) (<-chan struct{}, error) {
	c, err := b.Store.Watch(ctx, thread)
	if err == nil && b.bug == "delete wakes nobody" {
		relayed := make(chan struct{}, 1)
		go func() {
			defer close(relayed)
			for range c {
				if _, err := b.Store.Latest(context.WithoutCancel(ctx), thread); err != nil {
					continue // the thread is gone: swallowed
				}
				select {
				case relayed <- struct{}{}:
				default:
				}
			}
		}()
		return relayed, nil
	}
	if err != nil || b.bug != "watch never wakes" {
		return c, err
	}
	quiet := make(chan struct{})
	go func() {
		for range c { // swallowed
		}
		close(quiet)
	}()
	return quiet, nil
}

func (b *buggy) LockHolder(ctx context.Context, thread string) (string, error) {
	if b.bug == "lock holder unnamed" {
		return "", nil
	}
	return b.Store.LockHolder(ctx, thread)
}

func (b *buggy) Bodies(ctx context.Context, thread string, messages, blobs []string) ([]store.Message, []store.Blob, error) {
	ms, bs, err := b.Store.Bodies(ctx, thread, messages, blobs)
	switch b.bug {
	case "bodies drop blobs":
		if len(ms) > 0 {
			bs = nil
		}
	case "bodies cross threads": // looks the hashes up in every thread
		ts, _ := b.Store.Threads(ctx)
		for _, th := range ts {
			if th.ID != thread {
				m2, b2, _ := b.Store.Bodies(ctx, th.ID, messages, blobs)
				ms, bs = append(ms, m2...), append(bs, b2...)
			}
		}
	}
	return ms, bs, err
}

// Chain, for "chain by id range": the rows from the nearest one at or
// below id that reads on its own, up to id, whatever their parents.
func (b *buggy) Chain(ctx context.Context, thread string, id int64) ([]store.Checkpoint, error) {
	chain, err := b.Store.Chain(ctx, thread, id)
	if b.bug == "chain passes the head snapshot" && err == nil {
		last := &chain[len(chain)-1]
		if len(last.Head) > 0 && !last.Base && last.Rebased == nil && last.ParentID != 0 {
			last.Head = nil
			rest, err := b.Store.Chain(ctx, thread, last.ParentID)
			return append(chain, rest...), err
		}
	}
	if b.bug != "chain by id range" || err != nil {
		return chain, err
	}
	var out []store.Checkpoint
	for at := id; at > 0; at-- {
		cp, err := b.Store.Get(ctx, thread, at)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, cp)
		if cp.Base || cp.Rebased != nil || cp.ParentID == 0 {
			break
		}
	}
	return out, nil
}

func (b *buggy) MessagesIn(ctx context.Context, thread string, from, to int64) ([]store.Message, error) {
	switch b.bug {
	case "messages range open at the end":
		to--
	case "messages range by checkpoint":
		ms, err := b.Store.MessagesIn(ctx, thread, from, to)
		slices.SortStableFunc(ms, func(x, y store.Message) int { return cmp.Compare(x.CheckpointID, y.CheckpointID) })
		return ms, err
	}
	return b.Store.MessagesIn(ctx, thread, from, to)
}

func (b *buggy) Search(ctx context.Context, thread, query string, limit int) ([]store.Message, error) {
	switch b.bug {
	case "search ignores limit":
		return b.Store.Search(ctx, thread, query, 0)
	case "search keeps one message an index":
		ms, err := b.Store.Search(ctx, thread, query, limit)
		return slices.CompactFunc(ms, func(x, y store.Message) bool { return x.Index == y.Index }), err
	case "search matches whole words":
		ms, err := b.Store.Search(ctx, thread, query, limit)
		return slices.DeleteFunc(ms, func(m store.Message) bool {
			words := store.BodyWords(m.Body)
			for _, q := range store.SearchQuery(query) {
				if !slices.Contains(words, q) {
					return true
				}
			}
			return false
		}), err
	}
	return b.Store.Search(ctx, thread, query, limit)
}
