package telemetry_test

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"rewind/engine"
	"rewind/engine/telemetry"
	"rewind/engine/ticket"
	"rewind/store/memory"
)

// benchTurn is engine/ticket's BenchmarkTicketRunMemory (one whole turn
// on the mock at zero latency: 8 model calls, 7 checkpoints) with sig
// around each run as the CLI puts it; nil is the pipeline FromEnv gives
// with no OTEL_* set.
func benchTurn(b *testing.B, sig *telemetry.Telemetry, traced bool) {
	ctx := context.Background()
	e, err := ticket.NewEngine(memory.New(), ticket.NewMock())
	if err != nil {
		b.Fatal(err)
	}
	in := ticket.Input(sentence, "blob://tickets/2026/att-1.png")
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cpuTime()
	for i := 0; i < b.N; i++ {
		thread := fmt.Sprintf("bench-%d", i)
		cfg := engine.RunConfig{}
		var r *telemetry.Run
		if traced {
			r = sig.Start(ctx, e, telemetry.RunInfo{Op: "run", Thread: thread}, &cfg)
		}
		res, err := e.Run(ctx, thread, in, cfg)
		if err != nil {
			b.Fatal(err)
		}
		r.End(ctx, res, err)
	}
	// This process's CPU time a turn, which a shared machine disturbs
	// less than the wall time.
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// The turn as it runs without any telemetry code.
func BenchmarkTicketRunTelemetryNone(b *testing.B) { benchTurn(b, nil, false) }

// The turn through the CLI's hooks with no OTEL_* set: must cost nothing.
func BenchmarkTicketRunTelemetryOff(b *testing.B) {
	setEnv(b, nil)
	benchTurn(b, telemetry.FromEnv(context.Background(), "bench", nil), true)
}

// The turn traced and counted, spans handed to an exporter that drops
// them: what the signals cost a turn when a collector is configured.
func BenchmarkTicketRunTelemetryOn(b *testing.B) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(discard{}))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	sig := telemetry.New(tp, mp, nil)
	defer sig.Shutdown(context.Background())
	benchTurn(b, sig, true)
}

type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }
