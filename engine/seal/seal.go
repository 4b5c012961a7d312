// Package seal encrypts stored documents at rest: AES-GCM from the
// standard library, in an envelope that names the key it was sealed with
// (its id), so a reader without that key can say which key it needs.
//
// A sealed document is JSON, so every store keeps it where it keeps a
// document (PostgreSQL's json columns too):
//
//	{"$sealed":"<key id>","h":"<hash>","d":"<base64 nonce+ciphertext>"}
//
// h is present for a message or blob body, whose stored hash names its
// plaintext (store.SealedHash lets a store check the name without the
// key). Sealing is deterministic (the nonce is a keyed hash of the
// plaintext, a synthetic IV): the same document sealed twice gives the
// same bytes, so a redelivered put stays a no-op and equal bodies stay
// equal, at the cost of telling that two sealed documents are equal.
package seal

import (
	"bytes"
	"compress/flate"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
)

// Prefix begins every sealed document.
const Prefix = `{"$sealed":"`

// Key is one key: its id and the ciphers derived from it.
type Key struct {
	ID   string
	aead cipher.AEAD
	iv   []byte // the nonce's HMAC key
}

// maxID bounds a key id: it is stored with every sealed document.
const maxID = 32

// ParseKey reads a key file's text: "ID:KEY" or "KEY" alone, where KEY is
// 16, 24 or 32 bytes in base64 or hex (or the file is those raw bytes).
// Without an id, the id is "k" and the first 8 hex digits of the key's
// SHA-256.
func ParseKey(data []byte) (*Key, error) {
	text := strings.TrimSpace(string(data))
	id := ""
	if i := strings.IndexByte(text, ':'); i >= 0 {
		id, text = strings.TrimSpace(text[:i]), strings.TrimSpace(text[i+1:])
		if err := checkID(id); err != nil {
			return nil, err
		}
	}
	raw := decodeKey(text)
	if raw == nil && id == "" && keyLen(len(data)) {
		raw = data
	}
	if raw == nil {
		return nil, errors.New("the key is not 16, 24 or 32 bytes in base64 or hex; make one with: head -c 32 /dev/urandom | base64")
	}
	if id == "" {
		sum := sha256.Sum256(raw)
		id = "k" + hex.EncodeToString(sum[:4])
	}
	return newKey(id, raw)
}

func keyLen(n int) bool { return n == 16 || n == 24 || n == 32 }

func decodeKey(text string) []byte {
	if b, err := hex.DecodeString(text); err == nil && keyLen(len(b)) {
		return b
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(text); err == nil && keyLen(len(b)) {
			return b
		}
	}
	return nil
}

func checkID(id string) error {
	if id == "" || len(id) > maxID {
		return fmt.Errorf("the key id %q must be 1 to %d letters, digits, '.', '_' or '-'", id, maxID)
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return fmt.Errorf("the key id %q must be 1 to %d letters, digits, '.', '_' or '-'", id, maxID)
		}
	}
	return nil
}

func newKey(id string, raw []byte) (*Key, error) {
	derive := func(label string) []byte {
		m := hmac.New(sha256.New, raw)
		m.Write([]byte(label))
		return m.Sum(nil)
	}
	block, err := aes.NewCipher(derive("rewind seal aes")[:len(raw)])
	if err != nil {
		return nil, fmt.Errorf("key %s: %w", id, err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("key %s: %w", id, err)
	}
	return &Key{ID: id, aead: aead, iv: derive("rewind seal iv")}, nil
}

// LoadFile reads the key in the file at path (ParseKey).
func LoadFile(path string) (*Key, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read the key file: %w", err)
	}
	k, err := ParseKey(data)
	if err != nil {
		return nil, fmt.Errorf("key file %s: %w", path, err)
	}
	return k, nil
}

// Keys seals with one key and opens with any of them.
type Keys struct {
	sealer *Key
	byID   map[string]*Key
}

// NewKeys seals with sealer (nil: seals nothing) and opens what sealer
// or any of others sealed.
func NewKeys(sealer *Key, others ...*Key) *Keys {
	k := &Keys{sealer: sealer, byID: map[string]*Key{}}
	for _, o := range append(others, sealer) {
		if o != nil {
			k.byID[o.ID] = o
		}
	}
	return k
}

// Sealing is the id of the key k seals with, "" when it seals nothing
// (also for a nil k).
func (k *Keys) Sealing() string {
	if k == nil || k.sealer == nil {
		return ""
	}
	return k.sealer.ID
}

// Is tells a sealed document.
func Is(doc []byte) bool { return bytes.HasPrefix(doc, []byte(Prefix)) }

// KeyID is the id of the key doc was sealed with, "" when doc is not
// sealed.
func KeyID(doc []byte) string {
	if !Is(doc) {
		return ""
	}
	rest := doc[len(Prefix):]
	if i := bytes.IndexByte(rest, '"'); i >= 0 {
		return string(rest[:i])
	}
	return ""
}

// Seal is doc sealed with k's sealing key; hash (may be "") is stored in
// the clear beside it and bound to it. A nil k, or one that seals
// nothing, gives doc back.
func (k *Keys) Seal(doc []byte, hash string) []byte {
	if k == nil || k.sealer == nil || doc == nil {
		return doc
	}
	key := k.sealer
	ad := additional(key.ID, hash)
	m := hmac.New(sha256.New, key.iv)
	m.Write(ad)
	m.Write(doc)
	nonce := m.Sum(nil)[:key.aead.NonceSize()]
	sealed := key.aead.Seal(nonce, nonce, pack(doc), ad)
	out := make([]byte, 0, len(Prefix)+len(key.ID)+len(hash)+base64.StdEncoding.EncodedLen(len(sealed))+16)
	out = append(out, Prefix...)
	out = append(out, key.ID...)
	if hash != "" {
		out = append(out, `","h":"`...)
		out = append(out, hash...)
	}
	out = append(out, `","d":"`...)
	out = base64.StdEncoding.AppendEncode(out, sealed)
	return append(out, `"}`...)
}

func additional(id, hash string) []byte { return []byte("rewind/seal/1 " + id + " " + hash) }

// Error is a sealed document that these keys cannot open: none was given
// (Have is ""), or none has its id, or the one with its id does not open
// it (Wrong).
type Error struct {
	KeyID string // the document's key
	Have  string // the ids of the keys given, "" for none
	Wrong bool   // a key of its id was given but does not open it
}

// ErrSealed matches every *Error.
var ErrSealed = errors.New("sealed")

// Error says what cannot be opened; which key would open it is KeyID, for
// the front end to word (the CLI names its key-file flag).
func (e *Error) Error() string {
	switch {
	case e.Have == "":
		return fmt.Sprintf("encrypted with key %s", e.KeyID)
	case e.Wrong:
		return fmt.Sprintf("encrypted with key %s, which the key file given does not open", e.KeyID)
	default:
		return fmt.Sprintf("encrypted with key %s, not with %s", e.KeyID, e.Have)
	}
}

// Is makes errors.Is(err, ErrSealed) true.
func (e *Error) Is(target error) bool { return target == ErrSealed }

// Open is doc's plaintext: doc itself when it is not sealed, a *Error
// when no key of k opens it (k may be nil).
func (k *Keys) Open(doc []byte) ([]byte, error) {
	if !Is(doc) {
		return doc, nil
	}
	id, hash, data, ok := parse(doc)
	if !ok {
		return nil, errors.New("a sealed document is cut short or malformed: the store was changed by something other than rewind")
	}
	var key *Key
	if k != nil {
		key = k.byID[id]
	}
	if key == nil {
		return nil, &Error{KeyID: id, Have: k.ids()}
	}
	raw := make([]byte, base64.StdEncoding.DecodedLen(len(data)))
	n, err := base64.StdEncoding.Decode(raw, data)
	ns := key.aead.NonceSize()
	if err != nil || n < ns {
		return nil, errors.New("a sealed document is malformed: the store was changed by something other than rewind")
	}
	packed, err := key.aead.Open(nil, raw[:ns], raw[ns:n], additional(id, hash))
	if err != nil {
		return nil, &Error{KeyID: id, Have: k.ids(), Wrong: true}
	}
	return unpack(packed)
}

// What is encrypted is a mode byte and the document: packRaw, or
// packFlate when deflating it saved bytes. Ciphertext does not compress,
// and base64 already adds a third: a state document deflated first
// leaves a sealed turn smaller than the plain one.
const (
	packRaw   = 0
	packFlate = 1
	// packMin is the size below which deflate is not tried (a message
	// body: its header outweighs what it saves).
	packMin = 512
)

var flaters = sync.Pool{New: func() any {
	w, _ := flate.NewWriter(nil, flate.BestSpeed)
	return w
}}

// inflaters are flate readers to Reset: a new one costs tens of KB.
var inflaters = sync.Pool{New: func() any { return flate.NewReader(bytes.NewReader(nil)) }}

func pack(doc []byte) []byte {
	if len(doc) >= packMin {
		var buf bytes.Buffer
		buf.WriteByte(packFlate)
		w := flaters.Get().(*flate.Writer)
		w.Reset(&buf)
		_, err := w.Write(doc)
		if err == nil {
			err = w.Close()
		}
		flaters.Put(w)
		if err == nil && buf.Len() < len(doc) {
			return buf.Bytes()
		}
	}
	return append([]byte{packRaw}, doc...)
}

func unpack(packed []byte) ([]byte, error) {
	if len(packed) == 0 {
		return nil, errors.New("a sealed document holds nothing: the store was changed by something other than rewind")
	}
	switch packed[0] {
	case packRaw:
		return packed[1:], nil
	case packFlate:
		r := inflaters.Get().(io.ReadCloser)
		err := r.(flate.Resetter).Reset(bytes.NewReader(packed[1:]), nil)
		var doc []byte
		if err == nil {
			doc, err = io.ReadAll(r)
		}
		inflaters.Put(r)
		if err != nil {
			return nil, fmt.Errorf("a sealed document does not inflate (%w): the store was changed by something other than rewind", err)
		}
		return doc, nil
	}
	return nil, fmt.Errorf("a sealed document is packed as %d, which this rewind does not read: use a newer rewind", packed[0])
}

func (k *Keys) ids() string {
	if k == nil {
		return ""
	}
	var ids []string
	for id := range k.byID {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return strings.Join(ids, ", ")
}

// parse splits an envelope written by Seal.
func parse(doc []byte) (id, hash string, data []byte, ok bool) {
	rest := doc[len(Prefix):]
	i := bytes.IndexByte(rest, '"')
	if i < 0 {
		return "", "", nil, false
	}
	id, rest = string(rest[:i]), rest[i:]
	if h, ok := bytes.CutPrefix(rest, []byte(`","h":"`)); ok {
		j := bytes.IndexByte(h, '"')
		if j < 0 {
			return "", "", nil, false
		}
		hash, rest = string(h[:j]), h[j:]
	}
	d, ok := bytes.CutPrefix(rest, []byte(`","d":"`))
	if !ok || !bytes.HasSuffix(d, []byte(`"}`)) {
		return "", "", nil, false
	}
	return id, hash, d[:len(d)-2], true
}
