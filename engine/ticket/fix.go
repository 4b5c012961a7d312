package ticket

import "rewind/engine"

// The ticket graph's refusals say what is wrong; what to do is data
// (engine.Fix), which the CLI words as commands and the TUI as keys.

func fixable(thread string, at int64, err error, fixes ...engine.Fix) error {
	return &engine.FixError{Thread: thread, Checkpoint: at, Err: err, Fix: fixes}
}

// forkBefore branches from the checkpoint before at (the first, at most).
func forkBefore(thread string, at int64) engine.Fix {
	return engine.Fix{Action: engine.FixFork, Thread: thread, At: max(at-1, 1)}
}

func forkEarlier(thread string) engine.Fix {
	return engine.Fix{Action: engine.FixFork, Thread: thread}
}

func removeThread(thread string) engine.Fix {
	return engine.Fix{Action: engine.FixRemove, Thread: thread}
}

func showThread(thread string) engine.Fix {
	return engine.Fix{Action: engine.FixShow, Thread: thread}
}
