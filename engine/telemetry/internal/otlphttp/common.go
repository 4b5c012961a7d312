package otlphttp

import (
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
)

// opentelemetry.proto.common.v1 and resource.v1, as the official
// exporters' transforms fill them.

// keyValues writes attributes as repeated KeyValue field num.
func (w *wire) keyValues(num int, kvs []attribute.KeyValue) {
	for _, kv := range kvs {
		w.keyValue(num, kv)
	}
}

func (w *wire) set(num int, s *attribute.Set) {
	for it := s.Iter(); it.Next(); {
		w.keyValue(num, it.Attribute())
	}
}

func (w *wire) keyValue(num int, kv attribute.KeyValue) {
	at := w.open(num)
	w.str(1, string(kv.Key))
	w.anyValue(2, kv.Value)
	w.close(at)
}

// anyValue writes an AnyValue; its oneof member is written even at zero.
func (w *wire) anyValue(num int, v attribute.Value) {
	at := w.open(num)
	switch v.Type() {
	case attribute.EMPTY:
	case attribute.STRING:
		w.strSet(1, v.AsString())
	case attribute.BOOL:
		w.tag(2, wireVarint)
		b := uint64(0)
		if v.AsBool() {
			b = 1
		}
		w.varint(b)
	case attribute.INT64:
		w.tag(3, wireVarint)
		w.varint(uint64(v.AsInt64()))
	case attribute.FLOAT64:
		w.doubleSet(4, v.AsFloat64())
	case attribute.BOOLSLICE, attribute.INT64SLICE, attribute.FLOAT64SLICE, attribute.STRINGSLICE, attribute.SLICE:
		arr := w.open(5)
		for _, e := range elements(v) {
			w.anyValue(1, e)
		}
		w.close(arr)
	case attribute.MAP:
		list := w.open(6)
		w.keyValues(1, v.AsMap())
		w.close(list)
	case attribute.BYTESLICE:
		w.bytesSet(7, v.AsByteSlice())
	default:
		w.strSet(1, "INVALID")
	}
	w.close(at)
}

// elements are a slice value's members as values.
func elements(v attribute.Value) []attribute.Value {
	var out []attribute.Value
	switch v.Type() {
	case attribute.BOOLSLICE:
		for _, e := range v.AsBoolSlice() {
			out = append(out, attribute.BoolValue(e))
		}
	case attribute.INT64SLICE:
		for _, e := range v.AsInt64Slice() {
			out = append(out, attribute.Int64Value(e))
		}
	case attribute.FLOAT64SLICE:
		for _, e := range v.AsFloat64Slice() {
			out = append(out, attribute.Float64Value(e))
		}
	case attribute.STRINGSLICE:
		for _, e := range v.AsStringSlice() {
			out = append(out, attribute.StringValue(e))
		}
	case attribute.SLICE:
		out = v.AsSlice()
	}
	return out
}

// resource writes a Resource (its attributes only, as the transforms do);
// a nil one is an empty one.
func (w *wire) resource(num int, r *resource.Resource) {
	if r == nil {
		r = resource.Empty()
	}
	at := w.open(num)
	for it := r.Iter(); it.Next(); {
		w.keyValue(1, it.Attribute())
	}
	w.close(at)
}

func (w *wire) scope(num int, s instrumentation.Scope) {
	at := w.open(num)
	w.str(1, s.Name)
	w.str(2, s.Version)
	w.set(3, &s.Attributes)
	w.close(at)
}

// unixNano is a time as OTLP's fixed64 nanoseconds (before 1970: 0).
func unixNano(t time.Time) uint64 { return uint64(max(0, t.UnixNano())) }
