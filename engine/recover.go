package engine

// Recovery checks (seed 003): before a resume carries a run on, the engine
// checks that the run may go on (not failed, not cancelled), that the
// stored events are continuous with the checkpoints, and asks the graph
// whether what it would build on still holds (OnResume). A failed check
// stops the resume with a reason that names the fix; nothing is written.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"rewind/engine/event"
	"slices"
	"strings"

	"rewind/engine/chainformat"
	"rewind/engine/internal/userpanic"
	"rewind/engine/model"
	"rewind/store"
)

// EventRechecked is a resume that found, through the graph's OnResume
// check, that some of what it would build on is out of date, and what it
// redid about it.
const EventRechecked = event.TypeRechecked

// ResumeInfo is what a graph's resume check sees.
type ResumeInfo struct {
	// Checkpoint is the one the resume carries on from.
	Checkpoint Checkpoint
	// Stored are the writes its pending tasks already stored (a
	// half-finished superstep); a resume reuses them unless told not to.
	Stored []TaskWrites
	// Events are the stored events of the checkpoint's branch, oldest
	// first, model calls aside. Their continuity is already checked.
	Events []Event
	// Rerooted says the branch's oldest checkpoints were pruned, or (a
	// new turn's check) that Events are only its newest turn's: its first
	// events are not the thread's first.
	Rerooted bool
	// ModelName names the model this engine's calls of a role go to, as
	// NodeContext.ModelName does: a summary made by another is not this
	// run's summarizer's.
	ModelName func(role string) string
}

// ResumeCheck is a graph's own recovery check (see Graph.OnResume). An
// error refuses the resume; it must say what to do.
type ResumeCheck func(ctx context.Context, in ResumeInfo) (Recheck, error)

// Recheck is a resume check's verdict. The zero value lets the resume go on
// as it would.
type Recheck struct {
	// Reason is one line saying what changed; empty when nothing did.
	Reason string
	// Rerun maps pending tasks whose stored writes must not be reused (what
	// they read has changed) to why: they run again.
	Rerun map[string]string
	// Writes, when any, are applied in an update checkpoint that replaces
	// the pending tasks with Next: the work to redo. The old pending tasks
	// are recorded as discarded, with their stored writes.
	Writes []Write
	Next   []Target
}

// OnResume registers the graph's check before a resume carries on (see
// ResumeCheck).
func (g *Graph) OnResume(fn ResumeCheck) *Graph { g.resumeCheck = fn; return g }

// Rechecked is what a resume redid because its graph's check found
// something changed (see Recheck).
type Rechecked struct {
	Reason string `json:"reason"`
	// Rerun are tasks whose stored writes were not reused.
	Rerun []string `json:"rerun,omitempty"`
	// Checkpoint is the update checkpoint that replaced the pending tasks
	// (0 when none was needed), and Next what it made pending.
	Checkpoint int64  `json:"checkpoint,omitempty"`
	Next       string `json:"next,omitempty"`
}

// ErrDiscontinuous is matched by errors.Is when the stored events and
// checkpoints of a thread do not follow on from each other.
var ErrDiscontinuous = fmt.Errorf("%w: the stored events are not continuous with the checkpoints", ErrCorrupt)

// recover runs the recovery checks before r carries on from cp (whose
// run the caller found neither failed nor cancelled), and returns the
// checkpoint to carry on from: cp, or the update checkpoint a recheck
// made. It runs under the thread's lock.
func (e *Engine) recover(ctx context.Context, r *runner, cp Checkpoint) (Checkpoint, error) {
	br, v, err := e.checkResume(ctx, r.thread, cp, nil)
	if errors.Is(err, ErrDiscontinuous) {
		// The events and the listings are two reads: a writer that took
		// the thread over between them (a cancel, say) looks like a gap.
		// Then this run is fenced out, and that is the answer.
		if now, eerr := e.store.Epoch(ctx, r.thread); eerr == nil && now != r.epoch {
			return Checkpoint{}, fmt.Errorf("thread %q was taken over by another process while this resume read it: this run stops: %w", threadName(r.thread), store.ErrFenced)
		}
	}
	if err != nil {
		return Checkpoint{}, err
	}
	r.runStart = br.start
	if v.Reason == "" {
		return cp, nil
	}
	rc := &Rechecked{Reason: v.Reason}
	r.res.Rechecked = rc
	data := event.Rechecked{Reason: v.Reason}
	if len(v.Writes) == 0 {
		r.rerun = v.Rerun
		rc.Rerun = slices.Sorted(maps.Keys(v.Rerun))
		data.Rerun = v.Rerun
		// Stored with the checkpoint the resumed superstep commits.
		r.carry = append(r.carry, r.event("", "", data))
		r.observe(r.carry[len(r.carry)-1])
		return cp, nil
	}
	values, err := e.graph.apply(cp.Values, v.Writes)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("resume thread %q: recheck: %w", threadName(r.thread), err)
	}
	id := r.lastID + 1
	next := Checkpoint{Thread: r.thread, ID: id, ParentID: cp.ID, Step: cp.Step + 1, Source: SourceUpdate, Values: values,
		Tasks: tasksFor(r.thread, id, cp.Step+1, v.Next),
		// The run goes on at once: it is running, not paused by an edit.
		Metadata: Metadata{Discarded: cp.Tasks, AsNode: "resume", Status: RunRunning, Writes: map[string][]string{"resume": channelsOf(v.Writes)}}}
	rc.Checkpoint, rc.Next = id, describeTasks(next.Tasks)
	data.Next = new(rc.Next)
	if err := r.commit(ctx, &next, &cp, []WriteGroup{{Node: "resume", Writes: v.Writes}}, 0, []Event{r.event("", "", data)}); err != nil {
		return Checkpoint{}, err
	}
	return next, nil
}

// refusal is a resume check's refusal (or the events found not to follow
// on): a resume would stop on it, where another error is a failed read.
type refusal struct{ error }

func (r refusal) Unwrap() error { return r.error }

// checkResume is the resume analysis's reading of cp: its branch, and the
// graph's resume check's verdict on what a resume from cp would build on
// (stored: the pending tasks' stored writes, read here when nil). A
// refusal comes back as a refusal error. It writes nothing: a resume acts
// on the verdict (recover), a plan reports it (PlanResume).
func (e *Engine) checkResume(ctx context.Context, thread string, cp Checkpoint, stored []TaskWrites) (branchInfo, Recheck, error) {
	br, err := e.branchEvents(ctx, thread, cp.ID)
	if errors.Is(err, ErrCorrupt) {
		return branchInfo{}, Recheck{}, refusal{err}
	}
	if err != nil || e.graph.resumeCheck == nil {
		return br, Recheck{}, err
	}
	if stored == nil {
		if stored, err = e.PendingWrites(ctx, thread, cp.ID); err != nil {
			return br, Recheck{}, err
		}
	}
	in := ResumeInfo{Checkpoint: cp, Stored: stored, Events: br.events, Rerooted: br.rerooted, ModelName: e.modelName}
	v, err := userpanic.Run("OnResume check of "+describeTasks(cp.Tasks), func() (Recheck, error) { return e.graph.resumeCheck(ctx, in) })
	if err != nil {
		return br, Recheck{}, refusal{fmt.Errorf("resume thread %q at @%d: %w", threadName(thread), cp.ID, err)}
	}
	for _, t := range v.Next {
		if t.err != nil {
			return br, Recheck{}, refusal{fmt.Errorf("resume thread %q: recheck: %w", threadName(thread), t.err)}
		}
		if !e.graph.HasNode(t.Node) {
			return br, Recheck{}, refusal{fmt.Errorf("resume thread %q: recheck: %w %q", threadName(thread), ErrUnknownNode, t.Node)}
		}
	}
	return br, v, nil
}

// branchInfo is what a resume reads of its checkpoint's branch.
type branchInfo struct {
	// events are the branch's stored events, oldest first; rerooted says
	// the branch lost its oldest checkpoints to a prune.
	events   []Event
	rerooted bool
	// start is where the run of the checkpoint began on it: the newest
	// input or fork checkpoint of its chain, else its oldest.
	start int64
}

// branchEvents reads the stored events of thread, checks that they are
// continuous with its checkpoints, and returns what a resume from
// checkpoint id reads of its branch (branchInfo).
//
// Continuous: every event belongs to a stored checkpoint (so none waits
// beyond the newest one, where the resume will write), and each
// checkpoint's events are numbered 1, 2, … without a gap, up to the count
// its listing recorded (checkpoints stored before counts were have none).
func (e *Engine) branchEvents(ctx context.Context, thread string, id int64) (branchInfo, error) {
	rows, err := e.store.Events(ctx, thread, 0)
	if err != nil {
		return branchInfo{}, fmt.Errorf("read events of thread %q: %w", threadName(thread), err)
	}
	listed, err := e.store.History(ctx, thread, 0, 0)
	if err != nil {
		return branchInfo{}, fmt.Errorf("read history of thread %q: %w", threadName(thread), err)
	}
	parent := make(map[int64]store.Checkpoint, len(listed))
	for _, l := range listed {
		parent[l.ID] = l
	}
	name := threadName(thread)
	// Each refusal: fork from a checkpoint before it, or delete the thread.
	fix := func(err error) error { return Fixable(thread, 0, err, ForkFix(thread, 0), RemoveFix(thread)) }
	next := map[int64]int{}
	for _, row := range rows {
		if _, ok := parent[row.CheckpointID]; !ok {
			newest := int64(0)
			if len(listed) > 0 {
				newest = listed[0].ID
			}
			return branchInfo{}, fix(fmt.Errorf("thread %q: a %s event is stored for @%d, which is not a checkpoint of the thread (the newest is @%d): %w",
				name, row.Type, row.CheckpointID, newest, ErrDiscontinuous))
		}
		want := next[row.CheckpointID] + 1
		if row.Seq != want {
			return branchInfo{}, fix(fmt.Errorf("thread %q: the events of @%d jump from #%d to #%d (%s): %w",
				name, row.CheckpointID, want-1, row.Seq, row.Type, ErrDiscontinuous))
		}
		next[row.CheckpointID] = want
	}
	sources := make(map[int64]string, len(listed))
	for _, l := range listed {
		source, events := chainformat.SourceAndEvents(l.Meta) // one listing per checkpoint of the thread
		sources[l.ID] = source
		if got := next[l.ID]; events > got {
			return branchInfo{}, fix(fmt.Errorf("thread %q: @%d was stored with %d event(s) but %d are left (#%d is missing): %w",
				name, l.ID, events, got, got+1, ErrDiscontinuous))
		}
	}
	branch := map[int64]bool{}
	rerooted, start := false, int64(0)
	for at := id; at != 0; {
		l, ok := parent[at]
		if !ok || branch[at] {
			return branchInfo{}, fmt.Errorf("thread %q: checkpoint @%d's chain is broken at @%d: %w", name, id, at, ErrCorrupt)
		}
		branch[at] = true
		rerooted = rerooted || l.RerootedFrom != 0
		if src := sources[at]; start == 0 && (src == SourceInput || src == SourceFork) || l.ParentID == 0 && start == 0 {
			start = at
		}
		at = l.ParentID
	}
	var out []Event
	for _, row := range rows {
		if !branch[row.CheckpointID] {
			continue
		}
		ev, err := chainformat.ReadEvent(thread, row)
		if err != nil {
			return branchInfo{}, fix(fmt.Errorf("event #%d of @%d on thread %q is corrupt (%v): %w", row.Seq, row.CheckpointID, name, err, ErrCorrupt))
		}
		out = append(out, ev)
	}
	return branchInfo{events: out, rerooted: rerooted, start: start}, nil
}

// ModelName names the model that answers role's calls, for a record such
// as a compaction's event: the model a provider names for the role, "mock"
// for the mock, the source of a replayed recording, or else the model's
// Go type.
func (nc *NodeContext) ModelName(role string) string { return modelName(nc.base, role) }

// modelName is what NodeContext.ModelName says of this engine's model.
func (e *Engine) modelName(role string) string { return modelName(e.model, role) }

func modelName(m model.Model, role string) string {
	if u, ok := m.(interface{ Unwrap() model.Model }); ok {
		return modelName(u.Unwrap(), role) // a recorder names what it records
	}
	if n, ok := m.(interface{ ModelName(role string) string }); ok && n.ModelName(role) != "" {
		return n.ModelName(role)
	}
	if n, ok := m.(interface{ Models() map[string]string }); ok && n.Models()[role] != "" {
		return n.Models()[role]
	}
	if _, ok := m.(*model.Mock); ok {
		return "mock"
	}
	if n, ok := m.(interface{ Source() string }); ok && strings.TrimSpace(n.Source()) != "" {
		return "replay of " + n.Source()
	}
	if m == nil {
		return ""
	}
	return fmt.Sprintf("%T", m)
}
