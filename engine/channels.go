package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
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
	if len(w) == 0 || w[0] != '{' {
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
		return nil, fmt.Errorf("want a list of objects: %w", err)
	}
	return items, nil
}

// IndexedAppend appends a list write and gives every new item the next
// integer in field (starting at 1) unless it already has one, so items keep
// their original position even after a replace drops older ones.
func IndexedAppend(field string) Reducer {
	return func(current, write json.RawMessage) (json.RawMessage, error) {
		if list, ok := isReplace(write); ok {
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
		add, err := decodeList(write)
		if err != nil {
			return nil, err
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
		out.WriteByte('[')
		for i, it := range old {
			if i > 0 {
				out.WriteByte(',')
			}
			out.Write(it)
		}
		for i, it := range add {
			if _, has := it[field]; !has {
				it[field] = next
			} else if v, ok := it[field].(json.Number); ok {
				if i, err := v.Int64(); err == nil && i >= next {
					next = i
				}
			}
			next++
			b, err := json.Marshal(it)
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

// MergeByID upserts list items by their id field, keeping first-seen order;
// {"replace": [...]} replaces the list.
func MergeByID(field string) Reducer {
	return func(current, write json.RawMessage) (json.RawMessage, error) {
		if list, ok := isReplace(write); ok {
			items, err := decodeList(list)
			if err != nil {
				return nil, err
			}
			if items == nil {
				items = []map[string]any{}
			}
			return json.Marshal(items)
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
			return nil, fmt.Errorf("want an object: %w", err)
		}
	}
	var add map[string]json.RawMessage
	if err := json.Unmarshal(write, &add); err != nil {
		return nil, fmt.Errorf("want an object: %w", err)
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
	if w := bytes.TrimSpace(write); len(w) > 0 && w[0] == '{' && bytes.Contains(w, []byte(`"$reset"`)) &&
		json.Unmarshal(w, &reset) == nil && reset.Reset != nil {
		return MergeMap(nil, reset.Reset)
	}
	return MergeMap(current, write)
}

// Counter adds a number write to the current value; {"set": n} sets it and
// {"set": null} clears it. Adding to an empty (null) counter leaves it empty,
// so "no limit" stays "no limit".
func Counter(current, write json.RawMessage) (json.RawMessage, error) {
	w := bytes.TrimSpace(write)
	if len(w) > 0 && w[0] == '{' {
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
