package chainformat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"

	"rewind/engine/internal/jsonstr"
)

// A keyed channel holds a list of objects upserted by a key field
// (MergeByID). A write usually changes a field or two of an item (a
// subtask's status, its result), so the stored delta keeps only those:
// {"$u": [{"$p": {key, changed fields...}, "$d": [removed fields]}, item, ...]}
// where a full item stands for one the channel did not have yet.

type patchDoc struct {
	Upserts []json.RawMessage `json:"$u"`
}

type itemPatch struct {
	Set json.RawMessage `json:"$p"`
	Del []string        `json:"$d,omitempty"`
}

// byKey indexes a keyed channel's items.
func indexItems(current json.RawMessage, key string) map[string]map[string]any {
	old, _ := decodeList(current)
	out := make(map[string]map[string]any, len(old))
	for _, it := range old {
		if k, ok := it[key]; ok {
			out[fmt.Sprint(k)] = it
		}
	}
	return out
}

// patchWrite encodes an upsert write against the channel's items so far
// (byKey, which it brings up to date). It returns the write unchanged when
// a patch would not be smaller (new items only, or not a list of objects);
// a replace starts the items afresh.
func patchWrite(byKey map[string]map[string]any, write json.RawMessage, key string) json.RawMessage {
	if list, replace := isReplace(write); replace {
		clear(byKey)
		for k, it := range indexItems(list, key) {
			byKey[k] = it
		}
		return write
	}
	add, err := decodeList(write)
	if err != nil || len(add) == 0 {
		return write
	}
	doc := patchDoc{Upserts: make([]json.RawMessage, len(add))}
	for i, it := range add {
		k, ok := it[key]
		prev, seen := byKey[fmt.Sprint(k)]
		if !ok || !seen {
			b, err := json.Marshal(it)
			if err != nil {
				return write
			}
			doc.Upserts[i] = b
			byKey[fmt.Sprint(k)] = it
			continue
		}
		set := map[string]any{key: k}
		var del []string
		for f, v := range it {
			if pv, had := prev[f]; !had || !reflect.DeepEqual(pv, v) {
				set[f] = v
			}
		}
		for f := range prev {
			if _, has := it[f]; !has {
				del = append(del, f)
			}
		}
		sort.Strings(del)
		s, err := json.Marshal(set)
		if err != nil {
			return write
		}
		b, err := json.Marshal(itemPatch{Set: s, Del: del})
		if err != nil {
			return write
		}
		doc.Upserts[i] = b
		byKey[fmt.Sprint(k)] = it
	}
	out, err := json.Marshal(doc)
	if err != nil || len(out) >= len(write) {
		return write
	}
	return out
}

// canonKeyed is a keyed channel's items in canonObjects' form, by their
// key as indexItems spells it: patchCanon compares fields by their bytes,
// which for decoded JSON is reflect.DeepEqual.
type canonKeyed map[string][]byte

// indexCanon is indexItems in canonObjects' form; ok is false when it
// cannot tell.
func indexCanon(current json.RawMessage, key string) (canonKeyed, bool) {
	items, ok := canonObjects(current)
	if !ok {
		return nil, false
	}
	out := make(canonKeyed, len(items))
	for _, it := range items {
		id, has, ok := itemID(it, key)
		if !ok {
			return nil, false
		}
		if has {
			out[id] = it
		}
	}
	return out, true
}

// patchKeyed is patchWrite for a write to keyed channel w.Channel, whose
// items before the commit are parent: by canonical bytes while it can
// (citems), decoded (items) from the first write it cannot tell.
func patchKeyed(citems map[string]canonKeyed, items map[string]map[string]map[string]any, parent json.RawMessage, w Write, key string) json.RawMessage {
	ch := w.Channel
	if _, decoded := items[ch]; !decoded {
		ck, ok := citems[ch]
		if !ok {
			if ck, ok = indexCanon(parent, key); ok {
				citems[ch] = ck
			}
		}
		if !ok {
			items[ch] = indexItems(parent, key)
		} else {
			if v, ok := patchCanon(ck, w.Value, key); ok {
				return v
			}
			m := make(map[string]map[string]any, len(ck))
			for id, it := range ck {
				var d map[string]any
				_ = decodeInto(it, &d) // canonObjects' form decodes
				m[id] = d
			}
			items[ch] = m
			delete(citems, ch)
		}
	}
	return patchWrite(items[ch], w.Value, key)
}

// patchCanon is patchWrite on items in canonObjects' form; ok is false
// (and byKey unchanged) when it cannot tell.
func patchCanon(byKey canonKeyed, write json.RawMessage, key string) (json.RawMessage, bool) {
	if list, replace := isReplace(write); replace {
		items, ok := indexCanon(list, key)
		if !ok {
			return nil, false
		}
		clear(byKey)
		maps.Copy(byKey, items)
		return write, true
	}
	add, ok := canonObjects(write)
	if !ok {
		return nil, false
	}
	if len(add) == 0 {
		return write, true
	}
	ids := make([]string, len(add))
	for i, it := range add {
		id, _, ok := itemID(it, key)
		if !ok {
			return nil, false
		}
		ids[i] = id
	}
	keyName := jsonstr.Append(nil, key)
	out := append(make([]byte, 0, len(write)), `{"$u":[`...)
	for i, it := range add {
		if i > 0 {
			out = append(out, ',')
		}
		_, has := topField(it, key)
		prev, seen := byKey[ids[i]]
		byKey[ids[i]] = it
		if !has || !seen {
			out = append(out, it...)
			continue
		}
		was := map[string][]byte{}
		for _, m := range canonMembers(prev) {
			was[string(m[0])] = m[1]
		}
		now := canonMembers(it)
		out = append(out, `{"$p":{`...)
		first := true
		for _, m := range now {
			if pv, had := was[string(m[0])]; had && string(m[0]) != string(keyName) && bytes.Equal(pv, m[1]) {
				continue
			}
			if !first {
				out = append(out, ',')
			}
			first = false
			out = append(append(append(out, m[0]...), ':'), m[1]...)
		}
		out = append(out, '}')
		first = true
		for _, m := range canonMembers(prev) {
			if slices.ContainsFunc(now, func(n [2][]byte) bool { return bytes.Equal(n[0], m[0]) }) {
				continue
			}
			if first {
				out = append(out, `,"$d":[`...)
			} else {
				out = append(out, ',')
			}
			first = false
			out = append(out, m[0]...)
		}
		if !first {
			out = append(out, ']')
		}
		out = append(out, '}')
	}
	out = append(out, "]}"...)
	if len(out) >= len(write) {
		return write, true
	}
	return out, true
}

// canonMembers are the [key, value] pairs of an object in canonObjects'
// form, the key as written (quoted). (objectMembers reads any object.)
func canonMembers(obj []byte) [][2][]byte {
	var out [][2][]byte
	for i := 1; i < len(obj)-1; {
		kEnd := stringEnd(obj, i)
		vEnd := valueEnd(obj, kEnd+1)
		out = append(out, [2][]byte{obj[i:kEnd], obj[kEnd+1 : vEnd]})
		i = vEnd + 1
	}
	return out
}

// keyedList is a keyed channel's items held decoded while a chain of
// deltas is replayed, so each write costs its own size, not the list's:
// the same upserts MergeByID makes, marshalled once at the end.
type keyedList struct {
	key   string
	order []string
	items map[string]map[string]any
	anon  int
}

func newKeyedList(current json.RawMessage, key string) (*keyedList, error) {
	l := &keyedList{key: key, items: map[string]map[string]any{}}
	old, err := decodeList(current)
	if err != nil {
		return nil, err
	}
	l.set(old)
	return l, nil
}

func (l *keyedList) set(items []map[string]any) {
	l.order, l.items = l.order[:0], map[string]map[string]any{}
	for _, it := range items {
		l.put(it)
	}
}

func (l *keyedList) put(it map[string]any) {
	k, ok := it[l.key]
	id := fmt.Sprint(k)
	if !ok { // MergeByID keeps a replace's items without a key; nothing can upsert them
		l.anon++
		id = fmt.Sprintf("\x00%d", l.anon)
	}
	if _, seen := l.items[id]; !seen {
		l.order = append(l.order, id)
	}
	l.items[id] = it
}

// apply replays one stored write (a patch, an upsert list or a replace)
// and returns the write it stands for when want is set.
func (l *keyedList) apply(stored json.RawMessage, want bool) (json.RawMessage, error) {
	if list, replace := isReplace(stored); replace {
		items, err := decodeList(list)
		if err != nil {
			return nil, err
		}
		l.set(items)
		return stored, nil
	}
	if ups, ok := readUpserts(stored); ok {
		return l.upsert(ups, want)
	}
	return l.applySlow(stored, want)
}

// applySlow is apply for a write that is not a replace, by encoding/json.
func (l *keyedList) applySlow(stored json.RawMessage, want bool) (json.RawMessage, error) {
	var doc patchDoc
	if len(stored) == 0 || stored[0] != '{' || json.Unmarshal(stored, &doc) != nil || doc.Upserts == nil {
		items, err := decodeList(stored)
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			if _, ok := it[l.key]; !ok {
				return nil, fmt.Errorf("item without %q", l.key)
			}
			l.put(it)
		}
		return stored, nil
	}
	out := make([]map[string]any, len(doc.Upserts))
	for i, raw := range doc.Upserts {
		var p itemPatch
		if json.Unmarshal(raw, &p) == nil && p.Set != nil {
			var set map[string]any
			if err := decodeInto(p.Set, &set); err != nil {
				return nil, fmt.Errorf("a stored patch is not an object")
			}
			k := fmt.Sprint(set[l.key])
			prev, ok := l.items[k]
			if !ok {
				return nil, fmt.Errorf("a stored patch changes item %s=%s, which the channel does not hold", l.key, k)
			}
			it := make(map[string]any, len(prev)+len(set))
			for f, v := range prev {
				it[f] = v
			}
			for f, v := range set {
				it[f] = v
			}
			for _, f := range p.Del {
				delete(it, f)
			}
			l.put(it)
			out[i] = it
			continue
		}
		var it map[string]any
		if err := decodeInto(raw, &it); err != nil || it == nil {
			return nil, fmt.Errorf("a stored upsert is not an object")
		}
		l.put(it)
		out[i] = it
	}
	if !want {
		return nil, nil
	}
	return marshalItems(out)
}

// upsertOp is one upsert of a stored patch document, decoded: a patch
// (set, del) of the item with set's key, or a whole item.
type upsertOp struct {
	set, item map[string]any
	del       []string
}

// readUpserts decodes {"$u": [...]} as apply's encoding/json form reads
// it; ok false: not such a document, or one that form reads otherwise.
func readUpserts(stored []byte) ([]upsertOp, bool) {
	v, ok := readAny(stored)
	doc, isObj := v.(map[string]any)
	if !ok || !isObj || len(doc) != 1 {
		return nil, false
	}
	list, ok := doc["$u"].([]any)
	if !ok {
		return nil, false
	}
	out := make([]upsertOp, len(list))
	for i, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, false
		}
		for k := range m {
			if k != "$p" && k != "$d" && (strings.EqualFold(k, "$p") || strings.EqualFold(k, "$d")) {
				return nil, false
			}
		}
		p, isPatch := m["$p"]
		if !isPatch {
			out[i].item = m
			continue
		}
		if out[i].set, ok = p.(map[string]any); !ok || out[i].set == nil {
			return nil, false
		}
		if d, has := m["$d"]; has {
			names, ok := d.([]any)
			if !ok {
				return nil, false
			}
			for _, n := range names {
				s, ok := n.(string)
				if !ok {
					return nil, false
				}
				out[i].del = append(out[i].del, s)
			}
		}
	}
	return out, true
}

// upsert replays decoded upserts, as apply does.
func (l *keyedList) upsert(ups []upsertOp, want bool) (json.RawMessage, error) {
	out := make([]map[string]any, len(ups))
	for i, u := range ups {
		if u.item != nil {
			l.put(u.item)
			out[i] = u.item
			continue
		}
		k := fmt.Sprint(u.set[l.key])
		prev, ok := l.items[k]
		if !ok {
			return nil, fmt.Errorf("a stored patch changes item %s=%s, which the channel does not hold", l.key, k)
		}
		it := make(map[string]any, len(prev)+len(u.set))
		for f, v := range prev {
			it[f] = v
		}
		for f, v := range u.set {
			it[f] = v
		}
		for _, f := range u.del {
			delete(it, f)
		}
		l.put(it)
		out[i] = it
	}
	if !want {
		return nil, nil
	}
	return marshalItems(out)
}

func (l *keyedList) value() (json.RawMessage, error) {
	out := make([]map[string]any, len(l.order))
	for i, id := range l.order {
		out[i] = l.items[id]
	}
	return marshalItems(out)
}

func decodeInto(raw []byte, dst any) error {
	switch d := dst.(type) {
	case *any:
		if v, ok := readAny(raw); ok {
			*d = v
			return nil
		}
	case *map[string]any:
		if v, ok := readAny(raw); ok && *d == nil {
			if m, ok := v.(map[string]any); ok {
				*d = m
				return nil
			}
		}
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	return d.Decode(dst)
}

// An object channel holds one JSON object that each write replaces whole
// (LastValue), though a write usually changes a field or two (a summary's
// text and range, not its speakers). Its stored writes are
// {"$o": {changed fields}, "$d": [removed fields]} against the value
// before, or {"$w": value} when that is not smaller.

type objectPatch struct {
	Set   map[string]json.RawMessage `json:"$o,omitempty"`
	Del   []string                   `json:"$d,omitempty"`
	Whole json.RawMessage            `json:"$w,omitempty"`
}

// patchObject encodes write against current, both channel values.
func patchObject(current, write json.RawMessage) json.RawMessage {
	// {"$w": write} as json.Marshal writes it; the state document's writer
	// compacts and escapes every value it holds in any case.
	whole := slices.Concat([]byte(`{"$w":`), write, []byte(`}`))
	cur, ok1 := objectMap(current)
	next, ok2 := objectMap(write)
	if !ok1 || !ok2 || cur == nil || next == nil {
		whole, _ = json.Marshal(objectPatch{Whole: write})
		return whole
	}
	p := objectPatch{Set: map[string]json.RawMessage{}}
	for k, v := range next {
		if old, ok := cur[k]; !ok || !sameJSON(old, v) {
			p.Set[k] = v
		}
	}
	for k := range cur {
		if _, ok := next[k]; !ok {
			p.Del = append(p.Del, k)
		}
	}
	sort.Strings(p.Del)
	if len(p.Set) == 0 {
		p.Set = nil
		if len(p.Del) == 0 {
			p.Set = map[string]json.RawMessage{} // nothing changed: still a patch
		}
	}
	out, err := json.Marshal(p)
	if err != nil || len(out) >= len(whole) {
		return whole
	}
	return out
}

// objectMap is json.Unmarshal of an object into a map of its members (nil
// for null); false when it is not one. Plain keys need no decoding.
func objectMap(raw json.RawMessage) (map[string]json.RawMessage, bool) {
	fs, ok := objectMembers(raw)
	if !ok {
		var m map[string]json.RawMessage
		return m, json.Unmarshal(raw, &m) == nil
	}
	m := make(map[string]json.RawMessage, len(fs))
	for _, f := range fs {
		m[string(f[0][1:len(f[0])-1])] = f[1] // the last of duplicate keys wins, as in encoding/json
	}
	return m, true
}

// unpatchObject turns a stored write back into the value it wrote.
func unpatchObject(current, stored json.RawMessage) (json.RawMessage, error) {
	if v, ok := unpatchObjectFast(current, stored); ok {
		return v, nil
	}
	return unpatchObjectSlow(current, stored)
}

func unpatchObjectSlow(current, stored json.RawMessage) (json.RawMessage, error) {
	var p objectPatch
	if err := json.Unmarshal(stored, &p); err != nil {
		return nil, fmt.Errorf("a stored object write does not decode: %w", err)
	}
	if p.Whole != nil {
		return p.Whole, nil
	}
	cur := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(current)) > 0 && string(bytes.TrimSpace(current)) != "null" {
		if err := json.Unmarshal(current, &cur); err != nil {
			return nil, fmt.Errorf("a stored object patch applies to a value that is not an object: %w", err)
		}
	}
	for k, v := range p.Set {
		cur[k] = v
	}
	for _, k := range p.Del {
		delete(cur, k)
	}
	return json.Marshal(cur)
}

func sameJSON(a, b json.RawMessage) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var x, y any
	return decodeInto(a, &x) == nil && decodeInto(b, &y) == nil && reflect.DeepEqual(x, y)
}
