package tui

// What the live strip (live.go) shows between runs is read here, in
// tea.Cmds: the thread's newest checkpoint, its pending tasks and which of
// them stored their writes (the engine's ResumePlan), the approval gate it
// may wait at, the drafts table and the thread's costs.

import (
	"context"
	"errors"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"rewind/engine"
	"rewind/store"
)

// headInfo is the thread's newest checkpoint as a drill sees it: its
// pending tasks, which of them already stored their writes (finished before
// a crash: reused on resume; the engine's ResumePlan), and the approval gate
// it may wait at.
type headInfo struct {
	thread string
	cp     engine.Checkpoint
	// id is cp's id as the tree keys it.
	id string
	// costs are the thread's tokens (nil when the backend cannot sum
	// them, or they did not read), read after the head, for the inspector
	// (wantCosts); costsRead says they were.
	costs     *engine.Costs
	costsRead bool
	// value is the extension's Decode of cp (nil: none, or it did not
	// decode); gate the approval gate cp waits at (Gater).
	value any
	plan  engine.ResumePlan
	gate  *Gate
	// drafts are the thread's rows in the drafts table (nil when the
	// backend cannot list them).
	drafts    []store.Draft
	canDrafts bool
}

type headMsg struct {
	gen    int
	thread string
	head   *headInfo
	err    error
}

// resumePlanner is a Backend that reads the engine's resume analysis
// (Engine.PlanResume), the graph's resume check included.
type resumePlanner interface {
	PlanResume(ctx context.Context, thread string, checkpoint int64) (engine.ResumePlan, error)
}

// coster is a Backend that sums a thread's tokens (Engine.Costs).
type coster interface {
	Costs(ctx context.Context, thread string) (engine.Costs, error)
}

// costsMsg brings the thread's costs read for head.
type costsMsg struct {
	gen    int
	thread string
	head   int64
	costs  *engine.Costs // nil: they did not read
	// current: of the chain open now (the root says, as it routes it).
	current bool
}

// wantCosts reads the thread's costs for the inspector's header. They sum
// every listing of the thread (on a 1,000-turn thread the costliest read
// of opening it), so they are read only while the inspector shows a
// checkpoint (shown), once per head, and after the checkpoint under the
// cursor is shown: the first screen does not wait for them.
func (s *liveStrip) wantCosts(sess *session, shown bool) tea.Cmd {
	c, ok := sess.deps.Backend.(coster)
	if !ok || !shown || !s.wantsCosts() {
		return nil
	}
	ctx, gen, thread, id := sess.ctx, sess.gen, sess.thread, s.head.cp.ID
	return func() tea.Msg {
		msg := costsMsg{gen: gen, thread: thread, head: id}
		// A thread whose costs do not read still shows its head.
		if costs, err := c.Costs(ctx, thread); err == nil {
			msg.costs = &costs
		}
		return msg
	}
}

// readHead reads the newest checkpoint and its stored writes. It runs in a
// tea.Cmd (or in a run's start Cmd, before the run can add writes).
func readHead(ctx context.Context, b Backend, ext Extension, thread string) (*headInfo, error) {
	h, err := readHeadAt(ctx, b, thread, 0)
	if h == nil || err != nil || ext == nil { // no extension: no value, no gate
		return h, err
	}
	if v, err := ext.Decode(h.cp.Values); err == nil {
		h.value = v
		if g, ok := ext.(Gater); ok {
			if gate, ok := g.Gate(h.cp, v, time.Now()); ok {
				h.gate = &gate
			}
		}
	}
	return h, nil
}

// readHeadAt reads checkpoint at (0: the newest) the same way, without
// the extension's fields (a resume's phase reads its tasks and plan).
func readHeadAt(ctx context.Context, b Backend, thread string, at int64) (*headInfo, error) {
	var cps []engine.Checkpoint
	var err error
	if at == 0 {
		// The listing names the head; Get reads it whole.
		if cps, err = b.History(ctx, thread, 0, 1); err == nil && len(cps) == 1 {
			at = cps[0].ID
		}
	}
	if at != 0 {
		var cp engine.Checkpoint
		if cp, err = b.Get(ctx, thread, at); err == nil {
			cps = []engine.Checkpoint{cp}
		}
	}
	if errors.Is(err, store.ErrNotFound) || (err == nil && len(cps) == 0) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	cp := cps[0]
	h := &headInfo{thread: thread, cp: cp, id: idOf(cp.ID)}
	if pl, ok := b.(resumePlanner); ok {
		// What a resume would do now, source recheck and all.
		if h.plan, err = pl.PlanResume(ctx, thread, cp.ID); err != nil {
			return nil, err
		}
	} else {
		var ws []engine.TaskWrites
		if len(cp.Tasks) > 0 {
			if ws, err = b.PendingWrites(ctx, thread, cp.ID); err != nil {
				return nil, err
			}
		}
		h.plan = engine.PlanFrom(cp, ws)
	}
	if dl, ok := b.(draftLister); ok {
		if ds, err := dl.ListDrafts(ctx, thread); err == nil {
			h.drafts, h.canDrafts = ds, true
		}
	}
	return h, nil
}

func loadHead(ctx context.Context, b Backend, ext Extension, gen int, thread string) tea.Cmd {
	return func() tea.Msg {
		if b == nil { // a read-only source: no run, no gate to show
			return headMsg{gen: gen, thread: thread}
		}
		h, err := readHead(ctx, b, ext, thread)
		return headMsg{gen: gen, thread: thread, head: h, err: err}
	}
}

// expiry prints an authorization's RFC 3339 expiry for people (UTC).
func expiry(s string) string {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return s + " (unreadable)"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}
