package engine

// The engine says what is wrong and which actions would fix it, never in
// the words of one interface: the CLI words a Fix as a command
// (`rewind resume T`), the TUI as its key. An error that has fixes is a
// Fixer (errors.As finds it through any wrapping).

import "errors"

// Action is something a person can do about an error.
type Action int

const (
	// FixNewTurn starts a new turn on the thread.
	FixNewTurn Action = iota + 1
	// FixFork branches from a checkpoint: At, or an earlier one when At is 0.
	FixFork
	// FixResume runs the thread's pending tasks.
	FixResume
	// FixDiscard drops the thread's pending tasks.
	FixDiscard
	// FixRemove deletes the thread.
	FixRemove
	// FixLog lists the thread's checkpoints.
	FixLog
	// FixShow shows the thread's head.
	FixShow
	// FixThreads lists the threads.
	FixThreads
	// FixSession runs again in a valid session (a new one, or a longer
	// expiry).
	FixSession
	// FixRestoreAccess gives back access to Fix.Source.
	FixRestoreAccess
	// FixBudget runs with a larger token budget per turn, or none.
	FixBudget
	// FixWait waits for the process that holds the thread to finish, or
	// stops it.
	FixWait
	// FixTakeOver goes on without the thread's writer lock, fencing out
	// the process that holds it.
	FixTakeOver
	// FixFreshGrant branches from an earlier checkpoint with a new draft
	// turn under a fresh authorization grant (a side effect blocked for
	// lack of a valid one).
	FixFreshGrant
)

// actionNames are the actions as stored (an event's or a listing's
// fixes): by name, so the numbering above may change.
var actionNames = map[Action]string{
	FixNewTurn: "new-turn", FixFork: "fork", FixResume: "resume", FixDiscard: "discard",
	FixRemove: "remove", FixLog: "log", FixShow: "show", FixThreads: "threads",
	FixSession: "session", FixRestoreAccess: "restore-access", FixBudget: "budget",
	FixWait: "wait", FixTakeOver: "take-over", FixFreshGrant: "fresh-grant",
}

// String is a's stored name ("" for an action this rewind does not have).
func (a Action) String() string { return actionNames[a] }

// storedFixes are actions as an event or a listing stores them.
func storedFixes(actions []Action) []string {
	if len(actions) == 0 {
		return nil
	}
	out := make([]string, 0, len(actions))
	for _, a := range actions {
		if n := a.String(); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// actionsOf are fixes' actions.
func actionsOf(fixes []Fix) []Action {
	out := make([]Action, len(fixes))
	for i, fx := range fixes {
		out[i] = fx.Action
	}
	return out
}

// fixesOf are the stored actions names on thread, as Fixes; a name this
// rewind does not know (a newer rewind's action) is left out.
func fixesOf(thread string, names []string) []Fix {
	var out []Fix
	for _, n := range names {
		for a, name := range actionNames {
			if name == n {
				out = append(out, Fix{Action: a, Thread: thread})
				break
			}
		}
	}
	return out
}

// Fix is one action that would fix an error, with what it acts on.
type Fix struct {
	Action Action
	Thread string
	At     int64  // FixFork's checkpoint (0: an earlier one)
	Source string // FixRestoreAccess's source
}

// Fixer is an error that knows its fixes, in the order to offer them.
type Fixer interface {
	error
	Fixes() []Fix
}

// FixError is an error about a thread (at a checkpoint, when it is about
// one) with the actions that would fix it. Err says what is wrong and
// wraps its sentinel.
type FixError struct {
	Thread     string
	Checkpoint int64
	Err        error
	Fix        []Fix
}

func (e *FixError) Error() string { return e.Err.Error() }
func (e *FixError) Unwrap() error { return e.Err }
func (e *FixError) Fixes() []Fix  { return e.Fix }

// Fixable is err about thread at checkpoint, fixed by fixes. A graph's
// own checks (engine/ticket's) build their refusals with it.
func Fixable(thread string, checkpoint int64, err error, fixes ...Fix) error {
	return &FixError{Thread: thread, Checkpoint: checkpoint, Err: err, Fix: fixes}
}

// corrupt is err (an ErrCorrupt) about thread at checkpoint: fork from
// an earlier checkpoint, or delete the thread.
func corrupt(thread string, checkpoint int64, err error) error {
	return Fixable(thread, checkpoint, err, ForkFix(thread, 0), RemoveFix(thread))
}

// corruptFixes is err with corrupt's fixes when it is an ErrCorrupt that
// names none yet: the stored format (chainformat) says what is wrong, the
// engine what to do about it.
func corruptFixes(thread string, checkpoint int64, err error) error {
	var fixed Fixer
	if !errors.Is(err, ErrCorrupt) || errors.As(err, &fixed) {
		return err
	}
	return corrupt(thread, checkpoint, err)
}

// Fixes of one thread, for Fixable.
func NewTurnFix(thread string) Fix { return Fix{Action: FixNewTurn, Thread: thread} }

// ForkFix branches from at (0: an earlier checkpoint the person picks).
func ForkFix(thread string, at int64) Fix {
	return Fix{Action: FixFork, Thread: thread, At: at}
}
func ResumeFix(thread string) Fix { return Fix{Action: FixResume, Thread: thread} }
func RemoveFix(thread string) Fix { return Fix{Action: FixRemove, Thread: thread} }
func LogFix(thread string) Fix    { return Fix{Action: FixLog, Thread: thread} }
func ShowFix(thread string) Fix   { return Fix{Action: FixShow, Thread: thread} }
