package chainformat

import (
	"bytes"
	"compress/flate"
	"encoding/base64"
	"encoding/json"
	"io"
	"maps"
	"rewind/engine/internal/jsonstr"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// The replay of a chain runs the channels' reducers and the storage
// encodings backwards (patches, blobs, references) once per stored write.
// The functions here do what their encoding/json forms do, byte for byte,
// for the values rewind stores, and give up (ok false) on anything else,
// which then takes the encoding/json form: a key that needs escaping, a
// duplicate key, bad JSON. The tests compare both on random values
// (TestFastValuesAgree).

// field is one member of a JSON object: its key and its value's bytes.
type field struct {
	key string
	val []byte
}

// readFields reads a JSON object's members in order.
func readFields(b []byte) ([]field, bool) {
	r := rd{b: b}
	var out []field
	ok := r.object(func(k string) bool {
		v, ok := r.value()
		out = append(out, field{k, v})
		return ok
	})
	if out == nil {
		out = []field{}
	}
	return out, ok && r.end()
}

// appendObject writes fs as json.Marshal writes a map[string]json.RawMessage
// of them: keys sorted, values compacted with HTML's characters escaped.
// ok is false when a key is not plain (the caller gives up).
func appendObject(dst []byte, fs []field) ([]byte, bool) {
	for _, f := range fs {
		if !plainKey(f.key) {
			return nil, false
		}
	}
	slices.SortFunc(fs, func(a, b field) int { return strings.Compare(a.key, b.key) })
	dst = append(dst, '{')
	for i, f := range fs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '"')
		dst = append(dst, f.key...)
		dst = append(dst, '"', ':')
		dst = appendCompact(dst, f.val)
	}
	return append(dst, '}'), true
}

// appendCompact is json.Compact with HTML escaping (what json.Marshal does
// to a json.RawMessage) of a value already checked.
func appendCompact(dst, v []byte) []byte {
	const hex = "0123456789abcdef"
	inString := false
	start := 0
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '<' || c == '>' || c == '&':
			dst = append(dst, v[start:i]...)
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			start = i + 1
		case c == 0xE2 && i+2 < len(v) && v[i+1] == 0x80 && v[i+2]&^1 == 0xA8:
			dst = append(dst, v[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[v[i+2]&0xF])
			start = i + 3
			i += 2
		case inString:
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			dst = append(dst, v[start:i]...)
			start = i + 1
		}
	}
	return append(dst, v[start:]...)
}

// mergeMap is MergeMap for objects of plain keys.
func mergeMap(current, write json.RawMessage) (json.RawMessage, bool) {
	var cur []field
	if c := bytes.TrimSpace(current); len(c) > 0 && string(c) != "null" {
		var ok bool
		if cur, ok = readFields(c); !ok {
			return nil, false
		}
	}
	add, ok := readFields(write)
	if !ok {
		return nil, false
	}
	cur = setFields(cur, add)
	return appendObject(make([]byte, 0, len(current)+len(write)), cur)
}

// setFields sets the fields of add in fs, in place (new ones at the end).
func setFields(fs, add []field) []field {
	for _, a := range add {
		found := false
		for i := range fs {
			if fs[i].key == a.key {
				fs[i].val, found = a.val, true
				break
			}
		}
		if !found {
			fs = append(fs, a)
		}
	}
	return fs
}

// smallInt: a whole number of at most 15 digits, not -0, which adds up
// exactly in a float64 and prints the same as one.
func smallInt(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 16 || string(b) == "-0" {
		return 0, false
	}
	d := b
	if d[0] == '-' {
		d = d[1:]
	}
	if len(d) == 0 || len(d) > 15 || d[0] == '0' && len(d) > 1 {
		return 0, false
	}
	for _, c := range d {
		if !isDigit(c) {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	return n, err == nil
}

// unpatchObjectFast is unpatchObject for patches and values of plain keys.
func unpatchObjectFast(current, stored json.RawMessage) (json.RawMessage, bool) {
	var set []field
	var del []string
	var whole []byte
	r := rd{b: stored}
	ok := r.object(func(k string) bool {
		var ok bool
		switch k {
		case "$o":
			if r.peek() != '{' {
				return false
			}
			ok = r.object(func(k string) bool {
				v, ok := r.value()
				set = append(set, field{k, v})
				return ok
			})
		case "$d":
			del, ok = r.strList(true)
		case "$w":
			whole, ok = r.value()
		}
		return ok // any other key: encoding/json may fold it onto one of these
	})
	if !ok || !r.end() {
		return nil, false
	}
	if whole != nil {
		return whole, true
	}
	var cur []field
	if c := bytes.TrimSpace(current); len(c) > 0 && string(c) != "null" {
		if cur, ok = readFields(c); !ok {
			return nil, false
		}
	}
	cur = setFields(cur, set)
	cur = slices.DeleteFunc(cur, func(f field) bool { return slices.Contains(del, f.key) })
	return appendObject(make([]byte, 0, len(current)+len(stored)), cur)
}

// readReplace reads {"replace": list} as isReplace's json.Unmarshal does.
func readReplace(w []byte) (list []byte, found, ok bool) {
	r := rd{b: w}
	ok = r.object(func(k string) bool {
		if k == "replace" {
			var ok bool
			list, ok = r.value()
			found = true
			return ok
		}
		if strings.EqualFold(k, "replace") {
			return false
		}
		_, ok := r.value()
		return ok
	})
	return list, found, ok && r.end()
}

// objectMembers is objectFields for objects of plain keys: each key as
// json.Marshal spells it, and its value's bytes.
func objectMembers(b []byte) ([][2]json.RawMessage, bool) {
	r := rd{b: b}
	var out [][2]json.RawMessage
	if r.peek() != '{' {
		return nil, false
	}
	r.i++
	if r.eat('}') {
		return out, r.end()
	}
	for {
		r.ws()
		start := r.i
		k, ok := r.str()
		if !ok || !plainKey(k) || !r.eat(':') {
			return nil, false
		}
		key := r.b[start : start+len(k)+2]
		v, ok := r.value()
		if !ok {
			return nil, false
		}
		out = append(out, [2]json.RawMessage{key, v})
		if r.eat(',') {
			continue
		}
		return out, r.eat('}') && r.end()
	}
}

// inflaters keep DEFLATE readers (each holds a 32 KB window) and the
// buffers a value's blobs are decoded and inflated into, for the next
// value: a newest load inflates every blob its head refers to, and
// growing fresh buffers to a summary's size was a quarter of that.
var inflaters sync.Pool

// inflateGuess is how many times its DEFLATE size a blob is expected to
// inflate to (a summary's text: about 5).
const inflateGuess = 8

type inflater struct {
	r   io.ReadCloser
	z   []byte // the DEFLATE bytes of the blob being inflated
	out []byte // the inflated blobs of one value, one after another
}

func getInflater() *inflater {
	in, _ := inflaters.Get().(*inflater)
	if in == nil {
		in = &inflater{}
	}
	return in
}

// unzipFast is unzipBlob for {"$z": "<base64>"} without escapes.
func unzipFast(stored []byte) ([]byte, bool) {
	in := getInflater()
	defer inflaters.Put(in)
	out, ok := in.inflate(in.out[:0], stored)
	in.out = out[:0]
	if !ok {
		return nil, false
	}
	return bytes.Clone(out), true
}

// inflate appends to dst the JSON string stored ({"$z": "<base64>"}
// without escapes) stands for; ok false when it is not that form or does
// not inflate (unzipSlow then says why), dst's bytes unchanged.
func (in *inflater) inflate(dst, stored []byte) (_ []byte, ok bool) {
	r := rd{b: stored}
	var z []byte
	ok = r.object(func(k string) bool {
		if k != "$z" || r.peek() != '"' {
			return false
		}
		start := r.i + 1
		if !r.skipString() {
			return false
		}
		z = r.b[start : r.i-1]
		return true
	})
	if !ok || !r.end() || z == nil || bytes.IndexByte(z, '\\') >= 0 {
		return dst, false
	}
	in.z = slices.Grow(in.z[:0], base64.StdEncoding.DecodedLen(len(z)))[:base64.StdEncoding.DecodedLen(len(z))]
	n, err := base64.StdEncoding.Decode(in.z, z)
	if err != nil {
		return dst, false
	}
	if in.r == nil || in.r.(flate.Resetter).Reset(bytes.NewReader(in.z[:n]), nil) != nil {
		in.r = flate.NewReader(bytes.NewReader(in.z[:n]))
	}
	// Room for a text's usual ratio, grown (and kept) if it inflates
	// more: zipMax's 64 KB, zeroed and faulted in by a new process for a
	// 4 KB summary, was half of its first load's inflating.
	start := len(dst)
	dst = slices.Grow(dst, min(zipMax+1, inflateGuess*n)+bytes.MinRead)
	for {
		if len(dst) == cap(dst) {
			dst = slices.Grow(dst, bytes.MinRead)
		}
		m, err := in.r.Read(dst[len(dst):cap(dst)])
		dst = dst[:len(dst)+m]
		if len(dst)-start > zipMax {
			return dst[:start], false
		}
		if err == io.EOF {
			return dst, true
		}
		if err != nil {
			return dst[:start], false
		}
	}
}

// blobAt finds the blob references of a stored value: each {"$b": "<hash>"}
// object, as (start, end, hash). ok is false when the value holds anything
// else that restore treats specially ("$lit", an escaped '$', a "$b" key
// that is not a whole reference), which then takes restore's way.
func blobAt(raw []byte) (refs [][3]int, ok bool) {
	if bytes.Contains(raw, markLit) || bytes.Contains(raw, markEscapedDollar) {
		return nil, false
	}
	from := 0
	for {
		at := bytes.Index(raw[from:], markBlob)
		if at < 0 {
			return refs, true
		}
		at += from
		// A key is the first member of an object: {, then white space.
		start := at - 1
		for start >= 0 && isSpace(raw[start]) {
			start--
		}
		if start < 0 || raw[start] != '{' {
			return nil, false
		}
		r := rd{b: raw, i: at + len(markBlob)}
		if !r.eat(':') || r.peek() != '"' {
			return nil, false
		}
		h := r.i + 1
		if !r.skipString() || r.i-h-1 != 20 || !r.eat('}') {
			return nil, false
		}
		for _, c := range raw[h : h+20] {
			if !isDigit(c) && (c < 'a' || c > 'f') {
				return nil, false
			}
		}
		refs = append(refs, [3]int{start, r.i, h})
		from = r.i
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// unblobFast puts the blobs back into a stored value by their bytes. It
// gives the JSON value unblob gives (the same bytes where the value is as
// encoding/json writes it: the stored form on SQLite), or ok false.
func unblobFast(raw json.RawMessage, blobs *blobSet) (json.RawMessage, bool, error) {
	refs, ok := blobAt(raw)
	if !ok {
		return nil, false, nil
	}
	if len(refs) == 0 {
		return raw, true, nil
	}
	// The bodies go one after another into the inflater's buffer, then
	// once into the value: not each into one of its own first.
	in := getInflater()
	defer inflaters.Put(in)
	bodies, ends := in.out[:0], make([]int, len(refs))
	size := len(raw)
	for i, ref := range refs {
		start := len(bodies)
		var found bool
		var err error
		if bodies, found, err = blobs.appendBody(bodies, string(raw[ref[2]:ref[2]+20]), in); err != nil {
			return nil, false, err
		}
		if !found || len(bodies) == start || bodies[start] != '"' {
			in.out = bodies[:0]
			return nil, false, nil // missing, or not a string: restore says why
		}
		ends[i] = len(bodies)
		size += len(bodies) - start
	}
	in.out = bodies[:0]
	out := make([]byte, 0, size)
	last, from := 0, 0
	for i, ref := range refs {
		out = append(out, raw[last:ref[0]]...)
		at := len(out)
		out = append(out, bodies[from:ends[i]]...)
		// The value's own bytes, which nothing changes, serve the next
		// value that names the blob.
		blobs.remember(string(raw[ref[2]:ref[2]+20]), out[at:len(out):len(out)])
		last, from = ref[1], ends[i]
	}
	return append(out, raw[last:]...), true, nil
}

// appendAny appends v, a value readAny (or a json.Decoder with UseNumber)
// decoded, as json.Marshal writes it: map keys sorted, strings
// HTML-escaped. Not ok for a value of any other type, or a json.Number
// Marshal would refuse (the caller asks encoding/json).
func appendAny(dst []byte, v any) ([]byte, bool) {
	switch v := v.(type) {
	case nil:
		return append(dst, "null"...), true
	case bool:
		return strconv.AppendBool(dst, v), true
	case string:
		return jsonstr.Append(dst, v), true
	case json.Number:
		r := rd{b: []byte(v)}
		if v == "" || !r.skipNumber() || r.i != len(r.b) {
			return nil, false
		}
		return append(dst, v...), true
	case []any:
		if v == nil {
			return append(dst, "null"...), true
		}
		dst = append(dst, '[')
		for i, e := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			var ok bool
			if dst, ok = appendAny(dst, e); !ok {
				return nil, false
			}
		}
		return append(dst, ']'), true
	case map[string]any:
		return appendMap(dst, v)
	}
	return nil, false
}

func appendMap(dst []byte, m map[string]any) ([]byte, bool) {
	if m == nil {
		return append(dst, "null"...), true
	}
	dst = append(dst, '{')
	for i, k := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(jsonstr.Append(dst, k), ':')
		var ok bool
		if dst, ok = appendAny(dst, m[k]); !ok {
			return nil, false
		}
	}
	return append(dst, '}'), true
}

// marshalItems is json.Marshal(items), a keyed channel's list, without
// reflection where appendAny can write it.
func marshalItems(items []map[string]any) ([]byte, error) {
	if items != nil {
		b, ok := []byte{'['}, true
		for i, it := range items {
			if i > 0 {
				b = append(b, ',')
			}
			if b, ok = appendMap(b, it); !ok {
				break
			}
		}
		if ok {
			return append(b, ']'), nil
		}
	}
	return json.Marshal(items)
}
