package memory

import (
	"context"
	"errors"
	"os"
	"strconv"
	"sync"

	"rewind/store"
)

var (
	_ store.Watcher     = (*Store)(nil)
	_ store.LockHolders = (*Store)(nil)
)

// watchers are the channels Watch handed out, by thread: in-process, a
// put wakes them directly.
type watchers struct {
	mu     sync.Mutex
	by     map[string]map[chan struct{}]bool
	closed bool
}

// wake signals every watcher of thread without blocking (a full channel
// already holds a wake-up).
func (w *watchers) wake(thread string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for c := range w.by[thread] {
		select {
		case c <- struct{}{}:
		default:
		}
	}
}

// drop unregisters c and closes it, unless Close did already.
func (w *watchers) drop(thread string, c chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.by[thread][c] {
		delete(w.by[thread], c)
		if len(w.by[thread]) == 0 {
			delete(w.by, thread)
		}
		close(c)
	}
}

func (w *watchers) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	for _, cs := range w.by {
		for c := range cs {
			close(c)
		}
	}
	w.by = nil
}

// Watch implements store.Watcher.
func (s *Store) Watch(ctx context.Context, thread string) (<-chan struct{}, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	w := &s.watch
	c := make(chan struct{}, 1)
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil, errors.New("memory store: watch: the store is closed")
	}
	if w.by == nil {
		w.by = map[string]map[chan struct{}]bool{}
	}
	if w.by[thread] == nil {
		w.by[thread] = map[chan struct{}]bool{}
	}
	w.by[thread][c] = true
	w.mu.Unlock()
	go func() {
		<-ctx.Done()
		w.drop(thread, c)
	}()
	return c, nil
}

// LockHolder implements store.LockHolders: a memory store's locks are this
// process's.
func (s *Store) LockHolder(ctx context.Context, thread string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.locks[thread] {
		return "pid " + strconv.Itoa(os.Getpid()), nil
	}
	return "", nil
}
