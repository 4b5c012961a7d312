package model

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sync"

	"rewind/engine/internal/jsonstr"
)

// Hash is the SHA-256 of the request's canonical JSON (role, messages with
// their parts, tools, schema), in hex: the same request always hashes the
// same, so a stored hash tells whether a request rebuilt later is the one
// that was sent.
//
// The canonical JSON is json.Marshal's bytes, written here by hand: every
// model call hashes its request, and reflection was ~5% of a turn (more
// under -race). TestHashIsJSONMarshals holds the two byte for byte.
func (r Request) Hash() string {
	buf := hashBufs.Get().(*[]byte)
	b, ok := appendRequest((*buf)[:0], r)
	if !ok {
		b = b[:0] // json.Marshal refuses an invalid raw schema: Hash hashed nothing
	}
	sum := sha256.Sum256(b)
	if cap(b) <= 1<<20 { // a huge request's buffer is not kept
		*buf = b
		hashBufs.Put(buf)
	}
	return hex.EncodeToString(sum[:])
}

var hashBufs = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

// appendRequest appends r as json.Marshal writes it; false when Marshal
// would fail (a tool's parameters or the schema not valid JSON).
func appendRequest(b []byte, r Request) ([]byte, bool) {
	b = append(b, `{"role":`...)
	b = jsonstr.Append(b, r.Role)
	b = append(b, `,"messages":`...)
	if r.Messages == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, m := range r.Messages {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendMessage(b, m)
		}
		b = append(b, ']')
	}
	ok := true
	if len(r.Tools) > 0 {
		b = append(b, `,"tools":[`...)
		for i, t := range r.Tools {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"name":`...)
			b = jsonstr.Append(b, t.Name)
			b = append(b, `,"description":`...)
			b = jsonstr.Append(b, t.Description)
			b = append(b, `,"parameters":`...)
			if b, ok = appendRawJSON(b, t.Parameters); !ok {
				return b, false
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if r.JSON != nil {
		b = append(b, `,"json":{"name":`...)
		b = jsonstr.Append(b, r.JSON.Name)
		b = append(b, `,"schema":`...)
		if b, ok = appendRawJSON(b, r.JSON.Schema); !ok {
			return b, false
		}
		b = append(b, '}')
	}
	return append(b, '}'), true
}

func appendMessage(b []byte, m Message) []byte {
	b = append(b, `{"role":`...)
	b = jsonstr.Append(b, m.Role)
	if m.Content != "" {
		b = append(b, `,"content":`...)
		b = jsonstr.Append(b, m.Content)
	}
	if len(m.ToolCalls) > 0 {
		b = append(b, `,"tool_calls":[`...)
		for i, c := range m.ToolCalls {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"id":`...)
			b = jsonstr.Append(b, c.ID)
			b = append(b, `,"name":`...)
			b = jsonstr.Append(b, c.Name)
			b = append(b, `,"arguments":`...)
			b = jsonstr.Append(b, c.Arguments)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if m.ToolCallID != "" {
		b = append(b, `,"tool_call_id":`...)
		b = jsonstr.Append(b, m.ToolCallID)
	}
	if m.Part != "" {
		b = append(b, `,"part":`...)
		b = jsonstr.Append(b, m.Part)
	}
	return append(b, '}')
}

// appendRawJSON is a json.RawMessage as Marshal writes it: compacted, with
// <, >, &, U+2028 and U+2029 escaped; nil is null.
func appendRawJSON(b []byte, raw json.RawMessage) ([]byte, bool) {
	if raw == nil {
		return append(b, "null"...), true
	}
	start := len(b)
	out := bytes.NewBuffer(b)
	if err := json.Compact(out, raw); err != nil {
		return b[:start], false
	}
	b = out.Bytes()
	if !jsonstr.HTMLEscaped(b[start:]) {
		return b, true
	}
	var esc bytes.Buffer
	json.HTMLEscape(&esc, b[start:])
	return append(b[:start], esc.Bytes()...), true
}
