package langgraph_test

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"

	"rewind/store/langgraph"
)

// obj is a decoded map, for expectations.
type obj = map[string]any

func TestDecodeLangGraphExtensions(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		in   any
		want any
	}{
		{"uuid (0)", ext{Code: 0, Payload: []any{"uuid", "UUID", "0123456789abcdef0123456789abcdef"}},
			obj{"$type": "uuid.UUID", "$value": "01234567-89ab-cdef-0123-456789abcdef"}},
		{"set (0)", ext{Code: 0, Payload: []any{"builtins", "set", []any{"a", "b"}}},
			obj{"$type": "builtins.set", "$value": []any{"a", "b"}}},
		{"enum (0)", ext{Code: 0, Payload: []any{"app.colors", "Color", 2}},
			obj{"$type": "app.colors.Color", "$value": int64(2)}},
		{"timedelta (1)", ext{Code: 1, Payload: []any{"datetime", "timedelta", []any{1, 2, 3}}},
			obj{"$type": "datetime.timedelta", "$args": []any{int64(1), int64(2), int64(3)}}},
		{"Send (1)", ext{Code: 1, Payload: []any{"langgraph.types", "Send", []any{"worker", map[string]any{"part": 1}}}},
			obj{"$type": "langgraph.types.Send", "node": "worker", "arg": obj{"part": int64(1)}}},
		{"dataclass (2)", ext{Code: 2, Payload: []any{"app", "Point", map[string]any{"x": 1, "y": -2}}},
			obj{"$type": "app.Point", "x": int64(1), "y": int64(-2)}},
		{"datetime (3)", ext{Code: 3, Payload: []any{"datetime", "datetime", "2026-01-02T03:04:05+00:00", "fromisoformat"}},
			obj{"$type": "datetime.datetime", "$value": "2026-01-02T03:04:05+00:00", "$method": "fromisoformat"}},
		{"pydantic v1 (4)", ext{Code: 4, Payload: []any{"app", "Old", map[string]any{"a": "b"}}},
			obj{"$type": "app.Old", "a": "b"}},
		{"pydantic v2 with a datetime inside (5)", ext{Code: 5, Payload: []any{"app", "Note", map[string]any{
			"title": "t", "at": ext{Code: 3, Payload: []any{"datetime", "datetime", "2026-01-02T03:04:05", "fromisoformat"}}}, "model_validate_json"}},
			obj{"$type": "app.Note", "title": "t", "at": obj{"$type": "datetime.datetime", "$value": "2026-01-02T03:04:05", "$method": "fromisoformat"}}},
		{"numpy array (6)", ext{Code: 6, Payload: []any{"<f8", []any{2}, "C", bin(make([]byte, 16))}},
			obj{"$type": "numpy.ndarray", "dtype": "<f8", "shape": []any{int64(2)}, "order": "C", "$size": int64(16)}},
		{"pandas DataFrame (7)", ext{Code: 7, Payload: []any{bin(make([]byte, 10)), map[string]any{"index_name": nil}}},
			obj{"$type": "pandas.DataFrame", "$opaque": "arrow", "$size": int64(10), "metadata": obj{"index_name": nil}}},
		{"a DeltaChannel snapshot (7, langgraph-checkpoint 4.1+)", ext{Code: 7, Payload: []any{"a", "b"}},
			obj{"$type": "langgraph.checkpoint.serde.types._DeltaSnapshot", "$value": []any{"a", "b"}}},
		{"an unknown extension", ext{Code: 42, Payload: "whatever"}, obj{"$opaque": "msgpack ext 42", "$size": int64(9)}},
		{"a timestamp (-1)", raw{0xd6, 0xff, 0, 0, 0, 1}, obj{"$type": "datetime.datetime", "$value": "1970-01-01T00:00:01Z"}},
		{"binary", bin("hi"), obj{"$type": "builtins.bytes", "$size": int64(2), "$base64": "aGk="}},
		{"not-a-string keys", map[any]any{1: "one"}, obj{"1": "one"}},
		{"NaN", math.NaN(), obj{"$type": "builtins.float", "$value": "nan"}},
		{"a huge uint", uint64(math.MaxUint64), uint64(math.MaxUint64)},
		{"a user's map shaped like a marker", map[string]any{"$type": "uuid.UUID", "$value": "x", "v": map[string]any{"$opaque": "pickle"}},
			obj{"$$type": "uuid.UUID", "$$value": "x", "v": obj{"$$opaque": "pickle"}}},
		{"a dataclass's field named like a marker (2)", ext{Code: 2, Payload: []any{"app", "Point", map[string]any{"$type": "mine", "x": 1}}},
			obj{"$type": "app.Point", "$$type": "mine", "x": int64(1)}},
		{"plain", map[string]any{"s": "x", "b": true, "n": nil, "f": 1.5, "l": []any{-1}},
			obj{"s": "x", "b": true, "n": nil, "f": 1.5, "l": []any{int64(-1)}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := langgraph.Decode("msgpack", mp(t, c.in))
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got  %#v\nwant %#v", got, c.want)
			}
			if _, err := json.Marshal(got); err != nil {
				t.Errorf("not JSON-able: %v", err)
			}
		})
	}
}

func TestDecodeJSONAndLangChainObjects(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, in string
		want     any
	}{
		{"a LangChain.js message", `{"lc":1,"type":"constructor","id":["langchain_core","messages","AIMessage"],"kwargs":{"content":"hi","tool_calls":[]}}`,
			obj{"$type": "langchain_core.messages.AIMessage", "content": "hi", "tool_calls": []any{}}},
		{"Python's lc 2 datetime", `{"lc":2,"type":"constructor","id":["datetime","datetime"],"method":"fromisoformat","args":["2026-01-02T03:04:05"]}`,
			obj{"$type": "datetime.datetime", "$value": "2026-01-02T03:04:05", "$method": "fromisoformat"}},
		{"Python's lc 2 UUID", `{"lc":2,"type":"constructor","id":["uuid","UUID"],"args":["0123456789abcdef0123456789abcdef"]}`,
			obj{"$type": "uuid.UUID", "$value": "01234567-89ab-cdef-0123-456789abcdef"}},
		{"Python's lc 2 timedelta", `{"lc":2,"type":"constructor","id":["datetime","timedelta"],"args":[1,0,0]}`,
			obj{"$type": "datetime.timedelta", "$args": []any{int64(1), int64(0), int64(0)}}},
		{"a secret", `{"lc":1,"type":"secret","id":["OPENAI_API_KEY"]}`, obj{"$type": "langchain.secret", "id": "OPENAI_API_KEY"}},
		{"not implemented", `{"lc":1,"type":"not_implemented","id":["app","Thing"],"repr":"Thing()"}`,
			obj{"$type": "app.Thing", "$opaque": "not_implemented", "repr": "Thing()"}},
		{"a user's map with an lc key stays a map", `{"lc":3,"type":"constructor","id":["x"]}`,
			obj{"lc": int64(3), "type": "constructor", "id": []any{"x"}}},
		{"numbers: integers exact, of any size", `[1, 1.5, 123456789012345678901234567890, 18446744073709551615, -1180591620717411303425, 1e400]`,
			[]any{int64(1), 1.5, json.Number("123456789012345678901234567890"), uint64(math.MaxUint64), json.Number("-1180591620717411303425"), json.Number("1e400")}},
		{"Python's NaN and infinities (json.dumps)", `{"a": NaN, "b": [Infinity, -Infinity, 1], "s": "NaN", "big": 1180591620717411303425}`,
			obj{"a": obj{"$type": "builtins.float", "$value": "nan"}, "b": []any{obj{"$type": "builtins.float", "$value": "inf"}, obj{"$type": "builtins.float", "$value": "-inf"}, int64(1)},
				"s": "NaN", "big": json.Number("1180591620717411303425")}},
		{"JavaScript's undefined", `{"a": {"lc": 2, "type": "undefined"}, "l": [{"lc": 2, "type": "undefined"}]}`,
			obj{"a": obj{"$type": "undefined"}, "l": []any{obj{"$type": "undefined"}}}},
		{"a user's map shaped like a marker", `{"$type": "uuid.UUID", "$value": "x", "$$opaque": 1, "k": {"$opaque": "pickle", "$size": 3}}`,
			obj{"$$type": "uuid.UUID", "$$value": "x", "$$$opaque": int64(1), "k": obj{"$$opaque": "pickle", "$$size": int64(3)}}},
		{"an object's field named like a marker", `{"lc":1,"type":"constructor","id":["app","Note"],"kwargs":{"$type":"mine","title":"t"}}`,
			obj{"$type": "app.Note", "$$type": "mine", "title": "t"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := langgraph.Decode("json", []byte(c.in)); !reflect.DeepEqual(got, c.want) {
				t.Errorf("got  %#v\nwant %#v", got, c.want)
			}
		})
	}
}

// Whatever cannot be read comes back opaque with its type and size,
// never as an error or a panic.
func TestDecodeOpaque(t *testing.T) {
	t.Setenv(langgraph.EnvAESKey, "")          // encrypted values read as opaque, naming the key
	deep := bytes.Repeat([]byte{0x91}, 100000) // [[[[…
	var deepExt any = 1                        // Decimal(Decimal(…)), each in its own extension
	for range 600 {
		deepExt = ext{Code: 0, Payload: []any{"decimal", "Decimal", deepExt}}
	}
	cases := []struct {
		name, typ string
		in        []byte
		opaque    string
		err       string
	}{
		{"pickle", "pickle", []byte("\x80\x04K\x01."), "pickle", ""},
		{"encrypted, no key given", "msgpack+aes", []byte("0123456789"), "msgpack+aes", "set LANGGRAPH_AES_KEY"},
		{"no type", "", []byte("x"), "(no type)", ""},
		{"truncated msgpack", "msgpack", mp(t, map[string]any{"a": "long string"})[:6], "msgpack", "EOF"},
		{"bytes after the value", "msgpack", append(mp(t, 1), 2), "msgpack", "left after"},
		{"a corrupt extension tuple", "msgpack", mp(t, ext{Code: 2, Payload: "not a tuple"}), "msgpack ext 2", "want a tuple"},
		{"a length past the data", "msgpack", []byte{0xdd, 0xff, 0xff, 0xff, 0xff, 0x01}, "msgpack", "EOF"},
		{"nested too deep", "msgpack", deep, "msgpack", "deeper"},
		{"extensions nested too deep", "msgpack", mp(t, deepExt), "msgpack", "deeper"},
		{"too many values", "msgpack", wide(langgraph.MaxItems + 1), "msgpack", "more than"},
		{"too many values in extensions", "msgpack", mp(t, []any{ext{Code: 0, Payload: []any{"m", "N", raw(wide(langgraph.MaxItems / 2))}}, raw(wide(langgraph.MaxItems / 2))}), "msgpack", "more than"},
		{"broken JSON", "json", []byte(`{"a": [1, 2`), "json", "EOF"},
		{"JSON with more after it", "json", []byte(`{} {}`), "json", "more"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := langgraph.Decode(c.typ, c.in)
			b, err := json.Marshal(got)
			if err != nil {
				t.Fatalf("not JSON-able: %v", err)
			}
			m, _ := got.(map[string]any)
			size := int64(len(c.in))
			if strings.HasPrefix(c.opaque, "msgpack ext") {
				size = int64(len(c.in) - 3) // the extension's payload
			}
			typ, ok := langgraph.IsOpaque(got)
			if !ok || typ != c.opaque || m["$size"] != size {
				t.Errorf("got %s, want opaque %q of %d bytes", b, c.opaque, size)
			}
			if e, _ := m["$error"].(string); !strings.Contains(e, c.err) || (c.err == "") != (e == "") {
				t.Errorf("error %q, want one containing %q", e, c.err)
			}
		})
	}
}

func TestDecodeNullEmptyAndBytes(t *testing.T) {
	t.Parallel()
	for _, typ := range []string{"null", "empty"} {
		if got := langgraph.Decode(typ, []byte("ignored")); got != nil {
			t.Errorf("%s: got %#v, want nil", typ, got)
		}
	}
	got := langgraph.Decode("bytes", []byte{1, 2})
	if !reflect.DeepEqual(got, obj{"$type": "builtins.bytes", "$size": int64(2), "$base64": "AQI="}) {
		t.Errorf("bytes: got %#v", got)
	}
	if langgraph.TypeOf(got) != "builtins.bytes" || langgraph.TypeOf("x") != "" {
		t.Errorf("TypeOf is wrong")
	}
}

// FuzzDecode: no input makes Decode fail, panic or return a value JSON
// cannot print. The seeds run with every `go test`.
func FuzzDecode(f *testing.F) {
	f.Add("msgpack", mp(f, ext{Code: 5, Payload: []any{"m", "N", map[string]any{"a": ext{Code: 0, Payload: []any{"uuid", "UUID", "00"}}}, "x"}}))
	f.Add("msgpack", mp(f, []any{ext{Code: 1, Payload: []any{"langgraph.types", "Send", []any{"w", 1}}}, math.Inf(1)}))
	f.Add("msgpack", []byte{0xc7, 0x03, 0x05, 0x93, 0xa1, 0x61})
	f.Add("json", []byte(`{"lc":1,"type":"constructor","id":["a"],"kwargs":{"k":[1,{"lc":2}]}}`))
	f.Fuzz(func(t *testing.T, typ string, data []byte) {
		v := langgraph.Decode(typ, data)
		if _, err := json.Marshal(v); err != nil {
			t.Fatalf("Decode(%q, %x) = %#v, which JSON cannot print: %v", typ, data, v, err)
		}
	})
}
