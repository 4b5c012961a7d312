// Package jsoncheck finds, in a Go value, the part encoding/json cannot
// encode (Unencodable) or encodes without keeping what it holds (Lossy),
// and names it by the path JSON would give it ("task.result", "items[2]",
// `byKey["x"]`): a Send's arguments are stored as JSON, so the engine
// refuses them with the field named rather than store null or {}.
package jsoncheck

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"iter"
	"reflect"
	"slices"
	"strings"
)

// maxDepth stops a walk at a cycle or a very deep value.
const maxDepth = 64

// Unencodable is the path of the value inside v that json cannot encode;
// "" when it is v itself. Call it once json.Marshal(v) failed.
func Unencodable(v any) string {
	path, _ := findUnencodable(reflect.ValueOf(v), "", 0, map[uintptr]bool{})
	return path
}

// findUnencodable reports whether v fails to encode and, if so, the path of
// the deepest part of it that fails on its own.
func findUnencodable(v reflect.Value, path string, depth int, seen map[uintptr]bool) (string, bool) {
	if !v.IsValid() {
		return "", false
	}
	if depth > maxDepth {
		return path, true // a cycle or a very deep value: stop at this level
	}
	if v.CanInterface() {
		if _, err := json.Marshal(v.Interface()); err == nil {
			return "", false
		}
	}
	if k := v.Kind(); k == reflect.Pointer || k == reflect.Interface {
		if v.IsNil() {
			return "", false
		}
		if k == reflect.Pointer {
			if seen[v.Pointer()] {
				return path, true
			}
			seen[v.Pointer()] = true
		}
		if p, bad := findUnencodable(v.Elem(), path, depth+1, seen); bad {
			return p, true
		}
		return path, true
	}
	for child, cv := range parts(v, path) {
		if p, bad := findUnencodable(cv, child, depth+1, seen); bad {
			return p, true
		}
	}
	return path, true
}

// parts yields what json encodes of a struct, map, slice or array, with
// each part's path: a struct's encoded fields (an embedded struct's at
// its own path, as json promotes them), a map's entries by key in order,
// the items by index. Nothing for other kinds.
func parts(v reflect.Value, path string) iter.Seq2[string, reflect.Value] {
	return func(yield func(string, reflect.Value) bool) {
		switch v.Kind() {
		case reflect.Struct:
			t := v.Type()
			for i := range t.NumField() {
				name, ok := jsonField(t.Field(i))
				if ok && !yield(joinPath(path, name), v.Field(i)) {
					return
				}
			}
		case reflect.Map:
			keys := v.MapKeys()
			slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
			for _, k := range keys {
				if !yield(fmt.Sprintf("%s[%q]", path, fmt.Sprint(k)), v.MapIndex(k)) {
					return
				}
			}
		case reflect.Slice, reflect.Array:
			for i := range v.Len() {
				if !yield(fmt.Sprintf("%s[%d]", path, i), v.Index(i)) {
					return
				}
			}
		}
	}
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

// joinPath is a field's path: path itself for a promoted embedded struct
// (name "").
func joinPath(path, name string) string {
	switch {
	case name == "":
		return path
	case path == "":
		return name
	}
	return path + "." + name
}

// Lossy finds the value inside v that json encodes without an error but
// not faithfully, and says why: a struct none of whose fields json encodes
// (a *sql.DB, a connection, a lock), or one that encodes to {} though it is
// not its zero value (its fields unexported or `json:"-"`). Its path is
// named as Unencodable names one ("" for v itself); ok is false when v
// reads back as it was. A value that encodes itself (json.Marshaler,
// encoding.TextMarshaler) is taken at its word. enc is v encoded: only an
// encoding holding {} can have lost a struct, so most values cost nothing.
func Lossy(v any, enc []byte) (path, why string, ok bool) {
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
	if !v.IsValid() || depth > maxDepth || encodesItself(v.Type()) {
		return "", "", false
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() || v.Kind() == reflect.Pointer && seen[v.Pointer()] {
			return "", "", false
		}
		if v.Kind() == reflect.Pointer {
			seen[v.Pointer()] = true
		}
		return findLossy(v.Elem(), path, depth+1, seen)
	case reflect.Map, reflect.Slice, reflect.Array:
		if !mayHoldStruct(v.Type().Elem()) {
			return "", "", false
		}
	}
	for child, cv := range parts(v, path) {
		if p, why, bad := findLossy(cv, child, depth+1, seen); bad {
			return p, why, true
		}
	}
	if v.Kind() == reflect.Struct {
		return lossyStruct(v, path)
	}
	return "", "", false
}

// lossyStruct says whether struct v, whose fields hold nothing lost, is
// lost itself: none of its fields encoded, or {} for a value that is not
// its zero.
func lossyStruct(v reflect.Value, path string) (string, string, bool) {
	t := v.Type()
	encoded := false
	for i := range t.NumField() {
		if _, ok := jsonField(t.Field(i)); ok {
			encoded = true
			break
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
