package otlphttp

import (
	"context"
	"errors"
	"fmt"
	"sync"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// MetricExporter sends metrics as an ExportMetricsServiceRequest, as
// otlpmetrichttp does (with its retries off).
type MetricExporter struct {
	mu          sync.Mutex
	c           *client // nil once shut down
	temporality sdkmetric.TemporalitySelector
	aggregation sdkmetric.AggregationSelector
}

var _ sdkmetric.Exporter = (*MetricExporter)(nil)

// NewMetricExporter is an exporter for cfg, or the error the official one
// gives on a configuration it cannot follow.
func NewMetricExporter(cfg Config) (*MetricExporter, error) {
	c, err := newClient(cfg, "metrics")
	if err != nil {
		return nil, err
	}
	e := &MetricExporter{c: c, temporality: cfg.Temporality, aggregation: cfg.Aggregation}
	if e.temporality == nil {
		e.temporality = sdkmetric.CumulativeTemporalitySelector
	}
	if e.aggregation == nil {
		e.aggregation = sdkmetric.DefaultAggregationSelector
	}
	return e, nil
}

// Temporality is what OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE
// asks for k (cumulative unless it says).
func (e *MetricExporter) Temporality(k sdkmetric.InstrumentKind) metricdata.Temporality {
	return e.temporality(k)
}

// Aggregation is what OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION
// asks for k (the SDK's default unless it says).
func (e *MetricExporter) Aggregation(k sdkmetric.InstrumentKind) sdkmetric.Aggregation {
	return e.aggregation(k)
}

// Export sends one collection.
func (e *MetricExporter) Export(ctx context.Context, rm *metricdata.ResourceMetrics) error {
	body, encErr := AppendMetrics(nil, rm)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.c == nil {
		if err := ctx.Err(); err != nil {
			return err
		}
		return ErrShutdown
	}
	answer, kind, err := e.c.post(ctx, body)
	if err == nil {
		err = partialSuccess(answer, kind, "metric data points", false)
	}
	switch {
	case err != nil && encErr != nil:
		return fmt.Errorf("failed to upload incomplete metrics (%w): %w", encErr, err)
	case err != nil:
		return fmt.Errorf("failed to upload metrics: %w", err)
	}
	return encErr
}

// ForceFlush has nothing buffered to send.
func (e *MetricExporter) ForceFlush(ctx context.Context) error { return ctx.Err() }

// Shutdown makes later exports fail.
func (e *MetricExporter) Shutdown(ctx context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.c == nil {
		if err := ctx.Err(); err != nil {
			return err
		}
		return ErrShutdown
	}
	e.c = nil
	return ctx.Err()
}

var errUnknownData = errors.New("unknown aggregation")

// AppendMetrics appends rm as an ExportMetricsServiceRequest to b; a
// metric of a kind OTLP has no message for is left out and named in the
// error.
func AppendMetrics(b []byte, rm *metricdata.ResourceMetrics) ([]byte, error) {
	w := wire{b: b}
	var errs []error
	at := w.open(1) // ResourceMetrics
	w.resource(1, rm.Resource)
	for _, sm := range rm.ScopeMetrics {
		sat := w.open(2) // ScopeMetrics
		w.scope(1, sm.Scope)
		for _, m := range sm.Metrics {
			if err := w.metric(2, m); err != nil {
				errs = append(errs, err)
			}
		}
		w.str(3, sm.Scope.SchemaURL)
		w.close(sat)
	}
	w.str(3, rm.Resource.SchemaURL())
	w.close(at)
	return w.b, errors.Join(errs...)
}

func (w *wire) metric(num int, m metricdata.Metrics) error {
	mark := len(w.b)
	at := w.open(num)
	w.str(1, m.Name)
	w.str(2, m.Description)
	w.str(3, m.Unit)
	var ok bool
	switch d := m.Data.(type) {
	case metricdata.Gauge[int64]:
		ok = gauge(w, d)
	case metricdata.Gauge[float64]:
		ok = gauge(w, d)
	case metricdata.Sum[int64]:
		ok = sum(w, d)
	case metricdata.Sum[float64]:
		ok = sum(w, d)
	case metricdata.Histogram[int64]:
		ok = histogram(w, d)
	case metricdata.Histogram[float64]:
		ok = histogram(w, d)
	case metricdata.ExponentialHistogram[int64]:
		ok = expHistogram(w, d)
	case metricdata.ExponentialHistogram[float64]:
		ok = expHistogram(w, d)
	case metricdata.Summary:
		ok = summary(w, d)
	}
	if !ok {
		w.b = w.b[:mark]
		return fmt.Errorf("invalid metric (name: %q, description: %q, unit: %q): %w: %T", m.Name, m.Description, m.Unit, errUnknownData, m.Data)
	}
	w.close(at)
	return nil
}

// temporality is OTLP's AggregationTemporality (false: neither).
func temporality(t metricdata.Temporality) (uint64, bool) {
	switch t {
	case metricdata.DeltaTemporality:
		return 1, true
	case metricdata.CumulativeTemporality:
		return 2, true
	}
	return 0, false
}

func gauge[N int64 | float64](w *wire, g metricdata.Gauge[N]) bool {
	at := w.open(5)
	numberPoints(w, g.DataPoints)
	w.close(at)
	return true
}

func sum[N int64 | float64](w *wire, s metricdata.Sum[N]) bool {
	t, ok := temporality(s.Temporality)
	if !ok {
		return false
	}
	at := w.open(7)
	numberPoints(w, s.DataPoints)
	w.uint(2, t)
	w.boolean(3, s.IsMonotonic)
	w.close(at)
	return true
}

func numberPoints[N int64 | float64](w *wire, pts []metricdata.DataPoint[N]) {
	for _, p := range pts {
		at := w.open(1)
		w.fixed64(2, unixNano(p.StartTime))
		w.fixed64(3, unixNano(p.Time))
		exemplars(w, 5, p.Exemplars)
		w.set(7, &p.Attributes)
		oneofValue(w, 4, 6, p.Value)
		w.close(at)
	}
}

func histogram[N int64 | float64](w *wire, h metricdata.Histogram[N]) bool {
	t, ok := temporality(h.Temporality)
	if !ok {
		return false
	}
	at := w.open(9)
	for _, p := range h.DataPoints {
		pat := w.open(1)
		w.fixed64(2, unixNano(p.StartTime))
		w.fixed64(3, unixNano(p.Time))
		w.fixed64(4, p.Count)
		w.doubleSet(5, float64(p.Sum))
		w.packedFixed64(6, p.BucketCounts)
		w.packedDouble(7, p.Bounds)
		exemplars(w, 8, p.Exemplars)
		w.set(9, &p.Attributes)
		if v, ok := p.Min.Value(); ok {
			w.doubleSet(11, float64(v))
		}
		if v, ok := p.Max.Value(); ok {
			w.doubleSet(12, float64(v))
		}
		w.close(pat)
	}
	w.uint(2, t)
	w.close(at)
	return true
}

func expHistogram[N int64 | float64](w *wire, h metricdata.ExponentialHistogram[N]) bool {
	t, ok := temporality(h.Temporality)
	if !ok {
		return false
	}
	at := w.open(10)
	for _, p := range h.DataPoints {
		pat := w.open(1)
		w.set(1, &p.Attributes)
		w.fixed64(2, unixNano(p.StartTime))
		w.fixed64(3, unixNano(p.Time))
		w.fixed64(4, p.Count)
		w.doubleSet(5, float64(p.Sum))
		w.sint32(6, p.Scale)
		w.fixed64(7, p.ZeroCount)
		for i, bk := range []metricdata.ExponentialBucket{p.PositiveBucket, p.NegativeBucket} {
			bat := w.open(8 + i)
			w.sint32(1, bk.Offset)
			w.packedVarint(2, bk.Counts)
			w.close(bat)
		}
		exemplars(w, 11, p.Exemplars)
		if v, ok := p.Min.Value(); ok {
			w.doubleSet(12, float64(v))
		}
		if v, ok := p.Max.Value(); ok {
			w.doubleSet(13, float64(v))
		}
		w.double(14, p.ZeroThreshold)
		w.close(pat)
	}
	w.uint(2, t)
	w.close(at)
	return true
}

func summary(w *wire, s metricdata.Summary) bool {
	at := w.open(11)
	for _, p := range s.DataPoints {
		pat := w.open(1)
		w.fixed64(2, unixNano(p.StartTime))
		w.fixed64(3, unixNano(p.Time))
		w.fixed64(4, p.Count)
		w.double(5, p.Sum)
		for _, q := range p.QuantileValues {
			qat := w.open(6)
			w.double(1, q.Quantile)
			w.double(2, q.Value)
			w.close(qat)
		}
		w.set(7, &p.Attributes)
		w.close(pat)
	}
	w.close(at)
	return true
}

func exemplars[N int64 | float64](w *wire, num int, es []metricdata.Exemplar[N]) {
	for _, e := range es {
		at := w.open(num)
		w.fixed64(2, unixNano(e.Time))
		w.bytes(4, e.SpanID)
		w.bytes(5, e.TraceID)
		w.keyValues(7, e.FilteredAttributes)
		oneofValue(w, 3, 6, e.Value)
		w.close(at)
	}
}

// oneofValue writes a point's or an exemplar's value: as_double or as_int,
// after the other fields, where proto.Marshal writes a oneof.
func oneofValue[N int64 | float64](w *wire, asDouble, asInt int, v N) {
	switch v := any(v).(type) {
	case float64:
		w.doubleSet(asDouble, v)
	case int64:
		w.fixed64Set(asInt, uint64(v))
	}
}
