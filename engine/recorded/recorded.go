// Package recorded reads which graph wrote a thread from its listings: a
// run's first and last checkpoints name it (Metadata.Graph). A listing
// reads alike on every graph, where the head's state may not (to one
// graph another's checkpoint can be of a newer schema), so the CLI and the
// TUI ask here before they build the graph that reads the thread.
package recorded

import (
	"context"
	"fmt"

	"rewind/engine"
	"rewind/engine/chainformat"
	"rewind/store"
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

// Rows is a History read from st itself, for a caller with no engine yet:
// app.Open reads which graph a thread records before it builds that
// graph's engine, once. A listing needs no graph to read (its sealed
// documents are not read); a row that does not read as one (stored before
// listings, or damaged) names no graph, as engine.History lists it.
func Rows(st store.Store) History { return rows{st} }

type rows struct{ st store.Store }

// listings reads listings alone: no channel is needed for them.
var listings = chainformat.NewSchema(1, nil)

func (r rows) History(ctx context.Context, thread string, before int64, limit int) ([]engine.Checkpoint, error) {
	rs, err := r.st.History(ctx, thread, before, limit)
	if err != nil {
		return nil, fmt.Errorf("read history of thread %q: %w", store.Name(thread), err)
	}
	out := make([]engine.Checkpoint, len(rs))
	for i, row := range rs {
		out[i] = engine.Checkpoint{Thread: thread, ID: row.ID}
		if len(row.Meta) > 0 {
			if cp, err := listings.Listed(row); err == nil {
				out[i] = cp
			}
		}
	}
	return out, nil
}
