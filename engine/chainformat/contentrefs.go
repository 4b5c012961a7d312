package chainformat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"

	"rewind/store"
)

// A node often writes into its own channels a text the transcript already
// holds: the ticket executor's finding is its last message's content, the
// planner's request the user's. In a delta (format 3) such a string value
// (of at least contentMin bytes, equal to a top-level string field of an
// item of the checkpoint's transcript) is stored as
//
//	{"$c": "<the item's packed hash><field>"}
//
// and read back from the message, which is stored once and never
// overwritten. A write that holds such references is listed in its
// group's Refs; the encoder leaves alone a write that spells "$c" itself,
// so in a listed write every {"$c": …} is a reference.

const contentMin = 32

var markContent = []byte(`"$c"`)

// contentRefs finds the references in a listed write, as stored or as
// PostgreSQL's jsonb gives it back (with spaces): each
// {"$c": "<packed hash><field>"}, in order, as the pattern
// \{ws"\$c"ws:ws"([0-9A-Za-z_-]{14})([^"\\]*)"ws\} (ws: JSON whitespace)
// finds them (contentrefs_test.go holds it to that), without a regexp: a
// cold read scans every listed write of its chain.
func contentRefs(b []byte) []contentMatch {
	var out []contentMatch
	for off := 0; off < len(b); {
		i := bytes.Index(b[off:], markContent)
		if i < 0 {
			break
		}
		i += off
		off = i + len(markContent)
		pre := trimRight(b[:i])
		if len(pre) == 0 || pre[len(pre)-1] != '{' {
			continue
		}
		j := skipSpace(b, off)
		if j >= len(b) || b[j] != ':' {
			continue
		}
		if j = skipSpace(b, j+1); j >= len(b) || b[j] != '"' {
			continue
		}
		h := j + 1
		for j = h; j < len(b) && j-h < packedHash && hashChar(b[j]); j++ {
		}
		if j-h != packedHash {
			continue
		}
		f := j
		for j < len(b) && b[j] != '"' && b[j] != '\\' {
			j++
		}
		if j >= len(b) || b[j] != '"' {
			continue
		}
		field := b[f:j]
		if j = skipSpace(b, j+1); j >= len(b) || b[j] != '}' {
			continue
		}
		out = append(out, contentMatch{start: len(pre) - 1, end: j + 1, hash: b[h:f], field: field})
		off = j + 1
	}
	return out
}

// contentMatch is one reference contentRefs found: b[start:end] is the
// whole object.
type contentMatch struct {
	start, end  int
	hash, field []byte
}

// hashChar is a character of a packed hash (base64url).
func hashChar(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c == '_' || c == '-'
}

// transcriptTexts maps the JSON spelling of each long string field of the
// transcript's items to its reference.
func (g *Schema) transcriptTexts(transcript *transcriptItems) map[string]string {
	if g.transcript == "" {
		return nil
	}
	items, err := transcript.get()
	if err != nil {
		return nil
	}
	if texts, ok := lastTexts.get(transcript.raw); ok {
		return texts
	}
	out := map[string]string{}
	for _, it := range items {
		for _, t := range itemTexts(it) {
			if _, seen := out[t[0]]; !seen {
				out[t[0]] = t[1]
			}
		}
	}
	lastTexts.put(bytes.Clone(transcript.raw), out)
	return out
}

// lastTexts is the last transcript's texts: the checkpoints of a turn
// mostly share one transcript. Callers only read the map.
var lastTexts = newContentMemo[map[string]string](1)

// transcriptItems is a checkpoint's transcript split into its items, once:
// encoding a checkpoint asks for them up to three times.
type transcriptItems struct {
	raw   json.RawMessage
	done  bool
	items []json.RawMessage
	err   error
}

func (t *transcriptItems) get() ([]json.RawMessage, error) {
	if !t.done {
		t.items, t.err = listItems(t.raw)
		t.done = true
	}
	return t.items, t.err
}

// itemTexts are an item's long string fields (as JSON) and their
// references, remembered: a transcript item is read by every checkpoint
// until compaction retires it.
func itemTexts(it json.RawMessage) [][2]string { return itemMemo(it).texts }

// itemHash is store.ContentHash(it), remembered with itemTexts.
func itemHash(it json.RawMessage) string { return itemMemo(it).hash }

type itemFacts struct {
	hash  string
	texts [][2]string
}

func itemMemo(it json.RawMessage) itemFacts {
	textsMu.Lock()
	got, ok := textsMemo[string(it)]
	textsMu.Unlock()
	if ok {
		return got
	}
	got.hash = store.ContentHash(it)
	fs, err := objectFields(it)
	packed, packs := packHashes([]string{got.hash})
	if err == nil && packs {
		for _, f := range fs {
			var name string
			if len(f[1]) < contentMin || f[1][0] != '"' || json.Unmarshal(f[0], &name) != nil || !plainName(name) {
				continue
			}
			ref, _ := json.Marshal(map[string]string{"$c": packed + name})
			got.texts = append(got.texts, [2]string{string(f[1]), string(ref)})
		}
	}
	textsMu.Lock()
	defer textsMu.Unlock()
	if len(textsMemo) >= 4096 {
		clear(textsMemo)
	}
	textsMemo[string(it)] = got
	return got
}

var (
	textsMu   sync.Mutex
	textsMemo = map[string]itemFacts{}
)

// plainName: a field name a reference spells without escapes.
func plainName(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '"' || c == '\\' || c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

// refContent is write with the string values texts knows as references,
// or nil when it has none (or spells "$c" itself).
func refContent(write json.RawMessage, texts map[string]string) json.RawMessage {
	if len(texts) == 0 || len(write) < contentMin || bytes.Contains(write, markContent) || bytes.Contains(write, markEscapedDollar) {
		return nil
	}
	var out []byte
	last := 0
	for i := 0; i < len(write); i++ {
		if write[i] != '"' {
			continue
		}
		end := stringEnd(write, i)
		if end < 0 {
			return nil
		}
		j := skipSpace(write, end)
		if j < len(write) && write[j] == ':' {
			i = end - 1 // a key
			continue
		}
		if ref, ok := texts[string(write[i:end])]; ok {
			out = append(append(out, write[last:i]...), ref...)
			last = end
		}
		i = end - 1
	}
	if out == nil {
		return nil
	}
	return append(out, write[last:]...)
}

// contentHashes lists the messages the listed writes of groups refer to.
func contentHashes(groups []writeGroup) ([]string, error) {
	var out []string
	for _, g := range groups {
		for _, i := range g.Refs {
			if i < 0 || i >= len(g.Writes) {
				return nil, fmt.Errorf("a write group lists write #%d of %d as holding references", i, len(g.Writes))
			}
			for _, m := range contentRefs(g.Writes[i].Value) {
				hs, err := unpackHashes(string(m.hash))
				if err != nil {
					return nil, err
				}
				out = append(out, hs...)
			}
		}
	}
	return out, nil
}

// expandContent reads back a listed write, given the bodies of the
// messages it refers to.
func expandContent(stored json.RawMessage, bodies map[string][]byte) (json.RawMessage, error) {
	refs := contentRefs(stored)
	if len(refs) == 0 {
		return append(json.RawMessage(nil), stored...), nil
	}
	var err error
	out := make([]byte, 0, len(stored)*2)
	last := 0
	for _, m := range refs {
		out = append(out, stored[last:m.start]...)
		last = m.end
		v, e := contentValue(m, bodies)
		if e != nil {
			err = e // the reference stays as stored
			v = stored[m.start:m.end]
		}
		out = append(out, v...)
	}
	return append(out, stored[last:]...), err
}

// contentValue is the message text reference m stands for.
func contentValue(m contentMatch, bodies map[string][]byte) ([]byte, error) {
	hs, err := unpackHashes(string(m.hash))
	if err != nil {
		return nil, err
	}
	body, ok := bodies[hs[0]]
	if !ok {
		return nil, fmt.Errorf("message %s is missing from the store", hs[0])
	}
	v, ok := topField(body, string(m.field))
	if !ok || len(v) == 0 || v[0] != '"' {
		return nil, fmt.Errorf("message %s has no text %q", hs[0], m.field)
	}
	return v, nil
}
