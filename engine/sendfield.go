package engine

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// unencodable finds the value inside v that json cannot encode and returns
// its path as JSON would name it ("task.result", "items[2]", `byKey["x"]`);
// "" when it is v itself. It is only called once json.Marshal(v) failed.
func unencodable(v any) string {
	path, _ := findUnencodable(reflect.ValueOf(v), "", 0, map[uintptr]bool{})
	return path
}

// findUnencodable reports whether v fails to encode and, if so, the path of
// the deepest part of it that fails on its own.
func findUnencodable(v reflect.Value, path string, depth int, seen map[uintptr]bool) (string, bool) {
	if !v.IsValid() {
		return "", false
	}
	if depth > 64 {
		return path, true // a cycle or a very deep value: stop at this level
	}
	if v.CanInterface() {
		if _, err := json.Marshal(v.Interface()); err == nil {
			return "", false
		}
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return "", false
		}
		if seen[v.Pointer()] {
			return path, true
		}
		seen[v.Pointer()] = true
		if p, bad := findUnencodable(v.Elem(), path, depth+1, seen); bad {
			return p, true
		}
	case reflect.Interface:
		if v.IsNil() {
			return "", false
		}
		if p, bad := findUnencodable(v.Elem(), path, depth+1, seen); bad {
			return p, true
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			name, ok := jsonField(f)
			if !ok {
				continue
			}
			child := path
			if name != "" {
				child = joinPath(path, name)
			}
			if p, bad := findUnencodable(v.Field(i), child, depth+1, seen); bad {
				return p, true
			}
		}
	case reflect.Map:
		keys := v.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
		for _, k := range keys {
			if p, bad := findUnencodable(v.MapIndex(k), fmt.Sprintf("%s[%q]", path, fmt.Sprint(k)), depth+1, seen); bad {
				return p, true
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			if p, bad := findUnencodable(v.Index(i), fmt.Sprintf("%s[%d]", path, i), depth+1, seen); bad {
				return p, true
			}
		}
	}
	return path, true
}

// jsonField is the name encoding/json gives a struct field ("" for an
// embedded struct whose fields are promoted) and whether it is encoded.
func jsonField(f reflect.StructField) (string, bool) {
	tag := f.Tag.Get("json")
	if tag == "-" {
		return "", false
	}
	name, _, _ := strings.Cut(tag, ",")
	if f.Anonymous && name == "" {
		t := f.Type
		if t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() == reflect.Struct {
			return "", true
		}
	}
	if !f.IsExported() {
		return "", false
	}
	if name == "" {
		name = f.Name
	}
	return name, true
}

func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// lossy finds the value inside v that json encodes without an error but
// not faithfully, and says why: a struct none of whose fields json encodes
// (a *sql.DB, a connection, a lock), or one that encodes to {} though it is
// not its zero value (its fields unexported or `json:"-"`). Its path is
// named as unencodable names one ("" for v itself); ok is false when v
// reads back as it was. A value that encodes itself (json.Marshaler,
// encoding.TextMarshaler) is taken at its word. enc is v encoded: only an
// encoding holding {} can have lost a struct, so most values cost nothing.
func lossy(v any, enc []byte) (path, why string, ok bool) {
	if !bytes.Contains(enc, []byte("{}")) {
		return "", "", false
	}
	return findLossy(reflect.ValueOf(v), "", 0, map[uintptr]bool{})
}

var (
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

// encodesItself says json leaves values of t to their own methods.
func encodesItself(t reflect.Type) bool {
	for _, m := range []reflect.Type{jsonMarshaler, textMarshaler} {
		if t.Implements(m) || (t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(m)) {
			return true
		}
	}
	return false
}

func findLossy(v reflect.Value, path string, depth int, seen map[uintptr]bool) (string, string, bool) {
	if !v.IsValid() || depth > 64 || encodesItself(v.Type()) {
		return "", "", false
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() || seen[v.Pointer()] {
			return "", "", false
		}
		seen[v.Pointer()] = true
		return findLossy(v.Elem(), path, depth+1, seen)
	case reflect.Interface:
		if v.IsNil() {
			return "", "", false
		}
		return findLossy(v.Elem(), path, depth+1, seen)
	case reflect.Struct:
		t := v.Type()
		encoded := false
		for i := range t.NumField() {
			name, ok := jsonField(t.Field(i))
			if !ok {
				continue
			}
			encoded = true
			child := path
			if name != "" {
				child = joinPath(path, name)
			}
			if p, why, bad := findLossy(v.Field(i), child, depth+1, seen); bad {
				return p, why, true
			}
		}
		if !encoded && t.NumField() > 0 {
			return path, fmt.Sprintf("a %s has no exported field, so it would be stored as {} and read back empty", t), true
		}
		if !v.IsZero() {
			if b, err := json.Marshal(v.Interface()); err == nil && string(b) == "{}" {
				return path, fmt.Sprintf("this %s is not empty, but json stores none of what it holds (unexported or `json:\"-\"` fields): it would be stored as {}", t), true
			}
		}
	case reflect.Map:
		if !mayHoldStruct(v.Type().Elem()) {
			return "", "", false
		}
		keys := v.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
		for _, k := range keys {
			if p, why, bad := findLossy(v.MapIndex(k), fmt.Sprintf("%s[%q]", path, fmt.Sprint(k)), depth+1, seen); bad {
				return p, why, true
			}
		}
	case reflect.Slice, reflect.Array:
		if !mayHoldStruct(v.Type().Elem()) {
			return "", "", false
		}
		for i := range v.Len() {
			if p, why, bad := findLossy(v.Index(i), fmt.Sprintf("%s[%d]", path, i), depth+1, seen); bad {
				return p, why, true
			}
		}
	}
	return "", "", false
}

// mayHoldStruct says a value of t may hold a struct (strings, numbers and
// lists of them never do): a long list of numbers is not walked.
func mayHoldStruct(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Struct, reflect.Pointer, reflect.Interface, reflect.Map, reflect.Slice, reflect.Array:
		return true
	}
	return false
}
