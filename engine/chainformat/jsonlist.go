package chainformat

import (
	"bytes"
	"encoding/json"
	"errors"
	"hash/maphash"
	"slices"
	"sync"
)

// Channel values are JSON the engine's own reducers produced, so walking a
// list needs no validation: splitList and countList only find the items'
// boundaries, which is most of the cost of a long transcript otherwise.

var errNotList = errors.New("not a JSON list")

// splitList returns the items of a JSON array as sub-slices of raw (or of
// an equal copy of it). Empty input and null are no items.
func splitList(raw []byte) ([]json.RawMessage, error) {
	if len(raw) >= listMemoMin {
		if items, ok := lists.get(raw); ok {
			return slices.Clone(items), nil
		}
	}
	var out []json.RawMessage
	err := walkList(raw, func(item []byte) { out = append(out, item) })
	if err == nil && len(raw) >= listMemoMin {
		// The memo's items are sub-slices of its own copy, capped at
		// their length.
		own := bytes.Clone(raw)
		mine := make([]json.RawMessage, len(out))
		for i, it := range out {
			at := cap(raw) - cap(it) // it is raw[at:...]
			mine[i] = own[at : at+len(it) : at+len(it)]
		}
		lists.put(own, mine)
	}
	return out, err
}

// countList is the number of items of a JSON array (0 for anything else).
func countList(raw []byte) int {
	if len(raw) >= listMemoMin {
		items, ok := lists.get(raw)
		if !ok {
			var err error
			if items, err = splitList(raw); err != nil { // and remember it
				return 0
			}
		}
		return len(items)
	}
	n := 0
	if walkList(raw, func([]byte) { n++ }) != nil {
		return 0
	}
	return n
}

// listMemoMin is the shortest list whose split is remembered: below it a
// walk costs about what a lookup does.
const listMemoMin = 1024

// lists remembers the last few long lists split. A turn splits the same
// transcript dozens of times (every node reads it, every checkpoint's
// encoding counts and hashes it); a lookup hashes and compares the bytes,
// which is several times cheaper than walking them.
var lists = newContentMemo[[]json.RawMessage](8)

// contentMemo remembers values made from byte strings, by their content:
// a hash and a comparison with its own copy of the bytes, so nothing a
// caller does to its bytes later changes what it holds. It keeps the
// last n; what it hands out callers must only read.
type contentMemo[V any] struct {
	seed maphash.Seed
	mu   sync.Mutex
	memo []contentEntry[V]
	next int
}

type contentEntry[V any] struct {
	hash uint64
	raw  []byte
	v    V
}

func newContentMemo[V any](n int) *contentMemo[V] {
	return &contentMemo[V]{seed: maphash.MakeSeed(), memo: make([]contentEntry[V], n)}
}

func (m *contentMemo[V]) get(raw []byte) (V, bool) {
	h := maphash.Bytes(m.seed, raw)
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range m.memo {
		if e := &m.memo[i]; e.hash == h && e.raw != nil && bytes.Equal(e.raw, raw) {
			return e.v, true
		}
	}
	var zero V
	return zero, false
}

// put remembers v for own, which becomes the memo's: the caller neither
// changes nor keeps it (v may point into it).
func (m *contentMemo[V]) put(own []byte, v V) {
	h := maphash.Bytes(m.seed, own)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.memo[m.next] = contentEntry[V]{hash: h, raw: own, v: v}
	m.next = (m.next + 1) % len(m.memo)
}

func walkList(raw []byte, item func([]byte)) error {
	i := skipSpace(raw, 0)
	if i == len(raw) || string(raw[i:]) == "null" || string(trimRight(raw[i:])) == "null" {
		return nil
	}
	if raw[i] != '[' {
		return errNotList
	}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == ']' {
		return nil
	}
	depth, start, inString := 0, i, false
	for ; i < len(raw); i++ {
		c := raw[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			// Most strings hold no escape: their end is the next quote.
			if k := bytes.IndexByte(raw[i+1:], '"'); k >= 0 && bytes.IndexByte(raw[i+1:i+1+k], '\\') < 0 {
				i += 1 + k
				continue
			}
			inString = true
		case '{', '[':
			depth++
		case '}':
			depth--
		case ']':
			if depth == 0 {
				item(trimRight(raw[start:i]))
				return nil
			}
			depth--
		case ',':
			if depth == 0 {
				item(trimRight(raw[start:i]))
				start = skipSpace(raw, i+1)
			}
		}
	}
	return errNotList
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\t' || b[i] == '\r') {
		i++
	}
	return i
}

func trimRight(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\n' || b[len(b)-1] == '\t' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// topField returns the value of key in a JSON object, looking only at its
// top level; ok is false when the object has no such key. A key spelled
// with escapes is found by the slow path. It trusts obj to be valid JSON.
func topField(obj []byte, key string) (value []byte, ok bool) {
	i := skipSpace(obj, 0)
	if i == len(obj) || obj[i] != '{' {
		return nil, false
	}
	want := `"` + key + `"`
	escaped := false
	i++
	for {
		i = skipSpace(obj, i)
		if i >= len(obj) || obj[i] == '}' {
			break
		}
		kEnd := stringEnd(obj, i)
		if kEnd < 0 {
			return nil, false
		}
		k := obj[i:kEnd]
		escaped = escaped || bytes.IndexByte(k, '\\') >= 0
		i = skipSpace(obj, kEnd)
		if i >= len(obj) || obj[i] != ':' {
			return nil, false
		}
		i = skipSpace(obj, i+1)
		vEnd := valueEnd(obj, i)
		if vEnd < 0 {
			return nil, false
		}
		if string(k) == want { // the last of duplicate keys wins, as in encoding/json
			value, ok = trimRight(obj[i:vEnd]), true
		}
		i = skipSpace(obj, vEnd)
		if i < len(obj) && obj[i] == ',' {
			i++
		}
	}
	if escaped {
		var m map[string]json.RawMessage
		if json.Unmarshal(obj, &m) == nil {
			v, ok := m[key]
			return v, ok
		}
	}
	return value, ok
}

// stringEnd is the index just past the string starting at obj[i] ('"').
func stringEnd(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// valueEnd is the index just past the value starting at b[i].
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	if b[i] == '"' {
		return stringEnd(b, i)
	}
	depth := 0
	for j := i; j < len(b); j++ {
		switch b[j] {
		case '"':
			e := stringEnd(b, j)
			if e < 0 {
				return -1
			}
			j = e - 1
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return j
			}
			depth--
			if depth == 0 {
				return j + 1
			}
		case ',':
			if depth == 0 {
				return j
			}
		}
	}
	if depth == 0 {
		return len(b)
	}
	return -1
}
