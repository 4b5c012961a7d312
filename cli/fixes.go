package cli

import (
	"errors"
	"fmt"
	"strings"

	"rewind/engine"
)

// fixWords is what to do about err as commands to type: the engine says
// which actions fix an error (engine.Fixer), the command line words them.
// "" when err has none.
func fixWords(err error) string {
	var f engine.Fixer
	if !errors.As(err, &f) {
		return ""
	}
	var says []string
	for _, fx := range f.Fixes() {
		if w := fixWord(fx); w != "" {
			says = append(says, w)
		}
	}
	switch len(says) {
	case 0:
		return ""
	case 1:
		return says[0]
	}
	return strings.Join(says[:len(says)-1], ", ") + ", or " + says[len(says)-1]
}

func fixWord(fx engine.Fix) string {
	t := named(fx.Thread)
	switch fx.Action {
	case engine.FixNewTurn:
		return fmt.Sprintf("start a new turn with `rewind run --thread %s --input …`", t)
	case engine.FixFork:
		if fx.At != 0 {
			return fmt.Sprintf("fork from @%d with `rewind fork %s %d --input …`", fx.At, t, fx.At)
		}
		return fmt.Sprintf("branch from an earlier checkpoint with `rewind fork %s CHECKPOINT --input …`", t)
	case engine.FixResume:
		return fmt.Sprintf("carry on with `rewind resume %s`", t)
	case engine.FixDiscard:
		return fmt.Sprintf("drop the pending tasks with `rewind discard %s`", t)
	case engine.FixRemove:
		return fmt.Sprintf("delete the thread with `rewind rm %s`", t)
	case engine.FixLog:
		return fmt.Sprintf("list its checkpoints with `rewind log %s`", t)
	case engine.FixShow:
		return fmt.Sprintf("see `rewind show %s`", t)
	case engine.FixThreads:
		return "list threads with `rewind threads`"
	case engine.FixSession:
		return "give a valid session with --session ID --session-expires T"
	case engine.FixRestoreAccess:
		return fmt.Sprintf("give access back with `rewind source restore %s`", named(fx.Source))
	case engine.FixBudget:
		return "with a larger --max-tokens-per-turn, or without it"
	case engine.FixWait:
		return "wait for it to finish, kill it"
	case engine.FixTakeOver:
		return "take it over with --take-over"
	}
	return ""
}

// withFixes is msg, the line err is printed as, ending with what to do.
func withFixes(msg string, err error) string {
	if w := fixWords(err); w != "" {
		return msg + ": " + w
	}
	return msg
}
