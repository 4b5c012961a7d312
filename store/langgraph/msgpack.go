package langgraph

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"
)

// LangGraph's msgpack extension codes (langgraph.checkpoint.serde.jsonplus).
// Each payload is itself msgpack: a tuple naming the constructor
// (module, name) and its arguments.
const (
	extConstructorSingleArg = 0 // (module, name, arg)
	extConstructorPosArgs   = 1 // (module, name, args)
	extConstructorKwArgs    = 2 // (module, name, kwargs)
	extMethodSingleArg      = 3 // (module, name, arg, method)
	extPydanticV1           = 4 // (module, name, kwargs)
	extPydanticV2           = 5 // (module, name, kwargs, method)
	extNumpyArray           = 6 // (dtype, shape, order, buffer)
	extPandasDataFrame      = 7 // (arrow IPC bytes, metadata)
	extDeltaSnapshot        = 7 // langgraph-checkpoint 4.1+: a DeltaChannel's value, untupled
	extPandasSeries         = 8 // (arrow IPC bytes, metadata)
	extTimestamp            = -1
)

// decodeMsgpack reads one whole msgpack value.
func decodeMsgpack(data []byte) (any, error) {
	r := newMPReader(data, nil)
	v, err := r.value(0)
	if err != nil {
		return nil, fmt.Errorf("msgpack: %w", err)
	}
	if n := r.br.Len(); n != 0 {
		return nil, fmt.Errorf("msgpack: %d bytes left after the value", n)
	}
	return v, nil
}

// errLimit is a value past the reader's bounds (maxDepth, maxItems): it
// is well formed as far as read, and the reader skips the rest of it.
type errLimit struct{ what string }

func (e errLimit) Error() string { return e.what }

var (
	errTooDeep = errLimit{fmt.Sprintf("nested deeper than %d levels", maxDepth)}
	errTooMany = errLimit{fmt.Sprintf("more than %d items", maxItems)}
)

// mpReader walks a msgpack value held whole in data. Its size caps what
// a declared length may allocate, so a corrupt header costs nothing; left
// is how many more values (items, keys) the value being read may hold,
// shared with the readers of its extensions' payloads (see maxItems).
type mpReader struct {
	data []byte
	br   *bytes.Reader
	d    *msgpack.Decoder
	left *int
}

// newMPReader reads data; left is shared with the reader whose extension
// data is (nil: a value of its own).
func newMPReader(data []byte, left *int) *mpReader {
	br := bytes.NewReader(data)
	if left == nil {
		left = new(int)
		*left = maxItems
	}
	// The decoder reads br directly (a bytes.Reader is an io.ByteScanner:
	// no buffer of its own), so offset and seek are br's.
	return &mpReader{data: data, br: br, d: msgpack.NewDecoder(br), left: left}
}

// offset is where the next value starts.
func (r *mpReader) offset() int { return len(r.data) - r.br.Len() }

// seek moves to offset off.
func (r *mpReader) seek(off int) error {
	_, err := r.br.Seek(int64(off), io.SeekStart)
	return err
}

// fits checks that a string or bin starting with code c declares no more
// bytes than are left: the decoder allocates what a length says before it
// reads, and a damaged 3 KB value declaring 4 GB took a minute and the
// memory to clear it.
func (r *mpReader) fits(c byte) error {
	at := r.offset() + 1 // past the code
	var size int
	switch c {
	case msgpcode.Str8, msgpcode.Bin8:
		size = 1
	case msgpcode.Str16, msgpcode.Bin16:
		size = 2
	case msgpcode.Str32, msgpcode.Bin32:
		size = 4
	default:
		return nil // a fixstr's length is in its code; other values hold no run of bytes
	}
	if at+size > len(r.data) {
		return io.ErrUnexpectedEOF
	}
	n := 0
	for _, b := range r.data[at : at+size] {
		n = n<<8 | int(b)
	}
	if left := len(r.data) - at - size; n > left {
		return fmt.Errorf("a string of %d bytes declared with %d left: %w", n, left, io.ErrUnexpectedEOF)
	}
	return nil
}

// fresh gives the next value the whole of maxItems.
func (r *mpReader) fresh() { *r.left = maxItems }

func (r *mpReader) value(depth int) (any, error) {
	if depth > maxDepth {
		return nil, errTooDeep
	}
	if *r.left--; *r.left < 0 {
		return nil, errTooMany
	}
	c, err := r.d.PeekCode()
	if err != nil {
		return nil, err
	}
	if err := r.fits(c); err != nil {
		return nil, err
	}
	switch {
	case msgpcode.IsFixedMap(c) || c == msgpcode.Map16 || c == msgpcode.Map32:
		return r.mapValue(depth)
	case msgpcode.IsFixedArray(c) || c == msgpcode.Array16 || c == msgpcode.Array32:
		return r.arrayValue(depth)
	case msgpcode.IsExt(c):
		payload, id, err := r.ext()
		if err != nil {
			return nil, err
		}
		return r.extValue(id, payload, depth+1)
	case msgpcode.IsBin(c):
		b, err := r.d.DecodeBytes()
		if err != nil {
			return nil, err
		}
		return bytesValue("builtins.bytes", b), nil
	}
	v, err := r.d.DecodeInterface()
	if err != nil {
		return nil, err
	}
	return scalar(v), nil
}

// ext reads an extension's header and passes over its payload, which
// stays in data (nested extensions are not copied at each level).
func (r *mpReader) ext() ([]byte, int8, error) {
	id, n, err := r.d.DecodeExtHeader()
	if err != nil {
		return nil, 0, err
	}
	at := r.offset()
	if n < 0 || n > len(r.data)-at {
		return nil, 0, fmt.Errorf("extension of %d bytes with %d left: %w", n, len(r.data)-at, io.ErrUnexpectedEOF)
	}
	return r.data[at : at+n], id, r.seek(at + n)
}

func (r *mpReader) mapValue(depth int) (any, error) {
	n, err := r.d.DecodeMapLen()
	if err != nil || n < 0 {
		return nil, err // n < 0: nil, which PeekCode ruled out
	}
	m := make(map[string]any, min(n, len(r.data), *r.left))
	for range n {
		k, err := r.value(depth + 1)
		if err != nil {
			return nil, err
		}
		v, err := r.value(depth + 1)
		if err != nil {
			return nil, err
		}
		m[escapeKey(keyString(k))] = v
	}
	return m, nil
}

func (r *mpReader) arrayValue(depth int) (any, error) {
	n, err := r.d.DecodeArrayLen()
	if err != nil || n < 0 {
		return nil, err
	}
	l := make([]any, 0, min(n, len(r.data), *r.left))
	for range n {
		v, err := r.value(depth + 1)
		if err != nil {
			return nil, err
		}
		l = append(l, v)
	}
	return l, nil
}

// skip passes over one value without decoding it, iteratively: however
// deep it is nested costs no stack (msgpack's own Skip recurses, and a
// value nested ten million levels deep overflowed the stack). Every
// value read adds its items to those still to pass.
func (r *mpReader) skip() error {
	for todo := 1; todo > 0; todo-- {
		c, err := r.d.PeekCode()
		if err != nil {
			return err
		}
		switch {
		case msgpcode.IsFixedMap(c) || c == msgpcode.Map16 || c == msgpcode.Map32:
			n, err := r.d.DecodeMapLen()
			if err != nil {
				return err
			}
			todo += 2 * n
		case msgpcode.IsFixedArray(c) || c == msgpcode.Array16 || c == msgpcode.Array32:
			n, err := r.d.DecodeArrayLen()
			if err != nil {
				return err
			}
			todo += n
		case msgpcode.IsExt(c):
			if _, _, err := r.ext(); err != nil {
				return err
			}
		default:
			if err := r.fits(c); err != nil {
				return err
			}
			if err := r.d.Skip(); err != nil { // a scalar, string or bin
				return err
			}
		}
		if todo > r.br.Len()+1 { // each value takes a byte at least
			return fmt.Errorf("%d values declared with %d bytes left: %w", todo-1, r.br.Len(), io.ErrUnexpectedEOF)
		}
	}
	return nil
}

// scalar widens the decoder's sized numbers to int64, uint64 and float64.
func scalar(v any) any {
	switch x := v.(type) {
	case int8:
		return int64(x)
	case int16:
		return int64(x)
	case int32:
		return int64(x)
	case uint8:
		return int64(x)
	case uint16:
		return int64(x)
	case uint32:
		return int64(x)
	case uint64:
		if x <= math.MaxInt64 {
			return int64(x)
		}
		return x
	case float32:
		return float(float64(x))
	case float64:
		return float(x)
	}
	return v
}

// keyString prints a map key: strings as they are, anything else (msgpack
// allows tuples, numbers…) as JSON text.
func keyString(k any) string {
	if s, ok := k.(string); ok {
		return s
	}
	b, err := json.Marshal(k)
	if err != nil {
		return fmt.Sprint(k)
	}
	return string(b)
}

// extValue decodes one of LangGraph's extension types. A payload that
// does not read as its code says comes back opaque, with the reason; one
// past the reader's bounds (errLimit) fails the value it is part of.
func (r *mpReader) extValue(code int8, data []byte, depth int) (any, error) {
	name := fmt.Sprintf("msgpack ext %d", code)
	if code == extTimestamp {
		t, err := timestamp(data)
		if err != nil {
			return opaque(name, len(data), err), nil
		}
		return map[string]any{KeyType: "datetime.datetime", KeyValue: t.Format(time.RFC3339Nano)}, nil
	}
	if code < 0 || code > extPandasSeries {
		return opaque(name, len(data), nil), nil
	}
	if depth > maxDepth {
		return nil, errTooDeep
	}
	in := newMPReader(data, r.left)
	inner, err := in.value(depth)
	var limit errLimit
	if errors.As(err, &limit) {
		return nil, err
	}
	if err == nil && in.br.Len() != 0 {
		err = fmt.Errorf("%d bytes left after the value", in.br.Len())
	}
	if err != nil {
		return opaque(name, len(data), err), nil
	}
	tup, _ := inner.([]any)
	if code == extDeltaSnapshot && !pandasLike(tup) {
		return map[string]any{KeyType: pyDeltaSnapshot, KeyValue: inner}, nil
	}
	v, err := constructed(code, tup)
	if err != nil {
		return opaque(name, len(data), err), nil
	}
	return v, nil
}

// pyDeltaSnapshot is the type LangGraph Python stores a DeltaChannel's
// snapshot as (ext 7, whose payload is the value itself).
const pyDeltaSnapshot = "langgraph.checkpoint.serde.types._DeltaSnapshot"

// pandasLike tells ext 7's older use, a pandas value's (arrow bytes,
// metadata), from a DeltaChannel snapshot's value.
func pandasLike(tup []any) bool {
	if len(tup) != 2 {
		return false
	}
	b, ok := tup[0].(map[string]any)
	_, isMeta := tup[1].(map[string]any)
	return ok && b[KeySize] != nil && isMeta
}

// constructed reads the tuple of an extension code.
func constructed(code int8, tup []any) (any, error) {
	switch code {
	case extNumpyArray:
		if len(tup) != 4 {
			return nil, fmt.Errorf("numpy array: want (dtype, shape, order, buffer), got %d items", len(tup))
		}
		m := map[string]any{KeyType: "numpy.ndarray", "dtype": tup[0], "shape": tup[1], "order": tup[2]}
		if b, ok := tup[3].(map[string]any); ok {
			m[KeySize] = b[KeySize]
		}
		return m, nil
	case extPandasDataFrame, extPandasSeries:
		if len(tup) != 2 {
			return nil, fmt.Errorf("pandas value: want (arrow bytes, metadata), got %d items", len(tup))
		}
		path := map[int8]string{extPandasDataFrame: "pandas.DataFrame", extPandasSeries: "pandas.Series"}[code]
		m := map[string]any{KeyOpaque: "arrow", KeyType: path, "metadata": tup[1]}
		if b, ok := tup[0].(map[string]any); ok {
			m[KeySize] = b[KeySize]
		}
		return m, nil
	}
	want := map[int8]int{extConstructorSingleArg: 3, extConstructorPosArgs: 3, extConstructorKwArgs: 3,
		extMethodSingleArg: 4, extPydanticV1: 3, extPydanticV2: 3}[code]
	if len(tup) < want {
		return nil, fmt.Errorf("want a tuple (module, name, …) of %d items, got %d", want, len(tup))
	}
	module, ok1 := tup[0].(string)
	name, ok2 := tup[1].(string)
	if !ok1 || !ok2 {
		return nil, errors.New("the constructor's module and name are not strings")
	}
	path := module + "." + name
	switch code {
	case extConstructorSingleArg:
		return single(path, tup[2]), nil
	case extConstructorPosArgs:
		args, _ := tup[2].([]any)
		if path == "langgraph.types.Send" && len(args) == 2 {
			return map[string]any{KeyType: path, "node": args[0], "arg": args[1]}, nil
		}
		return map[string]any{KeyType: path, KeyArgs: tup[2]}, nil
	case extMethodSingleArg:
		return map[string]any{KeyType: path, KeyValue: tup[2], KeyMethod: tup[3]}, nil
	}
	// kwargs: dataclasses, namedtuples, pydantic models, LangChain messages
	fields, ok := tup[2].(map[string]any)
	if !ok {
		return map[string]any{KeyType: path, KeyValue: tup[2]}, nil
	}
	return typed(path, fields), nil
}

// single is an object stored as one argument; a UUID gets its dashes back.
func single(path string, arg any) map[string]any {
	if s, ok := arg.(string); ok && path == "uuid.UUID" && len(s) == 32 {
		arg = strings.Join([]string{s[:8], s[8:12], s[12:16], s[16:20], s[20:]}, "-")
	}
	return map[string]any{KeyType: path, KeyValue: arg}
}

// timestamp reads msgpack's own timestamp extension (-1).
func timestamp(b []byte) (time.Time, error) {
	switch len(b) {
	case 4:
		return time.Unix(int64(binary.BigEndian.Uint32(b)), 0).UTC(), nil
	case 8:
		v := binary.BigEndian.Uint64(b)
		return time.Unix(int64(v&0x3ffffffff), int64(v>>34)).UTC(), nil
	case 12:
		return time.Unix(int64(binary.BigEndian.Uint64(b[4:])), int64(binary.BigEndian.Uint32(b))).UTC(), nil
	}
	return time.Time{}, fmt.Errorf("timestamp of %d bytes", len(b))
}
