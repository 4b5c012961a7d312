package chainformat

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"rewind/engine/internal/userpanic"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"rewind/engine/internal/jsonstr"
	"rewind/engine/model"
	"rewind/store"
)

// How a checkpoint is stored is a separate question from what it is: a
// 1,000-turn thread has 8,000 checkpoints, so storage grows with what
// changed, never with the history.
//
//   - Every checkpoint's row has a small listing document (Meta) and a
//     state document. Most state documents are deltas: the writes applied
//     to the parent's values, grouped by the task that made them. Every
//     baseEvery-th checkpoint on a branch (and every root) is a base that
//     also holds all channel values, so a checkpoint is rebuilt from at
//     most baseEvery rows, read by one Store.Chain call.
//   - The transcript channel's items (the conversation) are stored once,
//     as store.Messages keyed by content hash; documents hold their hashes:
//     {"$m": "…"} sets the list, {"$m+": "…"} appends to it (format 3
//     packs the hashes into one string; format 2 wrote a list).
//   - Large strings are stored once as blobs (see blobs.go), compressed
//     when that pays.
//   - Format 3 stores nothing twice it can read back from the same row or
//     the messages: the listing is an array of fields by position
//     (listingjson.go) that leaves out what fill derives; task ids are
//     derived (omitIDs); a replace of items a pending Send carries refers
//     to it (sendrefs.go); a text the transcript holds is a reference to
//     its message (contentrefs.go). A pending Send is always stored whole,
//     as plain JSON (the seed's check 3 reads it raw).
//   - A task's writes, stored the moment it finishes, are folded into the
//     next checkpoint's delta, which settles (deletes) them.
//
// Rows written before this format (no Meta) hold whole documents and are
// read by decodeLegacy.

// storageFormat marks a state document of this format. Format 3 leaves
// out the ids a reader derives (see stateDoc.fillIDs); format 2 spelled
// them out and reads as before.
const storageFormat = 3

// baseEvery bounds the rows read to rebuild one checkpoint. 32 (it was
// 64) halves the mean chain a cold load reads and replays for about 200
// bytes more per turn (7,702 -> 7,905 B at 300 turns, still flat and
// under issue 9's 8 KB).
var baseEvery = 32

// listing is the Meta document: what a listing shows, without values.
//
// A listing leaves out what it can be read back from (see compact and
// fill): "source" when it is "loop" (listings written before always have
// one), and then "status" when it is "running" and "nodes" when they are
// the roles of "t"; "calls" when "t" (the tokens by role, which replaced
// "tok") counts the same calls; "bytes" when it is "row".
type listing struct {
	Step          int            `json:"step"`
	Source        string         `json:"source,omitempty"`
	SchemaVersion int            `json:"v"`
	Depth         int            `json:"depth,omitempty"`
	Nodes         []string       `json:"nodes,omitempty"`
	ModelCalls    map[string]int `json:"calls,omitempty"`
	// Tokens are the stored calls' tokens by role: [calls, prompt,
	// completion]. Listings written before it have calls without it
	// (Costs then reads those rows' states). OldTokens is the same under
	// the key listings used before calls was left out.
	Tokens     map[string][3]int `json:"t,omitempty"`
	OldTokens  map[string][3]int `json:"tok,omitempty"`
	Next       []string          `json:"next,omitempty"`
	Interrupt  *Interrupt        `json:"interrupt,omitempty"`
	ForkedFrom int64             `json:"forkedFrom,omitempty"`
	Replay     bool              `json:"replay,omitempty"`
	AsNode     string            `json:"asNode,omitempty"`
	Reused     []string          `json:"reused,omitempty"`
	Status     string            `json:"status,omitempty"`
	Reason     string            `json:"reason,omitempty"`
	Events     int               `json:"events,omitempty"`
	Messages   int               `json:"msgs"`
	Bytes      int               `json:"bytes,omitempty"`
	Row        int               `json:"row,omitempty"`
	// The running totals of a turn's first checkpoint (Metadata.Sums),
	// after the format in an array listing: SumTurns is Sums.Turns + 1
	// (0: no sums), SumThread and SumBranch [calls, prompt, completion]
	// by role, as Tokens.
	SumTurns  int               `json:"-"`
	SumThread map[string][3]int `json:"-"`
	SumBranch map[string][3]int `json:"-"`
	// Run marks the first checkpoint a run wrote (Metadata.Run), after
	// the sums in an array listing (24): [id, kind] or [id, kind,
	// continues]. The run's later checkpoints leave it out: theirs is
	// their parent's (Runs reads them so).
	Run []string `json:"-"`
	// Fixes are Metadata.Fixes, after the run in an array listing (25).
	Fixes []string `json:"-"`
	// Graph is Metadata.Graph, after the fixes in an array listing (26):
	// a run's first checkpoint's, with its run mark.
	Graph string `json:"-"`
	// format is the storage format of the row's document, which an array
	// listing implies (listingjson.go); 0 for an object listing.
	format int
	// brief is what listBrief keeps of ModelCalls, Tokens and OldTokens
	// (left nil): their sums and roles, not a map each a row.
	brief briefCounts
}

// briefCounts are a listing's model calls as a log line counts them
// (Schema.Brief); set says the listing holds the field.
type briefCounts struct{ calls, tokens, oldTokens roleSum }

// roleSum is a by-role field of a listing summed: its calls and roles.
type roleSum struct {
	set   bool
	calls int
	roles []string
}

// stateDoc is the state document of this format.
type stateDoc struct {
	// Format is left out of a document whose listing is an array (format
	// 3 and up): the listing says it (listing.format).
	Format int `json:"format,omitempty"`
	// Tasks are the pending tasks, arguments and all (a Send is stored as
	// plain JSON). Format 3 leaves them out when the listing's next names
	// them all: none has arguments or an id of its own.
	Tasks storedTasks `json:"tasks,omitempty"`
	// Groups are the writes applied to the parent's values, in order.
	Groups []writeGroup `json:"writes,omitempty"`
	// Values are every channel's value: bases only.
	Values    map[string]json.RawMessage `json:"values,omitempty"`
	Usage     *usage                     `json:"usage,omitempty"`
	Duration  int64                      `json:"durationMs,omitempty"`
	Discarded []Task                     `json:"discarded,omitempty"`
}

type usage struct {
	Prompt     int `json:"prompt,omitempty"`
	Completion int `json:"completion,omitempty"`
}

// writeGroup is the writes of one task, or of the input/update that made
// the checkpoint (Task empty, Node "input" or the node an update wrote as).
type writeGroup struct {
	Task string `json:"task,omitempty"`
	// Packet stands for Task when the id is the one the parent gave its
	// Packet-th task of Node (format 3).
	Packet *int          `json:"p,omitempty"`
	Node   string        `json:"node"`
	Writes []storedWrite `json:"w"`
	Ms     int64         `json:"ms,omitempty"`
	// Calls are the task's model calls: its model.called events, kept
	// here rather than as event rows (see Engine.Events).
	Calls []storedCall `json:"calls,omitempty"`
	// Refs lists the writes that hold references to message texts
	// (format 3, see contentrefs.go).
	Refs []int `json:"-"`
}

// storedCall is one model.called event: [role, prompt tokens, completion
// tokens, ms, unix µs, error?, JSON mode?, request?, answer?] on disk. The
// optional elements are left off when empty (a slot before a later one
// stays, ""), so a call stored before modes (or requests) were recorded
// reads as one without, and a reader that knows fewer elements reads the
// first ones as before.
//
// Request is the request's hash (model.Request.Hash, the first
// RequestHashLen hex digits): the request itself is built again from the
// checkpoint the task ran from, by the graph, and this tells whether the
// rebuilt one is what was sent. Answer is the model's raw answer when the
// node keeps it nowhere else (a plan, a verdict: model.Request.KeepAnswer).
//
// In format 3 a call whose role is its group's node has 0 for the role
// (fillRoles reads it back).
type storedCall struct {
	Role               string
	sameRole           bool // stored as 0: the group's node
	Prompt, Completion int
	Ms, At             int64
	Err                string
	Mode               string
	Req                string
	Answer             string
}

// RequestHashLen is how many hex digits of a request's hash a stored call
// keeps: 64 bits tell a rebuilt request from another.
const RequestHashLen = 16

func (c storedCall) MarshalJSON() ([]byte, error) {
	v := []any{c.Role, c.Prompt, c.Completion, c.Ms, c.At}
	if c.sameRole {
		v[0] = 0
	}
	tail := []string{c.Err, c.Mode, c.Req, c.Answer}
	for len(tail) > 0 && tail[len(tail)-1] == "" {
		tail = tail[:len(tail)-1]
	}
	for _, s := range tail {
		v = append(v, s)
	}
	return json.Marshal(v)
}

func (c *storedCall) UnmarshalJSON(b []byte) error {
	var v []json.RawMessage
	if err := json.Unmarshal(b, &v); err != nil || len(v) < 5 {
		return fmt.Errorf("a stored model call is not [role, prompt, completion, ms, at]")
	}
	dst := []any{&c.Role, &c.Prompt, &c.Completion, &c.Ms, &c.At, &c.Err, &c.Mode, &c.Req, &c.Answer}
	if string(v[0]) == "0" {
		c.sameRole, dst[0] = true, new(int)
	}
	for i := 0; i < len(v) && i < len(dst); i++ {
		if err := json.Unmarshal(v[i], dst[i]); err != nil {
			return fmt.Errorf("a stored model call: %w", err)
		}
	}
	return nil
}

// groupCalls is the stored form of the groups' model calls, group by
// group.
func groupCalls(groups []WriteGroup) [][]storedCall {
	out := make([][]storedCall, len(groups))
	for i, g := range groups {
		for _, ev := range g.Calls {
			out[i] = append(out[i], callOf(ev))
		}
	}
	return out
}

// callsUsage is the tokens of the groups' model calls.
func callsUsage(calls [][]storedCall) model.Usage {
	var u model.Usage
	for _, cs := range calls {
		for _, c := range cs {
			u.PromptTokens += c.Prompt
			u.CompletionTokens += c.Completion
		}
	}
	return u
}

// callOf turns a model.called event into its stored form.
func callOf(ev Event) storedCall {
	if c, ok := quickCall(ev.Data); ok {
		c.At = ev.At.UnixMicro()
		return c
	}
	var d struct {
		Role       string `json:"role"`
		Prompt     int    `json:"promptTokens"`
		Completion int    `json:"completionTokens"`
		Ms         int64  `json:"durationMs"`
		Err        string `json:"error"`
		Mode       string `json:"jsonMode"`
		Req        string `json:"request"`
		Answer     string `json:"answer"`
	}
	_ = json.Unmarshal(ev.Data, &d) // what it cannot read stays zero
	return storedCall{Role: d.Role, Prompt: d.Prompt, Completion: d.Completion, Ms: d.Ms, At: ev.At.UnixMicro(), Err: d.Err, Mode: d.Mode, Req: d.Req, Answer: d.Answer}
}

// quickCall reads a model.called event's data as callOf's json.Unmarshal
// does, when it is as countingModel writes it: an object of those keys
// exactly, with integers and strings without escapes. ok is false for
// anything else.
func quickCall(data []byte) (c storedCall, ok bool) {
	if len(data) < 2 || data[0] != '{' || data[len(data)-1] != '}' {
		return c, false
	}
	for i := 1; i < len(data)-1; {
		kEnd := stringEnd(data, i)
		if kEnd < 0 || kEnd >= len(data) || data[kEnd] != ':' {
			return c, false
		}
		vEnd := valueEnd(data, kEnd+1)
		if vEnd < 0 {
			return c, false
		}
		key, v := data[i+1:kEnd-1], data[kEnd+1:vEnd]
		if len(v) == 0 {
			return c, false
		}
		var str *string
		var num *int
		switch string(key) {
		case "role":
			str = &c.Role
		case "error":
			str = &c.Err
		case "jsonMode":
			str = &c.Mode
		case "request":
			str = &c.Req
		case "answer":
			str = &c.Answer
		case "promptTokens":
			num = &c.Prompt
		case "completionTokens":
			num = &c.Completion
		case "durationMs":
			n, ok := plainInt(v)
			if !ok {
				return c, false
			}
			c.Ms = n
		default:
			return c, false
		}
		switch {
		case str != nil:
			if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' || !plainString(v[1:len(v)-1]) {
				return c, false
			}
			*str = string(v[1 : len(v)-1])
		case num != nil:
			n, ok := plainInt(v)
			if !ok || int64(int(n)) != n {
				return c, false
			}
			*num = int(n)
		}
		if vEnd == len(data)-1 {
			return c, true
		}
		if data[vEnd] != ',' {
			return c, false
		}
		i = vEnd + 1
	}
	return c, false
}

// plainString tells a JSON string's text that reads as it is written: no
// escape, no control character, valid UTF-8.
func plainString(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c == '\\' || c == '"' {
			return false
		}
	}
	return utf8.Valid(b)
}

// plainInt reads a JSON integer written without sign tricks, exponent or
// fraction ("0", "-12").
func plainInt(v []byte) (int64, bool) {
	if numberEnd(v, 0) != len(v) || bytes.ContainsAny(v, ".eE") {
		return 0, false
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	return n, err == nil
}

// event is the model.called event a stored call stands for.
func (c storedCall) event(thread string, checkpoint int64, node, task string) Event {
	return Event{Thread: thread, Checkpoint: checkpoint, Type: EventModelCalled, Node: node, Task: task, Data: c.data(), At: time.UnixMicro(c.At).UTC()}
}

// data is a model.called event's data as json.Marshal writes its map
// (keys sorted, empty strings left out), by hand: encoding/json's first
// use in a process was a twentieth of an older checkpoint's load.
func (c storedCall) data() []byte {
	b := make([]byte, 0, 96+len(c.Role)+len(c.Err)+len(c.Mode)+len(c.Req)+len(c.Answer))
	b = append(b, '{')
	str := func(key, v string) {
		if v != "" {
			b = jsonstr.Append(append(append(b, '"'), key+`":`...), v)
			b = append(b, ',')
		}
	}
	num := func(key string, v int64) {
		b = strconv.AppendInt(append(append(b, '"'), key+`":`...), v, 10)
		b = append(b, ',')
	}
	str("answer", c.Answer)
	num("completionTokens", int64(c.Completion))
	num("durationMs", c.Ms)
	str("error", c.Err)
	str("jsonMode", c.Mode)
	num("promptTokens", int64(c.Prompt))
	str("request", c.Req)
	b = jsonstr.Append(append(b, `"role":`...), c.Role)
	return append(b, '}')
}

// storedWrite is [channel, value] on disk.
type storedWrite struct {
	Channel string
	Value   json.RawMessage
}

func (w storedWrite) MarshalJSON() ([]byte, error) {
	ch, err := json.Marshal(w.Channel)
	if err != nil {
		return nil, err
	}
	return slices.Concat([]byte{'['}, ch, []byte{','}, w.Value, []byte{']'}), nil
}

// UnmarshalJSON needs no second validation: encoding/json checked b.
func (w *storedWrite) UnmarshalJSON(b []byte) error {
	pair, err := splitList(b)
	if err != nil || len(pair) != 2 {
		return fmt.Errorf("a stored write is not [channel, value]")
	}
	w.Value = pair[1]
	return json.Unmarshal(pair[0], &w.Channel)
}

// WriteGroup is the writes one task (or the input) applied to make a
// checkpoint.
type WriteGroup struct {
	Task   string  `json:"task,omitempty"`
	Node   string  `json:"node"`
	Writes []Write `json:"writes"`
	// DurationMs is how long the task ran.
	DurationMs int64 `json:"durationMs,omitempty"`
	// Calls are the task's model.called events.
	Calls []Event `json:"calls,omitempty"`
}

// transcript ops in stored documents.
type transcriptOp struct {
	Set    []string `json:"$m,omitempty"`
	Append []string `json:"$m+,omitempty"`
}

// Encoded is what the engine's commit hands the store, and what the
// writer remembers.
type Encoded struct {
	Row             store.Checkpoint
	depth           int
	bytes, rowBytes int
	// Tokens are the groups' model calls by role (Metadata.Tokens).
	Tokens map[string]RoleUsage
}

// encodeRow builds the stored row of cp, made from parent by groups.
// parent is nil when cp has no parent in this thread. known are the
// messages the writer knows the thread holds (it stored them in this run,
// under its lock): a reference to one does not send it again.
func (g *Schema) encodeRow(cp *Checkpoint, parent *Checkpoint, groups []WriteGroup, memo *Memo, known map[string]bool) (Encoded, error) {
	e := g.newEncoder(cp, parent, groups)
	effects, err := g.transcriptEffects(e.parentValues, e.final, groups)
	if err != nil {
		return Encoded{}, err
	}
	if err := e.encodeGroups(effects); err != nil {
		return Encoded{}, err
	}
	if e.base {
		if err := e.encodeBase(memo); err != nil {
			return Encoded{}, err
		}
	}
	if e.doc.Tasks, err = e.b.encodeTasks(e.doc.Tasks); err != nil {
		return Encoded{}, err
	}
	var again []store.Message // not counted in the sizes: stored before
	if !e.base {
		if again, err = e.refer(known); err != nil {
			return Encoded{}, err
		}
	}
	e.doc.omitIDs(cp, parent)
	var headDoc []byte
	if e.headOps != nil {
		if headDoc, e.headBlobs, err = g.headDoc(cp, groups, e.headOps, memo); err != nil {
			return Encoded{}, fmt.Errorf("encode the head snapshot: %w", err)
		}
	}
	if !slices.ContainsFunc(e.doc.Tasks, func(t Task) bool { return t.ID != "" || len(t.Args) > 0 }) {
		e.doc.Tasks = nil // the listing's next
	}
	if e.doc.Discarded, err = e.b.encodeTasks(e.doc.Discarded); err != nil {
		return Encoded{}, err
	}
	e.doc.Format = 0 // the listing's shape says it
	state, err := marshalState(&e.doc)
	if err != nil {
		return Encoded{}, err
	}
	return e.row(state, headDoc, again)
}

// encoder is one row's encoding, step by step: the state document as it
// is made, the messages and blobs it stores.
type encoder struct {
	g          *Schema
	cp, parent *Checkpoint
	groups     []WriteGroup
	// depth is the row's distance from its base; base says it is one.
	depth int
	base  bool
	doc   stateDoc
	calls [][]storedCall
	b     blobber
	// msgs are the transcript items it stores, seenMsg their hashes.
	msgs    []store.Message
	seenMsg map[string]bool
	// parentValues are what the writes apply to, final the transcript
	// with all of them applied.
	parentValues Values
	final        *transcriptItems
	// headOps are the transcript ops of a checkpoint stored as the head
	// snapshot too (see wholeDoc); nil when it is not one. headBlobs are
	// the blobs the snapshot refers to.
	headOps   [][]json.RawMessage
	headBlobs []store.Blob
}

func (g *Schema) newEncoder(cp, parent *Checkpoint, groups []WriteGroup) *encoder {
	e := &encoder{g: g, cp: cp, parent: parent, groups: groups, seenMsg: map[string]bool{}}
	if parent != nil && parent.ID != 0 {
		e.depth = parent.depth + 1
	}
	every := baseEvery
	if g.baseEvery > 0 {
		every = g.baseEvery
	}
	e.base = e.depth == 0 || e.depth >= every
	if e.base {
		e.depth = 0
	}
	e.doc = stateDoc{Format: storageFormat, Tasks: cp.Tasks, Discarded: cp.Metadata.Discarded, Duration: cp.Metadata.DurationMs}
	if e.doc.Tasks == nil {
		e.doc.Tasks = []Task{}
	}
	e.calls = groupCalls(groups)
	if u := cp.Metadata.Usage; u != nil && *u != callsUsage(e.calls) {
		e.doc.Usage = &usage{Prompt: u.PromptTokens, Completion: u.CompletionTokens}
	}
	if parent != nil {
		e.parentValues = parent.Values
	} else {
		e.parentValues = g.Initial()
	}
	e.final = &transcriptItems{raw: cp.Values[g.transcript]}
	// A checkpoint a run ends at (no task due) also goes as the thread's
	// head snapshot: whole, so a new process reads the thread's newest
	// state in one row (see headDoc).
	if len(cp.Tasks) == 0 && len(cp.Values[g.transcript]) <= headMax {
		e.headOps = make([][]json.RawMessage, len(groups))
	}
	return e
}

// addItems stores the transcript items (once each) and gives their hashes.
func (e *encoder) addItems(items []json.RawMessage) ([]string, error) {
	hs := make([]string, len(items))
	for i, it := range items {
		hs[i] = itemHash(it)
		if e.seenMsg[hs[i]] {
			continue
		}
		e.seenMsg[hs[i]] = true
		idx, err := itemIndex(it, e.g.transcriptField())
		if err != nil {
			return nil, err
		}
		e.msgs = append(e.msgs, store.Message{Hash: hs[i], Index: idx, Body: it})
	}
	return hs, nil
}

// encodeGroups stores the groups' writes: a transcript write as an op on
// its items' hashes (effects, in order), a write to a keyed or object
// channel of a delta as a patch against the value before it, large
// strings as blobs.
func (e *encoder) encodeGroups(effects []effect) error {
	g := e.g
	items := map[string]map[string]map[string]any{} // keyed channel → key → item, as the writes go
	citems := map[string]canonKeyed{}               // the same in canonical form, while it can be
	objects := map[string]json.RawMessage{}         // object channel → value, as the writes go
	next := 0                                       // the next transcript effect
	for gi, grp := range e.groups {
		sg := writeGroup{Task: grp.Task, Node: grp.Node, Writes: make([]storedWrite, 0, len(grp.Writes)), Ms: grp.DurationMs}
		for _, c := range e.calls[gi] {
			c.sameRole = c.Role == grp.Node
			sg.Calls = append(sg.Calls, c)
		}
		for wi, w := range grp.Writes {
			if w.Channel == g.transcript && g.transcript != "" {
				enc, err := e.transcriptOp(effects[next])
				next++
				if err != nil {
					return err
				}
				sg.Writes = append(sg.Writes, storedWrite{w.Channel, enc})
				if e.headOps != nil {
					if e.headOps[gi] == nil {
						e.headOps[gi] = make([]json.RawMessage, len(grp.Writes))
					}
					e.headOps[gi][wi] = enc
				}
				continue
			}
			v := w.Value
			if key, ok := g.keyed[w.Channel]; ok && !e.base {
				v = patchKeyed(citems, items, e.parentValues[w.Channel], w, key)
			}
			if g.objects[w.Channel] && !e.base {
				cur, ok := objects[w.Channel]
				if !ok {
					cur = e.parentValues[w.Channel]
				}
				v, objects[w.Channel] = patchObject(cur, w.Value), w.Value
			}
			v, err := e.b.encode(v)
			if err != nil {
				return fmt.Errorf("encode write to %q: %w", w.Channel, err)
			}
			sg.Writes = append(sg.Writes, storedWrite{w.Channel, v})
		}
		e.doc.Groups = append(e.doc.Groups, sg)
	}
	return nil
}

// transcriptOp is the stored op of a transcript write that did eff.
func (e *encoder) transcriptOp(eff effect) (json.RawMessage, error) {
	hs, err := e.addItems(eff.items)
	if err != nil {
		return nil, err
	}
	op := transcriptOp{Append: hs}
	if eff.set {
		op = transcriptOp{Set: hs}
		if hs == nil {
			op.Set = []string{}
		}
	}
	return encodeOp(op)
}

// encodeBase stores every value whole, as a base does: the transcript as
// an op that sets its items' hashes.
func (e *encoder) encodeBase(memo *Memo) error {
	e.doc.Values = make(map[string]json.RawMessage, len(e.cp.Values))
	for name, v := range e.cp.Values {
		if name == e.g.transcript {
			items, err := listItems(v)
			if err != nil {
				return fmt.Errorf("transcript %q: %w", name, err)
			}
			hs, err := e.addItems(items)
			if err != nil {
				return err
			}
			if hs == nil {
				hs = []string{}
			}
			if e.doc.Values[name], err = encodeOp(transcriptOp{Set: hs}); err != nil {
				return err
			}
			continue
		}
		enc, err := memo.encode(&e.b, v)
		if err != nil {
			return fmt.Errorf("encode channel %q: %w", name, err)
		}
		e.doc.Values[name] = enc
	}
	return nil
}

// refer makes a delta's writes refer to what they repeat: a replace of the
// items a pending Send carries (sendrefs.go), a text the transcript holds
// (contentrefs.go). again are the messages referred to, which go along
// again (the store keeps one copy): an item of the values may never have
// been stored by itself (read back from a whole legacy document, say).
func (e *encoder) refer(known map[string]bool) (again []store.Message, err error) {
	g, doc := e.g, &e.doc
	var texts map[string]string // made when a write is long enough to hold one
	for gi, grp := range doc.Groups {
		for j, w := range grp.Writes {
			if _, ok := g.keyed[w.Channel]; ok {
				if ref := refReplace(w.Value, doc.Tasks); ref != nil {
					grp.Writes[j].Value = ref
				}
			}
			if w.Channel == g.transcript {
				continue
			}
			if texts == nil && len(grp.Writes[j].Value) >= contentMin {
				texts = g.transcriptTexts(e.final)
			}
			if ref := refContent(grp.Writes[j].Value, texts); ref != nil {
				grp.Writes[j].Value = ref
				doc.Groups[gi].Refs = append(doc.Groups[gi].Refs, j)
			}
		}
	}
	hs, _ := contentHashes(doc.Groups)
	if len(hs) == 0 {
		return nil, nil
	}
	want := map[string]bool{}
	for _, h := range hs {
		want[h] = !e.seenMsg[h] && !known[h]
	}
	items, _ := e.final.get()
	for _, it := range items {
		if h := itemHash(it); want[h] {
			want[h] = false
			idx, err := itemIndex(it, g.transcriptField())
			if err != nil {
				return nil, err
			}
			again = append(again, store.Message{Hash: h, Index: idx, Body: it})
		}
	}
	return again, nil
}

// listing is the row's listing, compacted, and its calls' tokens by role.
func (e *encoder) listing() (listing, map[string]RoleUsage) {
	cp := e.cp
	meta := listing{Step: cp.Step, Source: cp.Source, SchemaVersion: e.g.SchemaVersion, Depth: e.depth,
		Nodes: cp.Metadata.Nodes, ModelCalls: cp.Metadata.ModelCalls, Interrupt: cp.Metadata.Interrupt,
		ForkedFrom: cp.Metadata.ForkedFrom, Replay: cp.Metadata.Replay, AsNode: cp.Metadata.AsNode, Reused: cp.Metadata.Reused,
		Status: cp.Metadata.Status, Reason: cp.Metadata.Reason, Fixes: cp.Metadata.Fixes, Events: cp.Metadata.Events,
		Messages: cp.Messages, Graph: cp.Metadata.Graph} // commit counted them
	if sums := cp.Metadata.Sums; sums != nil {
		meta.SumTurns, meta.SumThread, meta.SumBranch = sums.Turns+1, packTokens(sums.Thread), packTokens(sums.Branch)
	}
	meta.Run = cp.Metadata.Run.pack()
	for _, t := range cp.Tasks {
		meta.Next = append(meta.Next, t.Node)
	}
	tokens := callTokens(e.calls)
	for role, u := range tokens {
		if meta.Tokens == nil {
			meta.Tokens = map[string][3]int{}
		}
		meta.Tokens[role] = [3]int{u.Calls, u.PromptTokens, u.CompletionTokens}
	}
	return meta.compact(), tokens
}

// row is the stored row: its listing, whose sizes count it too, and state.
func (e *encoder) row(state, headDoc []byte, again []store.Message) (Encoded, error) {
	meta, tokens := e.listing()
	size := len(state)
	for _, m := range e.msgs {
		size += len(m.Body)
	}
	for _, bl := range e.b.blobs {
		size += len(bl.Body)
	}
	metaDoc, err := meta.MarshalJSON() // json.Marshal would only check it again
	if err != nil {
		return Encoded{}, err
	}
	// The sizes count the listing too, with room for their own numbers.
	extra := len(metaDoc) + len(`,"bytes":,"row":`) + 2*len(strconv.Itoa(size+len(metaDoc)+32))
	meta.Bytes, meta.Row = size+extra, len(state)+extra
	stored := meta
	if stored.Bytes == stored.Row {
		stored.Bytes = 0 // fill reads it back
	}
	if metaDoc, err = stored.MarshalJSON(); err != nil {
		return Encoded{}, err
	}
	cp := e.cp
	return Encoded{
		Row: store.Checkpoint{ThreadID: cp.Thread, ID: cp.ID, ParentID: cp.ParentID, Meta: metaDoc, State: state, Base: e.base,
			BlobRefs: blobRefs(state), Messages: append(e.msgs, again...), Blobs: e.blobs(), Head: headDoc},
		depth:    e.depth,
		bytes:    meta.Bytes,
		rowBytes: meta.Row,
		Tokens:   tokens,
	}, nil
}

// blobs are the row's blobs and those its head snapshot refers to, each
// once: the head's go along again (not counted in the sizes: the chain's
// rows stored them), as a base's do.
func (e *encoder) blobs() []store.Blob {
	out := e.b.blobs
	for _, bl := range e.headBlobs {
		if !e.b.seen[bl.Hash] {
			out = append(out, bl)
		}
	}
	return out
}

// callTokens are the groups' model calls by role, as a listing keeps them.
func callTokens(calls [][]storedCall) map[string]RoleUsage {
	var out map[string]RoleUsage
	for _, cs := range calls {
		for _, c := range cs {
			if out == nil {
				out = map[string]RoleUsage{}
			}
			r := out[c.Role]
			r.Calls++
			r.Usage.Add(model.Usage{PromptTokens: c.Prompt, CompletionTokens: c.Completion})
			out[c.Role] = r
		}
	}
	return out
}

func encodeOp(op transcriptOp) (json.RawMessage, error) {
	key, hs := "$m+", op.Append
	if op.Set != nil {
		key, hs = "$m", op.Set
	}
	if packed, ok := packHashes(hs); ok {
		return json.Marshal(map[string]string{key: packed})
	}
	if hs == nil {
		hs = []string{}
	}
	return json.Marshal(map[string][]string{key: hs})
}

// A transcript op of format 3 spells its hashes as one string: each
// 20-digit hex hash as the 14 characters of its 10 bytes in unpadded
// base64url (format 2: a list of hex strings, which it reads too).
const packedHash = 14

func packHashes(hs []string) (string, bool) {
	var b strings.Builder
	for _, h := range hs {
		raw, err := hex.DecodeString(h)
		if err != nil || len(raw) != 10 || hex.EncodeToString(raw) != h {
			return "", false
		}
		b.WriteString(base64.RawURLEncoding.EncodeToString(raw))
	}
	return b.String(), true
}

func unpackHashes(s string) ([]string, error) {
	if len(s)%packedHash != 0 {
		return nil, fmt.Errorf("a packed hash list of %d characters", len(s))
	}
	out := make([]string, 0, len(s)/packedHash)
	for i := 0; i < len(s); i += packedHash {
		raw, err := base64.RawURLEncoding.DecodeString(s[i : i+packedHash])
		if err != nil {
			return nil, fmt.Errorf("a packed hash list: %w", err)
		}
		out = append(out, hex.EncodeToString(raw))
	}
	return out, nil
}

// storedTasks are a document's tasks; an id left out is derived.
type storedTasks []Task

func (ts storedTasks) MarshalJSON() ([]byte, error) {
	type task struct {
		ID   string          `json:"id,omitempty"`
		Node string          `json:"node"`
		Args json.RawMessage `json:"args,omitempty"`
	}
	out := make([]task, len(ts))
	for i, t := range ts {
		out[i] = task(t)
	}
	return json.Marshal(out)
}

// omitIDs leaves out of doc the task ids fillIDs derives: a task's own
// (taskID of this checkpoint) and a group's (taskID of the parent's).
func (doc *stateDoc) omitIDs(cp, parent *Checkpoint) {
	packets := map[string]int{}
	for i, t := range doc.Tasks {
		k := packets[t.Node]
		packets[t.Node]++
		if t.ID == taskID(cp.Thread, cp.ID, cp.Step, t.Node, k) {
			doc.Tasks[i].ID = ""
		}
	}
	if parent == nil || cp.ParentID == 0 {
		return
	}
	for i, g := range doc.Groups {
		if g.Task == "" {
			continue
		}
		k := 0
		for _, t := range parent.Tasks {
			if t.ID == g.Task {
				break
			}
			if t.Node == g.Node {
				k++
			}
		}
		if g.Task == taskID(cp.Thread, cp.ParentID, cp.Step-1, g.Node, k) {
			doc.Groups[i].Task, doc.Groups[i].Packet = "", &k
		}
	}
}

// fillRoles reads back the roles of calls stored as their group's node.
func (doc *stateDoc) fillRoles() {
	for _, g := range doc.Groups {
		for i := range g.Calls {
			if g.Calls[i].sameRole {
				g.Calls[i].Role, g.Calls[i].sameRole = g.Node, false
			}
		}
	}
}

// fillIDs derives the ids omitIDs left out of the document of row, whose
// listing gives step, and the roles of its calls.
func (doc *stateDoc) fillIDs(row store.Checkpoint, step int) {
	doc.fillRoles()
	if doc.Format < 3 {
		return
	}
	packets := map[string]int{}
	for i, t := range doc.Tasks {
		k := packets[t.Node]
		packets[t.Node]++
		if t.ID == "" {
			doc.Tasks[i].ID = taskID(row.ThreadID, row.ID, step, t.Node, k)
		}
	}
	parent := row.ParentID
	if parent == 0 {
		parent = row.RerootedFrom // pruned: the id it had
	}
	for i, g := range doc.Groups {
		if g.Task == "" && g.Packet != nil {
			doc.Groups[i].Task, doc.Groups[i].Packet = taskID(row.ThreadID, parent, step-1, g.Node, *g.Packet), nil
		}
	}
}

// effect is what one write did to the transcript: items appended, or
// (set) the whole new list.
type effect struct {
	items []json.RawMessage
	set   bool
}

// transcriptEffects tells, for each transcript write of groups in order,
// what it did. Appends are read off the final list (after is the value
// with every write applied); a replace among them needs a replay.
func (g *Schema) transcriptEffects(before Values, after *transcriptItems, groups []WriteGroup) ([]effect, error) {
	if g.transcript == "" {
		return nil, nil
	}
	var ws []json.RawMessage
	replay := false
	for _, grp := range groups {
		for _, w := range grp.Writes {
			if w.Channel == g.transcript {
				ws = append(ws, w.Value)
				_, replace := isReplace(w.Value)
				replay = replay || replace
			}
		}
	}
	if len(ws) == 0 {
		return nil, nil
	}
	final, err := after.get()
	if err != nil {
		return nil, fmt.Errorf("transcript %q: %w", g.transcript, err)
	}
	if !replay {
		at := countList(before[g.transcript])
		out := make([]effect, len(ws))
		for i, w := range ws {
			n := countList(w)
			if at+n > len(final) {
				replay = true
				break
			}
			out[i] = effect{items: final[at : at+n]}
			at += n
		}
		if !replay && at == len(final) {
			return out, nil
		}
	}
	// Replay the writes one at a time on the channel alone.
	out := make([]effect, len(ws))
	cur := Values{g.transcript: before[g.transcript]}
	for i, w := range ws {
		n := countList(cur[g.transcript])
		next, err := g.Apply(cur, []Write{{Channel: g.transcript, Value: w}})
		if err != nil {
			return nil, err
		}
		items, err := listItems(next[g.transcript])
		if err != nil {
			return nil, fmt.Errorf("transcript %q: %w", g.transcript, err)
		}
		if _, replace := isReplace(w); replace || len(items) < n {
			out[i] = effect{items: items, set: true}
		} else {
			out[i] = effect{items: items[n:]}
		}
		cur = next
	}
	return out, nil
}

// encodeTasks keeps large Send arguments as blobs, in a copy.
func (b *blobber) encodeTasks(ts []Task) ([]Task, error) {
	if len(ts) == 0 {
		return ts, nil
	}
	out := slices.Clone(ts)
	for i := range out {
		if len(out[i].Args) == 0 {
			continue
		}
		var err error
		if out[i].Args, err = b.encode(out[i].Args); err != nil {
			return nil, fmt.Errorf("encode arguments of task %s: %w", out[i].ID, err)
		}
	}
	return out, nil
}

func unblobTasks(ts []Task, blobs *blobSet) ([]Task, error) {
	for i := range ts {
		if len(ts[i].Args) == 0 {
			continue
		}
		var err error
		if ts[i].Args, err = blobs.unblob(ts[i].Args); err != nil {
			return nil, fmt.Errorf("arguments of task %s: %w", ts[i].ID, err)
		}
	}
	return ts, nil
}

func (g *Schema) transcriptField() string {
	if g.transcriptIndex == "" {
		return "index"
	}
	return g.transcriptIndex
}

func (g *Schema) transcriptOr(alt string) string {
	if g.transcript == "" {
		return alt
	}
	return g.transcript
}

// listItems splits a JSON list into its items, keeping their bytes.
func listItems(raw json.RawMessage) ([]json.RawMessage, error) {
	items, err := splitList(raw)
	if err != nil {
		return nil, fmt.Errorf("want a list: %w", err)
	}
	return items, nil
}

func itemIndex(item json.RawMessage, field string) (int64, error) {
	raw, ok := topField(item, field)
	if !ok {
		return 0, nil
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("a transcript item's %s is %s, not an integer", field, raw)
	}
	return n, nil
}

// parsedRow is one row of a chain, decoded.
type parsedRow struct {
	row  store.Checkpoint
	meta listing
	doc  stateDoc
	// tasks are a row's tasks as stored, but for the head's (in doc).
	tasks  json.RawMessage
	legacy bool
	// cached is this row as this process already rebuilt it.
	cached *Checkpoint
}

// rebuild reads the checkpoint at the head of chain (newest first, as
// Store.Chain gives it).
//
// cached, when set, offers a checkpoint already rebuilt (by this process)
// for a row of the chain: the replay then starts from it, not the base.
func (g *Schema) rebuild(ctx context.Context, st store.Store, chain []store.Checkpoint, cached func(store.Checkpoint) (Checkpoint, bool)) (Checkpoint, error) {
	head := chain[0]
	where := fmt.Sprintf("checkpoint %d of thread %q", head.ID, threadName(head.ThreadID))
	if len(head.Meta) == 0 {
		// Written before this format: a whole document.
		return g.decodeLegacy(head, g.SchemaVersion)
	}
	rows, from, err := g.parseChain(chain, cached)
	if err != nil {
		return Checkpoint{}, err
	}
	if from != nil && rows[0].meta.SchemaVersion != g.SchemaVersion {
		return g.rebuild(ctx, st, chain, nil) // values of another version: replay it all
	}
	if from != nil {
		// The cached checkpoint stands in for the base: one more "row"
		// whose values are known.
		rows = append(rows, parsedRow{row: chain[len(rows)], cached: from})
	}
	r := &rebuilder{g: g, head: head, where: where, rows: rows, start: len(rows) - 1, last: rows[len(rows)-1]}
	if err := r.checkVersions(); err != nil {
		return Checkpoint{}, err
	}
	if err := r.readBase(); err != nil {
		return Checkpoint{}, err
	}
	// A write a newer row's write to its channel replaces whole is not
	// replayed (resets), nor is a base value so replaced.
	r.reset = g.dropReplaced(rows, r.start)
	// Nor is a field of an object patch, or of the base's object, that a
	// newer patch names again.
	if r.last.cached == nil && !r.last.legacy {
		g.dropPatched(rows, r.start, r.base, r.reset)
	}
	if err := r.transcriptOps(); err != nil {
		return Checkpoint{}, err
	}
	wantMsg, err := r.wantMessages()
	if err != nil {
		return Checkpoint{}, err
	}
	if r.bodies, r.blobs, err = g.fetchBodies(ctx, st, head.ThreadID, r.transcript, wantMsg, r.inlineItems, r.wantBlobs()); err != nil {
		return Checkpoint{}, fmt.Errorf("%s: %w", where, err)
	}
	if err := r.expandRefs(); err != nil {
		return Checkpoint{}, err
	}
	if err := r.startValues(); err != nil {
		return Checkpoint{}, err
	}
	if err := r.replay(); err != nil {
		return Checkpoint{}, err
	}
	if err := r.joinTranscript(); err != nil {
		return Checkpoint{}, err
	}
	return r.result()
}

// parseChain decodes chain's rows from the head down to its base (a whole
// document, a head snapshot or a base row), or down to the row cached
// offers a checkpoint for (from, whose row is left out).
func (g *Schema) parseChain(chain []store.Checkpoint, cached func(store.Checkpoint) (Checkpoint, bool)) (rows []parsedRow, from *Checkpoint, err error) {
	rows = make([]parsedRow, 0, len(chain))
	for i, r := range chain {
		if cached != nil && i > 0 {
			if c, ok := cached(r); ok {
				cp := c // on the heap only when found
				return rows, &cp, nil
			}
		}
		p, err := g.parseRow(r, i == 0)
		if err != nil {
			return nil, nil, err
		}
		rows = append(rows, p)
		if p.legacy || len(r.Head) > 0 {
			break // a whole document: the base, whatever its flag says
		}
	}
	return rows, nil, nil
}

// rebuilder is one rebuild, step by step: the chain's rows (rows[start]
// the base, or the cached checkpoint standing in for it), the values the
// base holds, the transcript as hashes, the bodies read, and the values
// and the head's own writes as the replay makes them.
type rebuilder struct {
	g     *Schema
	head  store.Checkpoint
	where string
	rows  []parsedRow
	start int
	last  parsedRow // rows[start]
	// version is the chain's schema version.
	version int
	base    map[string]json.RawMessage
	// reset are the channels whose base value a newer write replaces.
	reset map[string]bool

	// The transcript, as hashes, or inline (a legacy base's list or a
	// cached one) until an op needs its hashes; inlineItems are the
	// inline list's items by hash, once hashed.
	transcript  []string
	inline      json.RawMessage
	inlineItems map[string]json.RawMessage
	// headOps are the head's own transcript writes, in order; nextOp the
	// next one its Applied takes.
	headOps []transcriptOp
	nextOp  int

	bodies map[string][]byte
	blobs  *blobSet

	values Values
	keyed  map[string]*keyedList // keyed channels, decoded while replaying
	// applied are the head's own writes, decoded; a transcript write
	// waits for the message bodies (ops[{group, write}]).
	applied []WriteGroup
	ops     map[[2]int]transcriptOp
}

// checkVersions refuses a chain of two schema versions, or of a version
// newer than the schema's.
func (r *rebuilder) checkVersions() error {
	r.version = r.rows[0].meta.SchemaVersion
	for _, p := range r.rows {
		if !p.legacy && p.cached == nil && p.meta.SchemaVersion != r.version {
			return fmt.Errorf("%s: its chain mixes schema versions %d and %d: %w", r.where, r.version, p.meta.SchemaVersion, ErrCorrupt)
		}
	}
	if r.version > r.g.SchemaVersion {
		return fmt.Errorf("%s has schema v%d but this rewind reads up to v%d: %w; upgrade rewind to open it", r.where, r.version, r.g.SchemaVersion, ErrNewerSchema)
	}
	return nil
}

// readBase reads the values the replay starts from: a cached checkpoint's,
// a legacy whole document's, a base row's (a head snapshot or a whole
// rebase too: parseRow) or a rebase's.
func (r *rebuilder) readBase() error {
	last := r.last
	switch {
	case last.cached != nil:
		r.base = last.cached.Values
	case last.legacy:
		cp, err := r.g.decodeLegacy(last.row, r.version)
		if err != nil {
			return err
		}
		r.base = cp.Values
	case last.row.Base:
		if last.doc.Values == nil {
			return fmt.Errorf("%s: base checkpoint %d holds no values: %w", r.where, last.row.ID, ErrCorrupt)
		}
		r.base = last.doc.Values
	case len(last.row.Rebased) > 0:
		var rb stateDoc
		if err := decodeStateDoc(last.row.Rebased, &rb); err != nil || rb.Format < 2 || rb.Format > storageFormat || rb.Values == nil {
			return fmt.Errorf("%s: the rebased state of checkpoint %d does not decode: %w", r.where, last.row.ID, ErrCorrupt)
		}
		r.base = rb.Values
	default:
		return fmt.Errorf("%s: checkpoint %d holds only a delta and its parent is gone (pruned without a rebase?): %w; fork from a newer checkpoint", r.where, last.row.ID, ErrCorrupt)
	}
	return nil
}

// transcriptOps replays the transcript as hashes, first, so that its
// messages, the texts writes refer to and the blobs are read at once: the
// base's list, then every newer row's ops; the head's own ops are kept
// for its Applied.
func (r *rebuilder) transcriptOps() error {
	g, last := r.g, r.last
	if raw, ok := r.base[g.transcript]; ok && g.transcript != "" {
		switch {
		case last.cached != nil || last.legacy || isList(raw):
			r.inline = raw
		default:
			op, err := parseOp(raw)
			if err != nil || op.Set == nil {
				return fmt.Errorf("%s: transcript of base %d: %w", r.where, last.row.ID, ErrCorrupt)
			}
			r.transcript = op.Set
		}
	}
	for i := r.start - 1; i >= 0 && g.transcript != ""; i-- {
		for _, grp := range r.rows[i].doc.Groups {
			for _, w := range grp.Writes {
				if w.Channel != g.transcript || w.Value == nil {
					continue
				}
				if err := r.transcriptOp(i, w.Value); err != nil {
					return err
				}
			}
		}
	}
	if r.start == 0 && g.transcript != "" {
		// A base stores its own writes whole; its transcript writes are
		// ops all the same.
		for _, grp := range r.rows[0].doc.Groups {
			for _, w := range grp.Writes {
				if w.Channel == g.transcript {
					op, err := parseOp(w.Value)
					if err != nil {
						return fmt.Errorf("%s: transcript write: %w", r.where, ErrCorrupt)
					}
					r.headOps = append(r.headOps, op)
				}
			}
		}
	}
	return nil
}

// transcriptOp applies the transcript op row i stores to the hashes.
func (r *rebuilder) transcriptOp(i int, stored json.RawMessage) error {
	op, err := parseOp(stored)
	if err != nil {
		return fmt.Errorf("%s: transcript write of checkpoint %d: %w", r.where, r.rows[i].row.ID, ErrCorrupt)
	}
	if i == 0 {
		r.headOps = append(r.headOps, op)
	}
	if r.inline != nil {
		// An op on an inline list needs its items as hashes: hashed on
		// first use.
		if r.transcript, r.inlineItems, err = hashItems(r.inline); err != nil {
			return fmt.Errorf("%s: %w (%w)", r.where, ErrCorrupt, err)
		}
		r.inline = nil
	}
	if op.Set != nil {
		r.transcript = slices.Clone(op.Set)
	} else {
		r.transcript = append(r.transcript, op.Append...)
	}
	return nil
}

// wantMessages are the messages to read: the transcript's, the head's
// ops', and the texts live writes refer to, but for those the inline list
// holds.
func (r *rebuilder) wantMessages() (map[string]bool, error) {
	want := map[string]bool{}
	if r.inline == nil {
		for _, h := range r.transcript {
			want[h] = true
		}
	}
	for _, op := range r.headOps {
		for _, h := range op.Set {
			want[h] = true
		}
		for _, h := range op.Append {
			want[h] = true
		}
	}
	for i := r.start - 1; i >= 0; i-- {
		if r.rows[i].doc.Format < 3 {
			continue
		}
		hs, err := contentHashes(r.rows[i].doc.Groups)
		if err != nil {
			return nil, fmt.Errorf("%s: checkpoint %d: %w (%w)", r.where, r.rows[i].row.ID, ErrCorrupt, err)
		}
		for _, h := range hs {
			want[h] = true
		}
	}
	if r.inline != nil && len(want) > 0 {
		// The head's own transcript writes name messages of the inline
		// list (a head snapshot's): no need to read them. They are its
		// newest: hashed from the end until each is found.
		items, err := listItems(r.inline)
		if err != nil {
			return nil, fmt.Errorf("%s: %w (%w)", r.where, ErrCorrupt, err)
		}
		r.inlineItems = make(map[string]json.RawMessage, len(want))
		for i, found := len(items)-1, 0; i >= 0 && found < len(want); i-- {
			h := store.ContentHash(items[i])
			if _, dup := r.inlineItems[h]; !dup && want[h] {
				found++
			}
			r.inlineItems[h] = items[i]
		}
	}
	for h := range r.inlineItems {
		delete(want, h)
	}
	return want, nil
}

// wantBlobs are the blobs of what is replayed: the base's values but the
// replaced ones, the rows' writes (and the Sends a replace takes its
// items from), and the head's tasks.
func (r *rebuilder) wantBlobs() []string {
	g := r.g
	var want []string
	if r.last.cached == nil {
		for name, raw := range r.base {
			if name != g.transcript && !r.reset[name] {
				want = append(want, blobRefs(raw)...)
			}
		}
	}
	for i := r.start - 1; i >= 0; i-- {
		replaces := false
		for _, grp := range r.rows[i].doc.Groups {
			for _, w := range grp.Writes {
				if w.Channel != g.transcript && w.Value != nil {
					want = append(want, blobRefs(w.Value)...)
					replaces = replaces || r.rows[i].doc.Format >= 3 && isReplaceRefs(w.Value)
				}
			}
		}
		if replaces && i > 0 {
			want = append(want, blobRefs(r.rows[i].tasks)...) // the items it takes from its Sends
		}
	}
	if r.start == 0 {
		for _, grp := range r.rows[0].doc.Groups {
			for _, w := range grp.Writes {
				want = append(want, blobRefs(w.Value)...)
			}
		}
	}
	for _, ts := range [][]Task{r.rows[0].doc.Tasks, r.rows[0].doc.Discarded} {
		for _, t := range ts {
			want = append(want, blobRefs(t.Args)...)
		}
	}
	return want
}

// expandRefs reads back the message texts the writes replayed refer to.
func (r *rebuilder) expandRefs() error {
	for i := r.start - 1; i >= 0; i-- {
		for _, grp := range r.rows[i].doc.Groups {
			for _, j := range grp.Refs {
				if grp.Writes[j].Value == nil {
					continue // replaced: not replayed
				}
				var err error
				if grp.Writes[j].Value, err = expandContent(grp.Writes[j].Value, r.bodies); err != nil {
					return fmt.Errorf("%s: write of checkpoint %d: %w (%w)", r.where, r.rows[i].row.ID, ErrCorrupt, err)
				}
			}
		}
	}
	return nil
}

// startValues are the base's values, their blobs read: what the replay
// starts from (the transcript is joined last).
func (r *rebuilder) startValues() error {
	g := r.g
	r.values = make(Values, len(g.chanList))
	for name, raw := range r.base {
		switch {
		case name == g.transcript && g.transcript != "":
		case r.last.cached != nil || r.reset[name]:
			r.values[name] = raw // decoded already, or replaced before it counts
		default:
			v, err := r.blobs.unblob(raw)
			if err != nil {
				return fmt.Errorf("%s: channel %q: %w (%w)", r.where, name, ErrCorrupt, err)
			}
			r.values[name] = v
		}
	}
	return nil
}

// replay applies the deltas, oldest first, and records the head's own
// writes (Applied).
func (r *rebuilder) replay() error {
	g := r.g
	r.keyed = map[string]*keyedList{}
	r.ops = map[[2]int]transcriptOp{}
	if r.start == 0 {
		// A base stores its own writes whole (not as patches).
		for _, grp := range r.rows[0].doc.Groups {
			r.record(grp)
			for _, w := range grp.Writes {
				if w.Channel == g.transcript && g.transcript != "" {
					r.addOp(w.Channel)
					continue
				}
				v, err := r.blobs.unblob(w.Value)
				if err != nil {
					return fmt.Errorf("%s: its writes: %w (%w)", r.where, ErrCorrupt, err)
				}
				r.addApplied(Write{Channel: w.Channel, Value: v})
			}
		}
	}
	for i := r.start - 1; i >= 0; i-- {
		for _, grp := range r.rows[i].doc.Groups {
			if i == 0 {
				r.record(grp)
			}
			for _, w := range grp.Writes {
				if w.Channel == g.transcript && g.transcript != "" {
					if i == 0 {
						r.addOp(w.Channel)
					}
					continue
				}
				if w.Value == nil {
					continue // replaced by a newer write (dropReplaced checked it)
				}
				if err := r.replayWrite(i, w); err != nil {
					return err
				}
			}
		}
	}
	for name, l := range r.keyed {
		var err error
		if r.values[name], err = l.value(); err != nil {
			return fmt.Errorf("%s: channel %q: %w", r.where, name, err)
		}
	}
	return nil
}

// replayWrite applies w, a write row i stores, to the values.
func (r *rebuilder) replayWrite(i int, w storedWrite) error {
	g, p := r.g, &r.rows[i]
	stored := w.Value
	var err error
	if p.doc.Format >= 3 && isReplaceRefs(stored) {
		tasks := p.doc.Tasks
		if i > 0 {
			var ok bool
			if tasks, ok = readTasks(p.tasks); !ok && json.Unmarshal(p.tasks, &tasks) != nil {
				return fmt.Errorf("%s: tasks of checkpoint %d: %w", r.where, p.row.ID, ErrCorrupt)
			}
		}
		if stored, err = expandReplace(stored, tasks); err != nil {
			return fmt.Errorf("%s: write of checkpoint %d: %w (%w)", r.where, p.row.ID, ErrCorrupt, err)
		}
	}
	v, err := r.blobs.unblob(stored)
	if err != nil {
		return fmt.Errorf("%s: write of checkpoint %d: %w (%w)", r.where, p.row.ID, ErrCorrupt, err)
	}
	if g.objects[w.Channel] && !p.row.Base {
		if v, err = unpatchObject(r.values[w.Channel], v); err != nil {
			return fmt.Errorf("%s: replaying checkpoint %d: %w (%w)", r.where, p.row.ID, ErrCorrupt, err)
		}
	}
	if key, ok := g.keyed[w.Channel]; ok {
		l := r.keyed[w.Channel]
		if l == nil {
			if l, err = newKeyedList(r.values[w.Channel], key); err != nil {
				return fmt.Errorf("%s: channel %q: %w (%w)", r.where, w.Channel, ErrCorrupt, err)
			}
			r.keyed[w.Channel] = l
		}
		if v, err = l.apply(v, i == 0); err != nil {
			return fmt.Errorf("%s: replaying checkpoint %d: %w (%w)", r.where, p.row.ID, ErrCorrupt, err)
		}
	} else if err = g.applyTo(r.values, w.Channel, v); err != nil {
		return fmt.Errorf("%s: replaying checkpoint %d: %w (%w)", r.where, p.row.ID, ErrCorrupt, err)
	}
	if i == 0 {
		r.addApplied(Write{Channel: w.Channel, Value: v})
	}
	return nil
}

// record starts the head's Applied group of grp, its calls as events.
func (r *rebuilder) record(grp writeGroup) {
	r.applied = append(r.applied, WriteGroup{Task: grp.Task, Node: grp.Node, DurationMs: grp.Ms})
	a := &r.applied[len(r.applied)-1]
	for _, c := range grp.Calls {
		a.Calls = append(a.Calls, c.event(r.head.ThreadID, r.head.ID, grp.Node, grp.Task))
	}
}

// addApplied adds w to the head's last Applied group.
func (r *rebuilder) addApplied(w Write) {
	a := &r.applied[len(r.applied)-1]
	a.Writes = append(a.Writes, w)
}

// addOp adds the head's next transcript write to its last Applied group;
// joinTranscript fills in its value.
func (r *rebuilder) addOp(channel string) {
	a := &r.applied[len(r.applied)-1]
	r.ops[[2]int{len(r.applied) - 1, len(a.Writes)}] = r.headOps[r.nextOp]
	r.nextOp++
	a.Writes = append(a.Writes, Write{Channel: channel})
}

// joinTranscript makes the transcript's list from its hashes, and the
// head's transcript writes from their ops.
func (r *rebuilder) joinTranscript() error {
	g := r.g
	if g.transcript == "" {
		return nil
	}
	var err error
	if r.inline != nil {
		r.values[g.transcript] = r.inline
	} else if r.values[g.transcript], err = joinItems(r.transcript, r.bodies); err != nil {
		return fmt.Errorf("%s: %w", r.where, err)
	}
	for at, op := range r.ops {
		hs, wrap := op.Append, false
		if op.Set != nil {
			hs, wrap = op.Set, true
		}
		list, err := joinItems(hs, r.bodies)
		if err != nil {
			return fmt.Errorf("%s: %w", r.where, err)
		}
		if wrap {
			list, _ = json.Marshal(map[string]json.RawMessage{"replace": list})
		}
		r.applied[at[0]].Writes[at[1]].Value = list
	}
	return nil
}

// result is the head's checkpoint: its row's own part, the values (a
// channel none of them holds reads as its initial value), its writes and
// its tasks, migrated to the schema's version.
func (r *rebuilder) result() (Checkpoint, error) {
	g := r.g
	for _, name := range g.chanList {
		if _, ok := r.values[name]; !ok {
			r.values[name] = append(json.RawMessage(nil), g.channels[name].initial...)
		}
	}
	cp := r.rows[0].checkpoint(g)
	cp.Values = r.values
	cp.Applied = r.applied
	var err error
	if cp.Tasks, err = unblobTasks(cp.Tasks, r.blobs); err != nil {
		return Checkpoint{}, fmt.Errorf("%s: %w (%w)", r.where, ErrCorrupt, err)
	}
	if cp.Metadata.Discarded, err = unblobTasks(cp.Metadata.Discarded, r.blobs); err != nil {
		return Checkpoint{}, fmt.Errorf("%s: %w (%w)", r.where, ErrCorrupt, err)
	}
	if r.version < g.SchemaVersion {
		if err := g.migrateValues(&cp, r.version, r.where); err != nil {
			return Checkpoint{}, err
		}
	}
	return cp, nil
}

// compact leaves out of a listing what fill reads back the same.
func (l listing) compact() listing {
	if l.Tokens != nil && l.ModelCalls == nil {
		l.OldTokens, l.Tokens = l.Tokens, nil // "tok" reads no calls into it
	}
	if l.Tokens != nil && maps.Equal(l.ModelCalls, callsOf(l.Tokens)) {
		l.ModelCalls = nil
	}
	if l.Source != SourceLoop || l.Status == "" || l.Nodes == nil && l.Tokens != nil {
		return l
	}
	l.Source = ""
	if l.Status == StatusRunning {
		l.Status = ""
	}
	if l.Tokens != nil && slices.Equal(l.Nodes, slices.Sorted(maps.Keys(l.Tokens))) {
		l.Nodes = nil
	}
	return l
}

// fill reads back what compact left out of a listing.
func (l listing) fill() listing {
	switch {
	case l.Tokens == nil:
		l.Tokens = l.OldTokens
	case l.ModelCalls == nil:
		l.ModelCalls = callsOf(l.Tokens)
	}
	l.OldTokens = nil
	if l.Bytes == 0 {
		l.Bytes = l.Row
	}
	if l.Source == "" {
		l.Source = SourceLoop
		if l.Status == "" {
			l.Status = StatusRunning
		}
		if l.Nodes == nil && l.Tokens != nil {
			l.Nodes = slices.Sorted(maps.Keys(l.Tokens))
		}
	}
	return l
}

// packTokens is tokens by role as a listing stores them: [calls, prompt,
// completion]; nil for none.
func packTokens(m map[string]RoleUsage) map[string][3]int {
	var out map[string][3]int
	for role, u := range m {
		if out == nil {
			out = make(map[string][3]int, len(m))
		}
		out[role] = [3]int{u.Calls, u.PromptTokens, u.CompletionTokens}
	}
	return out
}

// unpackTokens reads what packTokens stored; an empty map for none.
func unpackTokens(m map[string][3]int) map[string]RoleUsage {
	out := make(map[string]RoleUsage, len(m))
	for role, t := range m {
		out[role] = RoleUsage{Calls: t[0], Usage: model.Usage{PromptTokens: t[1], CompletionTokens: t[2]}}
	}
	return out
}

// callsOf counts the calls of tokens by role.
func callsOf(tokens map[string][3]int) map[string]int {
	out := make(map[string]int, len(tokens))
	for role, t := range tokens {
		out[role] = t[0]
	}
	return out
}

// checkpoint is the row's own part of a Checkpoint (all but Values).
func (p parsedRow) checkpoint(g *Schema) Checkpoint {
	meta := p.meta.fill()
	md := Metadata{Nodes: meta.Nodes, ModelCalls: meta.ModelCalls, Interrupt: meta.Interrupt,
		ForkedFrom: meta.ForkedFrom, Replay: meta.Replay, AsNode: meta.AsNode, Reused: meta.Reused,
		DurationMs: p.doc.Duration, Discarded: p.doc.Discarded, Status: meta.Status, Reason: meta.Reason, Fixes: meta.Fixes, Events: meta.Events, Graph: meta.Graph}
	if meta.Tokens != nil {
		md.Tokens = unpackTokens(meta.Tokens)
	}
	if meta.SumTurns > 0 {
		md.Sums = &Sums{Turns: meta.SumTurns - 1, Thread: unpackTokens(meta.SumThread), Branch: unpackTokens(meta.SumBranch)}
	}
	md.Run = unpackRun(meta.Run)
	if p.doc.Usage != nil {
		md.Usage = &model.Usage{PromptTokens: p.doc.Usage.Prompt, CompletionTokens: p.doc.Usage.Completion}
	} else {
		// Usually the sum of the stored calls, and then not stored twice.
		var u model.Usage
		for _, g := range p.doc.Groups {
			for _, c := range g.Calls {
				u.PromptTokens += c.Prompt
				u.CompletionTokens += c.Completion
			}
		}
		if u != (model.Usage{}) {
			md.Usage = &u
		}
	}
	if len(p.doc.Groups) > 0 {
		md.Writes = map[string][]string{}
		for _, grp := range p.doc.Groups {
			md.Writes[grp.Node] = addChannels(md.Writes[grp.Node], grp.Writes)
			if grp.Task != "" {
				if md.TaskCounts == nil {
					md.TaskCounts = map[string]int{}
				}
				md.TaskCounts[grp.Node]++
			}
		}
	}
	tasks := p.doc.Tasks
	if tasks == nil {
		tasks = []Task{}
	}
	return Checkpoint{Thread: p.row.ThreadID, ID: p.row.ID, ParentID: p.row.ParentID, RerootedFrom: p.row.RerootedFrom,
		Step: meta.Step, Source: meta.Source, SchemaVersion: g.SchemaVersion, Tasks: tasks, Metadata: md,
		CreatedAt: p.row.CreatedAt, Messages: meta.Messages, Bytes: meta.Bytes, RowBytes: meta.Row, depth: meta.Depth,
		tokensUnlisted: meta.Tokens == nil && len(meta.ModelCalls) > 0}
}

// addChannels is chs and the channels of ws, sorted, each once (nil for
// none).
func addChannels(chs []string, ws []storedWrite) []string {
	seen := map[string]bool{}
	var out []string
	for _, c := range chs {
		if !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	for _, w := range ws {
		if !seen[w.Channel] {
			seen[w.Channel] = true
			out = append(out, w.Channel)
		}
	}
	sort.Strings(out)
	return out
}

// parseRow decodes a row of a chain: whole for the head, and for the
// others only what a replay needs (their tasks, calls and listings are
// someone else's to show).
func (g *Schema) parseRow(r store.Checkpoint, head bool) (parsedRow, error) {
	p := parsedRow{row: r}
	if len(r.Meta) == 0 {
		p.legacy = true
		return p, nil
	}
	where := rowName{r.ID, r.ThreadID} // spelled out on an error only
	part := listCore
	if head {
		part = listWhole
	}
	err := decodeListing(r.Meta, &p.meta, part)
	state := r.State
	var whole *stateDoc // a rebase in wholeDoc's form, decoded
	switch {
	case len(r.Head) > 0:
		// The head snapshot: this row as a base that reads on its own.
		state, p.row.Base = r.Head, true
	case head && len(r.Rebased) > 0:
		// A rebase that holds the writes (rebaseDoc) reads as a base; an
		// older one, values only, leaves them to the row's own document.
		var rb stateDoc
		if decodeStateDoc(r.Rebased, &rb) == nil && len(rb.Groups) > 0 {
			whole, p.row.Base = &rb, true
		}
	}
	if err != nil {
		return p, fmt.Errorf("%s: %w (its listing: %v)", where, ErrCorrupt, err)
	}
	if head {
		if whole != nil {
			p.doc = *whole
		} else {
			err = decodeStateDoc(state, &p.doc)
		}
		if err == nil {
			p.doc.Format = max(p.doc.Format, p.meta.format)
			if p.doc.Format >= 3 && p.doc.Tasks == nil {
				for _, n := range p.meta.Next {
					p.doc.Tasks = append(p.doc.Tasks, Task{Node: n})
				}
			}
			p.doc.fillIDs(r, p.meta.Step)
		}
	} else {
		var d coreDoc
		d, err = decodeCoreDoc(state)
		p.doc.Format, p.doc.Values, p.tasks = max(d.Format, p.meta.format), d.Values, d.Tasks
		p.doc.Groups = d.Groups
	}
	if err != nil || p.doc.Format == 0 {
		if err == nil {
			err = errors.New("no format")
		}
		return p, fmt.Errorf("%s: %w (%v)", where, ErrCorrupt, err)
	}
	if p.doc.Format > storageFormat {
		return p, fmt.Errorf("%s is stored in format %d but this rewind reads up to %d: %w; upgrade rewind to open it", where, p.doc.Format, storageFormat, ErrNewerSchema)
	}
	if p.meta.SchemaVersion > g.SchemaVersion {
		return p, fmt.Errorf("%s has schema v%d but this rewind reads up to v%d: %w; upgrade rewind to open it", where, p.meta.SchemaVersion, g.SchemaVersion, ErrNewerSchema)
	}
	if p.meta.SchemaVersion < 1 {
		return p, fmt.Errorf("%s has schema v%d: %w; it cannot be read", where, p.meta.SchemaVersion, ErrUnknownSchema)
	}
	// Large task arguments are blobs too: restore them.
	return p, nil
}

// rowName is "checkpoint N of thread T", as %s spells it.
type rowName struct {
	id     int64
	thread string
}

func (n rowName) String() string {
	return fmt.Sprintf("checkpoint %d of thread %q", n.id, threadName(n.thread))
}

// hashItems reads an inline transcript list: its items' hashes in order,
// and the items by hash.
func hashItems(raw json.RawMessage) ([]string, map[string]json.RawMessage, error) {
	items, err := listItems(raw)
	if err != nil {
		return nil, nil, err
	}
	hashes := make([]string, len(items))
	byHash := make(map[string]json.RawMessage, len(items))
	for i, it := range items {
		hashes[i] = store.ContentHash(it) // not itemHash: a read need not remember texts
		byHash[hashes[i]] = it
	}
	return hashes, byHash, nil
}

// isList tells an inline transcript (a rebase's) from an op.
func isList(raw json.RawMessage) bool {
	r := bytes.TrimSpace(raw)
	return len(r) > 0 && r[0] == '['
}

// parseOp reads a stored transcript op: {"$m": packed} or {"$m+": packed}
// (format 3) by hand, any other form (format 2's lists) with
// encoding/json. A replay reads one per row of its chain.
func parseOp(raw json.RawMessage) (transcriptOp, error) {
	if op, ok := readOp(raw); ok {
		return op, nil
	}
	return parseOpSlow(raw)
}

// readOp reads an op of one member, "$m" or "$m+", whose value is a
// string without escapes, as parseOpSlow does; ok is false on anything
// else (or a packed list that does not unpack: parseOpSlow says why).
func readOp(raw []byte) (op transcriptOp, ok bool) {
	r := rd{b: raw}
	var key, packed string
	n := 0
	ok = r.object(func(k string) bool {
		n++
		key = k
		var ok bool
		packed, ok = r.str()
		return ok && n == 1 && (k == "$m" || k == "$m+")
	})
	if !ok || n != 1 || !r.end() {
		return transcriptOp{}, false
	}
	hs, err := unpackHashes(packed)
	if err != nil {
		return transcriptOp{}, false
	}
	if key == "$m" {
		op.Set = hs
	} else {
		op.Append = hs
	}
	return op, true
}

func parseOpSlow(raw json.RawMessage) (transcriptOp, error) {
	var op transcriptOp
	var packed struct {
		Set    *string `json:"$m"`
		Append *string `json:"$m+"`
	}
	if json.Unmarshal(raw, &packed) == nil && (packed.Set != nil || packed.Append != nil) {
		var err error
		if packed.Set != nil {
			op.Set, err = unpackHashes(*packed.Set)
		} else {
			op.Append, err = unpackHashes(*packed.Append)
		}
		return op, err
	}
	if err := json.Unmarshal(raw, &op); err != nil {
		return op, err
	}
	if op.Set == nil && op.Append == nil {
		var probe map[string]json.RawMessage
		if json.Unmarshal(raw, &probe) != nil || (probe["$m"] == nil && probe["$m+"] == nil) {
			return op, errors.New("not a transcript op")
		}
		if probe["$m"] != nil {
			op.Set = []string{}
		}
	}
	return op, nil
}

// fetchBodies reads the messages and blobs a rebuild needs: the messages
// msgs names but for the ones known already (which it gives back too), and
// the blobs (inflated when first used).
func (g *Schema) fetchBodies(ctx context.Context, st store.Store, thread string, order []string, msgs map[string]bool, known map[string]json.RawMessage, blobs []string) (map[string][]byte, *blobSet, error) {
	bodies := make(map[string][]byte, len(msgs)+len(known))
	for h, b := range known {
		bodies[h] = b
	}
	want := wantInOrder(order, msgs, known)
	slices.Sort(blobs)
	blobs = slices.Compact(blobs)
	set := &blobSet{}
	if len(want) == 0 && len(blobs) == 0 {
		return bodies, set, nil
	}
	ms, bs, err := st.Bodies(ctx, thread, want, blobs)
	if err != nil {
		return nil, nil, fmt.Errorf("read its messages and blobs: %w", err)
	}
	for _, m := range ms {
		bodies[m.Hash] = m.Body
	}
	set.stored = make(map[string][]byte, len(bs))
	for _, b := range bs {
		set.stored[b.Hash] = b.Body
	}
	return bodies, set, nil
}

// wantInOrder is msgs less known, the first and the last as order (the
// transcript) has them and the others between them (those order lacks
// by hash): a store may read a conversation's messages as the stretch
// between the first's index and the last's (Store.Bodies).
func wantInOrder(order []string, msgs map[string]bool, known map[string]json.RawMessage) []string {
	var ordered []string
	taken := make(map[string]bool, len(msgs))
	for _, h := range order {
		if _, ok := known[h]; msgs[h] && !ok && !taken[h] {
			taken[h] = true
			ordered = append(ordered, h)
		}
	}
	var rest []string
	for h := range msgs {
		if _, ok := known[h]; !ok && !taken[h] {
			rest = append(rest, h)
		}
	}
	slices.Sort(rest)
	if len(ordered) < 2 {
		return append(ordered, rest...)
	}
	want := make([]string, 0, len(ordered)+len(rest))
	want = append(want, ordered[0])
	want = append(want, rest...)
	return append(want, ordered[1:]...)
}

// joinItems makes the JSON list of the messages hashes name.
func joinItems(hashes []string, bodies map[string][]byte) (json.RawMessage, error) {
	n := len(hashes) + 1 // the brackets and commas
	for _, h := range hashes {
		n += len(bodies[h])
	}
	var out bytes.Buffer
	out.Grow(n) // once: a long transcript grew it a dozen times
	out.WriteByte('[')
	for i, h := range hashes {
		b, ok := bodies[h]
		if !ok {
			return nil, fmt.Errorf("message %s is missing from the store: %w", h, ErrCorrupt)
		}
		if i > 0 {
			out.WriteByte(',')
		}
		out.Write(b)
	}
	out.WriteByte(']')
	return out.Bytes(), nil
}

// migrateValues brings values written at schema version up to the graph's.
func (g *Schema) migrateValues(cp *Checkpoint, version int, where string) error {
	doc := map[string]any{}
	vals := map[string]any{}
	for k, raw := range cp.Values {
		v, err := decodeAny(raw)
		if err != nil {
			return fmt.Errorf("%s: channel %q: %w", where, k, ErrCorrupt)
		}
		vals[k] = v
	}
	doc["values"] = vals
	doc["tasks"] = cp.Tasks
	from := version
	for ; version < g.SchemaVersion; version++ {
		m := g.Migrations[version]
		if m == nil {
			return fmt.Errorf("%s has schema v%d and no migration to v%d exists: %w", where, version, version+1, ErrUnknownSchema)
		}
		if err := userpanic.Do(fmt.Sprintf("migration v%d to v%d", version, version+1), func() error { return m(doc) }); err != nil {
			return fmt.Errorf("%s: migrating v%d to v%d: %w", where, version, version+1, err)
		}
	}
	out := Values{}
	for k, v := range doc["values"].(map[string]any) {
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		out[k] = b
	}
	cp.Values = out
	cp.MigratedFrom = from
	return nil
}
