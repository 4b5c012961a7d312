package engine

import (
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
