package ticket

import "rewind/engine"

// The ticket graph's refusals say what is wrong; what to do is data
// (engine.Fix, built by engine.Fixable), which the CLI words as commands
// and the TUI as keys.

// forkBefore branches from the checkpoint before at (the first, at most).
func forkBefore(thread string, at int64) engine.Fix {
	return engine.ForkFix(thread, max(at-1, 1))
}
