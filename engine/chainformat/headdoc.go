package chainformat

import (
	"bytes"
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
// the transcript is the inline list of messages. A value whose strings
// are all at most headInline long stays as it is (a ledger's pages, a
// summary): reading the newest state then reads no blob and inflates
// nothing, which was half of a new process's first load. A value with a
// longer string has its large strings as blob references, as a base's:
// the put that stores it carries the blobs too (a store keeps one copy:
// the chain's rows already refer to them), so a prune, which drops the
// head, can never leave it dangling, and a large value is not written
// again every turn.

// headMax is the largest head snapshot kept: a state whose transcript or
// values are larger once large strings are blobs (a long conversation
// never compacted) is read through its chain, so a run does not write it
// again every turn.
const headMax = 64 << 10

// headInline is the longest string (as stored, quotes included) a head
// snapshot keeps in place. What it keeps costs its bytes again at each
// run's end (the head is rewritten, not added to: a 1,000-turn ticket
// thread's head grows from 7 to 22 KB, its turn's WAL by 3%); a longer
// string (an attachment, a long tool result) stays a blob.
const headInline = 8 << 10

// headDoc is cp's head snapshot (see wholeDoc) and the blobs it refers
// to; nil when it would be larger than headMax. When keeping its values'
// strings in place makes it larger than that, they are blob references.
func (g *Schema) headDoc(cp *Checkpoint, groups []WriteGroup, ops [][]json.RawMessage, memo *Memo) ([]byte, []store.Blob, error) {
	b := blobber{upTo: headInline}
	doc, err := g.wholeDoc(cp, groups, ops, &b, memo)
	if err != nil {
		return nil, nil, err
	}
	if len(doc) > headMax {
		b = blobber{}
		if doc, err = g.wholeDoc(cp, groups, ops, &b, memo); err != nil || len(doc) > headMax {
			return nil, nil, err
		}
	}
	return doc, b.blobs, nil
}

// keepsInPlace says raw can go into a head snapshot as it is: no string
// in it longer than upTo, and nothing a reader would take for a
// reference ("$b", "$lit", an escaped '$').
func keepsInPlace(raw json.RawMessage, upTo int) bool {
	if bytes.Contains(raw, markBlob) || bytes.Contains(raw, markLit) || bytes.Contains(raw, markEscapedDollar) {
		return false
	}
	for i := 0; ; {
		q := bytes.IndexByte(raw[i:], '"')
		if q < 0 {
			return true
		}
		r := rd{b: raw, i: i + q}
		if !r.skipString() || r.i-(i+q) > upTo {
			return false
		}
		i = r.i
	}
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
	if upTo, refer := b.upTo, encode; upTo > 0 {
		encode = func(raw json.RawMessage) (json.RawMessage, error) {
			if keepsInPlace(raw, upTo) {
				return raw, nil
			}
			return refer(raw)
		}
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
