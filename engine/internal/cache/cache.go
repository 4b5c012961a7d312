// Package cache keeps the checkpoints an engine wrote or rebuilt (see
// Cache). It is the engine's own; it names no engine type but
// chainformat's chainformat.Checkpoint.
package cache

import (
	"container/list"
	"crypto/sha256"
	"maps"
	"sync"
	"time"

	"rewind/engine/chainformat"
	"rewind/store"
)

// Cache keeps checkpoints this process wrote or rebuilt, so the next turn
// starts without replaying its head's chain, a warm Get reads one row, and
// a scrub step replays one delta from its neighbour rather than a chain
// from its base. A checkpoint never changes once written; an entry is used
// only while the stored row is the very row it was cached from: the same
// documents, parent, re-rooting and CreatedAt.
//
// The documents alone do not say that. A thread deleted and written again
// (by this or another process: `rewind rm`, then a new run; ids restart at
// 1) may store a row whose delta is byte for byte the old one's while its
// ancestors differ, and values rebuilt on the old ancestors would then be
// served for it, and for every row rebuilt from it
// (TestCacheNeverOutlivesTheStoredThread). CreatedAt tells the two apart:
// the engine stamps every row it writes with its clock, to the microsecond,
// and the store keeps that stamp, so a row written again later has
// another. (Engines on one fixed clock that write a thread, delete it and
// write it again with identical rows are not told apart; only a test clock
// gets there.) Deleting a thread through this engine drops its entries
// anyway.
type Cache struct {
	mu    sync.Mutex
	max   int
	order *list.List // of cacheKey, newest at the front
	items map[cacheKey]cacheEntry
	held  map[string]int // thread → its entries
}

type cacheKey struct {
	thread string
	id     int64
}

type cacheEntry struct {
	cp        chainformat.Checkpoint
	sum       [32]byte      // of the row's documents
	listed    [32]byte      // of its listing (Meta) alone: see GetListed
	created   time.Time     // the row's CreatedAt
	orderElem *list.Element // its element in c.order (most recent first)
}

// rowSum identifies a stored row's content.
func rowSum(meta, state []byte) [32]byte {
	h := sha256.New()
	h.Write(meta)
	h.Write([]byte{0})
	h.Write(state)
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// cacheSize holds a few turns of a thread, and the neighbours of a scrub.
const cacheSize = 256

// New is an empty cache of cacheSize checkpoints.
func New() *Cache {
	return &Cache{max: cacheSize, order: list.New(), items: map[cacheKey]cacheEntry{}, held: map[string]int{}}
}

// Has says whether an entry for this checkpoint id is kept (whether it
// is still the stored row's, only Get can say).
func (c *Cache) Has(thread string, id int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.items[cacheKey{thread, id}]
	return ok
}

// Get returns the cached checkpoint for a stored row, as a copy the caller
// may change.
func (c *Cache) Get(row store.Checkpoint) (chainformat.Checkpoint, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[cacheKey{row.ThreadID, row.ID}]
	if !ok || e.cp.ParentID != row.ParentID || e.cp.RerootedFrom != row.RerootedFrom || !e.created.Equal(row.CreatedAt) ||
		e.sum != rowSum(row.Meta, row.State) {
		return chainformat.Checkpoint{}, false
	}
	return c.hit(e), true
}

// Own returns the cached checkpoint id of the thread without a stored row
// to check it against: for a checkpoint this engine knows it wrote last
// (see epochs.trusted).
func (c *Cache) Own(thread string, id int64) (chainformat.Checkpoint, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[cacheKey{thread, id}]
	if !ok {
		return chainformat.Checkpoint{}, false
	}
	return c.hit(e), true
}

// hit marks e used and returns its checkpoint as a copy the caller may
// change (c.mu held).
func (c *Cache) hit(e cacheEntry) chainformat.Checkpoint {
	c.order.MoveToFront(e.orderElem)
	cp := e.cp
	cp.Values = maps.Clone(cp.Values)
	return cp
}

// Holds says whether any checkpoint of the thread is kept.
func (c *Cache) Holds(thread string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.held[thread] > 0
}

// GetListed is get for a row as History lists it: its listing stands for
// its documents. A put writes a row's listing and state together, and
// nothing changes either later (a prune's rebase and re-rooting keep the
// values; the re-rooting is compared), so the same listing, parent and
// CreatedAt (the writer's clock, to the microsecond) are the same row.
// A row without a listing (stored before listings) is never a hit.
func (c *Cache) GetListed(row store.Checkpoint) (chainformat.Checkpoint, bool) {
	if len(row.Meta) == 0 {
		return chainformat.Checkpoint{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[cacheKey{row.ThreadID, row.ID}]
	if !ok || e.cp.ParentID != row.ParentID || e.cp.RerootedFrom != row.RerootedFrom || !e.created.Equal(row.CreatedAt) ||
		e.listed != sha256.Sum256(row.Meta) {
		return chainformat.Checkpoint{}, false
	}
	return c.hit(e), true
}

// Put keeps cp, read from or written as row (its documents and CreatedAt).
func (c *Cache) Put(cp chainformat.Checkpoint, row store.Checkpoint) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := cacheKey{cp.Thread, cp.ID}
	if e, ok := c.items[k]; ok {
		c.order.Remove(e.orderElem)
	} else {
		c.held[k.thread]++
	}
	cp.Values = maps.Clone(cp.Values)
	c.items[k] = cacheEntry{cp: cp, sum: rowSum(row.Meta, row.State), listed: sha256.Sum256(row.Meta), created: row.CreatedAt, orderElem: c.order.PushFront(k)}
	for c.order.Len() > c.max {
		old := c.order.Remove(c.order.Back()).(cacheKey)
		c.forget(old)
	}
}

// forget drops k's entry from items and held (c.mu held).
func (c *Cache) forget(k cacheKey) {
	delete(c.items, k)
	if c.held[k.thread]--; c.held[k.thread] <= 0 {
		delete(c.held, k.thread)
	}
}

// Drop forgets every checkpoint of a thread (deleted: its text should not
// linger in this process either).
func (c *Cache) Drop(thread string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, e := range c.items {
		if k.thread == thread {
			c.order.Remove(e.orderElem)
			c.forget(k)
		}
	}
}
