package engine

import (
	"context"
	"errors"
	"fmt"

	"rewind/store"
)

// ErrNoWatch: the store cannot tell a waiter that a thread changed.
var ErrNoWatch = errors.New("this store cannot be watched for changes")

// Watch returns a channel that receives when a new checkpoint of thread
// has been committed, by this process or another one (a run in another
// terminal, a worker on another machine sharing the database), and is
// closed when ctx is done or the store closes (see store.Watcher). Wake-ups
// coalesce: re-read the thread's history after one.
func (e *Engine) Watch(ctx context.Context, thread string) (<-chan struct{}, error) {
	w, ok := e.raw().(store.Watcher)
	if !ok {
		return nil, fmt.Errorf("watch thread %v: %w", store.Name(thread), ErrNoWatch)
	}
	c, err := w.Watch(ctx, thread)
	if err != nil {
		return nil, fmt.Errorf("watch thread %v: %w", store.Name(thread), err)
	}
	return c, nil
}

// Writer says who holds the thread's writer lock, the live process running
// it: "pid 1234", "pid 1234 on 10.0.0.5", "" when nobody runs it. A store
// that cannot name the holder gives "another process" while the thread's
// listing says a run is under way.
func (e *Engine) Writer(ctx context.Context, thread string) (string, error) {
	h, ok := e.raw().(store.LockHolders)
	if !ok { // the listing says whether a run is under way, not whose
		st, err := e.Status(ctx, thread)
		if err != nil || st.Status != RunRunning {
			return "", nil
		}
		return "another process", nil
	}
	who, err := h.LockHolder(ctx, thread)
	if err != nil {
		return "", fmt.Errorf("who runs thread %v: %w", store.Name(thread), err)
	}
	return who, nil
}
