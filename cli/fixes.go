package cli

import (
	"errors"
	"fmt"
	"strings"

	"rewind/engine"
	"rewind/engine/model/openai"
	"rewind/engine/model/replay"
	"rewind/engine/seal"
	"rewind/engine/ticket"
	"rewind/store/browse"
)

// fixWords is what to do about err as commands to type: the engine says
// which actions fix an error (engine.Fixer, and the typed errors of its
// sub-packages: wantWords), the command line words them. "" when err has
// none.
func fixWords(err error) string {
	var fixes []engine.Fix
	if f := engine.Fixer(nil); errors.As(err, &f) {
		fixes = f.Fixes()
	}
	return fixesWords(fixes, wantWords(err))
}

// fixesWords are fixes as commands, then more when it is not "", joined
// as one clause. "" when there is nothing to say.
func fixesWords(fixes []engine.Fix, more string) string {
	var says []string
	for _, fx := range fixes {
		if w := fixWord(fx); w != "" {
			says = append(says, w)
		}
	}
	if more != "" {
		says = append(says, more)
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
	case engine.FixFreshGrant:
		return fmt.Sprintf("fork it under a fresh grant with `rewind fork %s CHECKPOINT --input … --draft --auth-ttl D`", t)
	}
	return ""
}

// reasonWithFixes is a stored reason ending with its fixes as commands:
// a reason stored before fixes were names its command itself, and has
// none.
func reasonWithFixes(reason string, fixes []engine.Fix) string {
	if w := fixesWords(fixes, ""); w != "" {
		return reason + ": " + w
	}
	return reason
}

// withFixes is msg, the line err is printed as, ending with what to do.
func withFixes(msg string, err error) string {
	if w := fixWords(err); w != "" {
		return msg + ": " + w
	}
	return msg
}

// wantWords is what the engine's sub-packages say would get past err, as
// the flags and commands to give: their messages name none (issue 35).
func wantWords(err error) string {
	var (
		se *seal.Error
		oe *openai.Error
		fe *replay.FileError
		tr *ticket.WantError
		nf *browse.NotFound
	)
	switch {
	case errors.As(err, &se) && se.Have == "":
		return "give its key file with --key-file (or $REWIND_KEY_FILE)"
	case errors.As(err, &se):
		return fmt.Sprintf("give the file that holds key %s (--key-file or $REWIND_KEY_FILE)", se.KeyID)
	case errors.As(err, &oe) && oe.Weaker != "":
		return "leave --json-mode out to let rewind fall back, or force a weaker mode with --json-mode " + oe.Weaker
	case errors.Is(err, replay.ErrNotRecorded):
		return "replay the run the recording was made from (same thread history and input), or record a new one with --record"
	case errors.Is(err, replay.ErrOldFormat):
		return "record it again with --record"
	case errors.As(err, &fe) && fe.Op == replay.Replay && errors.Is(err, replay.ErrFormat):
		return "pass a file written by --record"
	case errors.As(err, &tr):
		return wantErrorWords(tr)
	case errors.As(err, &nf) && nf.Checkpoint == "":
		return "list the threads and their namespaces with `rewind threads`"
	case errors.As(err, &nf):
		return "list its checkpoints with `rewind log`"
	case errors.Is(err, engine.ErrEmptyThread):
		return "name the thread, e.g. --thread ticket-1"
	}
	return ""
}

func wantErrorWords(r *ticket.WantError) string {
	switch r.Want {
	case ticket.WantReason:
		return "--reason TEXT"
	case ticket.WantNoGrant:
		return "approve without --auth-ttl"
	case ticket.WantFreshDraft:
		return "fork the thread with a fresh one (--draft --auth-ttl D)"
	case ticket.WantGrantTTL:
		return "give --auth-ttl D with D > 0"
	case ticket.WantBudget:
		return fmt.Sprintf("e.g. --value %d", r.Value)
	case ticket.WantFidelity:
		return "`rewind check fidelity` lists them"
	}
	return ""
}
