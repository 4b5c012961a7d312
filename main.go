// Command rewind is a time-travel client for a checkpointed multi-agent
// conversation: run a support ticket through a planner → executors → critic
// → summarizer graph, scrub its checkpoint chain, fork it, and resume it
// after a crash. The commands are in package cli.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	// Before Bubble Tea's init asks the terminal for its colours.
	_ "early.rewind.invalid/termquiet"

	"rewind/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
