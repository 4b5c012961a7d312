package engine

import (
	"fmt"

	"rewind/store"
	"rewind/store/browse"
)

// missing says what is not there; its fix is how to see what is. The store's own words (which query found
// nothing) are left out, as they add nothing to act on. errors.Is matches
// store.ErrNotFound and browse.ErrNotFound.
type missing struct {
	msg string
	fix Fix
}

func (e missing) Error() string { return e.msg }
func (e missing) Fixes() []Fix  { return []Fix{e.fix} }

func (e missing) Is(target error) bool {
	return target == store.ErrNotFound || target == browse.ErrNotFound
}

func threadNotFound(thread string) error {
	return missing{fmt.Sprintf("thread %q not found", threadName(thread)), Fix{Action: FixThreads}}
}

func checkpointNotFound(thread string, id int64) error {
	return missing{fmt.Sprintf("checkpoint %d not found on thread %q", id, threadName(thread)), LogFix(thread)}
}
