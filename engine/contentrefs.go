package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
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

// contentRef matches a reference in a listed write, as stored or as
// PostgreSQL's jsonb gives it back (with spaces).
var contentRef = regexp.MustCompile(`\{\s*"\$c"\s*:\s*"([0-9A-Za-z_-]{14})([^"\\]*)"\s*\}`)

// transcriptTexts maps the JSON spelling of each long string field of the
// transcript's items to its reference.
func (g *Graph) transcriptTexts(values Values) map[string]string {
	if g.transcript == "" {
		return nil
	}
	items, err := listItems(values[g.transcript])
	if err != nil {
		return nil
	}
	out := map[string]string{}
	for _, it := range items {
		for _, t := range itemTexts(it) {
			if _, seen := out[t[0]]; !seen {
				out[t[0]] = t[1]
			}
		}
	}
	return out
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
			for _, m := range contentRef.FindAllSubmatch(g.Writes[i].Value, -1) {
				hs, err := unpackHashes(string(m[1]))
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
	var err error
	out := contentRef.ReplaceAllFunc(stored, func(m []byte) []byte {
		sub := contentRef.FindSubmatch(m)
		hs, e := unpackHashes(string(sub[1]))
		if e != nil {
			err = e
			return m
		}
		body, ok := bodies[hs[0]]
		if !ok {
			err = fmt.Errorf("message %s is missing from the store", hs[0])
			return m
		}
		v, ok := topField(body, string(sub[2]))
		if !ok || len(v) == 0 || v[0] != '"' {
			err = fmt.Errorf("message %s has no text %q", hs[0], sub[2])
			return m
		}
		return v
	})
	return out, err
}
