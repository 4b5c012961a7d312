package chainformat

import (
	"bytes"
	"compress/flate"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"unsafe"

	"rewind/store"
)

// Large strings in stored documents (an inline attachment, a long tool
// result, the summary) are kept once per thread as blobs, by content hash,
// and the document holds {"$b": "<hash>"} in their place. A value of the
// caller's that is itself an object with a "$b" or "$lit" key is wrapped
// as {"$lit": {...}} so it is never mistaken for a reference.

// blobMin is the shortest string (in bytes, as stored) kept as a blob.
const blobMin = 1024

// A blob's body is the JSON string it stands for, or (format 3) when that
// is at least a quarter shorter, {"$z": "<base64 of its raw DEFLATE>"}:
// a summary's text is one such every compaction. Its hash is the stored
// body's (as the store checks); compression is deterministic, so the same
// text is still one blob. Bodies
// over zipMax stay as they are (an attachment is usually compressed
// already, and a base re-encodes it in every new process).
const zipMax = 64 << 10

var markZip = []byte(`{"$z":`)

// zipBlob is the body a blob of body is stored with. The same large
// value is usually written again by the next checkpoints (a summary, a
// long tool result): what it zips to is remembered, and the compressors
// (most of a long thread's turn's allocations when new) are reused.
func zipBlob(body []byte) []byte {
	if len(body) > zipMax {
		return body
	}
	zipMu.Lock()
	out, ok := zipMemo[string(body)]
	zipMu.Unlock()
	if ok {
		return out
	}
	out = deflateBlob(body)
	zipMu.Lock()
	if len(zipMemo) >= 64 {
		clear(zipMemo)
	}
	zipMemo[string(body)] = out
	zipMu.Unlock()
	return out
}

var (
	zipMu   sync.Mutex
	zipMemo = map[string][]byte{}
	zippers = sync.Pool{New: func() any {
		w, _ := flate.NewWriter(nil, flate.BestCompression)
		return w
	}}
)

func deflateBlob(body []byte) []byte {
	var z bytes.Buffer
	w := zippers.Get().(*flate.Writer)
	defer zippers.Put(w)
	w.Reset(&z) // as new from flate.NewWriter(&z, flate.BestCompression)
	_, _ = w.Write(body)
	if w.Close() != nil {
		return body
	}
	out, err := json.Marshal(map[string]string{"$z": base64.StdEncoding.EncodeToString(z.Bytes())})
	if err != nil || len(out) > len(body)*3/4 {
		return body
	}
	return out
}

// unzipBlob is the JSON string a stored blob body stands for.
func unzipBlob(stored []byte) ([]byte, error) {
	if !bytes.HasPrefix(stored, markZip) {
		return stored, nil
	}
	if body, ok := unzipFast(stored); ok {
		return body, nil
	}
	return unzipSlow(stored)
}

func unzipSlow(stored []byte) ([]byte, error) {
	var z struct {
		Z []byte `json:"$z"`
	}
	if err := json.Unmarshal(stored, &z); err != nil {
		return nil, err
	}
	body, err := io.ReadAll(io.LimitReader(flate.NewReader(bytes.NewReader(z.Z)), zipMax+1))
	if err != nil || len(body) > zipMax {
		return nil, fmt.Errorf("a compressed blob does not inflate (%v)", err)
	}
	return body, nil
}

var (
	markBlob = []byte(`"$b"`)
	markLit  = []byte(`"$lit"`)
	// An escaped '$' could spell either key; such values take the slow path.
	markEscapedDollar = []byte(`\u0024`)
)

// blobber collects the blobs and references of the documents one
// checkpoint writes.
type blobber struct {
	blobs []store.Blob
	refs  []string
	seen  map[string]bool
	// inline keeps large strings where they are and only escapes the
	// caller's "$b" and "$lit" objects: a document that reads on its own
	// (a head snapshot, a rebase).
	inline bool
	// upTo, for a head snapshot, keeps a value as it is when no string in
	// it is longer (keepsInPlace); other values are encoded as by a
	// blobber without it.
	upTo int
}

func (b *blobber) ref(h string) {
	if b.seen == nil {
		b.seen = map[string]bool{}
	}
	if !b.seen[h] {
		b.seen[h] = true
		b.refs = append(b.refs, h)
	}
}

// encode returns raw with its large strings replaced by blob references.
// Values with nothing to replace or escape keep their bytes.
func (b *blobber) encode(raw json.RawMessage) (json.RawMessage, error) {
	if (b.inline || len(raw) < blobMin) && !bytes.Contains(raw, markBlob) && !bytes.Contains(raw, markLit) && !bytes.Contains(raw, markEscapedDollar) {
		return raw, nil
	}
	v, err := decodeAny(raw)
	if err != nil {
		return nil, err
	}
	changed := false
	v = b.walk(v, &changed)
	if !changed {
		return raw, nil
	}
	return json.Marshal(v)
}

func (b *blobber) walk(v any, changed *bool) any {
	switch x := v.(type) {
	case string:
		if b.inline || len(x) < blobMin {
			return x
		}
		body, _ := json.Marshal(x)
		body = zipBlob(body)
		h := store.ContentHash(body)
		if !b.seen[h] {
			b.blobs = append(b.blobs, store.Blob{Hash: h, Body: body})
		}
		b.ref(h)
		*changed = true
		return map[string]any{"$b": h}
	case []any:
		for i := range x {
			x[i] = b.walk(x[i], changed)
		}
		return x
	case map[string]any:
		for k, e := range x {
			x[k] = b.walk(e, changed)
		}
		_, hasB := x["$b"]
		_, hasLit := x["$lit"]
		if hasB || hasLit {
			*changed = true
			return map[string]any{"$lit": x}
		}
		return x
	}
	return v
}

// blobRefs lists the blob hashes a stored document refers to: every
// "$b" key with a hash for its value (spaces allowed around the colon, as
// a jsonb row has them). By hand, not a regular expression: compiling one
// was a new process's first load's cost, and every commit scans its row.
func blobRefs(doc []byte) []string {
	var out []string
	for {
		i := bytes.Index(doc, markBlob)
		if i < 0 {
			return out
		}
		doc = doc[i+len(markBlob):]
		rest := bytes.TrimLeft(doc, " \t\r\n")
		if len(rest) == 0 || rest[0] != ':' {
			continue
		}
		rest = bytes.TrimLeft(rest[1:], " \t\r\n")
		if len(rest) >= store.HashLen+2 && rest[0] == '"' && rest[store.HashLen+1] == '"' && lowerHex(rest[1:store.HashLen+1]) {
			out = append(out, string(rest[1:store.HashLen+1]))
		}
	}
}

// lowerHex says b is lower-case hex digits only, as a hash is spelt.
func lowerHex(b []byte) bool {
	for _, c := range b {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// blobSet is the blobs a rebuild read, each inflated when first used (a
// chain holds the summary's text of every compaction since its base;
// only the newest is read).
type blobSet struct {
	stored map[string][]byte          // as stored
	bodies map[string]json.RawMessage // inflated
}

// get is blob h's body: ok false when the store does not hold it.
func (s *blobSet) get(h string) (json.RawMessage, bool, error) {
	if b, ok := s.bodies[h]; ok {
		return b, true, nil
	}
	stored, ok := s.stored[h]
	if !ok {
		return nil, false, nil
	}
	b, err := unzipBlob(stored)
	if err != nil {
		return nil, true, fmt.Errorf("blob %s: %w (%w)", h, ErrCorrupt, err)
	}
	if s.bodies == nil {
		s.bodies = map[string]json.RawMessage{}
	}
	s.bodies[h] = b
	return b, true, nil
}

// appendBody appends blob h's body to dst (inflating it with in): found
// false when the store does not hold it.
func (s *blobSet) appendBody(dst []byte, h string, in *inflater) (_ []byte, found bool, err error) {
	if b, ok := s.bodies[h]; ok {
		return append(dst, b...), true, nil
	}
	stored, ok := s.stored[h]
	if !ok {
		return dst, false, nil
	}
	if !bytes.HasPrefix(stored, markZip) {
		return append(dst, stored...), true, nil
	}
	if out, ok := in.inflate(dst, stored); ok {
		return out, true, nil
	}
	b, err := unzipSlow(stored)
	if err != nil {
		return dst, true, fmt.Errorf("blob %s: %w (%w)", h, ErrCorrupt, err)
	}
	return append(dst, b...), true, nil
}

// remember keeps body as blob h's, unless one is kept already.
func (s *blobSet) remember(h string, body json.RawMessage) {
	if _, ok := s.bodies[h]; ok {
		return
	}
	if s.bodies == nil {
		s.bodies = map[string]json.RawMessage{}
	}
	s.bodies[h] = body
}

// unblob puts the blobs back into a stored value.
func (s *blobSet) unblob(raw json.RawMessage) (json.RawMessage, error) {
	if !bytes.Contains(raw, markBlob) && !bytes.Contains(raw, markLit) {
		return raw, nil
	}
	out, ok, err := unblobFast(raw, s)
	if err != nil || ok {
		return out, err
	}
	return unblobSlow(raw, s)
}

func unblobSlow(raw json.RawMessage, blobs *blobSet) (json.RawMessage, error) {
	v, err := decodeAny(raw)
	if err != nil {
		return nil, err
	}
	v, err = restore(v, blobs)
	if err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

func restore(v any, blobs *blobSet) (any, error) {
	switch x := v.(type) {
	case []any:
		for i := range x {
			var err error
			if x[i], err = restore(x[i], blobs); err != nil {
				return nil, err
			}
		}
		return x, nil
	case map[string]any:
		if len(x) == 1 {
			if h, ok := x["$b"].(string); ok {
				body, found, err := blobs.get(h)
				if err != nil {
					return nil, err
				}
				if !found {
					return nil, fmt.Errorf("blob %s is missing", h)
				}
				return decodeAny(body)
			}
			if inner, ok := x["$lit"].(map[string]any); ok {
				x = inner // the caller's own object: restore its values only
			}
		}
		for k, e := range x {
			var err error
			if x[k], err = restore(e, blobs); err != nil {
				return nil, err
			}
		}
		return x, nil
	}
	return v, nil
}

func decodeAny(raw []byte) (any, error) {
	if v, ok := readAny(raw); ok {
		return v, nil
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// Memo remembers the encoded form of large channel values, by the
// identity of their bytes: a value that did not change is the same slice
// from checkpoint to checkpoint (reducers make new bytes for what they
// change), so a base does not decode and hash a 384 KB attachment again.
// Entries hold their slice, so its address cannot be reused meanwhile.
type Memo struct {
	mu      sync.Mutex
	entries map[memoKey]memoEntry
	order   []memoKey
}

type memoKey struct {
	p uintptr
	n int
}

type memoEntry struct {
	raw   json.RawMessage
	enc   json.RawMessage
	blobs []store.Blob
}

const memoSize = 32

func (m *Memo) encode(b *blobber, raw json.RawMessage) (json.RawMessage, error) {
	if len(raw) < blobMin {
		return b.encode(raw)
	}
	k := memoKey{uintptr(unsafe.Pointer(unsafe.SliceData(raw))), len(raw)}
	m.mu.Lock()
	e, ok := m.entries[k]
	m.mu.Unlock()
	if ok {
		// The blobs go along again: the store keeps one copy, and a prune
		// may have freed them since.
		for _, bl := range e.blobs {
			if !b.seen[bl.Hash] {
				b.blobs = append(b.blobs, bl)
			}
			b.ref(bl.Hash)
		}
		return e.enc, nil
	}
	var own blobber
	enc, err := own.encode(raw)
	if err != nil {
		return nil, err
	}
	for _, bl := range own.blobs {
		if !b.seen[bl.Hash] {
			b.blobs = append(b.blobs, bl)
		}
		b.ref(bl.Hash)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.entries == nil {
		m.entries = map[memoKey]memoEntry{}
	}
	if _, dup := m.entries[k]; !dup {
		if len(m.order) >= memoSize {
			delete(m.entries, m.order[0])
			m.order = m.order[1:]
		}
		m.entries[k] = memoEntry{raw: raw, enc: enc, blobs: own.blobs}
		m.order = append(m.order, k)
	}
	return enc, nil
}
