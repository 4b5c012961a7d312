package engine

import (
	"fmt"

	"rewind/store"
	"rewind/store/browse"
)

// missing says what is not there and ends with how to see what is: an
// error ends with its fix. The store's own words (which query found
// nothing) are left out, as they add nothing to act on. errors.Is matches
// store.ErrNotFound and browse.ErrNotFound.
type missing struct{ msg string }

func (e missing) Error() string { return e.msg }

func (e missing) Is(target error) bool {
	return target == store.ErrNotFound || target == browse.ErrNotFound
}

func threadNotFound(thread string) error {
	return missing{fmt.Sprintf("thread %q not found: list threads with `rewind threads`", threadName(thread))}
}

func checkpointNotFound(thread string, id int64) error {
	return missing{fmt.Sprintf("checkpoint %d not found on thread %q: list its checkpoints with `rewind log %s`", id, threadName(thread), threadName(thread))}
}
