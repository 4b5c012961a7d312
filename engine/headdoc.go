package engine

import (
	"encoding/json"
	"fmt"
)

// The head snapshot: the checkpoint a run ends at is also stored whole,
// as the thread's head (store.Checkpoint.Head, one per thread, replaced
// by the next). A process that has read nothing of the thread yet (every
// `rewind run`, `show` or TUI start) reads the newest state from that one
// row instead of rebuilding it from its chain's base and deltas. It is a
// cache: a chain reads the same without it.
//
// Its form is a base's (every value and write whole, the transcript's
// writes as hash ops) with two differences that make it read on its own:
// the transcript is the inline list of messages, and nothing is a blob or
// a reference to a message's text (the caller's "$b"/"$lit" objects are
// still escaped).

// headMax is the largest state kept as a head snapshot: a state with a
// large inline value (an attachment pasted into state) is read through
// its chain, so a run does not write that value again every turn.
const headMax = 64 << 10

// valuesSize is the bytes of a state's values.
func valuesSize(v Values) int {
	n := 0
	for _, raw := range v {
		n += len(raw)
	}
	return n
}

// headWriter collects a head snapshot's writes while encodeRow goes
// through the groups. Its methods do nothing on a nil headWriter (no
// snapshot for this checkpoint).
type headWriter struct {
	lit    blobber
	groups [][]storedWrite
}

// write adds group gi's write to channel: value whole, escaped when
// escape (a transcript op is stored as is).
func (h *headWriter) write(gi int, channel string, value json.RawMessage, escape bool) error {
	if h == nil {
		return nil
	}
	for len(h.groups) <= gi {
		h.groups = append(h.groups, nil)
	}
	if escape {
		var err error
		if value, err = h.lit.encode(value); err != nil {
			return fmt.Errorf("encode the head snapshot's write to %q: %w", channel, err)
		}
	}
	h.groups[gi] = append(h.groups[gi], storedWrite{channel, value})
	return nil
}

// doc is the head snapshot of cp, whose stored document is doc (its task
// ids already left out): nil for a nil headWriter.
func (h *headWriter) doc(g *Graph, doc *stateDoc, cp *Checkpoint) ([]byte, error) {
	if h == nil {
		return nil, nil
	}
	hd := stateDoc{Format: storageFormat, Usage: doc.Usage, Duration: doc.Duration,
		Groups: make([]writeGroup, len(doc.Groups)), Values: make(map[string]json.RawMessage, len(cp.Values))}
	for i, grp := range doc.Groups {
		grp.Refs = nil
		if i < len(h.groups) {
			grp.Writes = h.groups[i]
		} else {
			grp.Writes = []storedWrite{}
		}
		hd.Groups[i] = grp
	}
	for name, v := range cp.Values {
		if name == g.transcript && g.transcript != "" {
			hd.Values[name] = v // the inline list: isList tells it from an op
			continue
		}
		enc, err := h.lit.encode(v)
		if err != nil {
			return nil, fmt.Errorf("encode the head snapshot's channel %q: %w", name, err)
		}
		hd.Values[name] = enc
	}
	var err error
	if hd.Discarded, err = h.lit.encodeTasks(cp.Metadata.Discarded); err != nil {
		return nil, err
	}
	return marshalState(&hd)
}
