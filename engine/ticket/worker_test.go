package ticket_test

import (
	"testing"

	"rewind/engine"
	"rewind/engine/ticket"
	"rewind/engine/worker"
)

// The worker, which names no graph, kills at the ticket's side-effect
// hook points by their names: a renamed point here must be renamed there,
// or --kill-at before-side-effect would never fire.
func TestTheWorkerKillsAtTheTicketsSideEffectPoints(t *testing.T) {
	for _, c := range []struct {
		worker worker.KillPoint
		ticket engine.HookPoint
	}{{worker.BeforeSideEffect, ticket.PointBeforeSideEffect}, {worker.AfterSideEffect, ticket.PointAfterSideEffect}} {
		if string(c.worker) != string(c.ticket) {
			t.Errorf("the worker's kill point %q is not the ticket's hook point %q", c.worker, c.ticket)
		}
	}
	// Linking the ticket registers its graph: its nodes' points parse.
	if _, _, err := worker.Parse("before:" + ticket.NodeExecutor); err != nil {
		t.Errorf("the ticket's node points do not parse: %v", err)
	}
}
