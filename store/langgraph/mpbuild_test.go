package langgraph_test

import (
	"bytes"
	"sort"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// ext is a msgpack extension value for mp: LangGraph wraps each typed
// object in one, its payload msgpack too.
type ext struct {
	code    int8
	payload any
}

// bin is msgpack binary data for mp.
type bin []byte

// raw is msgpack written as it is.
type raw []byte

// mp encodes v as LangGraph's serializer would: maps (keys sorted, any
// key type), lists, ext and bin values, scalars.
func mp(t testing.TB, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := encode(msgpack.NewEncoder(&buf), v); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func encode(e *msgpack.Encoder, v any) error {
	switch x := v.(type) {
	case ext:
		var inner bytes.Buffer
		if err := encode(msgpack.NewEncoder(&inner), x.payload); err != nil {
			return err
		}
		if err := e.EncodeExtHeader(x.code, inner.Len()); err != nil {
			return err
		}
		_, err := e.Writer().Write(inner.Bytes())
		return err
	case bin:
		return e.EncodeBytes(x)
	case raw:
		_, err := e.Writer().Write(x)
		return err
	case []any:
		if err := e.EncodeArrayLen(len(x)); err != nil {
			return err
		}
		for _, it := range x {
			if err := encode(e, it); err != nil {
				return err
			}
		}
		return nil
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if err := e.EncodeMapLen(len(x)); err != nil {
			return err
		}
		for _, k := range keys {
			if err := e.EncodeString(k); err != nil {
				return err
			}
			if err := encode(e, x[k]); err != nil {
				return err
			}
		}
		return nil
	case map[any]any:
		if err := e.EncodeMapLen(len(x)); err != nil {
			return err
		}
		for k, it := range x {
			if err := encode(e, k); err != nil {
				return err
			}
			if err := encode(e, it); err != nil {
				return err
			}
		}
		return nil
	}
	return e.Encode(v)
}
