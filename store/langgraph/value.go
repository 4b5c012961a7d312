package langgraph

import (
	"encoding/base64"
	"math"
	"strings"

	"rewind/store/browse"
)

// Keys that mark what a decoded value was. Decoded values are plain Go
// values that encoding/json can print and a generic tree can walk:
// map[string]any, []any, string, bool, nil, int64, uint64 (past
// math.MaxInt64 only) and float64. Whatever else LangGraph stored is a map
// carrying one of these keys:
//
//   - {"$type": "langchain_core.messages.ai.AIMessage", "content": …, …}:
//     an object stored by its constructor path (pydantic models,
//     dataclasses, namedtuples, LangChain messages, Interrupt, Send as
//     "node" and "arg"), its fields beside "$type";
//   - {"$type": "uuid.UUID", "$value": "…"}: an object stored as one
//     argument (UUID, Decimal, Enum, set, frozenset, deque, datetime with
//     "$method": "fromisoformat", bytes as "$base64" with "$size");
//   - {"$type": "datetime.timedelta", "$args": [1, 0, 0]}: positional
//     arguments (timedelta, date, pathlib.Path, re.compile);
//   - {"$opaque": "pickle", "$size": 1234}: a value this reader cannot
//     decode (pickle, encrypted, a custom serializer, a numpy or pandas
//     buffer), with its stored type and size, and "$error" when a type it
//     knows did not decode (a corrupt value). Never an error, never a crash.
//
// A stored map's key or object's field that starts with "$" gets one more
// "$" ("$type" reads "$$type"), so that a user's dict shaped like a marker
// never reads as one, nor loses a field to one; map keys that were not
// strings (msgpack allows any) are printed as JSON text. Integers keep
// every digit: past int64 a uint64, past that a json.Number (an integer
// of any size, which encoding/json prints as stored). JavaScript's
// undefined (LangGraph.js stores {"lc": 2, "type": "undefined"}) is
// {"$type": "undefined"}.
const (
	KeyType   = browse.KeyType
	KeyValue  = "$value"
	KeyArgs   = "$args"
	KeyMethod = "$method"
	KeyOpaque = "$opaque"
	KeySize   = "$size"
	KeyError  = "$error"
	KeyBase64 = "$base64"
)

// Stored value types (the `type` column of LangGraph's tables).
const (
	TypeMsgpack   = "msgpack"
	TypeJSON      = "json"
	TypeNull      = "null"
	TypeEmpty     = "empty" // PostgreSQL blobs: the channel holds no value
	TypeBytes     = "bytes"
	TypeByteArray = "bytearray"
)

// The bounds of a decoded value, so that a hostile one cannot exhaust the
// stack or the memory: maxDepth levels of nesting, maxItems values (items
// of lists, keys and values of maps, extensions' payloads included), a
// few hundred MB decoded at most. A value past them is opaque, with why.
const (
	maxDepth = 512
	maxItems = 1 << 21
)

// Decode turns a stored value into a plain value (see KeyType). It never
// fails: what it cannot read comes back opaque.
func Decode(typ string, data []byte) any {
	if strings.Contains(typ, "+") {
		inner, plain, err := decrypted(typ, data)
		if err != nil {
			return opaque(typ, len(data), err)
		}
		typ, data = inner, plain
	}
	switch typ {
	case TypeNull, TypeEmpty:
		return nil
	case TypeBytes, TypeByteArray:
		return bytesValue("builtins."+typ, data)
	case TypeMsgpack:
		v, err := decodeMsgpack(data)
		if err != nil {
			return opaque(typ, len(data), err)
		}
		return v
	case TypeJSON:
		v, err := decodeJSON(data)
		if err != nil {
			return opaque(typ, len(data), err)
		}
		return v
	}
	if typ == "" {
		typ = "(no type)"
	}
	return opaque(typ, len(data), nil)
}

// IsOpaque reports whether v is a value Decode could not read, and its
// stored type.
func IsOpaque(v any) (typ string, ok bool) {
	m, isMap := v.(map[string]any)
	if !isMap {
		return "", false
	}
	typ, ok = m[KeyOpaque].(string)
	return typ, ok
}

// TypeOf is the constructor path of a typed object ("" for plain values).
func TypeOf(v any) string { return browse.TypeOf(v) }

func opaque(typ string, size int, err error) map[string]any {
	m := map[string]any{KeyOpaque: typ, KeySize: int64(size)}
	if err != nil {
		m[KeyError] = err.Error()
	}
	return m
}

func bytesValue(typ string, b []byte) map[string]any {
	return map[string]any{KeyType: typ, KeySize: int64(len(b)), KeyBase64: base64.StdEncoding.EncodeToString(b)}
}

// float keeps NaN and the infinities, which JSON cannot hold, as typed
// strings.
func float(f float64) any {
	switch {
	case math.IsNaN(f):
		return map[string]any{KeyType: "builtins.float", KeyValue: "nan"}
	case math.IsInf(f, 1):
		return map[string]any{KeyType: "builtins.float", KeyValue: "inf"}
	case math.IsInf(f, -1):
		return map[string]any{KeyType: "builtins.float", KeyValue: "-inf"}
	}
	return f
}

// escapeKey gives a stored key that starts with "$" one more (see KeyType).
func escapeKey(k string) string {
	if strings.HasPrefix(k, "$") {
		return "$" + k
	}
	return k
}

// typed builds {"$type": path, fields…}.
func typed(path string, fields map[string]any) map[string]any {
	m := make(map[string]any, len(fields)+1)
	for k, v := range fields {
		m[k] = v
	}
	m[KeyType] = path
	return m
}
