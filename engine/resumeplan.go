package engine

// The resume analysis: which pending tasks of a checkpoint a resume reuses
// (their writes were stored before the run stopped, say by a kill in the
// middle of a superstep), which it redispatches, and, once it ran, what it
// did. The TUI's live strip, `rewind resume --plan`, the resume report and
// the crash drill all ask it here.

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"rewind/engine/model"
)

// ResumePlan is what a resume from Checkpoint would do with its pending
// tasks, read from what is stored now, through the same checks the resume
// makes: a run that ended, the graph's resume check (Graph.OnResume: say,
// a record a finding was read from changed since), and the writes stored.
type ResumePlan struct {
	Thread string `json:"thread"`
	// Checkpoint is the one a resume carries on from, at superstep Step.
	Checkpoint int64 `json:"checkpoint"`
	Step       int   `json:"step"`
	// Tasks are its pending tasks, in order.
	Tasks []PlannedTask `json:"tasks"`
	// Refused says why a resume would refuse to carry on (its run ended,
	// or the resume check refuses it): it would run nothing.
	Refused string `json:"refused,omitempty"`
	// Recheck is what the resume check finds changed (nil: nothing), which
	// Tasks already reflect.
	Recheck *PlannedRecheck `json:"recheck,omitempty"`
}

// PlannedRecheck is what a resume would redo because its graph's check
// found something changed (see Recheck).
type PlannedRecheck struct {
	Reason string `json:"reason"`
	// Next, when the check replaces the pending tasks, are the tasks an
	// update checkpoint makes pending instead (their ids as that
	// checkpoint, the thread's next, would give them): the resume's first
	// superstep runs them from it. Every pending task is then dropped,
	// stored writes and all.
	Next []Task `json:"next,omitempty"`
}

// PlannedTask is one pending task and what is stored of it.
type PlannedTask struct {
	Task
	// Stored says its writes were stored before the run stopped: a resume
	// reuses them and does not run the task again, unless Rerun says why
	// not (the resume check found what it read changed) or the resume
	// check replaces the pending tasks (Dropped).
	Stored bool `json:"stored"`
	// Channels are the channels its stored writes touch, sorted, once each;
	// ModelCalls the model calls the stored run made.
	Channels   []string `json:"channels,omitempty"`
	ModelCalls int      `json:"modelCalls,omitempty"`
	Rerun      string   `json:"rerun,omitempty"`
	// Dropped: the resume check replaces the pending tasks (see
	// PlannedRecheck.Next); this one does not run.
	Dropped bool `json:"dropped,omitempty"`
}

// Reuse says a resume would use the task's stored writes and not run it.
func (t PlannedTask) Reuse() bool { return t.Stored && t.Rerun == "" && !t.Dropped }

// Reused are the tasks a resume would not run again, their stored writes
// used instead (none when a resume is refused).
func (p ResumePlan) Reused() []Task {
	out := []Task{}
	if p.Refused != "" {
		return out
	}
	for _, t := range p.Tasks {
		if t.Reuse() {
			out = append(out, t.Task)
		}
	}
	return out
}

// Redispatched are the tasks a resume would run in its first superstep:
// the pending ones without stored writes (or whose writes the resume
// check refuses), or, when the check replaces them, its Next.
func (p ResumePlan) Redispatched() []Task {
	out := []Task{}
	if p.Refused != "" {
		return out
	}
	if p.replaced() {
		return append(out, p.Recheck.Next...)
	}
	for _, t := range p.Tasks {
		if !t.Reuse() {
			out = append(out, t.Task)
		}
	}
	return out
}

func (p ResumePlan) replaced() bool { return p.Recheck != nil && len(p.Recheck.Next) > 0 }

// PlanFrom is the plan of checkpoint cp given the writes its pending tasks
// stored (PendingWrites), without the resume check: for a caller that read
// both already and asks what was stored, not what a resume would do now
// (that is PlanResume).
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
// would reuse and redispatch, through the checks a resume makes (the run's
// end, the graph's resume check, which may find a source changed): the
// resume then does what the plan says, as long as nothing changes in
// between. It reads only; a checkpoint with no pending tasks has an empty
// plan (a resume would refuse it).
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
	if len(cp.Tasks) == 0 {
		return PlanFrom(cp, nil), nil
	}
	stored, err := e.PendingWrites(ctx, thread, cp.ID)
	if err != nil {
		return ResumePlan{}, err
	}
	p := PlanFrom(cp, stored)
	if err := e.ended(thread, cp); err != nil {
		p.Refused = err.Error()
		return p, nil
	}
	if stored == nil {
		stored = []TaskWrites{}
	}
	_, v, err := e.checkResume(ctx, thread, cp, stored)
	var no refusal
	if errors.As(err, &no) {
		p.Refused = no.Error()
		return p, nil
	}
	if err != nil {
		return ResumePlan{}, err
	}
	if v.Reason == "" {
		return p, nil
	}
	p.Recheck = &PlannedRecheck{Reason: v.Reason}
	if len(v.Writes) == 0 {
		for i := range p.Tasks {
			if why, ok := v.Rerun[p.Tasks[i].ID]; ok && p.Tasks[i].Stored {
				p.Tasks[i].Rerun = why
			}
		}
		return p, nil
	}
	// The update checkpoint the resume would store is the thread's next.
	next := cp.ID + 1
	if checkpoint != 0 {
		rows, err := e.store.History(ctx, thread, 0, 1)
		if err != nil {
			return ResumePlan{}, fmt.Errorf("read history of thread %q: %w", threadName(thread), err)
		}
		if len(rows) > 0 {
			next = rows[0].ID + 1
		}
	}
	p.Recheck.Next = tasksFor(thread, next, cp.Step+1, v.Next)
	for i := range p.Tasks {
		p.Tasks[i].Dropped = true
	}
	return p, nil
}

// ResumeOutcome is what a resume did with a plan's tasks, read from its
// first superstep.
type ResumeOutcome struct {
	// From is the checkpoint the plan was made at.
	From int64 `json:"from"`
	// Complete says the run's first superstep started where the plan said
	// it would (From, or the update checkpoint a planned recheck stores),
	// so the figures below are that superstep's. When it did not (the run
	// stopped first, or a recheck the plan did not foresee replaced the
	// pending tasks), they are empty.
	Complete bool `json:"complete"`
	// Redispatched are the tasks that ran, Reused those whose stored writes
	// were used instead; ModelCalls what the superstep's tasks called.
	Redispatched []Task `json:"redispatched"`
	Reused       []Task `json:"reused"`
	ModelCalls   int    `json:"modelCalls"`
	// RanAgain are tasks the plan would reuse that ran anyway (a bug).
	RanAgain []Task `json:"ranAgain,omitempty"`
	// Differs says how the resume departed from the plan (empty: it did
	// what the plan said).
	Differs string `json:"differs,omitempty"`
}

// Outcome reads what res, a resume from the plan's checkpoint, did with it.
func (p ResumePlan) Outcome(res Result) ResumeOutcome {
	o := ResumeOutcome{From: p.Checkpoint, Redispatched: []Task{}, Reused: []Task{}}
	from := p.Checkpoint
	switch rc := res.Rechecked; {
	case p.Recheck == nil && rc != nil:
		o.Differs = "the resume rechecked what the plan did not: " + rc.Reason
	case p.Recheck != nil && rc == nil:
		o.Differs = "the plan's recheck did not happen: " + p.Recheck.Reason
	case p.replaced() && rc.Checkpoint == 0:
		o.Differs = "the plan replaced the pending tasks; the resume kept them"
	case p.replaced():
		from = rc.Checkpoint
	case rc != nil && rc.Checkpoint != 0:
		o.Differs = "the resume replaced the pending tasks with " + rc.Next + "; the plan kept them"
	}
	if o.Differs != "" || len(res.Steps) == 0 || res.Steps[0].From != from {
		return o
	}
	st := res.Steps[0]
	o.Complete = true
	o.Redispatched = append(o.Redispatched, st.Ran...)
	o.Reused = append(o.Reused, st.Reused...)
	o.ModelCalls = model.Counts(st.ModelCalls).Sum()
	reuse := map[string]bool{}
	for _, t := range p.Tasks {
		reuse[t.ID] = t.Reuse()
	}
	for _, t := range st.Ran {
		if reuse[t.ID] {
			o.RanAgain = append(o.RanAgain, t)
		}
	}
	if !sameIDs(p.Redispatched(), st.Ran) {
		o.Differs = fmt.Sprintf("ran %s; the plan said %s", orNothing(describeTasks(st.Ran)), orNothing(describeTasks(p.Redispatched())))
	} else if !sameIDs(p.Reused(), st.Reused) {
		o.Differs = fmt.Sprintf("reused %s; the plan said %s", orNothing(describeTasks(st.Reused)), orNothing(describeTasks(p.Reused())))
	}
	return o
}

// sameIDs says a and b hold the same tasks, in any order.
func sameIDs(a, b []Task) bool {
	if len(a) != len(b) {
		return false
	}
	ids := map[string]int{}
	for _, t := range a {
		ids[t.ID]++
	}
	for _, t := range b {
		ids[t.ID]--
	}
	for _, n := range ids {
		if n != 0 {
			return false
		}
	}
	return true
}

func orNothing(s string) string {
	if s == "" {
		return "nothing"
	}
	return s
}

// String is the plan in one line, e.g. "@12: 3 pending task(s): 1 reused
// (writes stored), 2 to redispatch".
func (p ResumePlan) String() string {
	switch {
	case len(p.Tasks) == 0:
		return fmt.Sprintf("@%d: nothing pending to resume", p.Checkpoint)
	case p.Refused != "":
		return fmt.Sprintf("@%d: %d pending task(s); a resume is refused: %s", p.Checkpoint, len(p.Tasks), p.Refused)
	case p.replaced():
		return fmt.Sprintf("@%d: %d pending task(s), dropped: %s; %d to run instead (%s)", p.Checkpoint, len(p.Tasks), p.Recheck.Reason, len(p.Recheck.Next), describeTasks(p.Recheck.Next))
	}
	line := fmt.Sprintf("@%d: %d pending task(s): %d reused (writes stored), %d to redispatch", p.Checkpoint, len(p.Tasks), len(p.Reused()), len(p.Redispatched()))
	if p.Recheck != nil {
		line += "; " + p.Recheck.Reason
	}
	return line
}

// String is the outcome in one line.
func (o ResumeOutcome) String() string {
	if !o.Complete {
		line := fmt.Sprintf("resume from @%d: its first superstep did not run as planned", o.From)
		if o.Differs != "" {
			line += ": " + o.Differs
		}
		return line
	}
	calls := "model calls"
	if o.ModelCalls == 1 {
		calls = "model call"
	}
	line := fmt.Sprintf("resume from @%d: %d redispatched, %d reused, %d %s", o.From, len(o.Redispatched), len(o.Reused), o.ModelCalls, calls)
	if o.Differs != "" {
		line += "; not as planned: " + o.Differs
	}
	return line
}
