package engine

import (
	"encoding/json"
	"reflect"
)

// A replay need not apply a stored write whose channel a newer row of the
// chain writes whole: a LastValue write, a counter's {"set": n}, a turn
// map's {"$reset": …}, a replace of a keyed channel, an object channel's
// {"$w": …}, a transcript op that sets the list. Those writes are checked
// as before (they were read, their channels are declared) but neither
// decoded nor replayed, nor are their blobs read. The head's own writes
// are always replayed: its Applied shows them.

// replayAll replays every write (tests compare the two).
var replayAll = false

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
func (g *Graph) resets(channel string, stored json.RawMessage, format int) bool {
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
func (g *Graph) dropReplaced(rows []parsedRow, start int) map[string]bool {
	reset := map[string]bool{}
	for i := 1; i < start && !replayAll; i++ { // newest first; the head's writes all count
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
