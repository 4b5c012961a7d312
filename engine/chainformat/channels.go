package chainformat

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"unicode/utf8"

	"rewind/engine/internal/jsonstr"
)

// Reducer folds one write into a channel's current value. Values and writes
// are JSON so that every checkpoint is plain, portable data; a nil current
// value means the channel is empty.
type Reducer func(current, write json.RawMessage) (json.RawMessage, error)

// Write is one node's write to one channel.
type Write struct {
	Channel string          `json:"channel"`
	Value   json.RawMessage `json:"value"`
}

// Put builds a Write from any JSON-encodable value.
func Put(channel string, v any) Write {
	b, err := json.Marshal(v)
	if err != nil {
		// Node values are plain structs; a marshal failure is a programming error
		// surfaced as an invalid write that the reducer refuses.
		b = nil
	}
	return Write{Channel: channel, Value: b}
}

// Replace builds the write that replaces a list channel wholesale: the only
// way an accumulating channel gets shorter.
func Replace(channel string, items any) Write {
	return Put(channel, map[string]any{"replace": items})
}

// LastValue keeps the newest write.
func LastValue(_, write json.RawMessage) (json.RawMessage, error) {
	if len(write) == 0 {
		return nil, fmt.Errorf("empty write")
	}
	return write, nil
}

// isReplace reports whether a write is {"replace": [...]} and returns the list.
func isReplace(write json.RawMessage) (json.RawMessage, bool) {
	w := bytes.TrimSpace(write)
	if len(w) == 0 || w[0] != '{' || !mayHoldKey(w, "replace") {
		return nil, false
	}
	if list, found, ok := readReplace(w); ok {
		return list, found
	}
	return isReplaceSlow(w)
}

func isReplaceSlow(w []byte) (json.RawMessage, bool) {
	var r struct {
		Replace json.RawMessage `json:"replace"`
	}
	if err := json.Unmarshal(w, &r); err != nil || r.Replace == nil {
		return nil, false
	}
	return r.Replace, true
}

// mayHoldKey is false when no key of the JSON object w can be one that
// encoding/json matches to a field named key (an ASCII word of letters
// none of which a non-ASCII rune folds to: not k or s): w spells it
// nowhere, in any case, and has no escape.
func mayHoldKey(w []byte, key string) bool {
	if bytes.IndexByte(w, '\\') >= 0 {
		return true
	}
	for i := 0; i+len(key) <= len(w); i++ {
		if w[i]|0x20 == key[0] && bytes.EqualFold(w[i:i+len(key)], []byte(key)) {
			return true
		}
	}
	return false
}

func decodeList(raw json.RawMessage) ([]map[string]any, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil, nil
	}
	if items, ok := readObjects(raw); ok {
		return items, nil
	}
	var items []map[string]any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&items); err != nil {
		return nil, wantJSON("a list of objects", err)
	}
	return items, nil
}

// IndexedAppend appends a list write and gives every new item the next
// integer in field (starting at 1) unless it already has one, so items keep
// their original position even after a replace drops older ones.
func IndexedAppend(field string) Reducer {
	plain := plainKey(field)
	return func(current, write json.RawMessage) (json.RawMessage, error) {
		if list, ok := isReplace(write); ok {
			if items, ok := canonObjects(list); ok {
				return joinList(items), nil
			}
			items, err := decodeList(list)
			if err != nil {
				return nil, err
			}
			if items == nil {
				items = []map[string]any{}
			}
			return json.Marshal(items)
		}
		// History only grows: keep the old items as raw bytes and decode
		// just the last one for its index.
		old, err := splitList(current)
		if err != nil {
			return nil, fmt.Errorf("want a list: %w", err)
		}
		// The new items as json.Marshal writes them decoded, without
		// decoding them when canonObjects can.
		fast, canon := canonObjects(write)
		canon = canon && plain
		var add []map[string]any
		if !canon {
			if add, err = decodeList(write); err != nil {
				return nil, err
			}
		}
		next := int64(1)
		if n := len(old); n > 0 {
			if last := bytes.TrimSpace(old[n-1]); len(last) == 0 || last[0] != '{' {
				return nil, fmt.Errorf("last item is not an object")
			}
			if v, ok := topField(old[n-1], field); ok {
				if i, err := strconv.ParseInt(string(v), 10, 64); err == nil {
					next = i + 1
				}
			}
		}
		var out bytes.Buffer
		out.Grow(len(current) + len(write) + 16*(len(fast)+len(add)) + 2)
		out.WriteByte('[')
		for i, it := range old {
			if i > 0 {
				out.WriteByte(',')
			}
			out.Write(it)
		}
		for i, it := range fast {
			if !canon {
				break
			}
			b, ok := withIndex(it, field, &next)
			if !ok { // a key spelled with escapes: this item decoded
				var m map[string]any
				if err := decodeInto(it, &m); err != nil {
					return nil, err
				}
				if b, err = indexItem(m, field, &next); err != nil {
					return nil, err
				}
			}
			if len(old) > 0 || i > 0 {
				out.WriteByte(',')
			}
			out.Write(b)
		}
		for i, it := range add {
			b, err := indexItem(it, field, &next)
			if err != nil {
				return nil, err
			}
			if len(old) > 0 || i > 0 {
				out.WriteByte(',')
			}
			out.Write(b)
		}
		out.WriteByte(']')
		return out.Bytes(), nil
	}
}

// indexItem numbers a new item of IndexedAppend and marshals it.
func indexItem(it map[string]any, field string, next *int64) ([]byte, error) {
	if _, has := it[field]; !has {
		it[field] = *next
	} else if v, ok := it[field].(json.Number); ok {
		if i, err := v.Int64(); err == nil && i >= *next {
			*next = i
		}
	}
	*next++
	return json.Marshal(it)
}

// withIndex is indexItem for an item in canonObjects' form: ok is false
// when a key of it is spelled with escapes.
func withIndex(it []byte, field string, next *int64) (_ []byte, ok bool) {
	insert := len(it) - 1 // where field goes when it has none: before '}'
	for i := 1; i < len(it)-1; {
		kEnd := stringEnd(it, i)
		if kEnd < 0 {
			return nil, false
		}
		key := it[i+1 : kEnd-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			return nil, false
		}
		vEnd := valueEnd(it, kEnd+1)
		if vEnd < 0 {
			return nil, false
		}
		if c := bytes.Compare(key, []byte(field)); c == 0 {
			v := it[kEnd+1 : vEnd]
			if v[0] == '-' || (v[0] >= '0' && v[0] <= '9') {
				if i, err := strconv.ParseInt(string(v), 10, 64); err == nil && i >= *next {
					*next = i
				}
			}
			*next++
			return it, true
		} else if c > 0 {
			insert = i
			break
		}
		i = vEnd + 1 // past the comma
	}
	out := make([]byte, 0, len(it)+len(field)+24)
	out = append(out, it[:insert]...)
	if insert > 1 && it[insert-1] != ',' {
		out = append(out, ',') // after the last member
	}
	out = append(out, '"')
	out = append(out, field...)
	out = append(out, `":`...)
	out = strconv.AppendInt(out, *next, 10)
	if insert < len(it)-1 {
		out = append(out, ',')
	}
	out = append(out, it[insert:]...)
	*next++
	return out, true
}

// plainKey tells a key that json.Marshal writes as it is, in quotes.
func plainKey(k string) bool {
	for i := 0; i < len(k); i++ {
		if k[i] >= utf8.RuneSelf || jsonstr.Esc[k[i]] != k[i:i+1] {
			return false
		}
	}
	return true
}

// MergeByID upserts list items by their id field, keeping first-seen order;
// {"replace": [...]} replaces the list.
func MergeByID(field string) Reducer {
	return func(current, write json.RawMessage) (json.RawMessage, error) {
		if list, ok := isReplace(write); ok {
			if items, ok := canonObjects(list); ok {
				return joinList(items), nil
			}
			items, err := decodeList(list)
			if err != nil {
				return nil, err
			}
			if items == nil {
				items = []map[string]any{}
			}
			return json.Marshal(items)
		}
		if out, ok := mergeCanon(current, write, field); ok {
			return out, nil
		}
		old, err := decodeList(current)
		if err != nil {
			return nil, err
		}
		add, err := decodeList(write)
		if err != nil {
			return nil, err
		}
		pos := map[string]int{}
		for i, it := range old {
			pos[fmt.Sprint(it[field])] = i
		}
		for _, it := range add {
			id, ok := it[field]
			if !ok {
				return nil, fmt.Errorf("item without %q", field)
			}
			if i, seen := pos[fmt.Sprint(id)]; seen {
				old[i] = it
				continue
			}
			pos[fmt.Sprint(id)] = len(old)
			old = append(old, it)
		}
		if old == nil {
			old = []map[string]any{}
		}
		return json.Marshal(old)
	}
}

// mergeCanon is MergeByID on items in canonObjects' form: ok is false
// when it cannot tell (the slow path then says what is wrong, if anything).
func mergeCanon(current, write json.RawMessage, field string) (json.RawMessage, bool) {
	old, ok := canonObjects(current)
	if !ok {
		return nil, false
	}
	add, ok := canonObjects(write)
	if !ok {
		return nil, false
	}
	pos := make(map[string]int, len(old)+len(add))
	for i, it := range old {
		id, _, ok := itemID(it, field)
		if !ok {
			return nil, false
		}
		pos[id] = i
	}
	for _, it := range add {
		id, has, ok := itemID(it, field)
		if !ok || !has {
			return nil, false
		}
		if i, seen := pos[id]; seen {
			old[i] = it
			continue
		}
		pos[id] = len(old)
		old = append(old, it)
	}
	return joinList(old), true
}

// itemID is fmt.Sprint of an item's field as MergeByID decodes it ("<nil>"
// when it has none); ok is false for a value it does not spell so.
func itemID(it []byte, field string) (id string, has, ok bool) {
	v, has := topField(it, field)
	if !has {
		return "<nil>", false, true
	}
	switch c := v[0]; {
	case c == '"':
		if bytes.IndexByte(v, '\\') < 0 {
			return string(v[1 : len(v)-1]), true, true
		}
		var s string
		if json.Unmarshal(v, &s) != nil {
			return "", true, false
		}
		return s, true, true
	case c == 'n':
		return "<nil>", true, true
	case c == 't' || c == 'f' || c == '-' || (c >= '0' && c <= '9'):
		return string(v), true, true // true, false, or a json.Number as written
	}
	return "", true, false
}

// MergeMap upserts the keys of an object write into the current object.
func MergeMap(current, write json.RawMessage) (json.RawMessage, error) {
	if v, ok := mergeMap(current, write); ok {
		return v, nil
	}
	return mergeMapSlow(current, write)
}

func mergeMapSlow(current, write json.RawMessage) (json.RawMessage, error) {
	cur := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(current)) > 0 && string(bytes.TrimSpace(current)) != "null" {
		if err := json.Unmarshal(current, &cur); err != nil {
			return nil, wantJSON("an object", err)
		}
	}
	var add map[string]json.RawMessage
	if err := json.Unmarshal(write, &add); err != nil {
		return nil, wantJSON("an object", err)
	}
	for k, v := range add {
		cur[k] = v
	}
	return json.Marshal(cur) // map keys marshal sorted: deterministic bytes
}

// TurnMap is MergeMap for what matters only until the next turn: a write
// {"$reset": {...}} replaces the whole object (a new turn starts it
// afresh), so the value cannot grow with the thread.
func TurnMap(current, write json.RawMessage) (json.RawMessage, error) {
	var reset struct {
		Reset json.RawMessage `json:"$reset"`
	}
	if w := bytes.TrimSpace(write); len(w) > 0 && w[0] == '{' && bytes.Contains(w, []byte(`"$reset"`)) {
		if v, ok := onlyMember(w, "$reset"); ok {
			return MergeMap(nil, v)
		}
		if json.Unmarshal(w, &reset) == nil && reset.Reset != nil {
			return MergeMap(nil, reset.Reset)
		}
	}
	return MergeMap(current, write)
}

// onlyMember is the value of object w's one member, key, when w has no
// other: what encoding/json's Unmarshal gives a struct of that one
// field, without its reflection (a new process's first use of it was a
// tenth of an older checkpoint's load). Anything else (other or repeated
// keys, a key in another case, escapes) is not ok: the caller asks
// encoding/json.
func onlyMember(w []byte, key string) ([]byte, bool) {
	fs, ok := readFields(w)
	if !ok || len(fs) != 1 || fs[0].key != key {
		return nil, false
	}
	return fs[0].val, true
}

// Counter adds a number write to the current value; {"set": n} sets it and
// {"set": null} clears it. Adding to an empty (null) counter leaves it empty,
// so "no limit" stays "no limit".
func Counter(current, write json.RawMessage) (json.RawMessage, error) {
	w := bytes.TrimSpace(write)
	if len(w) > 0 && w[0] == '{' {
		if v, ok := onlyMember(w, "set"); ok {
			return bytes.Clone(v), nil
		}
		var s struct {
			Set json.RawMessage `json:"set"`
		}
		if err := json.Unmarshal(w, &s); err != nil || s.Set == nil {
			return nil, fmt.Errorf("want a number or {\"set\": n}")
		}
		return s.Set, nil
	}
	if d, ok := smallInt(w); ok {
		if c, ok := smallInt(bytes.TrimSpace(current)); ok {
			return strconv.AppendInt(nil, c+d, 10), nil // as float64s add and print them
		}
	}
	var delta float64
	if err := json.Unmarshal(w, &delta); err != nil {
		return nil, fmt.Errorf("want a number: %w", err)
	}
	c := bytes.TrimSpace(current)
	if len(c) == 0 || string(c) == "null" {
		return json.RawMessage("null"), nil
	}
	var cur float64
	if err := json.Unmarshal(c, &cur); err != nil {
		return nil, fmt.Errorf("current value is not a number: %w", err)
	}
	return json.Marshal(cur + delta)
}

// wantJSON says in JSON's words (an object, a list, a number) what a
// channel wanted and what the value held, not in Go's ("cannot unmarshal
// bool into Go value of type map[string]json.RawMessage"): a person
// editing the state reads it. It wraps err.
func wantJSON(want string, err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		got := jsonKinds[te.Value]
		if got == "" {
			got = te.Value
		}
		if want == "a list of objects" && te.Type != nil && te.Type.Kind() != reflect.Slice {
			got = "a list holding " + got
		}
		return &jsonWantError{msg: "want " + want + ", got " + got, err: err}
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return &jsonWantError{msg: fmt.Sprintf("want %s, got text that is not JSON (%s, at byte %d)", want, se.Error(), se.Offset), err: err}
	}
	return fmt.Errorf("want %s: %w", want, err)
}

// jsonKinds names encoding/json's kinds of value as JSON does.
var jsonKinds = map[string]string{
	"bool": "a boolean", "number": "a number", "string": "a string",
	"object": "an object", "array": "a list",
}

type jsonWantError struct {
	msg string
	err error
}

func (e *jsonWantError) Error() string { return e.msg }
func (e *jsonWantError) Unwrap() error { return e.err }
