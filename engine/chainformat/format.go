// Package chainformat is how rewind stores a checkpoint: as a chain of
// rows. A checkpoint's row holds what its superstep wrote against its
// parent (a delta), every baseEvery-th row of a branch also the whole
// state (a base), so one checkpoint is rebuilt from the rows between it
// and its base: a chain, which is what this package writes and reads. The
// name says both halves: the format of a chain of rows.
//
// The engine (package engine) runs the graph; this package holds what it
// runs over (Checkpoint, Task, Values, Write, WriteGroup, Event: engine
// names them again as aliases) and everything about their stored bytes:
// listings and state documents (storage.go, storedoc.go,
// statedocjson.go, listingjson.go), canonical JSON (canon.go), keyed and
// object patches (patch.go, resets.go), transcript and content references
// (contentrefs.go, sendrefs.go), blobs (blobs.go), the head snapshot
// (headdoc.go), stored events (eventcodec.go), legacy whole documents
// (checkpoint.go), and the channel reducers whose behaviour a replay
// depends on (channels.go). It imports no engine.
//
// The interface between the engine and the format is this file:
//
//   - Schema: what the format knows of a graph (NewSchema, Channel,
//     Transcript, Keyed, Object); the engine's Graph declares through it.
//   - Schema.Encode: a superstep's checkpoint, made from its parent by
//     its write groups, as the row to store (Encoded), and
//     Encoded.Committed once the store took it.
//   - Schema.Rebuild: the checkpoint at the head of a chain of rows
//     (newest first, as store.Chain gives it).
//   - Schema.Listed: a checkpoint's listing alone (History);
//     Schema.Brief: what a log's line shows of it, read with less;
//     SourceAndEvents: its source and event count, read fast.
//   - Schema.Rebase: a checkpoint's rebase document (Prune).
//   - EventPayload, ReadEvent: an event row's payload, both ways;
//     ModelCalls, Calls, CallOf: the model calls a row keeps.
//   - TaskID: the id a task has at a checkpoint; SameJSON: the test an
//     edit makes of a value.
package chainformat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"rewind/store"
)

// Encode is the stored row of cp, made from parent by groups (Row);
// cp's Metadata.Graph is kept on a run's first checkpoint (its Run set)
// and its last (a status other than running) only, as the row stores it.
// parent is nil when cp has no parent in this thread. known are the
// messages the writer knows the thread holds (it stored them in this
// run, under its lock): a reference to one does not send them again.
// memo is the writer's, kept from commit to commit.
func (g *Schema) Encode(cp *Checkpoint, parent *Checkpoint, groups []WriteGroup, memo *Memo, known map[string]bool) (Encoded, error) {
	if cp.Metadata.Run == nil && cp.Metadata.Status == StatusRunning {
		// Between a run's first and last checkpoints: its graph's, unnamed
		// (on every listing the name cost 0.3 KB a turn).
		cp.Metadata.Graph = ""
	}
	return g.encodeRow(cp, parent, groups, memo, known)
}

// Committed gives cp what its stored row says of it: its distance from
// its base and its sizes.
func (e Encoded) Committed(cp *Checkpoint) {
	cp.depth, cp.Bytes, cp.RowBytes = e.depth, e.bytes, e.rowBytes
}

// Rebuild reads the checkpoint at the head of chain (newest first, as
// Store.Chain gives it). cached, when set, offers a checkpoint already
// rebuilt (by this process) for a row of the chain: the replay then
// starts from it, not the base.
func (g *Schema) Rebuild(ctx context.Context, st store.Store, chain []store.Checkpoint, cached func(store.Checkpoint) (Checkpoint, bool)) (Checkpoint, error) {
	return g.rebuild(ctx, st, chain, cached)
}

// Rebase is the document that stands for cp's row once its parent is
// pruned: the whole state, and the row's own writes (see headdoc.go).
func (g *Schema) Rebase(cp *Checkpoint, stored store.Checkpoint) ([]byte, error) {
	return g.rebaseDoc(cp, stored)
}

// Listed reads a History row: its listing, or the whole document of a
// row stored before listings existed.
func (g *Schema) Listed(row store.Checkpoint) (Checkpoint, error) {
	if len(row.Meta) == 0 {
		return g.decodeLegacy(row, g.SchemaVersion)
	}
	var m listing
	if err := decodeListing(row.Meta, &m, listWhole); err != nil {
		return Checkpoint{}, fmt.Errorf("checkpoint %d of thread %q: %w (its listing: %v)", row.ID, threadName(row.ThreadID), ErrCorrupt, err)
	}
	p := parsedRow{row: row, meta: m}
	cp := p.checkpoint(g)
	cp.Tasks = make([]Task, len(m.Next))
	for i, n := range m.Next {
		cp.Tasks[i] = Task{Node: n}
	}
	return cp, nil
}

// Brief is what a line of a log shows of a checkpoint's listing
// (Schema.Brief): Listed's checkpoint with its model calls counted, and
// without the tokens by role, the running totals and the run.
type Brief struct {
	Step, Messages int
	// Calls is the sum of Metadata.ModelCalls.
	Calls      int
	Source     string
	Nodes      []string
	Next       []string
	Reused     []string
	Interrupt  *Interrupt
	ForkedFrom int64
	Replay     bool
	// Graph is Metadata.Graph: the graph that wrote the checkpoint.
	Graph string
}

// Brief reads a History row with a listing as Listed does, but only what
// Brief holds: a whole-chain log reads 40,000 on a 5,000-turn thread, and
// Listed's maps of tokens and totals were a third of reading each. A row
// stored before listings has none to read (an error: read it with Listed).
func (g *Schema) Brief(row store.Checkpoint) (Brief, error) {
	if len(row.Meta) == 0 {
		return Brief{}, fmt.Errorf("checkpoint %d of thread %q has no listing: it is read whole", row.ID, threadName(row.ThreadID))
	}
	var m listing
	if err := decodeListing(row.Meta, &m, listBrief); err != nil {
		return Brief{}, fmt.Errorf("checkpoint %d of thread %q: %w (its listing: %v)", row.ID, threadName(row.ThreadID), ErrCorrupt, err)
	}
	// As fill reads back what compact left out, from the sums alone.
	tokens := m.brief.tokens
	if !tokens.set {
		tokens = m.brief.oldTokens
	}
	b := Brief{Step: m.Step, Messages: m.Messages, Source: m.Source, Nodes: m.Nodes, Next: m.Next, Reused: m.Reused,
		Interrupt: m.Interrupt, ForkedFrom: m.ForkedFrom, Replay: m.Replay, Graph: m.Graph}
	b.Calls = m.brief.calls.calls
	if !m.brief.calls.set && m.brief.tokens.set {
		b.Calls = m.brief.tokens.calls
	}
	if b.Source == "" {
		b.Source = SourceLoop
		if b.Nodes == nil && tokens.set {
			b.Nodes = slices.Sorted(slices.Values(tokens.roles))
		}
	}
	return b, nil
}

// SourceAndEvents reads a listing's source and how many events its
// commit stored, by hand (a resume reads one per checkpoint of the
// thread); zero values for a listing that does not read.
func SourceAndEvents(meta []byte) (source string, events int) {
	var m listing
	_ = decodeListing(meta, &m, listCore)
	return m.Source, m.Events
}

// EventPayload is the stored payload of ev (its thread, checkpoint, seq
// and type are columns of the row).
func EventPayload(ev Event) ([]byte, error) { return ev.stored() }

// ReadEvent reads a stored event row of thread.
func ReadEvent(thread string, row store.Event) (Event, error) {
	var p storedEvent
	err := json.Unmarshal(row.Payload, &p)
	var data json.RawMessage
	if err == nil {
		data, err = p.data()
	}
	if err != nil {
		return Event{}, err
	}
	return Event{Thread: thread, Checkpoint: row.CheckpointID, Seq: row.Seq, Type: row.Type, Node: p.Node, Task: p.Task, Data: data, At: p.At.Time, Run: p.Run}, nil
}

// ModelCalls are the model.called events stored with row's writes.
func ModelCalls(row store.Checkpoint) ([]Event, error) {
	var doc stateDoc
	var m listing
	if err := errors.Join(decodeStateDoc(row.State, &doc), decodeListing(row.Meta, &m, listWhole)); err != nil {
		return nil, err
	}
	doc.Format = max(doc.Format, m.format)
	doc.fillIDs(row, m.Step)
	var out []Event
	for _, g := range doc.Groups {
		for _, c := range g.Calls {
			out = append(out, c.event(row.ThreadID, row.ID, g.Node, g.Task))
		}
	}
	return out, nil
}

// Call is a stored model call's role and tokens.
type Call struct {
	Role               string
	Prompt, Completion int
}

// Calls reads the model calls a state document stores (Costs reads them
// for a checkpoint whose listing holds no tokens).
func Calls(state []byte) ([]Call, error) {
	var doc struct {
		Groups []writeGroup `json:"writes"`
	}
	if err := json.Unmarshal(state, &doc); err != nil {
		return nil, err
	}
	(&stateDoc{Groups: doc.Groups}).fillRoles()
	var out []Call
	for _, g := range doc.Groups {
		for _, c := range g.Calls {
			out = append(out, Call{Role: c.Role, Prompt: c.Prompt, Completion: c.Completion})
		}
	}
	return out, nil
}

// CallOf reads a model.called event's role and tokens.
func CallOf(ev Event) Call {
	c := callOf(ev)
	return Call{Role: c.Role, Prompt: c.Prompt, Completion: c.Completion}
}

// TaskID is the id of the packet-th task of node at checkpoint (of step
// step): deterministic, so the same tasks get the same ids after a
// restart.
func TaskID(thread string, checkpoint int64, step int, node string, packet int) string {
	return taskID(thread, checkpoint, step, node, packet)
}

// SameJSON tells whether a and b are the same JSON value.
func SameJSON(a, b json.RawMessage) bool { return sameJSON(a, b) }

// Channels are the declared channels, in declaration order.
func (g *Schema) Channels() []string { return g.chanList }

// TranscriptOr is the transcript's channel, alt when there is none.
func (g *Schema) TranscriptOr(alt string) string { return g.transcriptOr(alt) }
