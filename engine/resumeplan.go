package engine

// The resume analysis: which pending tasks of a checkpoint a resume reuses
// (their writes were stored before the run stopped, say by a kill in the
// middle of a superstep), which it redispatches, and, once it ran, what it
// did. The TUI's live strip, `rewind resume --plan`, the resume report and
// the crash drill all ask it here.

import (
	"context"
	"fmt"
	"sort"

	"rewind/engine/model"
)

// ResumePlan is what a resume from Checkpoint would do with its pending
// tasks, read from what is stored now.
type ResumePlan struct {
	Thread string `json:"thread"`
	// Checkpoint is the one a resume carries on from, at superstep Step.
	Checkpoint int64 `json:"checkpoint"`
	Step       int   `json:"step"`
	// Tasks are its pending tasks, in order.
	Tasks []PlannedTask `json:"tasks"`
}

// PlannedTask is one pending task and what is stored of it.
type PlannedTask struct {
	Task
	// Stored says its writes were stored before the run stopped: a resume
	// reuses them and does not run the task again (unless the graph's
	// resume check finds what it read changed: see Rechecked).
	Stored bool `json:"stored"`
	// Channels are the channels its stored writes touch, sorted, once each;
	// ModelCalls the model calls the stored run made.
	Channels   []string `json:"channels,omitempty"`
	ModelCalls int      `json:"modelCalls,omitempty"`
}

// Reused are the tasks a resume would not run again.
func (p ResumePlan) Reused() []Task { return p.pick(true) }

// Redispatched are the tasks a resume would run.
func (p ResumePlan) Redispatched() []Task { return p.pick(false) }

func (p ResumePlan) pick(stored bool) []Task {
	out := []Task{}
	for _, t := range p.Tasks {
		if t.Stored == stored {
			out = append(out, t.Task)
		}
	}
	return out
}

// PlanFrom is the plan of checkpoint cp given the writes its pending tasks
// stored (PendingWrites): for a caller that read both already.
func PlanFrom(cp Checkpoint, stored []TaskWrites) ResumePlan {
	by := make(map[string]TaskWrites, len(stored))
	for _, w := range stored {
		by[w.Task] = w
	}
	p := ResumePlan{Thread: cp.Thread, Checkpoint: cp.ID, Step: cp.Step, Tasks: make([]PlannedTask, 0, len(cp.Tasks))}
	for _, t := range cp.Tasks {
		pt := PlannedTask{Task: t}
		if w, ok := by[t.ID]; ok {
			pt.Stored = true
			for _, x := range w.Writes {
				pt.Channels = append(pt.Channels, x.Channel)
			}
			sort.Strings(pt.Channels)
			pt.Channels = dedupe(pt.Channels)
			pt.ModelCalls = model.Counts(w.ModelCalls).Sum()
		}
		p.Tasks = append(p.Tasks, pt)
	}
	return p
}

// PlanResume reads what a resume of thread from checkpoint (0: the latest)
// would reuse and redispatch. It reads only; a checkpoint with no pending
// tasks has an empty plan (a resume would refuse it).
func (e *Engine) PlanResume(ctx context.Context, thread string, checkpoint int64) (ResumePlan, error) {
	var cp Checkpoint
	var err error
	if checkpoint == 0 {
		cp, err = e.Latest(ctx, thread)
	} else {
		cp, err = e.Get(ctx, thread, checkpoint)
	}
	if err != nil {
		return ResumePlan{}, err
	}
	var stored []TaskWrites
	if len(cp.Tasks) > 0 {
		if stored, err = e.PendingWrites(ctx, thread, cp.ID); err != nil {
			return ResumePlan{}, err
		}
	}
	return PlanFrom(cp, stored), nil
}

// ResumeOutcome is what a resume did with a plan's tasks, read from its
// first superstep.
type ResumeOutcome struct {
	// From is the checkpoint the plan was made at.
	From int64 `json:"from"`
	// Complete says the run's first superstep started from From, so the
	// figures below are that superstep's. When it did not (the run stopped
	// first, or a resume check replaced the pending tasks), they are empty.
	Complete bool `json:"complete"`
	// Redispatched are the tasks that ran, Reused those whose stored writes
	// were used instead; ModelCalls what the superstep's tasks called.
	Redispatched []Task `json:"redispatched"`
	Reused       []Task `json:"reused"`
	ModelCalls   int    `json:"modelCalls"`
	// RanAgain are tasks the plan had stored writes for that ran anyway
	// (a resume check's Rerun says why; otherwise it is a bug).
	RanAgain []Task `json:"ranAgain,omitempty"`
}

// Outcome reads what res, a resume from the plan's checkpoint, did with it.
func (p ResumePlan) Outcome(res Result) ResumeOutcome {
	o := ResumeOutcome{From: p.Checkpoint, Redispatched: []Task{}, Reused: []Task{}}
	if len(res.Steps) == 0 || res.Steps[0].From != p.Checkpoint {
		return o
	}
	st := res.Steps[0]
	o.Complete = true
	o.Redispatched = append(o.Redispatched, st.Ran...)
	o.Reused = append(o.Reused, st.Reused...)
	o.ModelCalls = model.Counts(st.ModelCalls).Sum()
	stored := map[string]bool{}
	for _, t := range p.Tasks {
		stored[t.ID] = t.Stored
	}
	for _, t := range st.Ran {
		if stored[t.ID] {
			o.RanAgain = append(o.RanAgain, t)
		}
	}
	return o
}

// String is the plan in one line, e.g. "@12: 3 pending tasks: 1 reused
// (writes stored), 2 to redispatch".
func (p ResumePlan) String() string {
	if len(p.Tasks) == 0 {
		return fmt.Sprintf("@%d: nothing pending to resume", p.Checkpoint)
	}
	return fmt.Sprintf("@%d: %d pending task(s): %d reused (writes stored), %d to redispatch", p.Checkpoint, len(p.Tasks), len(p.Reused()), len(p.Redispatched()))
}

// String is the outcome in one line.
func (o ResumeOutcome) String() string {
	if !o.Complete {
		return fmt.Sprintf("resume from @%d: its first superstep did not run from it", o.From)
	}
	return fmt.Sprintf("resume from @%d: %d redispatched, %d reused, %d model call(s)", o.From, len(o.Redispatched), len(o.Reused), o.ModelCalls)
}
