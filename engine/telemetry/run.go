package telemetry

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"rewind/engine"
	"rewind/engine/event"
	"rewind/engine/ticket"
	"rewind/store"
)

// Span and attribute names.
const (
	AttrThread     = "rewind.thread"
	AttrOp         = "rewind.op"
	AttrRunID      = "rewind.run_id"
	AttrTenant     = "rewind.tenant"
	AttrCheckpoint = "rewind.checkpoint"
	AttrStatus     = "rewind.status"
	AttrNode       = "rewind.node"
	AttrTask       = "rewind.task"
	AttrRole       = "rewind.role"
	AttrTool       = "rewind.tool"
	AttrConflict   = "rewind.conflict"
	AttrTokenType  = "rewind.token.type"
)

// RunInfo names one invocation.
type RunInfo struct {
	Op     string // run, resume, fork, replay, approve, reject
	Thread string
	// RunID and Tenant are attributes of every span of the run when set.
	// RunID may be left empty: the engine picks a run's id as it starts,
	// and the first event that carries it (Event.Run) sets it then.
	// Nothing sets Tenant yet (issue 36 item 2).
	RunID, Tenant string
}

// Run is one invocation being traced. A nil *Run does nothing.
type Run struct {
	t     *Telemetry
	e     *engine.Engine
	info  RunInfo
	attrs []attribute.KeyValue // thread, checkpoint-free: on every span
	op    metric.MeasurementOption
	epoch int64 // the thread's writer epoch when the run began

	mu    sync.Mutex
	ctx   context.Context // the run span's
	span  trace.Span
	step  trace.Span
	sctx  context.Context // the open superstep's, else the run's
	tasks map[string]taskSpan
}

type taskSpan struct {
	ctx  context.Context
	span trace.Span
}

// Start opens the run's span and hooks cfg.Observe (keeping the one it
// had) so the run's events become its spans and counters. On a nil
// Telemetry it changes nothing and returns nil.
func (t *Telemetry) Start(ctx context.Context, e *engine.Engine, info RunInfo, cfg *engine.RunConfig) *Run {
	if t == nil {
		return nil
	}
	r := &Run{t: t, e: e, info: info, tasks: map[string]taskSpan{}}
	r.attrs = []attribute.KeyValue{attribute.String(AttrThread, info.Thread), attribute.String(AttrOp, info.Op)}
	if info.RunID != "" {
		r.attrs = append(r.attrs, attribute.String(AttrRunID, info.RunID))
	}
	if info.Tenant != "" {
		r.attrs = append(r.attrs, attribute.String(AttrTenant, info.Tenant))
	}
	r.op = metric.WithAttributes(attribute.String(AttrOp, info.Op))
	if e != nil {
		r.epoch, _ = e.Store().Epoch(ctx, info.Thread) // unread: no fence counted
	}
	r.ctx, r.span = t.tracer.Start(ctx, "rewind "+info.Op, trace.WithAttributes(r.attrs...))
	r.sctx = r.ctx
	prev := cfg.Observe
	cfg.Observe = func(ev engine.Event) {
		r.observe(ev)
		if prev != nil {
			prev(ev)
		}
	}
	return r
}

// learnRunID names the run on its spans from the first event only this
// run emits (a reused task's events keep the run that ran the task).
func (r *Run) learnRunID(ev engine.Event) {
	switch {
	case r.info.RunID != "" || ev.Run == "":
		return
	case ev.Type != event.TypeStepStarted && ev.Type != event.TypeNodeStarted && ev.Type != event.TypeCheckpointSaved:
		return
	}
	r.info.RunID = ev.Run
	id := attribute.String(AttrRunID, ev.Run)
	r.attrs = append(r.attrs, id)
	r.span.SetAttributes(id)
	if r.step != nil {
		r.step.SetAttributes(id)
	}
}

// observe turns one event into spans and counts. Parallel tasks call it
// at once.
func (r *Run) observe(ev engine.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	r.learnRunID(ev)
	switch ev.Type {
	case event.TypeStepStarted:
		r.endStep(now, 0)
		d, _ := event.Decode[event.StepStarted](ev.Type, ev.Data)
		r.sctx, r.step = r.t.tracer.Start(r.ctx, "superstep", trace.WithTimestamp(now), trace.WithAttributes(append(r.attrs,
			attribute.Int64(AttrCheckpoint, ev.Checkpoint), attribute.Int("rewind.tasks", d.Tasks), attribute.Int("rewind.tasks.to_run", d.ToRun))...))
	case event.TypeNodeStarted:
		ctx, span := r.t.tracer.Start(r.sctx, "task "+ev.Node, trace.WithTimestamp(now), trace.WithAttributes(append(r.attrs,
			attribute.Int64(AttrCheckpoint, ev.Checkpoint), attribute.String(AttrNode, ev.Node), attribute.String(AttrTask, ev.Task))...))
		r.tasks[ev.Task] = taskSpan{ctx, span}
	case event.TypeNodeFinished:
		if ts, ok := r.tasks[ev.Task]; ok {
			ts.span.End(trace.WithTimestamp(now))
			delete(r.tasks, ev.Task)
		}
	case event.TypeTaskReused:
		_, span := r.t.tracer.Start(r.sctx, "task "+ev.Node, trace.WithTimestamp(now), trace.WithAttributes(append(r.attrs,
			attribute.Int64(AttrCheckpoint, ev.Checkpoint), attribute.String(AttrNode, ev.Node), attribute.String(AttrTask, ev.Task),
			attribute.Bool("rewind.task.reused", true))...))
		span.End(trace.WithTimestamp(now))
	case event.TypeCheckpointSaved:
		r.endStep(now, ev.Checkpoint)
	case event.TypeModelCalled:
		r.modelCalled(ev, now)
	case event.TypeToolCalled, event.TypeToolError, event.TypeToolRefused:
		r.toolCalled(ev, now)
	case event.TypeBlocked:
		r.t.m.blocked.Add(context.Background(), 1, r.op)
		r.taskEvent(ev, "side effect blocked")
	case event.TypeCompactionRejected:
		r.t.m.rejected.Add(context.Background(), 1, r.op)
		r.taskEvent(ev, "summary rejected")
	case event.TypeRechecked:
		r.t.m.conflicts.Add(context.Background(), 1, metric.WithAttributes(attribute.String(AttrOp, r.info.Op), attribute.String(AttrConflict, "rechecked")))
		r.span.AddEvent("resume rechecked", trace.WithTimestamp(now))
	}
}

// endStep ends the open superstep, at the checkpoint it saved (0: none).
func (r *Run) endStep(now time.Time, saved int64) {
	if r.step == nil {
		return
	}
	if saved != 0 {
		r.step.SetAttributes(attribute.Int64("rewind.checkpoint.saved", saved))
	}
	r.step.End(trace.WithTimestamp(now))
	r.step, r.sctx = nil, r.ctx
}

// parent is the span of ev's task, else the open superstep's or the run's.
func (r *Run) parent(ev engine.Event) context.Context {
	if ts, ok := r.tasks[ev.Task]; ok {
		return ts.ctx
	}
	return r.sctx
}

func (r *Run) taskEvent(ev engine.Event, name string) {
	trace.SpanFromContext(r.parent(ev)).AddEvent(name, trace.WithAttributes(attribute.String("rewind.event", string(ev.Data))))
}

func (r *Run) modelCalled(ev engine.Event, now time.Time) {
	d, err := event.Decode[event.ModelCalled](ev.Type, ev.Data)
	if err != nil {
		return
	}
	role := metric.WithAttributes(attribute.String(AttrRole, d.Role))
	ctx := context.Background()
	r.t.m.calls.Add(ctx, 1, role)
	r.t.m.latency.Record(ctx, float64(d.DurationMs)/1000, role)
	r.t.m.tokens.Add(ctx, int64(d.PromptTokens), metric.WithAttributes(attribute.String(AttrRole, d.Role), attribute.String(AttrTokenType, "input")))
	r.t.m.tokens.Add(ctx, int64(d.CompletionTokens), metric.WithAttributes(attribute.String(AttrRole, d.Role), attribute.String(AttrTokenType, "output")))
	began := now.Add(-time.Duration(d.DurationMs) * time.Millisecond)
	_, span := r.t.tracer.Start(r.parent(ev), "model "+d.Role, trace.WithTimestamp(began), trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(append(r.attrs, attribute.Int64(AttrCheckpoint, ev.Checkpoint), attribute.String(AttrTask, ev.Task),
			attribute.String(AttrRole, d.Role), attribute.Int("gen_ai.usage.input_tokens", d.PromptTokens),
			attribute.Int("gen_ai.usage.output_tokens", d.CompletionTokens))...))
	if d.Error != "" {
		r.t.m.modelErrors.Add(ctx, 1, role)
		span.SetStatus(codes.Error, d.Error)
	}
	span.End(trace.WithTimestamp(now))
}

func (r *Run) toolCalled(ev engine.Event, now time.Time) {
	var name, fail string
	var ms int64
	switch ev.Type {
	case event.TypeToolCalled:
		d, err := event.Decode[event.ToolCalled](ev.Type, ev.Data)
		if err != nil {
			return
		}
		name, ms = d.Tool, d.DurationMs
	case event.TypeToolError:
		d, err := event.Decode[event.ToolError](ev.Type, ev.Data)
		if err != nil || d.Tool == nil {
			return // an empty answer: no tool was called
		}
		name, fail = *d.Tool, d.Error
	case event.TypeToolRefused:
		d, err := event.Decode[event.ToolRefused](ev.Type, ev.Data)
		if err != nil {
			return
		}
		name, fail = d.Tool, "refused: "+d.Why
	}
	_, span := r.t.tracer.Start(r.parent(ev), "tool "+name, trace.WithTimestamp(now.Add(-time.Duration(ms)*time.Millisecond)),
		trace.WithAttributes(append(r.attrs, attribute.Int64(AttrCheckpoint, ev.Checkpoint), attribute.String(AttrTask, ev.Task),
			attribute.String(AttrTool, name))...))
	if fail != "" {
		span.SetStatus(codes.Error, fail)
	}
	span.End(trace.WithTimestamp(now))
}

// End closes the run's spans and counts its outcome: err is what the
// command reports (a blocked side effect included).
func (r *Run) End(ctx context.Context, res engine.Result, err error) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	for id, ts := range r.tasks { // a task the run did not see finish
		ts.span.SetStatus(codes.Error, "did not finish")
		ts.span.End(trace.WithTimestamp(now))
		delete(r.tasks, id)
	}
	r.endStep(now, 0)
	status, conflict := Outcome(res, err)
	m := r.t.m
	m.runs.Add(ctx, 1, metric.WithAttributes(attribute.String(AttrOp, r.info.Op), attribute.String(AttrStatus, status)))
	if conflict != "" {
		m.conflicts.Add(ctx, 1, metric.WithAttributes(attribute.String(AttrOp, r.info.Op), attribute.String(AttrConflict, conflict)))
	}
	if errors.Is(err, store.ErrFenced) {
		m.refused.Add(ctx, 1, r.op)
	}
	if r.e != nil {
		if after, eerr := r.e.Store().Epoch(ctx, r.info.Thread); eerr == nil && after != r.epoch && after != 0 {
			m.fences.Add(ctx, 1, r.op)
		}
	}
	r.span.SetAttributes(attribute.String(AttrStatus, status), attribute.Int64(AttrCheckpoint, res.Checkpoint),
		attribute.Int64("rewind.checkpoint.start", res.Start))
	if err != nil {
		r.span.RecordError(err)
		r.span.SetStatus(codes.Error, err.Error())
	}
	r.span.End(trace.WithTimestamp(now))
}

// Outcome is a run's status as the runs counter names it, and the kind
// of conflict that refused it ("" when none).
func Outcome(res engine.Result, err error) (status, conflict string) {
	var blocked *engine.BlockedError
	switch {
	case err == nil:
		return res.Status, ""
	case errors.As(err, &blocked):
		return "blocked", ""
	case errors.Is(err, store.ErrFenced):
		return "fenced", ""
	case errors.Is(err, store.ErrLocked):
		return "refused", "locked"
	case errors.Is(err, store.ErrStale), errors.Is(err, store.ErrConflict):
		return "refused", "stale"
	case errors.Is(err, ticket.ErrAnswerStale):
		return "refused", "answer-stale"
	case errors.Is(err, engine.ErrRunCancelled):
		return engine.RunCancelled, ""
	case errors.Is(err, context.Canceled):
		return "stopped", "" // Ctrl-C, SIGTERM
	}
	return engine.RunFailed, ""
}
