package chainformat

import (
	"bytes"
	"encoding/json"
	"slices"
	"unicode/utf8"

	"rewind/engine/internal/jsonstr"
)

// The list reducers (IndexedAppend, MergeByID) store their items as
// encoding/json marshals them once decoded (with UseNumber, into maps):
// keys sorted, compact, strings escaped its way. That form is part of the
// schema, so it must not change; but decoding a whole list into maps only
// to marshal it again is most of a turn's cost. canonEnc writes the same
// bytes straight from the JSON text, and says when it cannot be sure (the
// caller then decodes and marshals as before): canon_test.go holds it to
// encoding/json's bytes, by hand-picked cases and by fuzzing.

// plainByte are the bytes a string holds as they are, read and written
// alike: ASCII that encoding/json does not escape.
var plainByte [256]bool

func init() {
	for b := range utf8.RuneSelf {
		plainByte[b] = jsonstr.Esc[b] == string(rune(b)) && b != '"' && b != '\\'
	}
}

// canonDepth bounds the nesting canonEnc follows (encoding/json's is
// 10,000; deeper input takes the slow path, which says so).
const canonDepth = 1000

type canonEnc struct {
	buf     []byte
	members []canonMember // the open objects' members, as a stack
	tmp     []byte
}

// canonMember is one member of an object being written: its decoded key
// and where `"key":value` is in buf.
type canonMember struct {
	key        []byte
	start, end int
}

// value appends the canonical form of the JSON value at raw[i:] (after
// space) to e.buf and returns the index just past it, or -1 when raw is
// not JSON there or the form is not certain.
func (e *canonEnc) value(raw []byte, i, depth int) int {
	i = skipSpace(raw, i)
	if i >= len(raw) || depth > canonDepth {
		return -1
	}
	switch c := raw[i]; {
	case c == '{':
		return e.object(raw, i, depth)
	case c == '[':
		return e.array(raw, i, depth)
	case c == '"':
		_, j := e.str(raw, i, false)
		return j
	case c == 't':
		return e.literal(raw, i, "true")
	case c == 'f':
		return e.literal(raw, i, "false")
	case c == 'n':
		return e.literal(raw, i, "null")
	case c == '-' || (c >= '0' && c <= '9'):
		j := numberEnd(raw, i)
		if j < 0 {
			return -1
		}
		e.buf = append(e.buf, raw[i:j]...) // a json.Number marshals as written
		return j
	}
	return -1
}

func (e *canonEnc) literal(raw []byte, i int, lit string) int {
	if !bytes.HasPrefix(raw[i:], []byte(lit)) {
		return -1
	}
	e.buf = append(e.buf, lit...)
	return i + len(lit)
}

// numberEnd is the index past the JSON number at raw[i], or -1.
func numberEnd(raw []byte, i int) int {
	j := i
	if j < len(raw) && raw[j] == '-' {
		j++
	}
	digits := func() bool {
		k := j
		for j < len(raw) && raw[j] >= '0' && raw[j] <= '9' {
			j++
		}
		return j > k
	}
	switch {
	case j < len(raw) && raw[j] == '0':
		j++
	case !digits():
		return -1
	}
	if j < len(raw) && raw[j] == '.' {
		j++
		if !digits() {
			return -1
		}
	}
	if j < len(raw) && (raw[j] == 'e' || raw[j] == 'E') {
		j++
		if j < len(raw) && (raw[j] == '+' || raw[j] == '-') {
			j++
		}
		if !digits() {
			return -1
		}
	}
	return j
}

// str appends the string at raw[i] ('"') as encoding/json spells its
// decoded text and returns the index past it; with wantKey, also the
// decoded text.
func (e *canonEnc) str(raw []byte, i int, wantKey bool) (key []byte, end int) {
	same, escaped := true, false
	j := i + 1
	for {
		for j < len(raw) && plainByte[raw[j]] {
			j++
		}
		if j >= len(raw) {
			return nil, -1
		}
		c := raw[j]
		if c == '"' {
			break
		}
		switch {
		case c == '\\':
			escaped = true
			if j+1 >= len(raw) {
				return nil, -1
			}
			switch x := raw[j+1]; x {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				same = same && jsonstr.Esc[unescape(x)] == string(raw[j:j+2])
				j += 2
			case 'u':
				if j+6 > len(raw) {
					return nil, -1
				}
				r, ok := hex4(raw[j+2 : j+6])
				if !ok {
					return nil, -1
				}
				switch {
				case r < utf8.RuneSelf:
					same = same && jsonstr.Esc[r] == string(raw[j:j+6])
				case r == '\u2028' || r == '\u2029':
					// encoding/json writes them as \u2028, \u2029: as read
				default:
					same = false
				}
				j += 6
			default:
				return nil, -1
			}
		case c < 0x20:
			return nil, -1 // not JSON
		case c < utf8.RuneSelf:
			same = same && jsonstr.Esc[c] == string(c)
			j++
		default:
			r, size := utf8.DecodeRune(raw[j:])
			if (r == utf8.RuneError && size == 1) || r == '\u2028' || r == '\u2029' {
				same = false
			}
			j += size
		}
	}
	end = j + 1
	text := raw[i:end]
	if same && !(escaped && wantKey) {
		e.buf = append(e.buf, text...)
		return raw[i+1 : j], end
	}
	var s string
	if json.Unmarshal(text, &s) != nil {
		return nil, -1
	}
	if same {
		e.buf = append(e.buf, text...)
	} else {
		enc, err := json.Marshal(s)
		if err != nil {
			return nil, -1
		}
		e.buf = append(e.buf, enc...)
	}
	return []byte(s), end
}

// unescape is the byte a one-letter escape stands for.
func unescape(x byte) byte {
	switch x {
	case 'b':
		return '\b'
	case 'f':
		return '\f'
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	}
	return x // '"', '\\', '/'
}

func hex4(b []byte) (rune, bool) {
	var r rune
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// object writes the object at raw[i] with its keys sorted and, of
// duplicate keys, the last one (as a map decodes them).
func (e *canonEnc) object(raw []byte, i, depth int) int {
	e.buf = append(e.buf, '{')
	open, base := len(e.buf), len(e.members)
	defer func() { e.members = e.members[:base] }()
	j := skipSpace(raw, i+1)
	if j < len(raw) && raw[j] == '}' {
		e.buf = append(e.buf, '}')
		return j + 1
	}
	for {
		j = skipSpace(raw, j)
		if j >= len(raw) || raw[j] != '"' {
			return -1
		}
		start := len(e.buf)
		key, k := e.str(raw, j, true)
		if k < 0 {
			return -1
		}
		j = skipSpace(raw, k)
		if j >= len(raw) || raw[j] != ':' {
			return -1
		}
		e.buf = append(e.buf, ':')
		if j = e.value(raw, j+1, depth+1); j < 0 {
			return -1
		}
		e.members = append(e.members, canonMember{key: key, start: start, end: len(e.buf)})
		j = skipSpace(raw, j)
		if j >= len(raw) {
			return -1
		}
		if raw[j] == '}' {
			j++
			break
		}
		if raw[j] != ',' {
			return -1
		}
		e.buf = append(e.buf, ',')
		j++
	}
	ms := e.members[base:]
	sorted := true
	for k := 1; k < len(ms) && sorted; k++ {
		sorted = bytes.Compare(ms[k-1].key, ms[k].key) < 0
	}
	if !sorted {
		e.tmp = append(e.tmp[:0], e.buf[open:]...)
		slices.SortStableFunc(ms, func(a, b canonMember) int { return bytes.Compare(a.key, b.key) })
		e.buf = e.buf[:open]
		first := true
		for k, m := range ms {
			if k+1 < len(ms) && bytes.Equal(m.key, ms[k+1].key) {
				continue // a later one of the same key wins
			}
			if !first {
				e.buf = append(e.buf, ',')
			}
			e.buf = append(e.buf, e.tmp[m.start-open:m.end-open]...)
			first = false
		}
	}
	e.buf = append(e.buf, '}')
	return j
}

func (e *canonEnc) array(raw []byte, i, depth int) int {
	e.buf = append(e.buf, '[')
	j := skipSpace(raw, i+1)
	if j < len(raw) && raw[j] == ']' {
		e.buf = append(e.buf, ']')
		return j + 1
	}
	for {
		if j = e.value(raw, j, depth+1); j < 0 {
			return -1
		}
		j = skipSpace(raw, j)
		if j >= len(raw) {
			return -1
		}
		if raw[j] == ']' {
			e.buf = append(e.buf, ']')
			return j + 1
		}
		if raw[j] != ',' {
			return -1
		}
		e.buf = append(e.buf, ',')
		j++
	}
}

// canonValue is json.Marshal of raw decoded (UseNumber) into any, when
// raw is one JSON value; ok is false when it cannot tell.
func canonValue(raw []byte) ([]byte, bool) {
	var e canonEnc
	j := e.value(raw, 0, 0)
	if j < 0 || skipSpace(raw, j) != len(raw) {
		return nil, false
	}
	return e.buf, true
}

// canonEnd is the index past the value at raw[i] when it is written
// exactly as canonEnc would write it (so it is its own canonical form), or
// -1. It writes nothing: most values reach a reducer in that form already.
func canonEnd(raw []byte, i, depth int) int {
	if i >= len(raw) || depth > canonDepth {
		return -1
	}
	switch c := raw[i]; {
	case c == '{':
		j := i + 1
		if j < len(raw) && raw[j] == '}' {
			return j + 1
		}
		var last []byte
		for first := true; ; first = false {
			key, end := canonStrEnd(raw, j)
			if end < 0 || key == nil || !first && bytes.Compare(last, key) >= 0 {
				return -1 // a key with an escape is left to canonEnc
			}
			last = key
			if end >= len(raw) || raw[end] != ':' {
				return -1
			}
			if j = canonEnd(raw, end+1, depth+1); j < 0 || j >= len(raw) {
				return -1
			}
			switch raw[j] {
			case '}':
				return j + 1
			case ',':
				j++
			default:
				return -1
			}
		}
	case c == '[':
		j := i + 1
		if j < len(raw) && raw[j] == ']' {
			return j + 1
		}
		for {
			if j = canonEnd(raw, j, depth+1); j < 0 || j >= len(raw) {
				return -1
			}
			switch raw[j] {
			case ']':
				return j + 1
			case ',':
				j++
			default:
				return -1
			}
		}
	case c == '"':
		_, end := canonStrEnd(raw, i)
		return end
	case c == 't', c == 'f', c == 'n':
		for _, lit := range []string{"true", "false", "null"} {
			if bytes.HasPrefix(raw[i:], []byte(lit)) {
				return i + len(lit)
			}
		}
		return -1
	case c == '-' || (c >= '0' && c <= '9'):
		return numberEnd(raw, i)
	}
	return -1
}

// canonStrEnd is the index past the string at raw[i] when encoding/json
// would write its text just so, or -1; text is what is between the quotes
// when it has no escape (nil otherwise).
func canonStrEnd(raw []byte, i int) (text []byte, end int) {
	if i >= len(raw) || raw[i] != '"' {
		return nil, -1
	}
	escaped := false
	for j := i + 1; j < len(raw); {
		for j < len(raw) && plainByte[raw[j]] {
			j++
		}
		if j >= len(raw) {
			return nil, -1
		}
		switch c := raw[j]; {
		case c == '"':
			if escaped {
				return nil, j + 1
			}
			return raw[i+1 : j : j], j + 1
		case c == '\\':
			escaped = true
			if j+1 >= len(raw) {
				return nil, -1
			}
			switch x := raw[j+1]; x {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				if jsonstr.Esc[unescape(x)] != string(raw[j:j+2]) {
					return nil, -1
				}
				j += 2
				continue
			case 'u':
			default:
				return nil, -1
			}
			if j+6 > len(raw) {
				return nil, -1
			}
			r, ok := hex4(raw[j+2 : j+6])
			if !ok || !(r < utf8.RuneSelf && jsonstr.Esc[r] == string(raw[j:j+6]) || string(raw[j:j+6]) == `\u2028` || string(raw[j:j+6]) == `\u2029`) {
				return nil, -1
			}
			j += 6
		case c < utf8.RuneSelf:
			return nil, -1 // a byte encoding/json escapes
		default:
			r, size := utf8.DecodeRune(raw[j:])
			if (r == utf8.RuneError && size == 1) || r == '\u2028' || r == '\u2029' {
				return nil, -1
			}
			j += size
		}
	}
	return nil, -1
}

// canonObjects reads raw as decodeList does (a JSON list of objects; empty
// or null is none) and gives each item as json.Marshal writes it decoded:
// the items are consecutive in one buffer, so joining them with commas
// is the list as json.Marshal writes it. ok is false when raw is anything
// else (a null item, trailing data) or the form is not certain: decodeList
// and json.Marshal then say what they say.
func canonObjects(raw []byte) (items [][]byte, ok bool) {
	i := skipSpace(raw, 0)
	if i == len(raw) {
		return nil, true
	}
	if t := bytes.TrimSpace(raw); string(t) == "null" {
		return nil, true
	}
	if raw[i] != '[' {
		return nil, false
	}
	if items, ok := canonItems(raw); ok {
		return items, true
	}
	e := canonEnc{buf: make([]byte, 0, len(raw)+len(raw)/8), members: make([]canonMember, 0, 32)}
	var spans []int
	j := skipSpace(raw, i+1)
	if j < len(raw) && raw[j] == ']' {
		j++
	} else {
		for {
			j = skipSpace(raw, j)
			if j >= len(raw) || raw[j] != '{' {
				return nil, false
			}
			spans = append(spans, len(e.buf))
			if j = e.object(raw, j, 1); j < 0 {
				return nil, false
			}
			spans = append(spans, len(e.buf))
			j = skipSpace(raw, j)
			if j >= len(raw) {
				return nil, false
			}
			if raw[j] == ']' {
				j++
				break
			}
			if raw[j] != ',' {
				return nil, false
			}
			j++
		}
	}
	if skipSpace(raw, j) != len(raw) {
		return nil, false
	}
	items = make([][]byte, len(spans)/2)
	for k := range items {
		items[k] = e.buf[spans[2*k]:spans[2*k+1]:spans[2*k+1]]
	}
	return items, true
}

// canonItems is canonObjects for a list in canonical form already (no
// space, every item its own canonical form): the items are raw's.
func canonItems(raw []byte) ([][]byte, bool) {
	if len(raw) < 2 || raw[0] != '[' {
		return nil, false
	}
	items := [][]byte{}
	j := 1
	if raw[j] == ']' {
		return items, j+1 == len(raw)
	}
	for {
		if raw[j] != '{' {
			return nil, false
		}
		end := canonEnd(raw, j, 1)
		if end < 0 || end >= len(raw) {
			return nil, false
		}
		items = append(items, raw[j:end:end])
		switch raw[end] {
		case ']':
			return items, end+1 == len(raw)
		case ',':
			j = end + 1
			if j >= len(raw) {
				return nil, false
			}
		default:
			return nil, false
		}
	}
}

// joinList writes items as a JSON list.
func joinList(items [][]byte) []byte {
	n := 2
	for _, it := range items {
		n += len(it) + 1
	}
	out := make([]byte, 0, n)
	out = append(out, '[')
	for i, it := range items {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, it...)
	}
	return append(out, ']')
}
