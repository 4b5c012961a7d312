package chainformat

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
// writes as hash ops) with one difference that makes it read on its own:
// the transcript is the inline list of messages. Its large strings are
// blob references, as a base's: the put that stores it carries the blobs
// too (a store keeps one copy: the chain's rows already refer to them),
// so a prune, which drops the head, can never leave it dangling, and a
// large value is not written again every turn.

// headMax is the largest head snapshot kept: a state whose transcript or
// values are larger once large strings are blobs (a long conversation
// never compacted) is read through its chain, so a run does not write it
// again every turn.
const headMax = 64 << 10

// headDoc is cp's head snapshot (see wholeDoc) and the blobs it refers
// to; nil when it would be larger than headMax.
func (g *Schema) headDoc(cp *Checkpoint, groups []WriteGroup, ops [][]json.RawMessage, memo *Memo) ([]byte, []store.Blob, error) {
	var b blobber
	doc, err := g.wholeDoc(cp, groups, ops, &b, memo)
	if err != nil || len(doc) > headMax {
		return nil, nil, err
	}
	return doc, b.blobs, nil
}

// wholeDoc is cp in the head snapshot's form, its large strings as b
// makes them (memo remembers a non-inline b's encodings). groups are the
// writes that made it (as its nodes wrote them, or as a rebuild reads
// them), and ops[gi][wi] the stored op of each transcript write among
// them.
func (g *Schema) wholeDoc(cp *Checkpoint, groups []WriteGroup, ops [][]json.RawMessage, b *blobber, memo *Memo) ([]byte, error) {
	encode := b.encode
	if memo != nil && !b.inline {
		encode = func(raw json.RawMessage) (json.RawMessage, error) { return memo.encode(b, raw) }
	}
	doc := stateDoc{Format: storageFormat, Duration: cp.Metadata.DurationMs, Tasks: cp.Tasks}
	if doc.Tasks == nil {
		doc.Tasks = []Task{}
	}
	if u := cp.Metadata.Usage; u != nil && *u != callsUsage(groupCalls(groups)) {
		doc.Usage = &usage{Prompt: u.PromptTokens, Completion: u.CompletionTokens}
	}
	for gi, grp := range groups {
		sg := writeGroup{Task: grp.Task, Node: grp.Node, Writes: make([]storedWrite, 0, len(grp.Writes)), Ms: grp.DurationMs}
		for _, ev := range grp.Calls {
			c := callOf(ev)
			c.sameRole = c.Role == grp.Node
			sg.Calls = append(sg.Calls, c)
		}
		for wi, w := range grp.Writes {
			if w.Channel == g.transcript && g.transcript != "" {
				sg.Writes = append(sg.Writes, storedWrite{w.Channel, ops[gi][wi]})
				continue
			}
			v, err := encode(w.Value)
			if err != nil {
				return nil, fmt.Errorf("the write of %s to %q: %w", grp.Node, w.Channel, err)
			}
			sg.Writes = append(sg.Writes, storedWrite{w.Channel, v})
		}
		doc.Groups = append(doc.Groups, sg)
	}
	var err error
	if doc.Values, err = g.inlineValues(encode, cp.Values); err != nil {
		return nil, err
	}
	if doc.Tasks, err = b.encodeTasks(doc.Tasks); err != nil {
		return nil, err
	}
	if doc.Discarded, err = b.encodeTasks(cp.Metadata.Discarded); err != nil {
		return nil, err
	}
	return marshalState(&doc)
}

// inlineValues are values as a document that reads on its own holds them:
// the transcript as its inline list (isList tells it from an op), the
// others as encode makes them.
func (g *Schema) inlineValues(encode func(json.RawMessage) (json.RawMessage, error), values Values) (map[string]json.RawMessage, error) {
	out := make(map[string]json.RawMessage, len(values))
	for name, v := range values {
		if name == g.transcript && g.transcript != "" {
			out[name] = v
			continue
		}
		enc, err := encode(v)
		if err != nil {
			return nil, fmt.Errorf("channel %q: %w", name, err)
		}
		out[name] = enc
	}
	return out, nil
}

// rebaseDoc is what Prune stores as the rebase of cp, a delta checkpoint
// whose parent it deletes: cp in wholeDoc's form, so that the writes that
// made it still read whole (not as the patches of a parent that is gone)
// and every id and task argument as it was. stored is cp's row: its
// transcript writes are ops already. When they do not line up with cp's
// writes the rebase holds the values only, as an older rewind's did (its
// row's own document then gives the writes).
func (g *Schema) rebaseDoc(cp *Checkpoint, stored store.Checkpoint) ([]byte, error) {
	var own stateDoc
	aligned := len(stored.Meta) > 0 && decodeStateDoc(stored.State, &own) == nil && len(own.Groups) == len(cp.Applied)
	ops := make([][]json.RawMessage, len(cp.Applied))
	for gi := 0; aligned && gi < len(cp.Applied); gi++ {
		if aligned = len(own.Groups[gi].Writes) == len(cp.Applied[gi].Writes); aligned {
			ops[gi] = make([]json.RawMessage, len(own.Groups[gi].Writes))
			for wi, w := range own.Groups[gi].Writes {
				ops[gi][wi] = w.Value
			}
		}
	}
	if aligned {
		return g.wholeDoc(cp, cp.Applied, ops, &blobber{inline: true}, nil)
	}
	lit := blobber{inline: true}
	values, err := g.inlineValues(lit.encode, cp.Values)
	if err != nil {
		return nil, err
	}
	return json.Marshal(stateDoc{Format: storageFormat, Tasks: []Task{}, Values: values})
}
