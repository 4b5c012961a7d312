package telemetry

import (
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// Metric names: `rewind stats` prints the same figures from the store
// under these names (what the store keeps of them: see README, Signals).
const (
	MetricRuns           = "rewind.runs"
	MetricFences         = "rewind.fences"
	MetricConflicts      = "rewind.conflicts"
	MetricWritesRefused  = "rewind.writes.refused"
	MetricBlocked        = "rewind.side_effects.blocked"
	MetricCompactionsRej = "rewind.compactions.rejected"
	MetricModelCalls     = "rewind.model.calls"
	MetricModelErrors    = "rewind.model.errors"
	MetricModelDuration  = "rewind.model.duration"
	MetricModelTokens    = "rewind.model.tokens"
)

var (
	noopTracer = tracenoop.NewTracerProvider()
	noopMeter  = metricnoop.NewMeterProvider()
)

type instruments struct {
	runs, fences, conflicts, refused, blocked, rejected metric.Int64Counter
	calls, modelErrors, tokens                          metric.Int64Counter
	latency                                             metric.Float64Histogram
}

func newInstruments(m metric.Meter) instruments {
	// A meter's constructors fail only on a bad name; ours are constants,
	// and each returns a working no-op instrument beside its error.
	counter := func(name, unit, desc string) metric.Int64Counter {
		c, _ := m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		return c
	}
	latency, _ := m.Float64Histogram(MetricModelDuration, metric.WithUnit("s"),
		metric.WithDescription("how long a model call took, by role"),
		metric.WithExplicitBucketBoundaries(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120))
	return instruments{
		runs:        counter(MetricRuns, "{run}", "invocations that ran the graph (run, resume, fork, replay, approve, reject), by op and outcome"),
		fences:      counter(MetricFences, "{fence}", "times a run fenced its thread: every writer before it is refused from then on"),
		conflicts:   counter(MetricConflicts, "{conflict}", "runs refused because another writer held or changed the thread, and resumes that found a record changed under them"),
		refused:     counter(MetricWritesRefused, "{write}", "late writes refused because a newer writer fenced the thread (a take-over or a cancel)"),
		blocked:     counter(MetricBlocked, "{operation}", "side effects a node refused to perform (a grant expired, say)"),
		rejected:    counter(MetricCompactionsRej, "{summary}", "candidate summaries that failed the compaction check"),
		calls:       counter(MetricModelCalls, "{call}", "model calls, by role"),
		modelErrors: counter(MetricModelErrors, "{call}", "model calls that failed, by role"),
		tokens:      counter(MetricModelTokens, "{token}", "tokens of the model calls, by role and type (input, output)"),
		latency:     latency,
	}
}
