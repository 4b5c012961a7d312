package tui

import (
	"errors"
	"strings"

	"rewind/engine"
)

// fixes is what to do about err in this view's keys: the engine says which
// actions fix it (engine.Fixer), the TUI words those it has a key for.
// "" when there is none.
func (k threadKeys) fixes(err error) string {
	var f engine.Fixer
	if !errors.As(err, &f) {
		return ""
	}
	var says []string
	for _, fx := range f.Fixes() {
		switch fx.Action {
		case engine.FixNewTurn:
			says = append(says, k.Compose.Help().Key+" writes a new turn")
		case engine.FixFork:
			says = append(says, k.Fork.Help().Key+" forks")
		case engine.FixResume:
			says = append(says, k.Resume.Help().Key+" resumes")
		case engine.FixDiscard:
			says = append(says, k.Discard.Help().Key+" discards the pending tasks")
		case engine.FixThreads:
			says = append(says, k.Threads.Help().Key+" lists the threads")
		case engine.FixWait:
			says = append(says, "wait for the other process to finish, or stop it")
		}
	}
	if len(says) == 0 {
		return ""
	}
	return ": " + strings.Join(says, ", ")
}
