package engine

import (
	"container/list"
	"crypto/sha256"
	"maps"
	"sync"

	"rewind/store"
)

// cache keeps checkpoints this process wrote or rebuilt, so the next turn
// starts without replaying its head's chain, and a scrub step replays one
// delta from its neighbour rather than a chain from its base. A checkpoint
// never changes once written; an entry is used only while the stored row
// holds the very documents it was cached from (and the same parent), so a
// thread deleted and written again (ids restart at 1) is not confused with
// the old one.
type cache struct {
	mu    sync.Mutex
	max   int
	order *list.List // of cacheKey, newest at the front
	items map[cacheKey]cacheEntry
}

type cacheKey struct {
	thread string
	id     int64
}

type cacheEntry struct {
	cp  Checkpoint
	sum [32]byte // of the row's documents
	pos *list.Element
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

func newCache() *cache {
	return &cache{max: cacheSize, order: list.New(), items: map[cacheKey]cacheEntry{}}
}

// get returns the cached checkpoint for a stored row, as a copy the caller
// may change.
func (c *cache) get(row store.Checkpoint) (Checkpoint, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[cacheKey{row.ThreadID, row.ID}]
	if !ok || e.cp.ParentID != row.ParentID || e.cp.RerootedFrom != row.RerootedFrom || e.sum != rowSum(row.Meta, row.State) {
		return Checkpoint{}, false
	}
	c.order.MoveToFront(e.pos)
	cp := e.cp
	cp.Values = maps.Clone(cp.Values)
	return cp, true
}

// put keeps cp, read from or written as a row with these documents.
func (c *cache) put(cp Checkpoint, meta, state []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := cacheKey{cp.Thread, cp.ID}
	if e, ok := c.items[k]; ok {
		c.order.Remove(e.pos)
	}
	cp.Values = maps.Clone(cp.Values)
	c.items[k] = cacheEntry{cp: cp, sum: rowSum(meta, state), pos: c.order.PushFront(k)}
	for c.order.Len() > c.max {
		old := c.order.Remove(c.order.Back()).(cacheKey)
		delete(c.items, old)
	}
}

// drop forgets every checkpoint of a thread (deleted: its text should not
// linger in this process either).
func (c *cache) drop(thread string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, e := range c.items {
		if k.thread == thread {
			c.order.Remove(e.pos)
			delete(c.items, k)
		}
	}
}
