// Package telemetry sends a run's signals through OpenTelemetry: a trace
// per run (run → superstep → task → model call and tool call) and the
// counters an operator alerts on (runs, fences, conflicts, refused
// writes, blocked side effects, compaction rejections, model errors,
// latency and tokens), over OTLP/HTTP (protobuf) to what the standard
// OTEL_* environment variables name.
//
// It listens to a run through engine.RunConfig's Observe hook and reads
// the typed payloads of engine/event, so the engine itself links no
// OpenTelemetry. With no OTEL_* variable set, FromEnv returns nil, builds
// no exporter and starts nothing, and every method of a nil *Telemetry or
// *Run does nothing: a run pays nothing (BenchmarkTicketRunTelemetryOff).
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"rewind/engine/telemetry/internal/otlphttp"
)

// ScopeName is the instrumentation scope of rewind's spans and metrics.
const ScopeName = "rewind"

// DefaultExportTimeout bounds one export when OTEL_EXPORTER_OTLP_TIMEOUT
// (or its per-signal twin) does not: a command that ran a turn exports on
// its way out, and a collector that does not answer must not hold it.
const DefaultExportTimeout = 3 * time.Second

// exportersBuilt counts the exporters this process built (tests: none
// without OTEL_* set).
var exportersBuilt atomic.Int32

// Telemetry is this process's OpenTelemetry pipeline. A nil *Telemetry is
// valid and does nothing.
type Telemetry struct {
	tp     *sdktrace.TracerProvider
	mp     *sdkmetric.MeterProvider
	tracer trace.Tracer
	m      instruments
	warn   func(string)
	warned sync.Once
	// timeout bounds Shutdown's flush.
	timeout time.Duration
}

// Signals says which signals the environment asks for.
type Signals struct{ Traces, Metrics bool }

// Wanted reads which signals getenv's OTEL_* variables ask for: a signal
// is exported when an OTLP endpoint is named for it (its own or the
// shared OTEL_EXPORTER_OTLP_ENDPOINT) or OTEL_{TRACES,METRICS}_EXPORTER
// is otlp; OTEL_SDK_DISABLED=true and OTEL_*_EXPORTER=none turn it off.
func Wanted(getenv func(string) string) Signals {
	if b, _ := strconv.ParseBool(getenv("OTEL_SDK_DISABLED")); b {
		return Signals{}
	}
	shared := getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != ""
	want := func(signal string) bool {
		switch strings.ToLower(strings.TrimSpace(getenv("OTEL_" + signal + "_EXPORTER"))) {
		case "none":
			return false
		case "otlp":
			return true
		}
		return shared || getenv("OTEL_EXPORTER_OTLP_"+signal+"_ENDPOINT") != ""
	}
	return Signals{Traces: want("TRACES"), Metrics: want("METRICS")}
}

// FromEnv builds the pipeline the process environment asks for, or returns
// nil (nothing built, nothing started) when it asks for none. warn gets
// one line, once, when an export fails or a variable cannot be followed:
// a collector that is down never fails a run.
func FromEnv(ctx context.Context, version string, warn func(string)) *Telemetry {
	want := Wanted(os.Getenv)
	if !want.Traces && !want.Metrics {
		return nil
	}
	t := &Telemetry{warn: warn, timeout: exportTimeout(os.Getenv)}
	for _, v := range []string{"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL"} {
		if p := os.Getenv(v); p != "" && p != "http/protobuf" {
			t.warnOnce(fmt.Sprintf("%s=%s: rewind exports OTLP over http/protobuf only, and does so", v, p))
		}
	}
	// Errors the SDK meets in the background (a batch it could not send)
	// become the one warning line too.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { t.warnOnce("OpenTelemetry export failed: " + err.Error()) }))
	// The SDK's own log lines would go to stderr beside it: the warning says it.
	otel.SetLogger(logr.Discard())
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "rewind"), attribute.String("service.version", version)),
		resource.WithFromEnv(), // OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES win
		resource.WithTelemetrySDK())
	if err != nil {
		t.warnOnce("OpenTelemetry resource: " + err.Error())
	}
	if want.Traces {
		exp, err := otlphttp.NewTraceExporter(t.exporterConfig("TRACES", version))
		if err != nil {
			t.warnOnce("OpenTelemetry traces are not exported: " + err.Error())
		} else {
			exportersBuilt.Add(1)
			t.tp = sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
		}
	}
	if want.Metrics {
		exp, err := otlphttp.NewMetricExporter(t.exporterConfig("METRICS", version))
		if err != nil {
			t.warnOnce("OpenTelemetry metrics are not exported: " + err.Error())
		} else {
			exportersBuilt.Add(1)
			t.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)), sdkmetric.WithResource(res))
		}
	}
	if t.tp == nil && t.mp == nil {
		return nil
	}
	t.setup()
	return t
}

// exporterConfig is signal's exporter as the environment configures it
// (no retries, as before), its first problem the one warning line.
func (t *Telemetry) exporterConfig(signal, version string) otlphttp.Config {
	cfg, problems := otlphttp.FromEnv(signal, os.Getenv, os.ReadFile)
	if len(problems) > 0 {
		t.warnOnce("OpenTelemetry: " + problems[0].Error())
	}
	if !timeoutSet(os.Getenv, signal) {
		cfg.Timeout = DefaultExportTimeout
	}
	cfg.UserAgent = "rewind/" + version + " (OTLP/HTTP protobuf)"
	return cfg
}

// New is a pipeline on providers the caller built (tests, and a program
// embedding the engine with its own SDK setup); either may be nil.
func New(tp *sdktrace.TracerProvider, mp *sdkmetric.MeterProvider, warn func(string)) *Telemetry {
	t := &Telemetry{tp: tp, mp: mp, warn: warn, timeout: DefaultExportTimeout}
	t.setup()
	return t
}

func (t *Telemetry) setup() {
	var tp trace.TracerProvider = noopTracer
	if t.tp != nil {
		tp = t.tp
	}
	t.tracer = tp.Tracer(ScopeName)
	var mp metric.MeterProvider = noopMeter
	if t.mp != nil {
		mp = t.mp
	}
	t.m = newInstruments(mp.Meter(ScopeName))
}

// Shutdown exports what is still buffered and stops the pipeline, within
// the export timeout: a command calls it before it exits. A process
// killed before (SIGKILL, a drill's kill point) loses what it buffered.
func (t *Telemetry) Shutdown(ctx context.Context) {
	if t == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, t.timeout+time.Second)
	defer cancel()
	var errs []error
	if t.tp != nil {
		errs = append(errs, t.tp.Shutdown(ctx))
	}
	if t.mp != nil {
		errs = append(errs, t.mp.Shutdown(ctx))
	}
	if err := errors.Join(errs...); err != nil {
		t.warnOnce("OpenTelemetry export failed: " + err.Error())
	}
}

// warnOnce says the first problem only: one line, not one per batch.
func (t *Telemetry) warnOnce(msg string) {
	t.warned.Do(func() {
		if t.warn != nil {
			t.warn(strings.Join(strings.Fields(msg), " "))
		}
	})
}

// exportTimeout is the longest a signal's export may take, as the
// exporters read it (milliseconds), or DefaultExportTimeout.
func exportTimeout(getenv func(string) string) time.Duration {
	longest := time.Duration(0)
	for _, v := range []string{"OTEL_EXPORTER_OTLP_TIMEOUT", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_METRICS_TIMEOUT"} {
		if ms, err := strconv.Atoi(getenv(v)); err == nil && ms > 0 {
			longest = max(longest, time.Duration(ms)*time.Millisecond)
		}
	}
	if longest == 0 {
		return DefaultExportTimeout
	}
	return longest
}

func timeoutSet(getenv func(string) string, signal string) bool {
	return getenv("OTEL_EXPORTER_OTLP_TIMEOUT") != "" || getenv("OTEL_EXPORTER_OTLP_"+signal+"_TIMEOUT") != ""
}
