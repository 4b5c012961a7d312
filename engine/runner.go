package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"time"

	"rewind/engine/chainformat"
	"rewind/engine/event"
	"rewind/engine/internal/costs"
	"rewind/engine/model"
	"rewind/engine/model/stream"
	"rewind/store"
)

// runner is one invocation holding the thread's writer lock.
type runner struct {
	e      *Engine
	thread string
	cfg    RunConfig
	// run is the invocation's run (runs.go): its first commit stores
	// the mark, and every event it emits names it.
	run    *RunMark
	lastID int64
	epoch  int64 // fencing token from the store
	// runStart is where the run began on its branch (NodeContext.RunStart).
	runStart int64
	// committed is the checkpoint this run stored last.
	committed int64
	res       Result
	// failed is set when a task failed the run (NodeContext.Fail).
	failed *RunFailedError
	// rerun are tasks whose stored writes a recheck refused (see
	// Recheck.Rerun), and carry the events to store with the next commit.
	rerun map[string]string
	carry []Event
	// budget is the turn's token budget (0: none) and used what the turn
	// has used so far.
	budget, used int
	// stored are the hashes of the messages this run's commits stored.
	stored map[string]bool
}

// event is an event of data's type, by node and task.
func (r *runner) event(node, task string, data event.Payload) Event {
	ev := Event{Thread: r.thread, Type: data.Type(), Node: node, Task: task, At: r.e.now().UTC(), Run: r.runID()}
	if b, err := json.Marshal(data); err == nil {
		ev.Data = b
	}
	return ev
}

func (r *runner) observe(ev Event) {
	if r.cfg.Observe != nil {
		r.cfg.Observe(ev)
	}
}

func (r *runner) hook(point HookPoint, info HookInfo) {
	if r.cfg.Hook != nil {
		info.Thread = r.thread
		r.cfg.Hook(point, info)
	}
}

// entry writes the input (or fork) checkpoint: the input applied through the
// reducers, and the graph's entry node as the one pending task.
func (r *runner) entry(ctx context.Context, parent Checkpoint, input []Write, source, evType string, md Metadata) (Checkpoint, error) {
	values, err := r.e.graph.apply(parent.Values, input)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("apply input to thread %q: %w", threadName(r.thread), err)
	}
	id := r.lastID + 1
	step := parent.Step + 1
	md.Writes = map[string][]string{"input": channelsOf(input)}
	cp := Checkpoint{Thread: r.thread, ID: id, ParentID: parent.ID, Step: step, Source: source, Values: values,
		Tasks: tasksFor(r.thread, id, step, []Target{Goto(r.e.graph.entry)}), Metadata: md}
	var data event.Payload = event.Input{Channels: channelsOf(input), Parent: parent.ID}
	if evType == EventFork {
		data = event.Fork{Channels: channelsOf(input), Parent: parent.ID}
	}
	events := []Event{r.event("", "", data)}
	interrupt := r.interruptBefore(cp.Tasks)
	if interrupt != nil {
		cp.Metadata.Interrupt = interrupt
		events = append(events, r.event(interrupt.Node, "", event.Interrupt(*interrupt)))
	}
	if err := r.commit(ctx, &cp, &parent, []WriteGroup{{Node: "input", Writes: input}}, 0, events); err != nil {
		return Checkpoint{}, err
	}
	if interrupt != nil {
		r.res.Interrupt = interrupt
	}
	r.runStart = cp.ID
	return cp, nil
}

// commit stores a checkpoint made from parent by groups, its events, its
// new messages and blobs, and (settles ≠ 0) the end of the task writes
// it folds in, in one transaction.
func (r *runner) commit(ctx context.Context, cp, parent *Checkpoint, groups []WriteGroup, settles int64, events []Event) error {
	if r.cfg.Observe != nil { // not stored: only an observer hears it
		events = append(events, r.event("", "", event.CheckpointSaved{
			ID: cp.ID, Parent: cp.ParentID, Step: cp.Step, Source: cp.Source, Pending: len(cp.Tasks),
			Nodes: cp.Metadata.Nodes, Next: describeTasks(cp.Tasks)}))
	}
	cp.Messages = cp.Values.Len(r.e.graph.schema.TranscriptOr("messages"))
	if r.run != nil && (r.committed == 0 || cp.ParentID != r.committed) {
		// The run's first checkpoint (or the first on another parent)
		// names it; the next ones are their parent's run.
		cp.Metadata.Run = new(*r.run)
	}
	if cp.Metadata.Status == "" {
		cp.Metadata.Status = r.e.graph.derivedStatus(*cp)
	}
	rows := make([]store.Event, 0, len(events))
	for i := range events {
		events[i].Checkpoint = cp.ID
		if !persisted(events[i].Type) {
			continue
		}
		payload, err := chainformat.EventPayload(events[i])
		if err != nil {
			return fmt.Errorf("encode event %s: %w", events[i].Type, err)
		}
		events[i].Seq = len(rows) + 1
		rows = append(rows, store.Event{ThreadID: r.thread, CheckpointID: cp.ID, Seq: events[i].Seq, Type: events[i].Type, Payload: payload})
	}
	// The listing counts them (a resume tells a lost row) and names the graph.
	cp.Metadata.Events, cp.Metadata.Graph = len(rows), r.e.graph.Name
	if cp.Source == SourceInput || cp.Source == SourceFork {
		// Its running totals: Costs reads them instead of every listing.
		// A trusted turn's engine knows them from its last commit.
		sums, ok := r.e.sums.Before(r.thread, r.epoch, r.lastID, cp.ParentID)
		if !ok {
			var err error
			if sums, err = costs.SumsBefore(ctx, costSource{r.e}, r.thread, cp.ParentID, cp.ID); err != nil {
				return fmt.Errorf("sum the costs before checkpoint %d of thread %q: %w", cp.ID, threadName(r.thread), err)
			}
		}
		cp.Metadata.Sums = sums
	}
	enc, err := r.e.graph.schema.Encode(cp, parent, groups, &r.e.memo, r.stored)
	if err != nil {
		return fmt.Errorf("encode checkpoint %d of thread %q: %w", cp.ID, threadName(r.thread), err)
	}
	cp.Metadata.Tokens = enc.Tokens // as the listing reads them
	row := enc.Row
	row.Epoch, row.Settles = r.epoch, settles
	// The engine's clock stamps the row, as the store keeps it (to the
	// microsecond): the cache knows this row by it (cache.go).
	row.CreatedAt = r.e.stamp()
	r.hook(HookBeforeCommit, HookInfo{Checkpoint: cp.ID})
	r.e.fenced.unsure(r.thread) // until the put says it is stored
	prev := r.lastID
	if err := r.e.store.PutCheckpoint(ctx, row, rows); err != nil {
		r.e.sums.Forget(r.thread) // it may be stored: the memo no longer knows
		if errors.Is(err, store.ErrFenced) {
			return fmt.Errorf("thread %q was taken over by another process: checkpoint %d of this run was refused and this run stops: %w", threadName(r.thread), cp.ID, err)
		}
		if errors.Is(err, store.ErrDiskFull) && r.committed != 0 {
			// What the run stored stands: once there is space, a resume
			// carries on from it.
			return Fixable(r.thread, r.committed, fmt.Errorf("save checkpoint %d of thread %q: %w, then a resume carries on from checkpoint %d", cp.ID, threadName(r.thread), err, r.committed), ResumeFix(r.thread))
		}
		return fmt.Errorf("save checkpoint %d of thread %q: %w", cp.ID, threadName(r.thread), err)
	}
	r.e.tellStored(row, rows)
	r.lastID, r.committed = cp.ID, cp.ID
	r.e.fenced.wrote(r.thread, r.epoch, cp.ID, r.cfg.Session)
	r.e.sums.Committed(r.thread, r.epoch, prev, *cp)
	if r.stored == nil {
		r.stored = map[string]bool{}
	}
	for _, m := range row.Messages {
		// Messages are deleted only with the thread, which takes the lock
		// or fences this run out: what it stored stays for its later rows.
		r.stored[m.Hash] = true
	}
	cp.CreatedAt = row.CreatedAt
	cp.SchemaVersion = r.e.graph.SchemaVersion // as a read of the row says it
	enc.Committed(cp)
	cp.Applied = groups
	r.e.cache.Put(*cp, row)
	// Task events were observed live as they happened; only the runtime's
	// own events are new to an observer here.
	for _, ev := range events {
		if ev.Task == "" || ev.Type == EventTaskReused {
			r.observe(ev)
		}
	}
	r.hook(HookAfterCommit, HookInfo{Checkpoint: cp.ID, Committed: cp})
	return nil
}

func (r *runner) interruptBefore(tasks []Task) *Interrupt {
	for _, t := range tasks {
		for _, n := range r.cfg.InterruptBefore {
			if t.Node == n {
				return &Interrupt{When: "before", Node: n}
			}
		}
	}
	return nil
}

func (r *runner) interruptAfter(ran []string) *Interrupt {
	for _, node := range ran {
		for _, n := range r.cfg.InterruptAfter {
			if node == n {
				return &Interrupt{When: "after", Node: n}
			}
		}
	}
	return nil
}

// drive runs supersteps from cp until no task is pending or an interrupt,
// or until the turn has used its token budget: that is checked between
// supersteps, so a superstep under way finishes and is stored.
func (r *runner) drive(ctx context.Context, cp Checkpoint) (Result, error) {
	r.budget, r.used = r.tokenBudget(), 0
	if r.budget > 0 {
		var err error
		if r.used, err = r.turnUsed(ctx, cp); err != nil {
			r.finish(cp)
			return r.res, err
		}
	}
	for steps := 0; len(cp.Tasks) > 0 && r.res.Interrupt == nil; steps++ {
		if steps >= r.cfg.maxSteps() {
			return r.res, Fixable(r.thread, cp.ID, fmt.Errorf("thread %q: stopped after %d supersteps without finishing (a loop in the graph?)", threadName(r.thread), steps), LogFix(r.thread))
		}
		if r.budget > 0 && r.used >= r.budget {
			r.finish(cp)
			return r.res, &BudgetError{Thread: r.thread, Checkpoint: cp.ID, Used: r.used, Budget: r.budget, Pending: cp.Tasks}
		}
		next, err := r.superstep(ctx, cp)
		var fe *failError
		if errors.As(err, &fe) {
			return r.fail(ctx, cp, err)
		}
		if err != nil {
			r.finish(cp)
			return r.res, err
		}
		r.used += usedBy(next)
		cp = next
		if r.failed != nil {
			r.finish(cp)
			r.res.Status = RunFailed
			return r.res, r.failed
		}
	}
	r.finish(cp)
	return r.res, nil
}

// fail records that a task's error ended the run (see Fail): a checkpoint
// after cp with the same values, no pending tasks and status failed.
func (r *runner) fail(ctx context.Context, cp Checkpoint, err error) (Result, error) {
	node, task := "", ""
	var te *taskError
	if errors.As(err, &te) {
		node, task = te.node, te.task
	}
	ended, cerr := r.e.end(ctx, r, cp, RunFailed, err.Error(), EventRunFailed, node, task)
	if cerr != nil {
		r.finish(cp)
		return r.res, errors.Join(err, cerr)
	}
	r.finish(ended)
	r.res.Status = RunFailed
	return r.res, &RunFailedError{Thread: r.thread, Checkpoint: ended.ID, Node: nodeOr(node, "a task"), Reason: err.Error(), Err: err}
}

func (r *runner) finish(cp Checkpoint) {
	r.res.Checkpoint = cp.ID
	r.res.Pending = cp.Tasks
	r.res.MessagesAfter = cp.Values.Len("messages")
	switch {
	case r.res.Interrupt != nil && r.res.Interrupt.When == "approval":
		r.res.Status = RunAwaitingApproval
	case len(cp.Tasks) > 0:
		r.res.Status = "interrupted"
	default:
		r.res.Status = "done"
	}
}

// superstep runs the pending tasks of cp (skipping those whose writes are
// stored), applies all writes in task order and commits the next checkpoint.
func (r *runner) superstep(ctx context.Context, cp Checkpoint) (Checkpoint, error) {
	records, todo, rerun, err := r.pendingTasks(ctx, cp)
	if err != nil {
		return Checkpoint{}, err
	}
	if r.cfg.Observe != nil {
		r.observe(r.event("", "", event.StepStarted{Checkpoint: cp.ID, Tasks: len(cp.Tasks), ToRun: len(todo)}))
	}
	errs := r.runTasks(ctx, cp, records, todo, rerun)
	var gate *ApprovalError
	var gateTask Task
	for i, err := range errs {
		if errors.As(err, &gate) {
			gateTask, errs[i] = cp.Tasks[i], nil
			break
		}
	}
	if err := r.tasksFailed(errs); err != nil {
		return Checkpoint{}, err
	}

	if gate != nil {
		// Nothing is committed: the finished tasks' writes are stored and the
		// gate task stays pending until someone answers.
		r.res.Interrupt = &Interrupt{When: "approval", Node: gateTask.Node, Operation: gate.Operation, Question: gate.Question}
		r.observe(r.event(gateTask.Node, gateTask.ID, event.Interrupt(*r.res.Interrupt)))
		return cp, nil
	}
	st, err := r.tally(cp, records, todo)
	if err != nil {
		return Checkpoint{}, err
	}
	next, interrupt, err := r.nextCheckpoint(cp, records, &st)
	if err != nil {
		return Checkpoint{}, err
	}
	if err := r.commit(ctx, &next, &cp, st.groups, cp.ID, st.events); err != nil {
		return Checkpoint{}, err
	}
	st.report.Checkpoint = next.ID
	if st.failed != nil {
		st.failed.Checkpoint = next.ID
		r.failed = st.failed
	}
	r.res.Steps = append(r.res.Steps, st.report)
	for _, b := range st.blocked {
		b.Checkpoint = next.ID
		r.res.Blocked = append(r.res.Blocked, b)
	}
	r.res.Interrupt = interrupt
	return next, nil
}

// pendingTasks reads the writes cp's tasks stored before (a resume's):
// records holds them by task, todo are the tasks to run, rerun the ones a
// recheck refused (run again whatever they stored).
func (r *runner) pendingTasks(ctx context.Context, cp Checkpoint) (records []TaskWrites, todo []int, rerun map[string]string, err error) {
	// A checkpoint this run just committed has no stored writes yet: only
	// its own tasks (under this writer's epoch) could have made them.
	var stored []TaskWrites
	if cp.ID != r.committed {
		if stored, err = r.e.PendingWrites(ctx, r.thread, cp.ID); err != nil {
			return nil, nil, nil, err
		}
	}
	done := map[string]TaskWrites{}
	for _, tw := range stored {
		done[tw.Task] = tw
	}
	records = make([]TaskWrites, len(cp.Tasks))
	rerun = r.rerun
	r.rerun = nil // only the superstep the resume starts from
	for i, t := range cp.Tasks {
		if tw, ok := done[t.ID]; ok && rerun[t.ID] == "" {
			records[i] = tw
			continue
		}
		todo = append(todo, i)
	}
	return records, todo, rerun, nil
}

// runTasks runs the tasks todo names, side by side, into records; errs
// are their errors, by task.
func (r *runner) runTasks(ctx context.Context, cp Checkpoint, records []TaskWrites, todo []int, rerun map[string]string) []error {
	errs := make([]error, len(cp.Tasks))
	// A task alone has its writes made durable with the checkpoint that
	// follows, in one transaction; tasks side by side store theirs as each
	// finishes, so a crash keeps the finished ones.
	storeEach := len(todo) > 1
	run := func(i int) {
		// A rerun task's stale writes are still stored under its key
		// (the commit settles them): its new ones go with the commit.
		if records[i], errs[i] = r.runTask(ctx, cp, cp.Tasks[i], storeEach && rerun[cp.Tasks[i].ID] == ""); errs[i] != nil {
			r.hook(HookTaskFailed, HookInfo{Checkpoint: cp.ID, Task: &cp.Tasks[i]})
		}
	}
	// The others start first; the first runs on this goroutine, so a
	// superstep of one task (most of a turn's) wakes no goroutine (a tenth of a turn).
	var wg sync.WaitGroup
	for _, i := range todo[min(1, len(todo)):] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run(i)
		}()
	}
	if len(todo) > 0 {
		run(todo[0])
	}
	wg.Wait()
	return errs
}

// stepTally is what a superstep's tasks did, gathered for the checkpoint
// it commits and the run's result.
type stepTally struct {
	writes  []Write
	groups  []WriteGroup
	ran     []string
	events  []Event
	blocked []Blocked
	failed  *RunFailedError
	report  StepReport
	md      Metadata
}

// tally gathers what cp's tasks did (todo ran here, the others' stored
// writes are reused), task by task.
func (r *runner) tally(cp Checkpoint, records []TaskWrites, todo []int) (stepTally, error) {
	st := stepTally{events: r.carry,
		report: StepReport{From: cp.ID, Step: cp.Step + 1, ModelCalls: map[string]int{}},
		md:     Metadata{Writes: map[string][]string{}, ModelCalls: map[string]int{}}}
	r.carry = nil
	ranHere := map[int]bool{}
	for _, i := range todo {
		ranHere[i] = true
	}
	for i, t := range cp.Tasks {
		rec := records[i]
		st.writes = append(st.writes, rec.Writes...)
		grp := WriteGroup{Task: t.ID, Node: t.Node, Writes: rec.Writes, DurationMs: rec.DurationMs}
		st.ran = append(st.ran, t.Node)
		st.md.Writes[t.Node] = mergeSorted(st.md.Writes[t.Node], channelsOf(rec.Writes))
		for role, n := range rec.ModelCalls {
			st.md.ModelCalls[role] += n
		}
		if rec.Usage != (model.Usage{}) {
			if st.md.Usage == nil {
				st.md.Usage = &model.Usage{}
			}
			st.md.Usage.Add(rec.Usage)
		}
		if err := r.taskEvents(&st, t, rec, &grp); err != nil {
			return stepTally{}, err
		}
		st.groups = append(st.groups, grp)
		if ranHere[i] {
			st.report.Ran = append(st.report.Ran, t)
			for role, n := range rec.ModelCalls {
				st.report.ModelCalls[role] += n
				r.res.ModelCalls[role] += n
			}
			r.res.Usage.Add(rec.Usage)
		} else {
			st.report.Reused = append(st.report.Reused, t)
			st.md.Reused = append(st.md.Reused, t.ID)
			st.events = append(st.events, r.event(t.Node, t.ID, event.TaskReused{From: cp.ID}))
		}
		if rec.DurationMs > st.md.DurationMs {
			st.md.DurationMs = rec.DurationMs
		}
	}
	st.md.Nodes = dedupe(st.ran)
	st.md.TaskCounts = map[string]int{}
	for _, n := range st.ran {
		st.md.TaskCounts[n]++
	}
	return st, nil
}

// taskEvents sorts task t's events: its model calls go with its writes
// (grp), the others that are stored with the checkpoint; a failed run and
// a blocked side effect are noted.
func (r *runner) taskEvents(st *stepTally, t Task, rec TaskWrites, grp *WriteGroup) error {
	for _, ev := range rec.Events {
		switch {
		case ev.Type == EventModelCalled:
			grp.Calls = append(grp.Calls, ev)
		case persisted(ev.Type):
			st.events = append(st.events, ev)
		}
		if ev.Type == EventRunFailed && st.failed == nil {
			d, err := event.Decode[event.RunFailed](ev.Type, ev.Data)
			if err != nil {
				return fmt.Errorf("task %s (%s): %w", t.ID, t.Node, err)
			}
			st.failed = &RunFailedError{Thread: r.thread, Node: t.Node, Reason: d.Reason, Fix: fixesOf(r.thread, d.Fixes)}
		}
		if ev.Type == EventBlocked {
			b, err := event.Decode[event.Blocked](ev.Type, ev.Data)
			if err != nil {
				return fmt.Errorf("task %s (%s): %w", t.ID, t.Node, err)
			}
			st.blocked = append(st.blocked, Blocked{Operation: b.Operation, Node: t.Node, Task: t.ID, Reason: b.Reason, Fix: fixesOf(r.thread, b.Fixes)})
		}
	}
	return nil
}

// nextCheckpoint is the checkpoint the superstep from cp makes: the
// writes applied, the tasks the edges lead to, and why the run stops
// there if it does (a failed task, an interrupt, the token budget).
func (r *runner) nextCheckpoint(cp Checkpoint, records []TaskWrites, st *stepTally) (Checkpoint, *Interrupt, error) {
	// apply folds the writes in order, so the first task's own (applied
	// when it finished) are a prefix already done.
	from, rest := cp.Values, st.writes
	if len(records) > 0 && records[0].applied != nil {
		from, rest = records[0].applied, st.writes[len(records[0].Writes):]
	}
	values, err := r.e.graph.apply(from, rest)
	if err != nil {
		return Checkpoint{}, nil, fmt.Errorf("thread %q, superstep from checkpoint %d: %w", threadName(r.thread), cp.ID, err)
	}
	targets, err := r.e.graph.next(st.ran, values)
	if err != nil {
		return Checkpoint{}, nil, fmt.Errorf("thread %q, superstep from checkpoint %d: %w", threadName(r.thread), cp.ID, err)
	}
	id := r.lastID + 1
	next := Checkpoint{Thread: r.thread, ID: id, ParentID: cp.ID, Step: cp.Step + 1, Source: SourceLoop, Values: values,
		Tasks: tasksFor(r.thread, id, cp.Step+1, targets), Metadata: st.md}
	if st.failed != nil {
		// A task failed the run: what would have run next never does.
		next.Metadata.Discarded, next.Tasks = next.Tasks, []Task{}
		next.Metadata.Status, next.Metadata.Reason, next.Metadata.Fixes = RunFailed, st.failed.Reason, storedFixes(actionsOf(st.failed.Fix))
	}
	var interrupt *Interrupt
	if len(next.Tasks) > 0 {
		if interrupt = r.interruptAfter(st.ran); interrupt == nil {
			interrupt = r.interruptBefore(next.Tasks)
		}
	}
	if interrupt != nil {
		next.Metadata.Interrupt = interrupt
		st.events = append(st.events, r.event(interrupt.Node, "", event.Interrupt(*interrupt)))
	}
	if used := r.used + usedBy(next); r.budget > 0 && used >= r.budget && interrupt == nil && st.failed == nil && len(next.Tasks) > 0 {
		// The run stops here (drive): the checkpoint says so, and why.
		next.Metadata.Status = RunPaused
		next.Metadata.Reason = fmt.Sprintf("the turn used %d tokens, at or over its token budget of %d", used, r.budget)
		st.events = append(st.events, r.event("", "", event.TokenBudget{Used: used, Budget: r.budget, Pending: describeTasks(next.Tasks)}))
	}
	return next, interrupt, nil
}

// tasksFailed is the one error of a superstep whose tasks failed, on one
// line. A writer taken over hears it once, not once per task (every task
// storing its writes after the take-over is refused for the same reason),
// and is not told to resume: the thread is the new writer's now.
func (r *runner) tasksFailed(errs []error) error {
	var failed oneLineErrors
	for _, err := range errs {
		if err != nil {
			failed = append(failed, err)
		}
	}
	if len(failed) == 0 {
		return nil
	}
	for _, err := range failed {
		var fe *failError
		if errors.As(err, &fe) {
			return err // the run ends here: no resume to suggest
		}
		if errors.Is(err, store.ErrFenced) {
			// Taken over or cancelled: resuming is the new writer's business.
			return Fixable(r.thread, 0, fmt.Errorf("thread %q was taken over or cancelled by another process, so this run's late result is refused and changes nothing: %w", threadName(r.thread), err), ShowFix(r.thread))
		}
	}
	var err error = failed
	if len(failed) == 1 {
		err = failed[0]
	}
	return Fixable(r.thread, 0, fmt.Errorf("%w; the finished tasks' writes are stored, so a resume runs only the rest", err), ResumeFix(r.thread))
}

// oneLineErrors is errors.Join on one line: an error is one line.
type oneLineErrors []error

func (es oneLineErrors) Error() string {
	msgs := make([]string, len(es))
	for i, err := range es {
		msgs[i] = err.Error()
	}
	return fmt.Sprintf("%d tasks failed: %s", len(es), strings.Join(msgs, "; "))
}

func (es oneLineErrors) Unwrap() []error { return es }

// runTask runs one task and, with store, stores its writes the moment it
// finishes.
func (r *runner) runTask(ctx context.Context, cp Checkpoint, t Task, store bool) (TaskWrites, error) {
	fn := r.e.graph.nodes[t.Node]
	if fn == nil {
		return TaskWrites{}, fmt.Errorf("checkpoint %d of thread %q has a task for node %q, which this graph does not have", cp.ID, threadName(r.thread), t.Node)
	}
	start := r.e.now()
	rec := TaskWrites{Task: t.ID, Node: t.Node}
	var mu sync.Mutex
	emit := func(data event.Payload) {
		if !persisted(data.Type()) && r.cfg.Observe == nil {
			return // only an observer would hear it
		}
		ev := r.event(t.Node, t.ID, data)
		if persisted(ev.Type) {
			mu.Lock()
			rec.Events = append(rec.Events, ev)
			mu.Unlock()
		}
		r.observe(ev)
	}
	counted := &countingModel{inner: r.e.model, now: r.e.now, calls: map[string]int{}, emit: emit, hook: func(point HookPoint, role string) {
		r.hook(point, HookInfo{Checkpoint: cp.ID, Task: &t, Role: role})
	}}
	emit(event.NodeStarted{Args: t.Args})
	nc := &NodeContext{Thread: r.thread, Task: t, Checkpoint: cp.ID, RunStart: r.runStart, Epoch: r.epoch, Values: maps.Clone(cp.Values), Model: counted, base: r.e.model, emit: emit,
		point: func(name HookPoint) { r.hook(name, HookInfo{Checkpoint: cp.ID, Task: &t}) }}
	writes, err := fn(stream.WithTask(ctx, t.ID), nc)
	var gate *ApprovalError
	if errors.As(err, &gate) {
		return TaskWrites{}, gate
	}
	if err != nil {
		return TaskWrites{}, &taskError{node: t.Node, task: t.ID, err: err}
	}
	// Validate now, so a bad write fails the task rather than the superstep.
	// The first task's result is where the superstep's fold starts.
	applied, err := r.e.graph.apply(cp.Values, writes)
	if err != nil {
		return TaskWrites{}, fmt.Errorf("node %s (task %s) wrote badly: %w", t.Node, t.ID, err)
	}
	rec.Writes, rec.applied = writes, applied
	rec.ModelCalls, rec.Usage = counted.snapshot()
	rec.DurationMs = r.e.now().Sub(start).Milliseconds()
	emit(event.NodeFinished{DurationMs: rec.DurationMs})
	if store {
		if err := r.storeWrites(ctx, cp.ID, rec); err != nil {
			return TaskWrites{}, err
		}
	}
	r.hook(HookTaskFinished, HookInfo{Checkpoint: cp.ID, Task: &t})
	return rec, nil
}

func (r *runner) storeWrites(ctx context.Context, checkpoint int64, rec TaskWrites) error {
	doc, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("encode writes of task %s: %w", rec.Task, err)
	}
	w := store.TaskWrites{ThreadID: r.thread, CheckpointID: checkpoint, TaskID: rec.Task, Writes: doc, Epoch: r.epoch}
	if err := r.e.store.PutWrites(ctx, w); err != nil {
		return fmt.Errorf("store writes of task %s (%s): %w", rec.Task, rec.Node, err)
	}
	if r.e.stored != nil {
		r.e.stored.WritesStored(w)
	}
	return nil
}

// countingModel counts one task's model calls and emits model.called.
type countingModel struct {
	inner model.Model
	now   func() time.Time // the engine's clock
	emit  func(event.Payload)
	hook  func(point HookPoint, role string)
	mu    sync.Mutex
	calls map[string]int
	usage model.Usage
}

func (c *countingModel) Complete(ctx context.Context, req model.Request) (model.Response, error) {
	c.hook(HookBeforeModelCall, req.Role)
	start := c.now()
	resp, err := c.inner.Complete(ctx, req)
	c.mu.Lock()
	c.calls[req.Role]++
	c.usage.Add(resp.Usage)
	c.mu.Unlock()
	data := event.ModelCalled{Role: req.Role, PromptTokens: resp.Usage.PromptTokens, CompletionTokens: resp.Usage.CompletionTokens, DurationMs: c.now().Sub(start).Milliseconds(),
		JSONMode: resp.JSONMode}
	if err != nil {
		data.Error = err.Error()
	}
	// The request is kept by its hash: the graph builds it again from the
	// checkpoint the task ran from (what the model saw), and the hash says
	// whether that is what was sent.
	data.Request = req.Hash()[:RequestHashLen]
	if req.KeepAnswer && err == nil {
		data.Answer = resp.Text
	}
	c.emit(data)
	if err == nil {
		c.hook(HookAfterModelCall, req.Role)
	}
	return resp, err
}

// ContextWindow is the inner model's (model.Windowed): a node measures
// what it sends against it.
func (c *countingModel) ContextWindow(role string) int { return model.WindowOf(c.inner, role) }

func (c *countingModel) snapshot() (map[string]int, model.Usage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.calls))
	for k, v := range c.calls {
		out[k] = v
	}
	return out, c.usage
}

func dedupe(xs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

func mergeSorted(a, b []string) []string {
	return channelsOf(append(toWrites(a), toWrites(b)...))
}

func toWrites(chs []string) []Write {
	out := make([]Write, len(chs))
	for i, c := range chs {
		out[i] = Write{Channel: c}
	}
	return out
}

// taskError is a node's error, naming the task.
type taskError struct {
	node, task string
	err        error
}

func (e *taskError) Error() string {
	return fmt.Sprintf("node %s (task %s) failed: %v", e.node, e.task, e.err)
}

func (e *taskError) Unwrap() error { return e.err }

// usedBy is the tokens the superstep that made cp used.
func usedBy(cp Checkpoint) int {
	if u := cp.Metadata.Usage; u != nil {
		return u.PromptTokens + u.CompletionTokens
	}
	return 0
}
