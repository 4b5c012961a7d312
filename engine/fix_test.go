package engine_test

import (
	"errors"

	"rewind/engine"
)

// fixedBy says err offers action on thread among its fixes (engine.Fixer):
// the fix the CLI and the TUI word.
func fixedBy(err error, action engine.Action, thread string) bool {
	var f engine.Fixer
	if !errors.As(err, &f) {
		return false
	}
	for _, fx := range f.Fixes() {
		if fx.Action == action && fx.Thread == thread {
			return true
		}
	}
	return false
}
