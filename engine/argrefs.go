package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
)

// A task's arguments often carry an item of a keyed channel that the same
// checkpoint holds (the ticket graph sends each executor its subtask, which
// the planner has just written). Format 3 stores such arguments once: in
// the document's "a" (task index → arguments) with each such item as
//
//	{"$k": channel, "$id": key, "$n": "10432", "$o": {fields that differ}}
//
// where "$n" spells its fields in order, each a base-36 digit: its index
// among the item's fields and those of "$o", sorted (or "$f": [names]
// when there are more than 36).
// read back from the checkpoint's own values (resolveArgs). Only arguments
// with no '$' anywhere and no blob in them are stored so, and only when
// they read back byte for byte: everything under "a" that looks like a
// reference is one.

type itemRef struct {
	Channel string                     `json:"$k"`
	Key     json.RawMessage            `json:"$id"`
	Order   string                     `json:"$n,omitempty"`
	Fields  []string                   `json:"$f,omitempty"`
	Set     map[string]json.RawMessage `json:"$o,omitempty"`
}

const digits = "0123456789abcdefghijklmnopqrstuvwxyz"

// names are the fields "$n" numbers: the item's and the set's, sorted.
func (r itemRef) names(item []field) []string {
	var out []string
	for _, f := range item {
		out = append(out, f.Key)
	}
	for k := range r.Set {
		out = append(out, k)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// order puts Fields as "$n" when the names allow it.
func (r *itemRef) order(item []field) {
	names := r.names(item)
	if len(names) > len(digits) {
		return
	}
	var b []byte
	for _, f := range r.Fields {
		b = append(b, digits[slices.Index(names, f)])
	}
	r.Order, r.Fields = string(b), nil
}

// fields reads back the fields in order.
func (r itemRef) fields(item []field) ([]string, error) {
	if r.Order == "" {
		return r.Fields, nil
	}
	names := r.names(item)
	out := make([]string, len(r.Order))
	for i := range len(r.Order) {
		n := bytes.IndexByte([]byte(digits), r.Order[i])
		if n < 0 || n >= len(names) {
			return nil, fmt.Errorf("a stored field order %q names no field", r.Order)
		}
		out[i] = names[n]
	}
	return out, nil
}

// field is one member of a JSON object, in order.
type field struct {
	Key   string
	Value json.RawMessage
}

// objectFields splits a JSON object into its members, in order.
func objectFields(raw []byte) ([]field, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("not an object")
	}
	var out []field
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := d.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, field{t.(string), v})
	}
	if _, err := d.Token(); err != nil {
		return nil, err
	}
	return out, nil
}

func writeObject(fields []field) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(f.Key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(f.Value)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// keyedItems finds a keyed channel's items by key (raw JSON), decoding
// each channel's value once.
type keyedItems struct {
	values Values
	keyed  map[string]string
	byKey  map[string]map[string][]field
}

func (k *keyedItems) item(channel, key string) []field {
	if k.byKey == nil {
		k.byKey = map[string]map[string][]field{}
	}
	items, ok := k.byKey[channel]
	if !ok {
		items = map[string][]field{}
		list, _ := splitList(k.values[channel])
		for _, it := range list {
			fs, err := objectFields(it)
			if err != nil {
				continue
			}
			for _, f := range fs {
				if f.Key == k.keyed[channel] {
					items[string(f.Value)] = fs
				}
			}
		}
		k.byKey[channel] = items
	}
	return items[key]
}

// refArgs is args with the keyed items it carries as references, or nil
// when that would not be shorter or not read back the same.
func (g *Graph) refArgs(args json.RawMessage, items *keyedItems) json.RawMessage {
	if len(g.keyed) == 0 || len(args) == 0 || bytes.IndexByte(args, '$') >= 0 {
		return nil
	}
	top, err := objectFields(args)
	if err != nil {
		return nil
	}
	channels := slices.Sorted(maps.Keys(g.keyed))
	changed := false
	for i, f := range top {
		inner, err := objectFields(f.Value)
		if err != nil {
			continue
		}
		for _, ch := range channels {
			keyField := g.keyed[ch]
			at := slices.IndexFunc(inner, func(x field) bool { return x.Key == keyField })
			if at < 0 {
				continue
			}
			item := items.item(ch, string(inner[at].Value))
			if item == nil {
				continue
			}
			ref := itemRef{Channel: ch, Key: inner[at].Value}
			for _, x := range inner {
				ref.Fields = append(ref.Fields, x.Key)
				j := slices.IndexFunc(item, func(y field) bool { return y.Key == x.Key })
				if j < 0 || !bytes.Equal(item[j].Value, x.Value) {
					if ref.Set == nil {
						ref.Set = map[string]json.RawMessage{}
					}
					ref.Set[x.Key] = x.Value
				}
			}
			ref.order(item)
			enc, err := json.Marshal(ref)
			if err == nil && len(enc) < len(f.Value) {
				top[i].Value, changed = enc, true
			}
			break
		}
	}
	if !changed {
		return nil
	}
	out := writeObject(top)
	if back, err := resolveArgs(out, items); err != nil || !bytes.Equal(back, args) {
		return nil
	}
	return out
}

// resolveArgs reads back arguments refArgs stored.
func resolveArgs(stored json.RawMessage, items *keyedItems) (json.RawMessage, error) {
	top, err := objectFields(stored)
	if err != nil {
		return nil, err
	}
	for i, f := range top {
		if !bytes.HasPrefix(f.Value, []byte(`{"$k":`)) {
			continue
		}
		var ref itemRef
		if err := json.Unmarshal(f.Value, &ref); err != nil {
			return nil, err
		}
		item := items.item(ref.Channel, string(ref.Key))
		if item == nil {
			return nil, fmt.Errorf("task arguments refer to item %s of channel %q, which the checkpoint does not hold", ref.Key, ref.Channel)
		}
		names, err := ref.fields(item)
		if err != nil {
			return nil, err
		}
		fs := make([]field, len(names))
		for j, name := range names {
			v, ok := ref.Set[name]
			if !ok {
				at := slices.IndexFunc(item, func(y field) bool { return y.Key == name })
				if at < 0 {
					return nil, fmt.Errorf("task arguments refer to field %q of item %s of channel %q, which it does not have", name, ref.Key, ref.Channel)
				}
				v = item[at].Value
			}
			fs[j] = field{name, v}
		}
		top[i].Value = writeObject(fs)
	}
	return writeObject(top), nil
}
