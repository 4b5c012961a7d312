package chainformat

import (
	"encoding/json"
	"reflect"
	"slices"
)

// A replay need not apply a stored write whose channel a newer row of the
// chain writes whole: a LastValue write, a counter's {"set": n}, a turn
// map's {"$reset": …}, a replace of a keyed channel, an object channel's
// {"$w": …}, a transcript op that sets the list. Those writes are checked
// as before (they were read, their channels are declared) but neither
// decoded nor replayed, nor are their blobs read. The head's own writes
// are always replayed: its Applied shows them.

type reducerKind int

const (
	otherReducer reducerKind = iota
	lastValueReducer
	counterReducer
	turnMapReducer
)

// kindOf tells the engine's reducers by their code.
func kindOf(r Reducer) reducerKind {
	if r == nil {
		return otherReducer
	}
	switch reflect.ValueOf(r).Pointer() {
	case reflect.ValueOf(LastValue).Pointer():
		return lastValueReducer
	case reflect.ValueOf(Counter).Pointer():
		return counterReducer
	case reflect.ValueOf(TurnMap).Pointer():
		return turnMapReducer
	}
	return otherReducer
}

// resets says whether a stored write to channel (of a delta of format f)
// makes the channel's value without reading what it was. false when in
// doubt.
func (g *Schema) resets(channel string, stored json.RawMessage, format int) bool {
	if channel == g.transcript && g.transcript != "" {
		op, err := parseOp(stored)
		return err == nil && op.Set != nil
	}
	_, keyed := g.keyed[channel]
	spec := g.channels[channel]
	switch {
	case keyed && g.objects[channel]:
		return false
	case keyed:
		_, replace := isReplace(stored)
		return replace || format >= 3 && isReplaceRefs(stored)
	case g.objects[channel]:
		return spec.kind == lastValueReducer && onlyKey(stored, "$w")
	}
	switch spec.kind {
	case lastValueReducer:
		return true
	case counterReducer:
		return onlyKey(stored, "set")
	case turnMapReducer:
		return onlyKey(stored, "$reset")
	}
	return false
}

// onlyKey: raw is an object whose one member is key (spelled so).
func onlyKey(raw []byte, key string) bool {
	fs, ok := readFields(raw)
	return ok && len(fs) == 1 && fs[0].key == key
}

// dropReplaced marks (nil Value) the writes of the deltas rows[1:start]
// that a newer write replaces whole, and returns the channels whose base
// value is so replaced. It checks every write's channel first.
func (g *Schema) dropReplaced(rows []parsedRow, start int) map[string]bool {
	reset := map[string]bool{}
	for i := 1; i < start && !g.replayAll; i++ { // newest first; the head's writes all count
		gs := rows[i].doc.Groups
		for gi := len(gs) - 1; gi >= 0; gi-- {
			ws := gs[gi].Writes
			for wi := len(ws) - 1; wi >= 0; wi-- {
				w := &ws[wi]
				if _, declared := g.channels[w.Channel]; !declared || len(w.Value) == 0 {
					continue // the replay says what is wrong with it
				}
				if reset[w.Channel] {
					w.Value = nil
					continue
				}
				if g.resets(w.Channel, w.Value, rows[i].doc.Format) {
					reset[w.Channel] = true
				}
			}
		}
	}
	return reset
}

// An object channel's patch ({"$o": {fields}, "$d": [fields]}) sets or
// deletes only the fields it names, so a field a newer patch of the chain
// names again need not be read from an older patch, nor from the base's
// value: dropPatched leaves it out of them before anything is decoded,
// and its blobs (a summary's text, inflated) are not read. A patch left
// empty is not replayed. Only the forms rewind writes are touched (plain
// field names, none starting with "$", which a blob wrapper could be);
// any other write names nothing and keeps all its fields. The head's own
// writes are always replayed whole.
func (g *Schema) dropPatched(rows []parsedRow, start int, base map[string]json.RawMessage, reset map[string]bool) {
	if g.replayAll || start == 0 {
		return
	}
	var named map[string][]string // channel: the fields newer patches name
	for i := 0; i < start; i++ {  // newest first
		gs := rows[i].doc.Groups
		for gi := len(gs) - 1; gi >= 0; gi-- {
			ws := gs[gi].Writes
			for wi := len(ws) - 1; wi >= 0; wi-- {
				w := &ws[wi]
				if len(w.Value) == 0 || !g.patchable(w.Channel) {
					continue // nil: replaced whole (dropReplaced)
				}
				set, del, ok := readPatch(w.Value)
				if !ok {
					continue
				}
				if named == nil {
					named = map[string][]string{}
				}
				older := named[w.Channel]
				if i > 0 && len(older) > 0 {
					keep := func(k string) bool { return !slices.Contains(older, k) }
					set2, del2 := filter(set, func(f field) bool { return keep(f.key) }), filter(del, keep)
					switch {
					case len(set2) == 0 && len(del2) == 0:
						w.Value = nil // all of it written again later
					case len(set2) < len(set) || len(del2) < len(del):
						w.Value = appendPatch(nil, set2, del2)
					}
				}
				for _, f := range set {
					if !slices.Contains(older, f.key) {
						older = append(older, f.key)
					}
				}
				for _, k := range del {
					if !slices.Contains(older, k) {
						older = append(older, k)
					}
				}
				named[w.Channel] = older
			}
		}
	}
	for name, fields := range named {
		raw, ok := base[name]
		if !ok || reset[name] {
			continue
		}
		fs, ok := readFields(raw)
		if !ok || slices.ContainsFunc(fs, func(f field) bool { return f.key == "" || f.key[0] == '$' }) {
			continue
		}
		kept := filter(fs, func(f field) bool { return !slices.Contains(fields, f.key) })
		if len(kept) < len(fs) {
			base[name] = appendFields(nil, kept)
		}
	}
}

// patchable: channel is an object channel whose patches dropPatched reads.
func (g *Schema) patchable(channel string) bool {
	_, keyed := g.keyed[channel]
	spec, declared := g.channels[channel]
	return declared && g.objects[channel] && !keyed && spec.kind == lastValueReducer
}

// readPatch reads a stored object patch as unpatchObjectFast does: only
// {"$o": {…}, "$d": […]} (either or both), fields named plainly and none
// starting with "$".
func readPatch(stored []byte) (set []field, del []string, ok bool) {
	r := rd{b: stored}
	plain := func(k string) bool { return k != "" && k[0] != '$' && plainKey(k) }
	ok = r.object(func(k string) bool {
		switch k {
		case "$o":
			if r.peek() != '{' {
				return false
			}
			return r.object(func(k string) bool {
				v, ok := r.value()
				set = append(set, field{k, v})
				return ok && plain(k)
			})
		case "$d":
			var ok bool
			del, ok = r.strList(true)
			return ok && !slices.ContainsFunc(del, func(k string) bool { return !plain(k) })
		}
		return false
	})
	return set, del, ok && r.end()
}

// appendPatch writes a patch of set and del (its fields' values as they
// were stored).
func appendPatch(dst []byte, set []field, del []string) []byte {
	dst = append(dst, '{')
	if len(set) > 0 {
		dst = append(dst, `"$o":`...)
		dst = appendFields(dst, set)
	}
	if len(del) > 0 {
		if len(set) > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `"$d":[`...)
		for i, k := range del {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, '"')
			dst = append(dst, k...)
			dst = append(dst, '"')
		}
		dst = append(dst, ']')
	}
	return append(dst, '}')
}

// appendFields writes fs as an object, in their order, values as they are.
// Their keys need no escaping (plainKey).
func appendFields(dst []byte, fs []field) []byte {
	dst = append(dst, '{')
	for i, f := range fs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '"')
		dst = append(dst, f.key...)
		dst = append(dst, '"', ':')
		dst = append(dst, f.val...)
	}
	return append(dst, '}')
}

func filter[T any](xs []T, keep func(T) bool) []T {
	var out []T
	for _, x := range xs {
		if keep(x) {
			out = append(out, x)
		}
	}
	return out
}
