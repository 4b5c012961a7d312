package langgraph

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"rewind/store"
)

// doc is a stored checkpoint as read: the channels that hold a value,
// their versions, what each node has seen, and the Sends it queues.
type doc struct {
	format   int
	ts       time.Time
	versions map[string]any
	seen     map[string]map[string]any
	// values has a key for every channel holding a value. Read for a
	// listing (full false), it holds only the values a listing needs
	// (wanted); the others are nil.
	values map[string]any
	// pendingSends are the Sends of a checkpoint older than format 4,
	// which kept them beside the channels.
	pendingSends []any
	// entry is the functional API's entrypoint, due where __start__ is
	// (functional.go); "" for a graph.
	entry string
	// firstWrite: the saver stores a channel only from its first write on
	// (PostgresSaver; Python's SqliteSaver, whose checkpoints are msgpack):
	// a reducer's default [] is in no row (browse.Checkpoint.Absent).
	firstWrite bool
	// bad says why the stored checkpoint did not read whole, if it did
	// not: each reason one line.
	bad []string
}

func newDoc() *doc {
	return &doc{versions: map[string]any{}, seen: map[string]map[string]any{}, values: map[string]any{}}
}

// Channel names with a meaning to the reader.
const (
	chanTasks     = "__pregel_tasks"
	chanStart     = "__start__"
	chanError     = "__error__"
	chanScheduled = "__scheduled__"
	chanInterrupt = "__interrupt__"
	chanResume    = "__resume__"
)

// wanted: the values a listing decodes (Sends, and joins to tell whether
// they are complete); the rest it only sees exist.
func wanted(ch string) bool {
	return ch == chanTasks || strings.HasPrefix(ch, "join:")
}

// undecodedFix says what reads a checkpoint of type typ when rewind does
// not.
func undecodedFix(typ string) string {
	if typ == "pickle" {
		return ": rewind never unpickles (unpickling runs code the database holds); LangGraph's own get_state reads it (the serializer's pickle_fallback wrote it)"
	}
	return ""
}

// readDoc decodes a checkpoint stored with type typ (SQLite's checkpoint
// column). A value that does not decode leaves a damaged doc, never an
// error: the listing still shows, with the reason.
func readDoc(typ string, data []byte, full bool) *doc {
	d := newDoc()
	typ, data, err := decrypted(typ, data)
	switch {
	case err != nil:
	case typ == TypeMsgpack:
		d.firstWrite = true
		err = d.readMsgpack(data, full)
	case typ == TypeJSON, typ == "":
		err = d.readJSON(data, full)
	default:
		err = fmt.Errorf("stored as %q (%d bytes), which this reader cannot decode%s", typ, len(data), undecodedFix(typ))
	}
	if err != nil {
		d.bad = append(d.bad, "the stored checkpoint does not decode: "+err.Error())
	}
	return d
}

// readLeanDoc is readDoc of a delta channel's walk (rowQuery.lean): it
// keeps only which channels hold a value, each nil, and decodes nothing
// else, skipping the versions, what each node has seen and the Sends:
// the walk reads up to a hundred ancestors for each checkpoint shown
// (BenchmarkDeltaThread: a fifth fewer allocations). A checkpoint that
// does not read so is read as readDoc reads it.
func readLeanDoc(typ string, data []byte) *doc {
	inner, plain, err := decrypted(typ, data)
	if err == nil {
		d := newDoc()
		switch inner {
		case TypeMsgpack:
			d.firstWrite = true
			err = d.msgpackNames(plain)
		case TypeJSON, "":
			err = d.jsonNames(plain)
		default:
			err = errNotLean
		}
		if err == nil {
			return d
		}
	}
	return readDoc(typ, data, false)
}

var errNotLean = errors.New("not read lean")

// msgpackNames reads the names of the channels holding a value.
func (d *doc) msgpackNames(data []byte) error {
	mp := newMPReader(data, nil)
	n, err := mp.d.DecodeMapLen()
	if err != nil {
		return err
	}
	for range n {
		mp.fresh()
		k, err := mp.value(1)
		if err != nil {
			return err
		}
		if keyString(k) != "channel_values" {
			if err := mp.skip(); err != nil {
				return err
			}
			continue
		}
		chans, err := mp.d.DecodeMapLen()
		if err != nil {
			return err
		}
		for range chans {
			mp.fresh()
			k, err := mp.value(2)
			if err != nil {
				return err
			}
			d.values[keyString(k)] = nil
			if err := mp.skip(); err != nil {
				return err
			}
		}
	}
	return nil
}

// jsonNames reads the names of the channels holding a value.
func (d *doc) jsonNames(data []byte) error {
	var j struct {
		ChannelValues map[string]skipped `json:"channel_values"`
	}
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	for name := range j.ChannelValues {
		d.values[name] = nil
	}
	return nil
}

// skipped is a JSON value passed over: the decoder checks it and hands
// over its bytes uncopied.
type skipped struct{}

func (*skipped) UnmarshalJSON([]byte) error { return nil }

func (d *doc) readMsgpack(data []byte, full bool) error {
	mp := newMPReader(data, nil)
	n, err := mp.d.DecodeMapLen()
	if err != nil {
		return fmt.Errorf("msgpack: %w", err)
	}
	for range n {
		mp.fresh()
		k, err := mp.value(1)
		if err != nil {
			return fmt.Errorf("msgpack: %w", err)
		}
		key := keyString(k)
		if key == "channel_values" {
			if err := d.msgpackValues(mp, full); err != nil {
				return fmt.Errorf("msgpack: channel_values: %w", err)
			}
			continue
		}
		mp.fresh()
		v, err := mp.value(1)
		if err != nil {
			return fmt.Errorf("msgpack: %s: %w", key, err)
		}
		d.field(key, v)
	}
	return nil
}

// msgpackValues reads the channels. A value past the reader's bounds
// (errLimit: nested too deep, too many items) is skipped, opaque, and
// named in bad; the channels after it still read.
func (d *doc) msgpackValues(mp *mpReader, full bool) error {
	n, err := mp.d.DecodeMapLen()
	if err != nil {
		return err
	}
	for range n {
		mp.fresh()
		k, err := mp.value(2)
		if err != nil {
			return err
		}
		name := keyString(k)
		if !full && !wanted(name) {
			d.values[name] = nil
			if err := mp.skip(); err != nil {
				return fmt.Errorf("channel %q: %w", store.Name(name), err)
			}
			continue
		}
		start := mp.offset()
		mp.fresh()
		v, err := mp.value(2)
		var limit errLimit
		if errors.As(err, &limit) {
			if err := mp.seek(start); err != nil {
				return err
			}
			if err := mp.skip(); err != nil {
				return fmt.Errorf("channel %q: %w", store.Name(name), err)
			}
			v, err = d.tooLarge(name, mp.offset()-start, limit), nil
		}
		if err != nil {
			return fmt.Errorf("channel %q: %w", store.Name(name), err)
		}
		d.values[name] = v
	}
	return nil
}

// jsonDoc is a checkpoint stored as JSON (LangGraph.js, and PostgreSQL's
// checkpoint column, which holds the primitives inline). Versions are
// read as they are, not through a generic decode: a listing of a long
// thread reads thousands.
type jsonDoc struct {
	V               json.RawMessage                       `json:"v"`
	TS              string                                `json:"ts"`
	ChannelValues   map[string]json.RawMessage            `json:"channel_values"`
	ChannelVersions map[string]json.RawMessage            `json:"channel_versions"`
	VersionsSeen    map[string]map[string]json.RawMessage `json:"versions_seen"`
	PendingSends    json.RawMessage                       `json:"pending_sends"`
}

func (d *doc) readJSON(data []byte, full bool) error {
	var j jsonDoc
	if err := json.Unmarshal(data, &j); err != nil {
		return fmt.Errorf("json: %w", err)
	}
	if n, err := strconv.Atoi(string(j.V)); err == nil {
		d.format = n
	}
	d.ts = parseTS(j.TS)
	for ch, raw := range j.ChannelVersions {
		d.versions[ch] = jsonVersion(raw)
	}
	for node, seen := range j.VersionsSeen {
		m := make(map[string]any, len(seen))
		for ch, raw := range seen {
			m[ch] = jsonVersion(raw)
		}
		d.seen[node] = m
	}
	if len(j.PendingSends) > 0 {
		v, err := decodeJSON(j.PendingSends)
		if err != nil {
			return fmt.Errorf("json: pending_sends: %w", err)
		}
		d.field("pending_sends", v)
	}
	var bad []string
	for name, raw := range j.ChannelValues {
		if !full && !wanted(name) {
			d.values[name] = nil
			continue
		}
		v, err := decodeJSON(raw)
		if err != nil {
			bad = append(bad, name)
			v = opaque(TypeJSON, len(raw), err)
		}
		d.values[name] = v
	}
	if len(bad) > 0 {
		return fmt.Errorf("json: channel %s does not decode", strings.Join(bad, ", "))
	}
	return nil
}

// jsonVersion reads a channel version: a string (Python) or a number
// (LangGraph.js).
func jsonVersion(raw json.RawMessage) any {
	var s string
	if len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
		return s
	}
	if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
		return n
	}
	if f, err := strconv.ParseFloat(string(raw), 64); err == nil {
		return f
	}
	return nil
}

// field keeps one top-level field of a checkpoint.
func (d *doc) field(key string, v any) {
	switch key {
	case "v":
		if n, ok := v.(int64); ok {
			d.format = int(n)
		}
	case "ts":
		if s, ok := v.(string); ok {
			d.ts = parseTS(s)
		}
	case "channel_versions":
		if m, ok := v.(map[string]any); ok {
			d.versions = m
		}
	case "versions_seen":
		if m, ok := v.(map[string]any); ok {
			for node, s := range m {
				if sm, ok := s.(map[string]any); ok {
					d.seen[node] = sm
				}
			}
		}
	case "pending_sends":
		if l, ok := v.([]any); ok {
			d.pendingSends = l
		}
	}
}

// addBlob adds a channel value stored apart (PostgreSQL's
// checkpoint_blobs); an "empty" blob means the channel holds none.
func (d *doc) addBlob(channel, typ string, blob []byte, full bool) {
	if typ == TypeEmpty {
		return
	}
	if !full && !wanted(channel) {
		d.values[channel] = nil
		return
	}
	if typ != TypeMsgpack {
		d.values[channel] = Decode(typ, blob)
		return
	}
	v, err := decodeMsgpack(blob)
	var limit errLimit
	switch {
	case errors.As(err, &limit):
		v = d.tooLarge(channel, len(blob), limit)
	case err != nil:
		v = opaque(typ, len(blob), err)
	}
	d.values[channel] = v
}

// tooLarge names a channel's value past the reader's bounds in bad, and
// is what the channel shows.
func (d *doc) tooLarge(channel string, size int, limit errLimit) any {
	d.bad = append(d.bad, fmt.Sprintf("channel %q not read: its value of %d bytes is %s", store.Name(channel), size, limit))
	return opaque(TypeMsgpack, size, limit)
}
