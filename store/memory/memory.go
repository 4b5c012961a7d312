// Package memory is a store.Store that lives in process memory, for tests and
// throwaway demos: nothing survives the process, and locks are in-process.
package memory

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"rewind/store"
	"rewind/store/internal/check"
)

// Store is safe for concurrent use. Bytes are copied in and out, so callers
// never share a buffer with it.
type Store struct {
	mu      sync.RWMutex
	threads map[string]*thread
	drafts  map[string]map[string]store.Draft // thread → operation id → draft
	epochs  map[string]int64                  // thread → writer epoch (Fence)
	issued  int64                             // the highest epoch Fence handed out, to any thread
	locks   map[string]bool
	hook    func(stage string)
	watch   watchers          // Watch
	clock   func() time.Time  // stamps rows (WithClock; nil: time.Now)
	tenants map[string]bool   // AddTenant (store.Tenancy)
	owners  map[string]string // thread → the tenant that claimed it
	// sizes is each thread's Size, kept by every write (countSize's
	// rule): counting at every Size made a long bench quadratic.
	sizes map[string]int64
}

type thread struct {
	cps      []store.Checkpoint // ascending ID, since new IDs are always the newest
	events   map[int64][]store.Event
	writes   map[int64][]store.TaskWrites // ascending TaskID
	messages map[string]store.Message     // by hash
	blobs    map[string][]byte            // by hash
	updated  time.Time
	head     []byte // the head snapshot (store.Checkpoint.Head), of headID
	headID   int64
	words    wordIndex // Search
}

var (
	_ store.Store       = (*Store)(nil)
	_ store.Drafts      = (*Store)(nil)
	_ store.Erasing     = (*Store)(nil)
	_ store.Tenancy     = (*Store)(nil)
	_ store.SizeCounter = (*Store)(nil)
)

// Option configures a store (New).
type Option func(*Store)

// WithClock gives the store the clock it stamps rows with (created and
// updated times; default time.Now), so a test's stored times do not
// depend on when it ran.
func WithClock(now func() time.Time) Option { return func(s *Store) { s.clock = now } }

// New returns an empty store.
func New(opts ...Option) *Store {
	s := &Store{threads: map[string]*thread{}, drafts: map[string]map[string]store.Draft{}, epochs: map[string]int64{}, locks: map[string]bool{},
		tenants: map[string]bool{}, owners: map[string]string{}, sizes: map[string]int64{}}
	for _, o := range opts {
		o(s)
	}
	return s
}

// find works on a nil thread too: an unknown thread has no checkpoints.
func (th *thread) find(id int64) (int, bool) {
	if th == nil {
		return 0, false
	}
	return slices.BinarySearchFunc(th.cps, id, func(c store.Checkpoint, id int64) int { return cmp.Compare(c.ID, id) })
}

// now matches what the SQL backends keep: UTC, microseconds.
func (s *Store) now() time.Time {
	t := time.Now
	if s.clock != nil {
		t = s.clock
	}
	return t().UTC().Truncate(time.Microsecond)
}

func wrap(err *error, format string, args ...any) {
	if *err != nil {
		*err = fmt.Errorf("memory store: %s: %w", fmt.Sprintf(format, args...), *err)
	}
}

// read is every read's preamble: the context checked, f run under the
// read lock, and a failure named by format and args as wrap names it.
func read[T any](s *Store, ctx context.Context, f func() (T, error), format string, args ...any) (out T, err error) {
	defer wrap(&err, format, args...)
	if err = ctx.Err(); err != nil {
		return out, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return f()
}

func (s *Store) PutCheckpoint(ctx context.Context, cp store.Checkpoint, events []store.Event) (err error) {
	defer wrap(&err, "put checkpoint %d of thread %v", cp.ID, check.Name(cp.ThreadID))
	if err := ctx.Err(); err != nil {
		return err
	}
	events, err = check.Put(cp, events)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	th := s.threads[cp.ThreadID]
	i, found := th.find(cp.ID)
	if found {
		old := th.cps[i]
		if check.SameParent(old.ParentID, old.RerootedFrom, cp.ParentID) && check.SameJSON(old.State, cp.State) &&
			check.SameMeta(old.Meta, cp.Meta) && old.Base == cp.Base && check.SameEvents(th.events[cp.ID], events) {
			return nil
		}
	}
	if err := check.Fenced(cp.ThreadID, cp.Epoch, s.epochs[cp.ThreadID], s.issued); err != nil {
		return err
	}
	if found {
		return store.ErrConflict
	}
	if th != nil {
		if newest := th.cps[len(th.cps)-1].ID; cp.ID < newest {
			return fmt.Errorf("the newest is %d: %w", newest, store.ErrStale)
		}
	}
	if cp.ParentID != 0 {
		if _, ok := th.find(cp.ParentID); !ok {
			return fmt.Errorf("parent checkpoint %d: %w", cp.ParentID, store.ErrNotFound)
		}
	}
	if s.hook != nil {
		// Nothing is visible yet: this is the memory store's "before COMMIT".
		s.hook("checkpoint-written")
	}
	if th == nil {
		th = &thread{events: map[int64][]store.Event{}, writes: map[int64][]store.TaskWrites{},
			messages: map[string]store.Message{}, blobs: map[string][]byte{}}
		s.threads[cp.ThreadID] = th
	}
	t := s.now()
	if !cp.CreatedAt.IsZero() {
		t = cp.CreatedAt.Truncate(time.Microsecond) // the writer's, as the other stores keep it
	}
	id, grew := cp.ThreadID, int64(0)
	for _, m := range cp.Messages {
		if _, ok := th.messages[m.Hash]; !ok {
			m.ThreadID, m.Body, m.CheckpointID, m.CreatedAt = cp.ThreadID, bytes.Clone(m.Body), cp.ID, t
			th.messages[m.Hash] = m
			th.index(m)
			grew += messageSize(id, m)
		}
	}
	for _, b := range cp.Blobs {
		if _, ok := th.blobs[b.Hash]; !ok {
			th.blobs[b.Hash] = bytes.Clone(b.Body)
			grew += blobSize(id, b.Hash, b.Body)
		}
	}
	if cp.Settles != 0 {
		for _, w := range th.writes[cp.Settles] {
			grew -= writesSize(id, w)
		}
		delete(th.writes, cp.Settles)
	}
	if len(cp.Head) > 0 {
		grew += headSize(id, cp.Head) - headSize(id, th.head)
		th.head, th.headID = bytes.Clone(cp.Head), cp.ID
	}
	cp.Head = nil                                                                                                                         // kept apart, for one row
	cp.State, cp.Meta, cp.BlobRefs, cp.CreatedAt, cp.Epoch = bytes.Clone(cp.State), bytes.Clone(cp.Meta), slices.Clone(cp.BlobRefs), t, 0 // epochs are checked, not kept
	cp.RerootedFrom, cp.Rebased = 0, nil                                                                                                  // only Prune sets them
	cp.Messages, cp.Blobs, cp.Settles = nil, nil, 0                                                                                       // write-only
	th.cps = append(th.cps, cp)
	grew += checkpointSize(id, cp)
	for i := range events {
		events[i].Payload, events[i].CreatedAt = bytes.Clone(events[i].Payload), t
		grew += eventSize(id, events[i])
	}
	s.sizes[id] += grew
	if len(events) > 0 {
		th.events[cp.ID] = events
	}
	th.updated = t
	s.watch.wake(cp.ThreadID)
	return nil
}

func (s *Store) PutWrites(ctx context.Context, w store.TaskWrites) (err error) {
	defer wrap(&err, "put writes of task %v at checkpoint %d of thread %v", check.Name(w.TaskID), w.CheckpointID, check.Name(w.ThreadID))
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := check.Writes(w); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	th := s.threads[w.ThreadID]
	_, cpFound := th.find(w.CheckpointID)
	var ws []store.TaskWrites
	if cpFound {
		ws = th.writes[w.CheckpointID]
	}
	i, found := slices.BinarySearchFunc(ws, w.TaskID, func(x store.TaskWrites, id string) int { return strings.Compare(x.TaskID, id) })
	if found && check.SameJSON(ws[i].Writes, w.Writes) {
		return nil
	}
	if err := check.Fenced(w.ThreadID, w.Epoch, s.epochs[w.ThreadID], s.issued); err != nil {
		return err
	}
	switch {
	case found:
		return store.ErrConflict
	case !cpFound:
		return fmt.Errorf("checkpoint %d: %w", w.CheckpointID, store.ErrNotFound)
	}
	w.Writes, w.CreatedAt, w.Epoch = bytes.Clone(w.Writes), s.now(), 0
	th.writes[w.CheckpointID] = slices.Insert(ws, i, w)
	s.sizes[w.ThreadID] += writesSize(w.ThreadID, w)
	return nil
}

func (s *Store) Get(ctx context.Context, thread string, id int64) (store.Checkpoint, error) {
	return read(s, ctx, func() (store.Checkpoint, error) {
		th := s.threads[thread]
		i, ok := th.find(id)
		if !ok {
			return store.Checkpoint{}, store.ErrNotFound
		}
		return th.withHead(th.cps[i]), nil
	}, "get checkpoint %d of thread %v", id, check.Name(thread))
}

func (s *Store) Latest(ctx context.Context, thread string) (store.Checkpoint, error) {
	return read(s, ctx, func() (store.Checkpoint, error) {
		th := s.threads[thread]
		if th == nil {
			return store.Checkpoint{}, store.ErrNotFound
		}
		return th.withHead(th.cps[len(th.cps)-1]), nil
	}, "latest checkpoint of thread %v", check.Name(thread))
}

func (s *Store) History(ctx context.Context, thread string, before int64, limit int) ([]store.Checkpoint, error) {
	return read(s, ctx, func() ([]store.Checkpoint, error) {
		th := s.threads[thread]
		if th == nil {
			return nil, nil
		}
		end := len(th.cps)
		if before > 0 {
			end, _ = th.find(before)
		}
		n := end
		if limit > 0 {
			n = min(n, limit)
		}
		out := make([]store.Checkpoint, n)
		for i := range out {
			out[i] = listed(th.cps[end-1-i])
		}
		return out, nil
	}, "history of thread %v", check.Name(thread))
}

// listed is a checkpoint as History gives it: metadata, no state unless
// the row has no metadata.
func listed(cp store.Checkpoint) store.Checkpoint {
	cp = copyCheckpoint(cp)
	if len(cp.Meta) > 0 {
		cp.State = nil
	}
	cp.Rebased = nil
	return cp
}

func (s *Store) Chain(ctx context.Context, thread string, id int64) ([]store.Checkpoint, error) {
	return read(s, ctx, func() ([]store.Checkpoint, error) {
		th := s.threads[thread]
		var out []store.Checkpoint
		for next := id; ; {
			i, ok := th.find(next)
			if !ok {
				if len(out) == 0 {
					return nil, store.ErrNotFound
				}
				return out, nil // a missing parent: the engine reports the broken chain
			}
			cp := th.withHead(th.cps[i])
			out = append(out, cp)
			if cp.Base || len(cp.Rebased) > 0 || len(cp.Head) > 0 || cp.ParentID == 0 {
				return out, nil
			}
			next = cp.ParentID
		}
	}, "chain of checkpoint %d of thread %v", id, check.Name(thread))
}

func (s *Store) Messages(ctx context.Context, thread string, hashes []string) ([]store.Message, error) {
	return read(s, ctx, func() ([]store.Message, error) {
		return s.threads[thread].messagesOf(hashes), nil
	}, "messages of thread %v", check.Name(thread))
}

// messagesOf are the thread's messages of hashes, each once, copied.
func (th *thread) messagesOf(hashes []string) []store.Message {
	if th == nil {
		return nil
	}
	var out []store.Message
	seen := map[string]bool{}
	for _, h := range hashes {
		if m, ok := th.messages[h]; ok && !seen[h] {
			seen[h] = true
			m.Body = bytes.Clone(m.Body)
			out = append(out, m)
		}
	}
	return out
}

func (s *Store) MessagesAt(ctx context.Context, thread string, index int64) ([]store.Message, error) {
	return read(s, ctx, func() ([]store.Message, error) {
		th := s.threads[thread]
		if th == nil {
			return nil, nil
		}
		var out []store.Message
		for _, m := range th.messages {
			if m.Index == index {
				m.Body = bytes.Clone(m.Body)
				out = append(out, m)
			}
		}
		slices.SortFunc(out, func(a, b store.Message) int {
			return cmp.Or(cmp.Compare(a.CheckpointID, b.CheckpointID), strings.Compare(a.Hash, b.Hash))
		})
		return out, nil
	}, "messages #%d of thread %v", index, check.Name(thread))
}

func (s *Store) MessagesIn(ctx context.Context, thread string, from, to int64) ([]store.Message, error) {
	return read(s, ctx, func() ([]store.Message, error) {
		th := s.threads[thread]
		if th == nil || from > to {
			return nil, nil
		}
		var out []store.Message
		for _, m := range th.messages {
			if m.Index >= from && m.Index <= to {
				m.Body = bytes.Clone(m.Body)
				out = append(out, m)
			}
		}
		slices.SortFunc(out, func(a, b store.Message) int {
			return cmp.Or(cmp.Compare(a.Index, b.Index), cmp.Compare(a.CheckpointID, b.CheckpointID), strings.Compare(a.Hash, b.Hash))
		})
		return out, nil
	}, "messages #%d to #%d of thread %v", from, to, check.Name(thread))
}

func (s *Store) Blobs(ctx context.Context, thread string, hashes []string) ([]store.Blob, error) {
	return read(s, ctx, func() ([]store.Blob, error) {
		return s.threads[thread].blobsOf(hashes), nil
	}, "blobs of thread %v", check.Name(thread))
}

// blobsOf are the thread's blobs of hashes, each once, copied.
func (th *thread) blobsOf(hashes []string) []store.Blob {
	if th == nil {
		return nil
	}
	var out []store.Blob
	seen := map[string]bool{}
	for _, h := range hashes {
		if b, ok := th.blobs[h]; ok && !seen[h] {
			seen[h] = true
			out = append(out, store.Blob{Hash: h, Body: bytes.Clone(b)})
		}
	}
	return out
}

// Size implements store.Store with the SQL stores' rule: the lengths of
// texts and documents, 8 bytes for each number and time.
// Size is the running total the writes keep (sizes).
func (s *Store) Size(ctx context.Context, thread string) (int64, error) {
	return read(s, ctx, func() (int64, error) { return s.sizes[thread], nil }, "size of thread %v", check.Name(thread))
}

// CountSize implements store.SizeCounter: the thread's rows counted one by
// one.
func (s *Store) CountSize(ctx context.Context, thread string) (int64, error) {
	return read(s, ctx, func() (int64, error) { return s.countSize(thread), nil }, "count the size of thread %v", check.Name(thread))
}

// The bytes of one row of each kind, as the SQL stores count them: the
// thread id, the texts and documents, 8 for each number and time.
func checkpointSize(thread string, cp store.Checkpoint) int64 {
	n := int64(len(thread)+len(cp.Meta)+len(cp.State)+len(cp.Rebased)) + 5*8
	for _, r := range cp.BlobRefs {
		n += int64(len(r))
	}
	return n
}

func eventSize(thread string, e store.Event) int64 {
	return int64(len(thread)+len(e.Type)+len(e.Payload)) + 3*8
}

func writesSize(thread string, w store.TaskWrites) int64 {
	return int64(len(thread)+len(w.TaskID)+len(w.Writes)) + 2*8
}

func messageSize(thread string, m store.Message) int64 {
	return int64(len(thread)+len(m.Hash)+len(m.Body)) + 3*8
}

func blobSize(thread, hash string, body []byte) int64 {
	return int64(len(thread)+len(hash)+len(body)) + 8
}

// headSize is 0 for no head.
func headSize(thread string, head []byte) int64 {
	if head == nil {
		return 0
	}
	return int64(len(thread)+len(head)) + 8
}

func epochSize(thread string) int64 {
	return int64(len(thread)) + 2*8
}

func draftSize(thread string, d store.Draft) int64 {
	return int64(len(thread)+len(d.OperationID)+len(d.Body)) + 8
}

// countSize counts every row of the thread, with the store locked: what
// sizes keeps, the slow way (Prune and Reseal, which change many rows,
// count again).
func (s *Store) countSize(thread string) int64 {
	var n int64
	if th := s.threads[thread]; th != nil {
		for _, cp := range th.cps {
			n += checkpointSize(thread, cp)
			for _, e := range th.events[cp.ID] {
				n += eventSize(thread, e)
			}
		}
		for _, ws := range th.writes {
			for _, w := range ws {
				n += writesSize(thread, w)
			}
		}
		for _, m := range th.messages {
			n += messageSize(thread, m)
		}
		for h, b := range th.blobs {
			n += blobSize(thread, h, b)
		}
		n += headSize(thread, th.head)
	}
	for _, d := range s.drafts[thread] {
		n += draftSize(thread, d)
	}
	if s.epochs[thread] != 0 {
		n += epochSize(thread)
	}
	return n
}

func (s *Store) Writes(ctx context.Context, thread string, checkpointID int64) ([]store.TaskWrites, error) {
	return read(s, ctx, func() ([]store.TaskWrites, error) {
		th := s.threads[thread]
		if th == nil {
			return nil, nil
		}
		var out []store.TaskWrites
		if checkpointID == 0 {
			for _, id := range slices.Sorted(maps.Keys(th.writes)) {
				out = append(out, th.writes[id]...)
			}
		} else {
			out = slices.Clone(th.writes[checkpointID])
		}
		for i := range out {
			out[i].Writes = bytes.Clone(out[i].Writes)
		}
		return out, nil
	}, "writes of checkpoint %d of thread %v", checkpointID, check.Name(thread))
}

func (s *Store) Events(ctx context.Context, thread string, checkpointID int64) ([]store.Event, error) {
	return read(s, ctx, func() ([]store.Event, error) {
		th := s.threads[thread]
		if th == nil {
			return nil, nil
		}
		var out []store.Event
		if checkpointID != 0 {
			out = slices.Clone(th.events[checkpointID])
		} else {
			for _, cp := range th.cps {
				out = append(out, th.events[cp.ID]...)
			}
		}
		for i := range out {
			out[i].Payload = bytes.Clone(out[i].Payload)
		}
		return out, nil
	}, "events of checkpoint %d of thread %v", checkpointID, check.Name(thread))
}

func (s *Store) Threads(ctx context.Context) ([]store.Thread, error) {
	return read(s, ctx, func() ([]store.Thread, error) {
		out := make([]store.Thread, 0, len(s.threads))
		for id, th := range s.threads {
			latest := listed(th.cps[len(th.cps)-1])
			out = append(out, store.Thread{ID: id, Checkpoints: len(th.cps), LatestID: latest.ID, UpdatedAt: th.updated, Latest: latest})
		}
		slices.SortFunc(out, func(a, b store.Thread) int { return strings.Compare(a.ID, b.ID) })
		return out, nil
	}, "list threads")
}

// RecentThreads implements store.Store: the memory store holds every
// thread at hand, so it sorts the list.
func (s *Store) RecentThreads(ctx context.Context, before store.ThreadCursor, limit int) (_ []store.Thread, _ int, err error) {
	all, err := s.Threads(ctx)
	if err != nil {
		return nil, 0, err
	}
	defer wrap(&err, "threads updated before thread %v", check.Name(before.ID))
	return store.RecentPage(all, before, limit)
}

func (s *Store) DeleteThread(ctx context.Context, thread string) (err error) {
	defer wrap(&err, "delete thread %v", check.Name(thread))
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.threads[thread] == nil && s.drafts[thread] == nil && s.epochs[thread] == 0 {
		return store.ErrNotFound
	}
	delete(s.threads, thread)
	delete(s.drafts, thread)
	delete(s.epochs, thread)
	delete(s.owners, thread)
	delete(s.sizes, thread)
	s.watch.wake(thread) // a viewer following it says it is gone
	return nil
}

// Unerased implements store.Erasing: what DeleteThread removes is gone
// from the maps at once, and no reader keeps a copy of it.
func (s *Store) Unerased(ctx context.Context) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("memory store: erasure of deleted text: %w", err)
	}
	return "", nil
}

// Prune implements store.Store. Every check comes before the first change,
// under the store's lock: that is its transaction.
func (s *Store) Prune(ctx context.Context, thread string, ids []int64, rebase []store.Rebase) (res store.PruneResult, err error) {
	defer wrap(&err, "prune thread %v", check.Name(thread))
	if err := ctx.Err(); err != nil {
		return store.PruneResult{}, err
	}
	ids = check.PruneIDs(ids)
	s.mu.Lock()
	defer s.mu.Unlock()
	th := s.threads[thread]
	if th == nil {
		return store.PruneResult{}, store.ErrNotFound
	}
	for _, id := range ids {
		if _, ok := th.find(id); !ok {
			return store.PruneResult{}, check.PruneMissing(id)
		}
	}
	if head := th.cps[len(th.cps)-1].ID; len(ids) > 0 && ids[len(ids)-1] == head {
		return store.PruneResult{}, check.PruneHead(head)
	}
	drop := make(map[int64]bool, len(ids))
	for _, id := range ids {
		drop[id] = true
	}
	rerooted := map[int64]bool{}
	for _, cp := range th.cps {
		if !drop[cp.ID] && cp.ParentID != 0 && drop[cp.ParentID] {
			rerooted[cp.ID] = cp.Base || len(cp.Rebased) > 0
		}
	}
	if err := check.Rebases(rebase, rerooted); err != nil {
		return store.PruneResult{}, err
	}
	rebased := make(map[int64]store.Rebase, len(rebase))
	for _, r := range rebase {
		rebased[r.ID] = r
	}
	kept := make([]store.Checkpoint, 0, len(th.cps)-len(ids))
	for _, cp := range th.cps {
		if drop[cp.ID] {
			res.Deleted = append(res.Deleted, cp.ID)
			res.Writes += len(th.writes[cp.ID])
			res.Events += len(th.events[cp.ID])
			delete(th.writes, cp.ID)
			delete(th.events, cp.ID)
			continue
		}
		if cp.ParentID != 0 && drop[cp.ParentID] {
			res.Rerooted = append(res.Rerooted, store.Reroot{ID: cp.ID, From: cp.ParentID})
			cp.ParentID, cp.RerootedFrom = 0, cp.ParentID
		}
		if r, ok := rebased[cp.ID]; ok {
			cp.Rebased, cp.BlobRefs = bytes.Clone(r.State), append(slices.Clone(cp.BlobRefs), r.BlobRefs...)
		}
		kept = append(kept, cp)
	}
	th.cps = kept
	if len(ids) > 0 {
		th.head, th.headID = nil, 0 // it may hold a blob this frees
		live := map[string]bool{}
		for _, cp := range kept {
			for _, h := range cp.BlobRefs {
				live[h] = true
			}
		}
		for h := range th.blobs {
			if !live[h] {
				delete(th.blobs, h)
				res.Blobs++
			}
		}
	}
	s.sizes[thread] = s.countSize(thread)
	return res, nil
}

func (s *Store) Fence(ctx context.Context, thread string) (_ int64, err error) {
	defer wrap(&err, "fence thread %v", check.Name(thread))
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := check.Text("thread id", thread); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.epochs[thread] == 0 {
		s.sizes[thread] += epochSize(thread)
	}
	// Above the thread's own too, though the counter never falls behind it.
	s.issued = max(s.issued, s.epochs[thread]) + 1
	s.epochs[thread] = s.issued
	return s.issued, nil
}

func (s *Store) Epoch(ctx context.Context, thread string) (_ int64, err error) {
	defer wrap(&err, "read the writer epoch of thread %v", check.Name(thread))
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := check.Text("thread id", thread); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.epochs[thread], nil
}

// SetTxHook sets a function PutCheckpoint calls with "checkpoint-written"
// once a new checkpoint is checked and about to become visible, with the
// store locked: it must not call the store. nil removes it.
func (s *Store) SetTxHook(hook func(stage string)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hook = hook
}

func (s *Store) CreateDraft(ctx context.Context, d store.Draft) (_ store.Draft, created bool, err error) {
	defer wrap(&err, "create draft %v of thread %v", check.Name(d.OperationID), check.Name(d.ThreadID))
	if err := ctx.Err(); err != nil {
		return store.Draft{}, false, err
	}
	if err := check.Draft(d); err != nil {
		return store.Draft{}, false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.drafts[d.ThreadID][d.OperationID]; ok {
		return copyDraft(old), false, nil
	}
	if err := check.Fenced(d.ThreadID, d.Epoch, s.epochs[d.ThreadID], s.issued); err != nil {
		return store.Draft{}, false, err
	}
	if s.drafts[d.ThreadID] == nil {
		s.drafts[d.ThreadID] = map[string]store.Draft{}
	}
	d.Body, d.CreatedAt, d.Epoch = bytes.Clone(d.Body), s.now(), 0 // epochs are checked, not kept
	s.drafts[d.ThreadID][d.OperationID] = d
	s.sizes[d.ThreadID] += draftSize(d.ThreadID, d)
	return copyDraft(d), true, nil
}

func (s *Store) Draft(ctx context.Context, thread, operationID string) (store.Draft, error) {
	return read(s, ctx, func() (store.Draft, error) {
		d, ok := s.drafts[thread][operationID]
		if !ok {
			return store.Draft{}, store.ErrNotFound
		}
		return copyDraft(d), nil
	}, "get draft %v of thread %v", check.Name(operationID), check.Name(thread))
}

func (s *Store) ListDrafts(ctx context.Context, thread string) ([]store.Draft, error) {
	return read(s, ctx, func() ([]store.Draft, error) {
		var out []store.Draft
		for _, d := range s.drafts[thread] {
			out = append(out, copyDraft(d))
		}
		slices.SortFunc(out, func(a, b store.Draft) int { return strings.Compare(a.OperationID, b.OperationID) })
		return out, nil
	}, "list drafts of thread %v", check.Name(thread))
}

// Lock is in-process only: there is no other process to exclude.
func (s *Store) Lock(ctx context.Context, thread string) (_ func() error, err error) {
	defer wrap(&err, "lock thread %v", check.Name(thread))
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.locks[thread] {
		return nil, store.ErrLocked
	}
	s.locks[thread] = true
	// Once: a second call must not free a later holder's lock.
	return sync.OnceValue(func() error {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.locks, thread)
		return nil
	}), nil
}

func (s *Store) Close() error {
	s.watch.close()
	return nil
}

// withHead is a copy of cp with the head snapshot when it is cp's.
func (th *thread) withHead(cp store.Checkpoint) store.Checkpoint {
	cp = copyCheckpoint(cp)
	if cp.ID == th.headID {
		cp.Head = bytes.Clone(th.head)
	}
	return cp
}

func copyCheckpoint(cp store.Checkpoint) store.Checkpoint {
	cp.State, cp.Meta, cp.Rebased, cp.BlobRefs = bytes.Clone(cp.State), bytes.Clone(cp.Meta), bytes.Clone(cp.Rebased), slices.Clone(cp.BlobRefs)
	return cp
}

func copyDraft(d store.Draft) store.Draft {
	d.Body = bytes.Clone(d.Body)
	return d
}

// Bodies implements store.Store: Messages and Blobs under one lock.
func (s *Store) Bodies(ctx context.Context, thread string, messages, blobs []string) ([]store.Message, []store.Blob, error) {
	type bodies struct {
		ms []store.Message
		bs []store.Blob
	}
	got, err := read(s, ctx, func() (bodies, error) {
		th := s.threads[thread]
		return bodies{th.messagesOf(messages), th.blobsOf(blobs)}, nil
	}, "messages and blobs of thread %v", check.Name(thread))
	return got.ms, got.bs, err
}

// Reseal implements store.Resealer: every new document is made and
// checked before the first is stored, under the store's lock.
func (s *Store) Reseal(ctx context.Context, thread string, fn func(kind store.DocKind, hash string, doc []byte) ([]byte, error)) (n int, err error) {
	defer wrap(&err, "reseal thread %v", check.Name(thread))
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	th := s.threads[thread]
	if th == nil || len(th.cps) == 0 {
		return 0, store.ErrNotFound
	}
	r := &resealing{fn: fn}
	for i := range th.cps {
		cp := &th.cps[i]
		r.redo(store.DocState, "", cp.State, func(b []byte) { cp.State = b })
		r.redo(store.DocRebased, "", cp.Rebased, func(b []byte) { cp.Rebased = b })
	}
	r.redo(store.DocHead, "", th.head, func(b []byte) { th.head = b })
	for _, h := range slices.Sorted(maps.Keys(th.messages)) {
		r.redo(store.DocMessage, h, th.messages[h].Body, func(b []byte) { m := th.messages[h]; m.Body = b; th.messages[h] = m })
	}
	for _, h := range slices.Sorted(maps.Keys(th.blobs)) {
		r.redo(store.DocBlob, h, th.blobs[h], func(b []byte) { th.blobs[h] = b })
	}
	for _, id := range slices.Sorted(maps.Keys(th.writes)) {
		for i := range th.writes[id] {
			w := &th.writes[id][i]
			r.redo(store.DocWrites, "", w.Writes, func(b []byte) { w.Writes = b })
		}
	}
	ds := s.drafts[thread]
	for _, op := range slices.Sorted(maps.Keys(ds)) {
		r.redo(store.DocDraft, "", ds[op].Body, func(b []byte) { d := ds[op]; d.Body = b; ds[op] = d })
	}
	if r.err != nil {
		return 0, r.err
	}
	for _, f := range r.apply {
		f()
	}
	s.sizes[thread] = s.countSize(thread)
	return len(r.apply), nil
}

// resealing gathers a Reseal's changes, applied only when none failed.
type resealing struct {
	fn    func(kind store.DocKind, hash string, doc []byte) ([]byte, error)
	apply []func()
	err   error
}

func (r *resealing) redo(kind store.DocKind, hash string, doc []byte, set func([]byte)) {
	if doc == nil || r.err != nil {
		return
	}
	out, err := r.fn(kind, hash, bytes.Clone(doc))
	if err == nil && !bytes.Equal(out, doc) {
		err = check.Resealed(kind, hash, doc, out)
		out = bytes.Clone(out)
		r.apply = append(r.apply, func() { set(out) })
	}
	r.err = err
}
