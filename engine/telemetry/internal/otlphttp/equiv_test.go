package otlphttp_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"rewind/engine/telemetry/otlptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/exemplar"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"rewind/engine/telemetry/internal/otlphttp"
)

// The official exporters log what they ignore; this test names it.
func init() { otel.SetLogger(logr.Discard()) }

func setEnv(t *testing.T, kv map[string]string) { otlptest.Setenv(t, kv) }

// request is what a collector was sent.
type request struct {
	method, path string
	header       http.Header
	body         []byte // gunzipped
}

// recorder is a collector on loopback that keeps every request and
// answers with answer (200 and nothing when nil).
type recorder struct {
	srv    *httptest.Server
	mu     sync.Mutex
	got    []request
	answer func(w http.ResponseWriter)
}

func newRecorder(t *testing.T, answer func(w http.ResponseWriter)) *recorder {
	r := &recorder{answer: answer}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *recorder) serve(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	if err == nil && req.Header.Get("Content-Encoding") == "gzip" {
		var zr *gzip.Reader
		if zr, err = gzip.NewReader(bytes.NewReader(body)); err == nil {
			body, err = io.ReadAll(zr)
		}
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	r.got = append(r.got, request{req.Method, req.URL.Path, req.Header.Clone(), body})
	r.mu.Unlock()
	if r.answer != nil {
		r.answer(w)
	}
}

// take is the requests since the last take.
func (r *recorder) take() []request {
	r.mu.Lock()
	defer r.mu.Unlock()
	got := r.got
	r.got = nil
	return got
}

// spans are ended spans with every field OTLP carries: a parent, a remote
// parent, events, links, statuses, kinds, trace state, every attribute
// type, dropped counts, two scopes (one with version, schema and
// attributes) and a resource with a schema URL.
func spans(t *testing.T) []sdktrace.ReadOnlySpan {
	rec := tracetest.NewSpanRecorder()
	res := resource.NewWithAttributes("https://opentelemetry.io/schemas/1.26.0",
		attribute.String("service.name", "rewind"), attribute.String("service.version", "test"))
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec), sdktrace.WithResource(res),
		sdktrace.WithRawSpanLimits(sdktrace.SpanLimits{AttributeValueLengthLimit: -1, AttributeCountLimit: 19, EventCountLimit: 2,
			LinkCountLimit: 1, AttributePerEventCountLimit: 1, AttributePerLinkCountLimit: 1}))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	tr := tp.Tracer("rewind")
	other := tp.Tracer("other", trace.WithInstrumentationVersion("1.2.3"), trace.WithSchemaURL("https://example.com/schema"),
		trace.WithInstrumentationAttributes(attribute.String("scope.attr", "x"), attribute.Int("scope.n", 7)))

	ts, err := trace.ParseTraceState("vendor=value,other=thing")
	if err != nil {
		t.Fatal(err)
	}
	remote := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, SpanID: trace.SpanID{9, 8, 7, 6, 5, 4, 3, 2},
		TraceFlags: trace.FlagsSampled, TraceState: ts, Remote: true})
	linked := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{0: 0xab, 15: 1}, SpanID: trace.SpanID{0xcd, 7: 2}, TraceState: ts})
	t0 := time.Unix(1_700_000_000, 123_456_789)

	every := []attribute.KeyValue{
		attribute.String("s", "text"), attribute.String("empty", ""), attribute.Bool("t", true), attribute.Bool("f", false),
		attribute.Int64("i", -42), attribute.Int64("zero", 0), attribute.Int("big", math.MaxInt64),
		attribute.Float64("d", 2.5), attribute.Float64("negzero", math.Copysign(0, -1)), attribute.Float64("nan", math.NaN()),
		attribute.BoolSlice("bs", []bool{true, false}), attribute.Int64Slice("is", []int64{1, -1, 0}),
		attribute.Float64Slice("ds", []float64{0.5, 0}), attribute.StringSlice("ss", []string{"a", "", "c"}),
		attribute.StringSlice("none", nil), attribute.ByteSlice("bytes", []byte{0, 1, 2}),
		attribute.Slice("mixed", attribute.StringValue("x"), attribute.Int64Value(3), attribute.SliceValue(attribute.BoolValue(true))),
		attribute.Map("map", attribute.String("k", "v"), attribute.Map("inner", attribute.Float64("f", 1))),
		attribute.KeyValue{Key: "nothing"}, attribute.String("dropped", "over the limit"),
	}
	ctx, root := tr.Start(trace.ContextWithRemoteSpanContext(context.Background(), remote), "rewind run",
		trace.WithTimestamp(t0), trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(every...),
		trace.WithLinks(trace.Link{SpanContext: linked, Attributes: []attribute.KeyValue{attribute.String("why", "fork"), attribute.Int("n", 2)}},
			trace.Link{SpanContext: remote}))
	root.AddEvent("resume rechecked", trace.WithTimestamp(t0.Add(time.Millisecond)), trace.WithAttributes(attribute.String("a", "1"), attribute.String("b", "2")))
	root.AddEvent("second", trace.WithTimestamp(t0.Add(2*time.Millisecond)))
	root.AddEvent("third")
	root.RecordError(io.ErrUnexpectedEOF, trace.WithTimestamp(t0.Add(3*time.Millisecond)))

	_, model := tr.Start(ctx, "model planner", trace.WithTimestamp(t0.Add(time.Millisecond)), trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.Int("gen_ai.usage.input_tokens", 12)))
	model.SetStatus(codes.Error, "the model said no")
	model.End(trace.WithTimestamp(t0.Add(5 * time.Millisecond)))
	_, ok := tr.Start(ctx, "task ok", trace.WithSpanKind(trace.SpanKindInternal))
	ok.SetStatus(codes.Ok, "ignored: Ok has no description")
	ok.End()
	for _, k := range []trace.SpanKind{trace.SpanKindProducer, trace.SpanKindConsumer, trace.SpanKindUnspecified} {
		_, s := other.Start(ctx, "kind "+k.String(), trace.WithSpanKind(k))
		s.End()
	}
	_, fresh := tr.Start(context.Background(), "", trace.WithTimestamp(time.Unix(0, 0)))
	fresh.End(trace.WithTimestamp(time.Unix(0, 0)))
	root.SetStatus(codes.Error, "did not finish")
	root.End(trace.WithTimestamp(t0.Add(10 * time.Millisecond)))
	return rec.Ended()
}

// collect is metrics of every kind rewind exports and OTLP carries, as a
// reader with temporality tmp collects them.
func collect(t *testing.T, tmp sdkmetric.TemporalitySelector) *metricdata.ResourceMetrics {
	reader := sdkmetric.NewManualReader(sdkmetric.WithTemporalitySelector(tmp))
	res := resource.NewWithAttributes("https://opentelemetry.io/schemas/1.26.0", attribute.String("service.name", "rewind"))
	tp := sdktrace.NewTracerProvider()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader), sdkmetric.WithResource(res),
		sdkmetric.WithExemplarFilter(exemplar.AlwaysOnFilter),
		sdkmetric.WithView(sdkmetric.NewView(sdkmetric.Instrument{Name: "exp.*"},
			sdkmetric.Stream{Aggregation: sdkmetric.AggregationBase2ExponentialHistogram{MaxSize: 160, MaxScale: 20}})))
	ctx := context.Background()
	ctx, span := tp.Tracer("t").Start(ctx, "sampled")
	defer span.End()
	m := mp.Meter("rewind", metric.WithInstrumentationVersion("v1"), metric.WithSchemaURL("https://example.com/s"),
		metric.WithInstrumentationAttributes(attribute.Bool("scope", true)))
	runs, _ := m.Int64Counter("rewind.runs", metric.WithUnit("{run}"), metric.WithDescription("runs"))
	runs.Add(ctx, 1, metric.WithAttributes(attribute.String("rewind.op", "run"), attribute.String("rewind.status", "done")))
	runs.Add(ctx, 2, metric.WithAttributes(attribute.String("rewind.op", "resume"), attribute.String("rewind.status", "failed")))
	runs.Add(ctx, 0)
	lat, _ := m.Float64Histogram("rewind.model.duration", metric.WithUnit("s"), metric.WithDescription("latency"),
		metric.WithExplicitBucketBoundaries(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120))
	for _, v := range []float64{0.01, 0.3, 0.3, 7, 200} {
		lat.Record(ctx, v, metric.WithAttributes(attribute.String("rewind.role", "planner")))
	}
	lat.Record(ctx, 0, metric.WithAttributes(attribute.String("rewind.role", "critic")))
	ih, _ := m.Int64Histogram("int.histogram")
	ih.Record(ctx, 3)
	g, _ := m.Int64Gauge("int.gauge")
	g.Record(ctx, -5, metric.WithAttributes(attribute.Int("n", 1)))
	fg, _ := m.Float64Gauge("float.gauge")
	fg.Record(ctx, math.Copysign(0, -1))
	ud, _ := m.Float64UpDownCounter("float.updown")
	ud.Add(ctx, -1.5)
	exp, _ := m.Float64Histogram("exp.latency")
	for _, v := range []float64{0, 0.001, 1, 3, 1000, -2} {
		exp.Record(ctx, v)
	}
	_, _ = mp.Meter("empty").Int64Counter("never.added")
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	// The SDK makes no summaries; a producer may.
	rm.ScopeMetrics = append(rm.ScopeMetrics, metricdata.ScopeMetrics{Metrics: []metricdata.Metrics{{Name: "summary",
		Data: metricdata.Summary{DataPoints: []metricdata.SummaryDataPoint{{StartTime: time.Unix(1, 0), Time: time.Unix(2, 0), Count: 3, Sum: 4.5,
			QuantileValues: []metricdata.QuantileValue{{Quantile: 0, Value: 1}, {Quantile: 0.5, Value: 1.5}, {Quantile: 0.9, Value: math.Copysign(0, -1)}, {Quantile: 1, Value: 2}}}}}}}})
	return &rm
}

// official and ours are the two exporters on the same environment.
func officialTraces(t *testing.T) sdktrace.SpanExporter {
	t.Helper()
	exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}))
	if err != nil {
		t.Fatal(err)
	}
	return exp
}

func ourTraces(t *testing.T) sdktrace.SpanExporter {
	t.Helper()
	cfg, problems := otlphttp.FromEnv("TRACES", os.Getenv, os.ReadFile)
	if len(problems) > 0 {
		t.Logf("problems: %v", problems)
	}
	exp, err := otlphttp.NewTraceExporter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return exp
}

func officialMetrics(t *testing.T) sdkmetric.Exporter {
	t.Helper()
	exp, err := otlpmetrichttp.New(context.Background(), otlpmetrichttp.WithRetry(otlpmetrichttp.RetryConfig{Enabled: false}))
	if err != nil {
		t.Fatal(err)
	}
	return exp
}

func ourMetrics(t *testing.T) sdkmetric.Exporter {
	t.Helper()
	cfg, problems := otlphttp.FromEnv("METRICS", os.Getenv, os.ReadFile)
	if len(problems) > 0 {
		t.Logf("problems: %v", problems)
	}
	exp, err := otlphttp.NewMetricExporter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return exp
}

// sameRequest checks that ours sent what the official exporter sent:
// method, path, every header but User-Agent, and the body, byte for byte
// and as decoded.
func sameRequest(t *testing.T, official, ours request, decoded func() proto.Message) {
	t.Helper()
	if official.method != ours.method || official.path != ours.path {
		t.Errorf("ours %s %s, the official exporter %s %s", ours.method, ours.path, official.method, official.path)
	}
	for _, h := range [2]http.Header{official.header, ours.header} {
		h.Del("User-Agent")
	}
	keys := func(h http.Header) []string {
		return slices.Sorted(func(yield func(string) bool) {
			for k := range h {
				yield(k)
			}
		})
	}
	if !slices.Equal(keys(official.header), keys(ours.header)) {
		t.Errorf("headers: ours %v, the official exporter %v", ours.header, official.header)
	}
	for k, v := range official.header {
		if !slices.Equal(v, ours.header[k]) {
			t.Errorf("header %s: ours %q, the official exporter %q", k, ours.header[k], v)
		}
	}
	a, b := decoded(), decoded()
	if err := proto.Unmarshal(official.body, a); err != nil {
		t.Fatalf("the official exporter's body: %v", err)
	}
	if err := proto.Unmarshal(ours.body, b); err != nil {
		t.Fatalf("our body does not decode: %v", err)
	}
	if !proto.Equal(a, b) {
		t.Errorf("decoded bodies differ:\nours     %v\nofficial %v", b, a)
	}
	if !bytes.Equal(official.body, ours.body) {
		i := 0
		for i < min(len(ours.body), len(official.body)) && ours.body[i] == official.body[i] {
			i++
		}
		t.Errorf("bodies differ byte for byte from byte %d (%d bytes ours, %d the official exporter's):\nours     % x\nofficial % x", i,
			len(ours.body), len(official.body), ours.body[max(0, i-16):min(len(ours.body), i+48)], official.body[max(0, i-16):min(len(official.body), i+48)])
	}
}

func exportSpans(t *testing.T, exp sdktrace.SpanExporter, ss []sdktrace.ReadOnlySpan) error {
	t.Helper()
	err := exp.ExportSpans(context.Background(), ss)
	if serr := exp.Shutdown(context.Background()); serr != nil {
		t.Errorf("shutdown: %v", serr)
	}
	return err
}

func exportMetrics(t *testing.T, exp sdkmetric.Exporter, rm *metricdata.ResourceMetrics) error {
	t.Helper()
	err := exp.Export(context.Background(), rm)
	if serr := exp.Shutdown(context.Background()); serr != nil {
		t.Errorf("shutdown: %v", serr)
	}
	return err
}

// The same spans reach a collector as the same request from either
// exporter.
func TestSpansAreSentAsTheOfficialExporterSendsThem(t *testing.T) {
	col := newRecorder(t, nil)
	setEnv(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": col.srv.URL})
	ss := spans(t)
	if err := exportSpans(t, officialTraces(t), ss); err != nil {
		t.Fatal(err)
	}
	if err := exportSpans(t, ourTraces(t), ss); err != nil {
		t.Fatal(err)
	}
	got := col.take()
	if len(got) != 2 {
		t.Fatalf("%d requests, want one from each", len(got))
	}
	sameRequest(t, got[0], got[1], func() proto.Message { return &coltracepb.ExportTraceServiceRequest{} })
	// Nothing to send sends nothing.
	if err := exportSpans(t, ourTraces(t), nil); err != nil || len(col.take()) != 0 {
		t.Errorf("no spans: %v, or a request was sent", err)
	}
}

// The same metrics, cumulative and delta, reach a collector as the same
// request from either exporter.
func TestMetricsAreSentAsTheOfficialExporterSendsThem(t *testing.T) {
	col := newRecorder(t, nil)
	setEnv(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": col.srv.URL})
	for name, tmp := range map[string]sdkmetric.TemporalitySelector{"cumulative": sdkmetric.CumulativeTemporalitySelector, "delta": sdkmetric.DeltaTemporalitySelector} {
		t.Run(name, func(t *testing.T) {
			rm := collect(t, tmp)
			for _, empty := range []*metricdata.ResourceMetrics{rm, {}} {
				if err := exportMetrics(t, officialMetrics(t), empty); err != nil {
					t.Fatal(err)
				}
				if err := exportMetrics(t, ourMetrics(t), empty); err != nil {
					t.Fatal(err)
				}
				got := col.take()
				if len(got) != 2 {
					t.Fatalf("%d requests, want one from each", len(got))
				}
				sameRequest(t, got[0], got[1], func() proto.Message { return &colmetricspb.ExportMetricsServiceRequest{} })
			}
		})
	}
}

// A metric OTLP has no message for is left out of the request and named
// in the error, as the official exporter does.
func TestAnUnknownMetricIsLeftOutAndNamed(t *testing.T) {
	col := newRecorder(t, nil)
	setEnv(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": col.srv.URL})
	rm := collect(t, sdkmetric.CumulativeTemporalitySelector)
	rm.ScopeMetrics[0].Metrics = append(rm.ScopeMetrics[0].Metrics, metricdata.Metrics{Name: "odd", Data: nil},
		metricdata.Metrics{Name: "odd sum", Data: metricdata.Sum[int64]{Temporality: 9}})
	offErr := exportMetrics(t, officialMetrics(t), rm)
	ourErr := exportMetrics(t, ourMetrics(t), rm)
	if offErr == nil || ourErr == nil {
		t.Fatalf("errors: ours %v, the official exporter's %v", ourErr, offErr)
	}
	got := col.take()
	if len(got) != 2 {
		t.Fatalf("%d requests, want one from each", len(got))
	}
	sameRequest(t, got[0], got[1], func() proto.Message { return &colmetricspb.ExportMetricsServiceRequest{} })
}
