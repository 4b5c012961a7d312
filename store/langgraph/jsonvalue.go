package langgraph

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
)

// decodeJSON reads one whole JSON value (LangGraph.js stores everything
// as JSON; Python's JsonPlusSerializer falls back to it).
func decodeJSON(data []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	err := d.Decode(&v)
	if err == nil {
		if _, err := d.Token(); !errors.Is(err, io.EOF) {
			return nil, errors.New("json: more after the value")
		}
		return fromJSON(v), nil
	}
	// Python's json.dumps writes NaN, Infinity and -Infinity (SqliteSaver's
	// metadata), which JSON has not: read them as Python's json.loads does.
	if py, perr := decodePyJSON(data); perr == nil {
		return fromJSON(py), nil
	}
	return nil, err
}

// fromJSON turns numbers into int64, uint64, an exact json.Number or
// float64, LangChain's serialized objects into typed maps, and escapes
// stored keys that start with "$" (see KeyType).
func fromJSON(v any) any {
	switch x := v.(type) {
	case json.Number:
		return jsonNumber(x)
	case pyFloat:
		return float(float64(x))
	case []any:
		for i := range x {
			x[i] = fromJSON(x[i])
		}
		return x
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, v := range x {
			out[escapeKey(k)] = fromJSON(v)
		}
		if m, ok := lcObject(out); ok {
			return m
		}
		return out
	}
	return v
}

// jsonNumber reads a JSON number: an integer exactly (int64, uint64, else
// its digits), anything else as float64 (its digits past float64's range).
func jsonNumber(x json.Number) any {
	if i, err := x.Int64(); err == nil {
		return i
	}
	if !strings.ContainsAny(string(x), ".eE") {
		if u, err := strconv.ParseUint(string(x), 10, 64); err == nil {
			return u
		}
		return x // an integer of any size, as LangGraph returns it
	}
	if f, err := x.Float64(); err == nil {
		return float(f)
	}
	return x // beyond float64: keep the digits
}

// lcObject reads LangChain's serialization, {"lc": 1, "type":
// "constructor", "id": [...path], "kwargs": {...}} (LangChain.js and
// Python's Serializable), and the "lc": 2 form of LangGraph's older JSON
// serializer, which adds "args" and "method".
func lcObject(m map[string]any) (map[string]any, bool) {
	lc, _ := m["lc"].(int64)
	typ, _ := m["type"].(string)
	ids, _ := m["id"].([]any)
	if lc == 2 && typ == "undefined" && len(m) == 2 {
		return map[string]any{KeyType: "undefined"}, true
	}
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
