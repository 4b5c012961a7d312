package engine

import (
	"encoding/json"
	"fmt"

	"rewind/store"
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

// wholeDoc is cp, a checkpoint as read, in the head snapshot's form: what
// Prune stores as the rebase of a delta checkpoint whose parent it
// deletes, so that the writes that made it still read whole (not as the
// patches of a parent that is gone) and every id and task argument as it
// was. stored is cp's row: its transcript writes are already ops. ok is
// false when its writes do not line up with cp's (then the rebase holds
// the values only, as before).
func (g *Graph) wholeDoc(cp *Checkpoint, stored store.Checkpoint) (_ []byte, ok bool, err error) {
	var own stateDoc
	if len(stored.Meta) == 0 || decodeStateDoc(stored.State, &own) != nil || len(own.Groups) != len(cp.Applied) {
		return nil, false, nil
	}
	lit := blobber{inline: true}
	doc := stateDoc{Format: storageFormat, Duration: cp.Metadata.DurationMs, Tasks: cp.Tasks,
		Values: make(map[string]json.RawMessage, len(cp.Values))}
	if doc.Tasks == nil {
		doc.Tasks = []Task{}
	}
	if u := cp.Metadata.Usage; u != nil && *u != callsUsage(groupCalls(cp.Applied)) {
		doc.Usage = &usage{Prompt: u.PromptTokens, Completion: u.CompletionTokens}
	}
	for gi, grp := range cp.Applied {
		if len(own.Groups[gi].Writes) != len(grp.Writes) {
			return nil, false, nil
		}
		sg := writeGroup{Task: grp.Task, Node: grp.Node, Writes: make([]storedWrite, 0, len(grp.Writes)), Ms: grp.DurationMs}
		for _, ev := range grp.Calls {
			c := callOf(ev)
			c.sameRole = c.Role == grp.Node
			sg.Calls = append(sg.Calls, c)
		}
		for wi, w := range grp.Writes {
			if w.Channel == g.transcript && g.transcript != "" {
				sg.Writes = append(sg.Writes, own.Groups[gi].Writes[wi]) // an op of hashes
				continue
			}
			v, err := lit.encode(w.Value)
			if err != nil {
				return nil, false, fmt.Errorf("the write of %s to %q: %w", grp.Node, w.Channel, err)
			}
			sg.Writes = append(sg.Writes, storedWrite{w.Channel, v})
		}
		doc.Groups = append(doc.Groups, sg)
	}
	for name, v := range cp.Values {
		if name == g.transcript && g.transcript != "" {
			doc.Values[name] = v
			continue
		}
		enc, err := lit.encode(v)
		if err != nil {
			return nil, false, fmt.Errorf("channel %q: %w", name, err)
		}
		doc.Values[name] = enc
	}
	if doc.Tasks, err = lit.encodeTasks(doc.Tasks); err != nil {
		return nil, false, err
	}
	if doc.Discarded, err = lit.encodeTasks(cp.Metadata.Discarded); err != nil {
		return nil, false, err
	}
	out, err := marshalState(&doc)
	return out, err == nil, err
}

// wholeRebase tells a rebase in wholeDoc's form (it holds the writes) from
// one an older rewind stored (values only: its row's own document still
// gives the writes).
func wholeRebase(doc []byte) bool {
	var d stateDoc
	return decodeStateDoc(doc, &d) == nil && len(d.Groups) > 0
}

// valuesDoc is a rebase of cp's values only (its row's document gives the
// writes), the caller's "$b"/"$lit" objects escaped as in a base.
func (g *Graph) valuesDoc(cp *Checkpoint) ([]byte, error) {
	lit := blobber{inline: true}
	values := make(map[string]json.RawMessage, len(cp.Values))
	for name, v := range cp.Values {
		enc := v
		if name != g.transcript || g.transcript == "" {
			var err error
			if enc, err = lit.encode(v); err != nil {
				return nil, fmt.Errorf("channel %q: %w", name, err)
			}
		}
		values[name] = enc
	}
	return json.Marshal(stateDoc{Format: storageFormat, Tasks: []Task{}, Values: values})
}
