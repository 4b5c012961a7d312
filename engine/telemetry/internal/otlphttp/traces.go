package otlphttp

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// TraceExporter sends spans as an ExportTraceServiceRequest, as
// otlptracehttp does (with its retries off).
type TraceExporter struct {
	c *client
	// stop cancels the exports under way at Shutdown.
	stop     context.Context
	stopped  context.CancelFunc
	stopOnce sync.Once
}

var _ sdktrace.SpanExporter = (*TraceExporter)(nil)

// NewTraceExporter is an exporter for cfg, or the error the official one
// gives on a configuration it cannot follow.
func NewTraceExporter(cfg Config) (*TraceExporter, error) {
	c, err := newClient(cfg, "traces")
	if err != nil {
		return nil, err
	}
	stop, stopped := context.WithCancel(context.Background())
	return &TraceExporter{c: c, stop: stop, stopped: stopped}, nil
}

// ExportSpans sends one batch.
func (e *TraceExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	body := AppendTraces(nil, spans)
	if body == nil {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(e.stop, cancel)()
	answer, kind, err := e.c.post(ctx, body)
	if err == nil {
		err = partialSuccess(answer, kind, "spans", true)
	}
	if err != nil {
		return fmt.Errorf("traces export: %w", err)
	}
	return nil
}

// Shutdown stops the exports under way; a later one fails.
func (e *TraceExporter) Shutdown(ctx context.Context) error {
	e.stopOnce.Do(e.stopped)
	return ctx.Err()
}

// AppendTraces appends spans as an ExportTraceServiceRequest to b, the
// resources and scopes in the order their first span came (nil: no span).
func AppendTraces(b []byte, spans []sdktrace.ReadOnlySpan) []byte {
	type scoped struct {
		scope instrumentation.Scope
		spans []sdktrace.ReadOnlySpan
	}
	type resourced struct {
		res    *resource.Resource
		key    attribute.Distinct
		scopes []*scoped
	}
	var rs []*resourced
	for _, s := range spans {
		if s == nil {
			continue
		}
		key := s.Resource().Equivalent()
		var r *resourced
		for _, c := range rs {
			if c.key == key {
				r = c
				break
			}
		}
		if r == nil {
			r = &resourced{res: s.Resource(), key: key}
			rs = append(rs, r)
		}
		sc := s.InstrumentationScope()
		var into *scoped
		for _, c := range r.scopes {
			if c.scope == sc {
				into = c
				break
			}
		}
		if into == nil {
			into = &scoped{scope: sc}
			r.scopes = append(r.scopes, into)
		}
		into.spans = append(into.spans, s)
	}
	if len(rs) == 0 {
		return nil
	}
	w := wire{b: b}
	for _, r := range rs {
		at := w.open(1) // ResourceSpans
		if r.res != nil {
			w.resource(1, r.res)
		}
		for _, sc := range r.scopes {
			sat := w.open(2) // ScopeSpans
			if sc.scope != (instrumentation.Scope{}) {
				w.scope(1, sc.scope)
			}
			for _, s := range sc.spans {
				w.span(2, s)
			}
			w.str(3, sc.scope.SchemaURL)
			w.close(sat)
		}
		w.str(3, r.res.SchemaURL())
		w.close(at)
	}
	return w.b
}

// Span flags beside the W3C trace flags.
const (
	flagHasIsRemote = 0x100
	flagIsRemote    = 0x200
)

func spanFlags(tf trace.TraceFlags, parent trace.SpanContext) uint32 {
	f := uint32(tf) | flagHasIsRemote
	if parent.IsRemote() {
		f |= flagIsRemote
	}
	return f
}

func (w *wire) span(num int, s sdktrace.ReadOnlySpan) {
	at := w.open(num)
	sc := s.SpanContext()
	tid, sid := sc.TraceID(), sc.SpanID()
	w.bytes(1, tid[:])
	w.bytes(2, sid[:])
	w.str(3, sc.TraceState().String())
	if p := s.Parent().SpanID(); p.IsValid() {
		w.bytes(4, p[:])
	}
	w.str(5, s.Name())
	w.uint(6, spanKind(s.SpanKind()))
	w.fixed64(7, unixNano(s.StartTime()))
	w.fixed64(8, unixNano(s.EndTime()))
	w.keyValues(9, s.Attributes())
	w.uint(10, clamp32(s.DroppedAttributes()))
	for _, ev := range s.Events() {
		eat := w.open(11)
		w.fixed64(1, unixNano(ev.Time))
		w.str(2, ev.Name)
		w.keyValues(3, ev.Attributes)
		w.uint(4, clamp32(ev.DroppedAttributeCount))
		w.close(eat)
	}
	w.uint(12, clamp32(s.DroppedEvents()))
	for _, l := range s.Links() {
		lat := w.open(13)
		tid, sid := l.SpanContext.TraceID(), l.SpanContext.SpanID()
		w.bytes(1, tid[:])
		w.bytes(2, sid[:])
		// The official transform leaves a link's trace state out.
		w.keyValues(4, l.Attributes)
		w.uint(5, clamp32(l.DroppedAttributeCount))
		w.fixed32(6, spanFlags(l.SpanContext.TraceFlags(), l.SpanContext))
		w.close(lat)
	}
	w.uint(14, clamp32(s.DroppedLinks()))
	st := w.open(15) // Status, written even when unset
	w.str(2, s.Status().Description)
	w.uint(3, statusCode(s.Status().Code))
	w.close(st)
	w.fixed32(16, spanFlags(sc.TraceFlags(), s.Parent()))
	w.close(at)
}

// spanKind is OTLP's Span.SpanKind: the API's numbers, unspecified for
// any other.
func spanKind(k trace.SpanKind) uint64 {
	if k >= trace.SpanKindInternal && k <= trace.SpanKindConsumer {
		return uint64(k)
	}
	return 0
}

// statusCode is OTLP's Status.StatusCode: OK is 1 and ERROR 2 there.
func statusCode(c codes.Code) uint64 {
	switch c {
	case codes.Ok:
		return 1
	case codes.Error:
		return 2
	}
	return 0
}

func clamp32(n int) uint64 { return uint64(min(max(n, 0), math.MaxUint32)) }

// ErrShutdown is an export's error after Shutdown.
var ErrShutdown = errors.New("the exporter is shut down")
