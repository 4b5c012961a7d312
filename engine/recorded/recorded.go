// Package recorded reads which graph wrote a thread from its listings: a
// run's first and last checkpoints name it (Metadata.Graph). A listing
// reads alike on every graph, where the head's state may not (to one
// graph another's checkpoint can be of a newer schema), so the CLI and the
// TUI ask here before they build the graph that reads the thread.
package recorded

import (
	"context"

	"rewind/engine"
)

// Scan bounds the listings Graph reads of a thread that records no graph
// and has no run marks (stored before both).
const Scan = 1024

// History is what Graph reads: an engine of any graph, or the TUI's
// backend.
type History interface {
	History(ctx context.Context, thread string, before int64, limit int) ([]engine.Checkpoint, error)
}

// Graph is the graph thread records: the newest listing that names one.
// "" for a thread stored before graphs were recorded (its newest run's
// first listing names none, or none of the newest Scan does). A thread
// that is not there is h's error (store.ErrNotFound).
func Graph(ctx context.Context, h History, thread string) (string, error) {
	// The newest alone first: a finished run's last checkpoint names the
	// graph, and in a new process every listing read is decoded for it.
	const page = 32
	var before int64
	for read, limit := 0, 1; read < Scan; read, limit = read+limit, min(page, Scan-read-limit) {
		cps, err := h.History(ctx, thread, before, limit)
		if err != nil {
			return "", err
		}
		for _, cp := range cps {
			switch {
			case cp.Metadata.Graph != "":
				return cp.Metadata.Graph, nil
			case cp.Metadata.Run != nil:
				return "", nil // a run's first, stored before graphs were recorded
			}
		}
		if len(cps) < limit {
			break
		}
		before = cps[len(cps)-1].ID
	}
	return "", nil
}
