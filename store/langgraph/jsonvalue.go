package langgraph

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
)

// decodeJSON reads one whole JSON value (LangGraph.js stores everything
// as JSON; Python's JsonPlusSerializer falls back to it).
func decodeJSON(data []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := d.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("json: more after the value")
	}
	return fromJSON(v), nil
}

// fromJSON turns numbers into int64 or float64 and LangChain's
// serialized objects into typed maps.
func fromJSON(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		if f, err := x.Float64(); err == nil {
			return float(f)
		}
		return x // beyond float64: keep the digits
	case []any:
		for i := range x {
			x[i] = fromJSON(x[i])
		}
		return x
	case map[string]any:
		for k := range x {
			x[k] = fromJSON(x[k])
		}
		if m, ok := lcObject(x); ok {
			return m
		}
		return x
	}
	return v
}

// lcObject reads LangChain's serialization, {"lc": 1, "type":
// "constructor", "id": [...path], "kwargs": {...}} (LangChain.js and
// Python's Serializable), and the "lc": 2 form of LangGraph's older JSON
// serializer, which adds "args" and "method".
func lcObject(m map[string]any) (map[string]any, bool) {
	lc, _ := m["lc"].(int64)
	typ, _ := m["type"].(string)
	ids, _ := m["id"].([]any)
	if lc != 1 && lc != 2 || typ == "" || len(ids) == 0 {
		return nil, false
	}
	parts := make([]string, len(ids))
	for i, id := range ids {
		s, ok := id.(string)
		if !ok {
			return nil, false
		}
		parts[i] = s
	}
	path := strings.Join(parts, ".")
	switch typ {
	case "constructor":
	case "secret":
		return map[string]any{KeyType: "langchain.secret", "id": path}, true
	case "not_implemented":
		out := map[string]any{KeyType: path, KeyOpaque: "not_implemented"}
		if r, ok := m["repr"]; ok {
			out["repr"] = r
		}
		return out, true
	default:
		return nil, false
	}
	kwargs, _ := m["kwargs"].(map[string]any)
	out := typed(path, kwargs)
	args, hasArgs := m["args"].([]any)
	method, hasMethod := m["method"]
	switch {
	case path == "uuid.UUID" && len(args) == 1:
		return single(path, args[0]), true
	case hasMethod && len(args) == 1:
		out[KeyValue] = args[0]
	case hasArgs:
		out[KeyArgs] = args
	}
	if hasMethod && method != nil {
		out[KeyMethod] = method
	}
	return out, true
}
