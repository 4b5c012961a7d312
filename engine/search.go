package engine

import (
	"context"
	"errors"
	"fmt"

	"rewind/store"
)

// Search is the thread's stored messages holding a word that begins with
// each word of query (store.Search: every branch's, compacted ones too),
// ordered by index then checkpoint, at most limit (> 0). A thread with no
// checkpoint is not found; a query with no word, or too many, is an
// error matching store.ErrInvalid.
func (e *Engine) Search(ctx context.Context, thread, query string, limit int) ([]store.Message, error) {
	switch n := len(store.SearchQuery(query)); {
	case n == 0:
		return nil, fmt.Errorf("search %q: %w: the query has no word: give letters or digits", threadName(thread), store.ErrInvalid)
	case n > store.MaxQueryWords:
		return nil, fmt.Errorf("search %q: %w: the query has %d words: give at most %d", threadName(thread), store.ErrInvalid, n, store.MaxQueryWords)
	}
	found, err := e.store.Search(ctx, thread, query, limit)
	if err != nil {
		return nil, fmt.Errorf("search thread %q: %w", threadName(thread), err)
	}
	if len(found) == 0 {
		// Nothing found: say so of a thread that is not there.
		if _, err := e.store.Latest(ctx, thread); errors.Is(err, store.ErrNotFound) {
			return nil, threadNotFound(thread)
		} else if err != nil {
			return nil, fmt.Errorf("read thread %q: %w", threadName(thread), err)
		}
	}
	return found, nil
}
