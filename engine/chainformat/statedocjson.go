package chainformat

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strconv"

	"rewind/engine/internal/jsonstr"
)

// A state document is most of what a commit writes, and json.Marshal
// spends on it more than on anything else a turn does: reflection, and
// every value scanned again by each level of MarshalJSON above it. This
// writes the same bytes directly, each value compacted once; on anything
// it is not sure of (an invalid value, say) it leaves the document to
// json.Marshal, which then fails as it always did.

// checkStateJSON makes marshalState compare its bytes with json.Marshal's
// (set by the package's tests).
var checkStateJSON = false

// marshalState is json.Marshal(doc).
func marshalState(doc *stateDoc) ([]byte, error) {
	var w stateWriter
	if w.doc(doc) {
		if checkStateJSON {
			want, err := json.Marshal(doc)
			if err != nil || !bytes.Equal(want, w.out.Bytes()) {
				panic("marshalState: not json.Marshal's bytes:\n" + w.out.String() + "\n" + string(want))
			}
		}
		return w.out.Bytes(), nil
	}
	return json.Marshal(doc)
}

type stateWriter struct {
	out bytes.Buffer
	tmp []byte
}

// doc writes doc as json.Marshal does; false when it cannot tell.
func (w *stateWriter) doc(doc *stateDoc) bool {
	w.out.Grow(1024)
	w.out.WriteByte('{')
	first := true
	field := func(name string) {
		if !first {
			w.out.WriteByte(',')
		}
		first = false
		w.out.WriteByte('"')
		w.out.WriteString(name)
		w.out.WriteString(`":`)
	}
	if doc.Format != 0 {
		field("format")
		w.int(int64(doc.Format))
	}
	if len(doc.Tasks) > 0 {
		field("tasks")
		if !w.tasks(doc.Tasks, true) {
			return false
		}
	}
	if len(doc.Groups) > 0 {
		field("writes")
		w.out.WriteByte('[')
		for i := range doc.Groups {
			if i > 0 {
				w.out.WriteByte(',')
			}
			if !w.group(&doc.Groups[i]) {
				return false
			}
		}
		w.out.WriteByte(']')
	}
	if len(doc.Values) > 0 {
		field("values")
		w.out.WriteByte('{')
		keys := slices.Sorted(maps.Keys(doc.Values))
		for i, k := range keys {
			if i > 0 {
				w.out.WriteByte(',')
			}
			w.str(k)
			w.out.WriteByte(':')
			if !w.raw(doc.Values[k]) {
				return false
			}
		}
		w.out.WriteByte('}')
	}
	if doc.Usage != nil {
		field("usage")
		w.out.WriteByte('{')
		if doc.Usage.Prompt != 0 {
			w.out.WriteString(`"prompt":`)
			w.int(int64(doc.Usage.Prompt))
		}
		if doc.Usage.Completion != 0 {
			if doc.Usage.Prompt != 0 {
				w.out.WriteByte(',')
			}
			w.out.WriteString(`"completion":`)
			w.int(int64(doc.Usage.Completion))
		}
		w.out.WriteByte('}')
	}
	if doc.Duration != 0 {
		field("durationMs")
		w.int(doc.Duration)
	}
	if len(doc.Discarded) > 0 {
		field("discarded")
		if !w.tasks(doc.Discarded, false) {
			return false
		}
	}
	w.out.WriteByte('}')
	return true
}

// tasks writes storedTasks (omitID: an empty id is left out) or []Task.
func (w *stateWriter) tasks(ts []Task, omitID bool) bool {
	w.out.WriteByte('[')
	for i, t := range ts {
		if i > 0 {
			w.out.WriteByte(',')
		}
		w.out.WriteByte('{')
		if t.ID != "" || !omitID {
			w.out.WriteString(`"id":`)
			w.str(t.ID)
			w.out.WriteByte(',')
		}
		w.out.WriteString(`"node":`)
		w.str(t.Node)
		if len(t.Args) > 0 {
			w.out.WriteString(`,"args":`)
			if !w.raw(t.Args) {
				return false
			}
		}
		w.out.WriteByte('}')
	}
	w.out.WriteByte(']')
	return true
}

// group writes writeGroup.MarshalJSON's array.
func (w *stateWriter) group(g *writeGroup) bool {
	n := 6
	for n > 3 && (n == 6 && len(g.Refs) == 0 || n == 5 && g.Ms == 0 || n == 4 && len(g.Calls) == 0) {
		n--
	}
	w.out.WriteByte('[')
	w.str(g.Node)
	w.out.WriteByte(',')
	switch {
	case g.Packet != nil:
		w.int(int64(*g.Packet))
	case g.Task != "":
		w.str(g.Task)
	default:
		w.out.WriteString("null")
	}
	w.out.WriteString(",[")
	for i, sw := range g.Writes {
		if i > 0 {
			w.out.WriteByte(',')
		}
		w.out.WriteByte('[')
		w.str(sw.Channel)
		w.out.WriteByte(',')
		if len(sw.Value) == 0 || !w.raw(sw.Value) {
			return false
		}
		w.out.WriteByte(']')
	}
	w.out.WriteByte(']')
	if n > 3 {
		w.out.WriteByte(',')
		if g.Calls == nil {
			w.out.WriteByte('0')
		} else {
			w.out.WriteByte('[')
			for i, c := range g.Calls {
				if i > 0 {
					w.out.WriteByte(',')
				}
				w.call(c)
			}
			w.out.WriteByte(']')
		}
	}
	if n > 4 {
		w.out.WriteByte(',')
		w.int(g.Ms)
	}
	if n > 5 {
		w.out.WriteString(",[")
		for i, r := range g.Refs {
			if i > 0 {
				w.out.WriteByte(',')
			}
			w.int(int64(r))
		}
		w.out.WriteByte(']')
	}
	w.out.WriteByte(']')
	return true
}

// call writes storedCall.MarshalJSON's array.
func (w *stateWriter) call(c storedCall) {
	w.out.WriteByte('[')
	if c.sameRole {
		w.out.WriteByte('0')
	} else {
		w.str(c.Role)
	}
	for _, n := range []int64{int64(c.Prompt), int64(c.Completion), c.Ms, c.At} {
		w.out.WriteByte(',')
		w.int(n)
	}
	tail := [...]string{c.Err, c.Mode, c.Req, c.Answer}
	n := len(tail)
	for n > 0 && tail[n-1] == "" {
		n--
	}
	for _, s := range tail[:n] {
		w.out.WriteByte(',')
		w.str(s)
	}
	w.out.WriteByte(']')
}

func (w *stateWriter) int(n int64) {
	w.tmp = strconv.AppendInt(w.tmp[:0], n, 10)
	w.out.Write(w.tmp)
}

// str writes s as encoding/json does.
func (w *stateWriter) str(s string) {
	w.tmp = jsonstr.Append(w.tmp[:0], s)
	w.out.Write(w.tmp)
}

// raw writes a JSON value as json.Marshal writes a json.RawMessage (or a
// MarshalJSON's output): compacted, with <, >, &, U+2028 and U+2029
// escaped. False when it is not JSON.
func (w *stateWriter) raw(v []byte) bool {
	start := w.out.Len()
	if json.Compact(&w.out, v) != nil {
		return false
	}
	if jsonstr.HTMLEscaped(v) {
		w.tmp = append(w.tmp[:0], w.out.Bytes()[start:]...)
		w.out.Truncate(start)
		json.HTMLEscape(&w.out, w.tmp)
	}
	return true
}
