package otlphttp

import "math"

// The protobuf wire format, as much of it as OTLP's messages need. Fields
// are written in the order proto.Marshal writes them, so the bytes are
// the official exporters' (ascending number, a oneof's member after the
// other fields); a proto3 scalar at its zero value is left out, a oneof
// member or an optional field that is set is written even when zero.

const (
	wireVarint = 0
	wire64     = 1
	wireBytes  = 2
	wire32     = 5
)

type wire struct{ b []byte }

func (w *wire) varint(v uint64) {
	for v >= 0x80 {
		w.b = append(w.b, byte(v)|0x80)
		v >>= 7
	}
	w.b = append(w.b, byte(v))
}

func (w *wire) tag(num, typ int) { w.varint(uint64(num)<<3 | uint64(typ)) }

// uint is a varint field (uint32, uint64, an enum, int64 as two's
// complement), left out at zero.
func (w *wire) uint(num int, v uint64) {
	if v != 0 {
		w.tag(num, wireVarint)
		w.varint(v)
	}
}

func (w *wire) boolean(num int, v bool) {
	if v {
		w.tag(num, wireVarint)
		w.varint(1)
	}
}

// sint32 is a zigzag varint field, left out at zero.
func (w *wire) sint32(num int, v int32) {
	if v != 0 {
		w.tag(num, wireVarint)
		w.varint(uint64(uint32(v<<1) ^ uint32(v>>31)))
	}
}

func (w *wire) fixed32(num int, v uint32) {
	if v != 0 {
		w.tag(num, wire32)
		w.b = append(w.b, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
	}
}

func (w *wire) raw64(v uint64) {
	w.b = append(w.b, byte(v), byte(v>>8), byte(v>>16), byte(v>>24), byte(v>>32), byte(v>>40), byte(v>>48), byte(v>>56))
}

// fixed64 is left out at zero; fixed64Set is written always (a oneof
// member, an optional field).
func (w *wire) fixed64(num int, v uint64) {
	if v != 0 {
		w.fixed64Set(num, v)
	}
}

func (w *wire) fixed64Set(num int, v uint64) {
	w.tag(num, wire64)
	w.raw64(v)
}

// double is left out at +0 only (proto3 keeps -0).
func (w *wire) double(num int, v float64) { w.fixed64(num, math.Float64bits(v)) }

func (w *wire) doubleSet(num int, v float64) { w.fixed64Set(num, math.Float64bits(v)) }

func (w *wire) str(num int, s string) {
	if s != "" {
		w.strSet(num, s)
	}
}

func (w *wire) strSet(num int, s string) {
	w.tag(num, wireBytes)
	w.varint(uint64(len(s)))
	w.b = append(w.b, s...)
}

func (w *wire) bytes(num int, p []byte) {
	if len(p) != 0 {
		w.bytesSet(num, p)
	}
}

func (w *wire) bytesSet(num int, p []byte) {
	w.tag(num, wireBytes)
	w.varint(uint64(len(p)))
	w.b = append(w.b, p...)
}

func (w *wire) packedFixed64(num int, vs []uint64) {
	if len(vs) == 0 {
		return
	}
	w.tag(num, wireBytes)
	w.varint(uint64(8 * len(vs)))
	for _, v := range vs {
		w.raw64(v)
	}
}

func (w *wire) packedDouble(num int, vs []float64) {
	if len(vs) == 0 {
		return
	}
	w.tag(num, wireBytes)
	w.varint(uint64(8 * len(vs)))
	for _, v := range vs {
		w.raw64(math.Float64bits(v))
	}
}

func (w *wire) packedVarint(num int, vs []uint64) {
	if len(vs) == 0 {
		return
	}
	at := w.open(num)
	for _, v := range vs {
		w.varint(v)
	}
	w.close(at)
}

// open starts a length-delimited field whose length close writes: one
// byte is kept for it, and the body moves when it needs more.
func (w *wire) open(num int) int {
	w.tag(num, wireBytes)
	w.b = append(w.b, 0)
	return len(w.b)
}

func (w *wire) close(at int) {
	n := len(w.b) - at
	if n < 0x80 {
		w.b[at-1] = byte(n)
		return
	}
	var l [10]byte
	k := 0
	for v := uint64(n); ; k++ {
		if v < 0x80 {
			l[k] = byte(v)
			k++
			break
		}
		l[k] = byte(v) | 0x80
		v >>= 7
	}
	w.b = append(w.b, l[:k-1]...)
	copy(w.b[at+k-1:], w.b[at:at+n])
	copy(w.b[at-1:], l[:k])
}

// field is one field read back from an answer (a partial success).
type field struct {
	num, typ int
	v        uint64 // a varint's or a fixed field's value
	p        []byte // a length-delimited field's bytes
}

// fields reads a message's fields, or reports it malformed.
func fields(b []byte) ([]field, bool) {
	var out []field
	for len(b) > 0 {
		t, n := uvarint(b)
		if n == 0 {
			return nil, false
		}
		b = b[n:]
		f := field{num: int(t >> 3), typ: int(t & 7)}
		switch f.typ {
		case wireVarint:
			f.v, n = uvarint(b)
			if n == 0 {
				return nil, false
			}
		case wire64:
			if len(b) < 8 {
				return nil, false
			}
			for i := 7; i >= 0; i-- {
				f.v = f.v<<8 | uint64(b[i])
			}
			n = 8
		case wire32:
			if len(b) < 4 {
				return nil, false
			}
			f.v = uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24
			n = 4
		case wireBytes:
			l, m := uvarint(b)
			if m == 0 || uint64(len(b)-m) < l {
				return nil, false
			}
			f.p, n = b[m:m+int(l)], m+int(l)
		default:
			return nil, false
		}
		b = b[n:]
		out = append(out, f)
	}
	return out, true
}

// uvarint is the varint at b's start and its length (0: none).
func uvarint(b []byte) (uint64, int) {
	var v uint64
	for i := 0; i < len(b) && i < 10; i++ {
		v |= uint64(b[i]&0x7f) << (7 * i)
		if b[i] < 0x80 {
			return v, i + 1
		}
	}
	return 0, 0
}
