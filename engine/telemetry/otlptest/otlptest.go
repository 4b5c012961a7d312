// Package otlptest is an OTLP/HTTP (protobuf) receiver on loopback for
// tests: what an OpenTelemetry collector would be given. Tests only.
package otlptest

import (
	"encoding/hex"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"testing"

	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Collector is an OTLP/HTTP (protobuf) receiver on loopback.
type Collector struct {
	srv *httptest.Server

	mu       sync.Mutex
	spans    []*tracepb.Span
	resource map[string]string
	// series is each metric's data points as last exported (they are
	// cumulative), by name then attributes.
	series map[string]map[string]point
}

type point struct {
	attrs map[string]string
	value float64 // a sum's value, a histogram's count
}

// New starts a receiver, stopped when the test ends.
func New(t testing.TB) *Collector {
	c := &Collector{series: map[string]map[string]point{}, resource: map[string]string{}}
	c.srv = httptest.NewServer(http.HandlerFunc(c.serve))
	t.Cleanup(c.srv.Close)
	return c
}

func (c *Collector) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch r.URL.Path {
	case "/v1/traces":
		var req coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		for _, rs := range req.ResourceSpans {
			for k, v := range Attrs(rs.GetResource().GetAttributes()) {
				c.resource[k] = v
			}
			for _, ss := range rs.ScopeSpans {
				c.spans = append(c.spans, ss.Spans...)
			}
		}
	case "/v1/metrics":
		var req colmetricspb.ExportMetricsServiceRequest
		if err := proto.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		for _, rm := range req.ResourceMetrics {
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					c.addMetric(m.Name, m)
				}
			}
		}
	default:
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
}

func (c *Collector) addMetric(name string, m *metricspb.Metric) {
	if c.series[name] == nil {
		c.series[name] = map[string]point{}
	}
	for _, dp := range m.GetSum().GetDataPoints() {
		a := Attrs(dp.Attributes)
		c.series[name][key(a)] = point{a, float64(dp.GetAsInt()) + dp.GetAsDouble()}
	}
	for _, dp := range m.GetHistogram().GetDataPoints() {
		a := Attrs(dp.Attributes)
		c.series[name][key(a)] = point{a, float64(dp.Count)}
	}
}

// URL is the endpoint, for OTEL_EXPORTER_OTLP_ENDPOINT.
func (c *Collector) URL() string { return c.srv.URL }

// Resource is the attributes of the resource the spans came from.
func (c *Collector) Resource() map[string]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.resource)
}

// Sum is a metric's total over the series whose attributes include want.
func (c *Collector) Sum(name string, want map[string]string) float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	total := 0.0
	for _, p := range c.series[name] {
		match := true
		for k, v := range want {
			match = match && p.attrs[k] == v
		}
		if match {
			total += p.value
		}
	}
	return total
}

// Spans are the spans received so far.
func (c *Collector) Spans() []*tracepb.Span {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*tracepb.Span(nil), c.spans...)
}

// Attrs are attributes as strings (integers in decimal).
func Attrs(kvs []*commonpb.KeyValue) map[string]string {
	out := map[string]string{}
	for _, kv := range kvs {
		v := kv.GetValue()
		switch v.Value.(type) {
		case *commonpb.AnyValue_IntValue:
			out[kv.Key] = strconv.FormatInt(v.GetIntValue(), 10)
		case *commonpb.AnyValue_BoolValue:
			out[kv.Key] = map[bool]string{true: "true", false: "false"}[v.GetBoolValue()]
		default:
			out[kv.Key] = v.GetStringValue()
		}
	}
	return out
}

func key(a map[string]string) string {
	s := ""
	for _, k := range slices.Sorted(maps.Keys(a)) {
		s += k + "=" + a[k] + ";"
	}
	return s
}

// ID is a span id in hex.
func ID(b []byte) string { return hex.EncodeToString(b) }

// Vars are every variable rewind's pipeline (telemetry.FromEnv), the
// OpenTelemetry SDK's resource and either exporter read.
var Vars = []string{
	"OTEL_SDK_DISABLED", "OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES",
	"OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER",
	"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
	"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_METRICS_HEADERS",
	"OTEL_EXPORTER_OTLP_TIMEOUT", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_METRICS_TIMEOUT",
	"OTEL_EXPORTER_OTLP_COMPRESSION", "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION", "OTEL_EXPORTER_OTLP_METRICS_COMPRESSION",
	"OTEL_EXPORTER_OTLP_CERTIFICATE", "OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE", "OTEL_EXPORTER_OTLP_METRICS_CERTIFICATE",
	"OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", "OTEL_EXPORTER_OTLP_CLIENT_KEY",
	"OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE", "OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY",
	"OTEL_EXPORTER_OTLP_METRICS_CLIENT_CERTIFICATE", "OTEL_EXPORTER_OTLP_METRICS_CLIENT_KEY",
	"OTEL_EXPORTER_OTLP_INSECURE", "OTEL_EXPORTER_OTLP_TRACES_INSECURE", "OTEL_EXPORTER_OTLP_METRICS_INSECURE",
	"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL",
	"OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE", "OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION",
	"OTEL_GO_X_OBSERVABILITY", "OTEL_GO_X_SELF_OBSERVABILITY",
}

// Setenv sets every one of Vars for the test, to kv's value or empty,
// so the machine's own cannot leak in.
func Setenv(t testing.TB, kv map[string]string) {
	t.Helper()
	for _, k := range Vars {
		t.Setenv(k, kv[k])
	}
}
