package check

import (
	"bytes"
	"encoding/binary"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// PostgreSQL's numeric limits (src/backend/utils/adt/numeric.c): the
// exponent of a literal, the digits after the point (dscale), and the
// weight in base-10000 digits, so at most 131,072 digits before the point.
const (
	pgMaxExponent = 1<<31/2 - 1 // INT_MAX/2
	pgMaxDscale   = 0x3FFF
	pgMaxDweight  = 4*0x7FFF + 3
)

// numbers refuses the number literals of a valid document that jsonb would
// refuse, so the embedded stores refuse them too.
func numbers(what string, doc []byte) error {
	for i := 0; i < len(doc); {
		switch c := doc[i]; {
		case c == '"':
			i = skipString(doc, i)
		case c == '-' || '0' <= c && c <= '9':
			j := numberEnd(doc, i)
			if plainInteger(doc[i:j]) {
				i = j // most numbers: a few digits, which numeric holds
				continue
			}
			if n, ok := parseNumber(doc[i:j]); !ok || !n.fitsNumeric() {
				lit := string(doc[i:j])
				if len(lit) > 40 {
					lit = lit[:40] + "…"
				}
				return Invalid("%s holds the number %s, which PostgreSQL cannot store (at most 131,072 digits before the decimal point and 16,383 after it); send it as a string", what, lit)
			}
			i = j
		default:
			i++
		}
	}
	return nil
}

// plainInteger: an optional minus and 1 to 18 digits, no leading zero.
func plainInteger(lit []byte) bool {
	if len(lit) > 0 && lit[0] == '-' {
		lit = lit[1:]
	}
	if len(lit) == 0 || len(lit) > 18 || len(lit) > 1 && lit[0] == '0' {
		return false
	}
	for _, c := range lit {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// skipString returns the index after the string that starts at doc[i].
func skipString(doc []byte, i int) int {
	// Most strings hold no escape: their end is the next quote.
	if k := bytes.IndexByte(doc[i+1:], '"'); k >= 0 && bytes.IndexByte(doc[i+1:i+1+k], '\\') < 0 {
		return i + k + 2
	}
	for i++; i < len(doc); i++ {
		switch doc[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(doc)
}

func numberEnd(doc []byte, i int) int {
	for i < len(doc) && bytes.IndexByte([]byte("+-.0123456789eE"), doc[i]) >= 0 {
		i++
	}
	return i
}

// number is a JSON number literal cut into its parts.
type number struct {
	neg       bool
	int, frac []byte // the digits before and after the point
	exp       int64
	bigExp    *big.Int // the exponent when it does not fit exp
}

func parseNumber(lit []byte) (n number, ok bool) {
	if len(lit) > 0 && lit[0] == '-' {
		n.neg, lit = true, lit[1:]
	}
	mant, e, hasExp := bytes.Cut(lit, []byte("e"))
	if !hasExp {
		mant, e, hasExp = bytes.Cut(lit, []byte("E"))
	}
	n.int, n.frac, _ = bytes.Cut(mant, []byte("."))
	if len(n.int) == 0 || !digits(n.int) || !digits(n.frac) {
		return n, false
	}
	if hasExp {
		x, err := strconv.ParseInt(string(e), 10, 64)
		if err != nil || x > 1<<62 || x < -1<<62 { // so adding a shift cannot overflow
			// Beyond int64: still valid JSON, so it must compare.
			var ok bool
			if n.bigExp, ok = new(big.Int).SetString(string(e), 10); !ok {
				return n, false
			}
		}
		n.exp = x
	}
	return n, true
}

func digits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// significant returns the digits from the first to the last non-zero one,
// and the decimal exponent of the first; ok is false for zero. With a
// bigExp, dweight is meaningless and bigWeight holds it.
func (n number) significant() (sig []byte, dweight int64, bigWeight *big.Int, ok bool) {
	all := slices.Concat(n.int, n.frac)
	first := bytes.IndexFunc(all, func(r rune) bool { return r != '0' })
	if first < 0 {
		return nil, 0, nil, false
	}
	last := bytes.LastIndexFunc(all, func(r rune) bool { return r != '0' })
	shift := int64(len(n.int) - 1 - first)
	if n.bigExp != nil {
		return all[first : last+1], 0, new(big.Int).Add(n.bigExp, big.NewInt(shift)), true
	}
	return all[first : last+1], shift + n.exp, nil, true
}

func (n number) fitsNumeric() bool {
	if n.bigExp != nil || n.exp >= pgMaxExponent || n.exp <= -pgMaxExponent {
		return false
	}
	if int64(len(n.frac))-n.exp > pgMaxDscale {
		return false // even a zero keeps its scale
	}
	_, dweight, _, nonZero := n.significant()
	return !nonZero || dweight <= pgMaxDweight
}

// SameJSON reports whether two documents hold the same JSON value the way
// PostgreSQL's jsonb compares them: whitespace, key order and number
// spelling (1.5, 1.50, 15e-1) aside, the last of duplicate keys winning.
// Unlike encoding/json, it keeps lone surrogate escapes apart: \ud800,
// \udc00 and U+FFFD are three different strings, as they are in every
// store. Documents that do not parse are the same only byte for byte.
func SameJSON(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	x, okA := Canonical(a)
	y, okB := Canonical(b)
	return okA && okB && bytes.Equal(x, y)
}

// Canonical encodes a document's value so that equal values, and only
// they, encode to equal bytes.
func Canonical(doc []byte) ([]byte, bool) {
	p := parser{doc: doc}
	out, ok := p.value(make([]byte, 0, len(doc)))
	p.space()
	return out, ok && p.i == len(doc)
}

// parser never panics on bad input: every read is bounds-checked and a
// failure returns false up the stack.
type parser struct {
	doc []byte
	i   int
}

func (p *parser) space() {
	for p.i < len(p.doc) && strings.IndexByte(" \t\r\n", p.doc[p.i]) >= 0 {
		p.i++
	}
}

func (p *parser) eat(c byte) bool {
	p.space()
	if p.i < len(p.doc) && p.doc[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *parser) literal(word string) bool {
	if bytes.HasPrefix(p.doc[p.i:], []byte(word)) {
		p.i += len(word)
		return true
	}
	return false
}

// The encoding: n t f; 'd' canonical-number ';'; 's' length bytes;
// '[' values ']'; '{' (length key value)... '}' with keys sorted.
func (p *parser) value(out []byte) ([]byte, bool) {
	p.space()
	if p.i >= len(p.doc) {
		return out, false
	}
	switch c := p.doc[p.i]; {
	case c == 'n':
		return append(out, 'n'), p.literal("null")
	case c == 't':
		return append(out, 't'), p.literal("true")
	case c == 'f':
		return append(out, 'f'), p.literal("false")
	case c == '"':
		s, ok := p.str()
		return appendStr(append(out, 's'), s), ok
	case c == '[':
		return p.array(out)
	case c == '{':
		return p.object(out)
	case c == '-' || '0' <= c && c <= '9':
		j := numberEnd(p.doc, p.i)
		n, ok := parseNumber(p.doc[p.i:j])
		p.i = j
		out = append(out, 'd')
		if sig, dweight, bigWeight, nonZero := n.significant(); !nonZero {
			out = append(out, '0') // -0 and 0.00 are 0, as in numeric
		} else {
			if n.neg {
				out = append(out, '-')
			}
			out = append(out, sig...)
			out = append(out, 'e')
			if bigWeight != nil {
				out = bigWeight.Append(out, 10)
			} else {
				out = strconv.AppendInt(out, dweight, 10)
			}
		}
		return append(out, ';'), ok
	}
	return out, false
}

func (p *parser) array(out []byte) ([]byte, bool) {
	p.i++
	out = append(out, '[')
	if p.eat(']') {
		return append(out, ']'), true
	}
	for {
		var ok bool
		if out, ok = p.value(out); !ok {
			return out, false
		}
		if p.eat(']') {
			return append(out, ']'), true
		}
		if !p.eat(',') {
			return out, false
		}
	}
}

func (p *parser) object(out []byte) ([]byte, bool) {
	p.i++
	out = append(out, '{')
	if p.eat('}') {
		return append(out, '}'), true
	}
	type member struct {
		key      string
		from, to int // its key and value in out
	}
	var members []member
	inOrder := true
	for {
		p.space()
		if p.i >= len(p.doc) || p.doc[p.i] != '"' {
			return out, false
		}
		key, ok := p.str()
		if !ok || !p.eat(':') {
			return out, false
		}
		from := len(out)
		if out, ok = p.value(appendStr(out, key)); !ok {
			return out, false
		}
		if n := len(members); n > 0 && members[n-1].key >= key {
			inOrder = false
		}
		members = append(members, member{key, from, len(out)})
		if p.eat('}') {
			break
		}
		if !p.eat(',') {
			return out, false
		}
	}
	if !inOrder {
		// Sort the members (stable, so the last of equal keys is last),
		// keep the last of each key, and lay them out again.
		start := members[0].from
		region := slices.Clone(out[start:])
		slices.SortStableFunc(members, func(a, b member) int { return strings.Compare(a.key, b.key) })
		out = out[:start]
		for i, m := range members {
			if i+1 < len(members) && members[i+1].key == m.key {
				continue
			}
			out = append(out, region[m.from-start:m.to-start]...)
		}
	}
	return append(out, '}'), true
}

// str decodes the string at p.i. Lone surrogate escapes become their
// generalised UTF-8 (WTF-8) bytes, which valid UTF-8 never holds, so they
// stay distinct from each other and from every real character.
func (p *parser) str() (string, bool) {
	p.i++ // the opening quote
	var b []byte
	for p.i < len(p.doc) {
		c := p.doc[p.i]
		switch {
		case c == '"':
			p.i++
			return string(b), true
		case c < 0x20:
			return "", false
		case c != '\\':
			b = append(b, c)
			p.i++
			continue
		}
		if p.i+1 >= len(p.doc) {
			return "", false
		}
		esc := p.doc[p.i+1]
		p.i += 2
		switch esc {
		case '"', '\\', '/':
			b = append(b, esc)
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r, ok := p.hex4()
			if !ok {
				return "", false
			}
			if utf16.IsSurrogate(r) {
				if r < 0xDC00 && bytes.HasPrefix(p.doc[p.i:], []byte(`\u`)) {
					save := p.i
					p.i += 2
					if lo, ok := p.hex4(); ok && 0xDC00 <= lo && lo <= 0xDFFF {
						b = utf8.AppendRune(b, utf16.DecodeRune(r, lo))
						continue
					}
					p.i = save
				}
				b = append(b, 0xE0|byte(r>>12), 0x80|byte(r>>6)&0x3F, 0x80|byte(r)&0x3F)
				continue
			}
			b = utf8.AppendRune(b, r)
		default:
			return "", false
		}
	}
	return "", false
}

func (p *parser) hex4() (rune, bool) {
	if p.i+4 > len(p.doc) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(p.doc[p.i:p.i+4]), 16, 32)
	if err != nil {
		return 0, false
	}
	p.i += 4
	return rune(v), true
}

func appendStr(out []byte, s string) []byte {
	out = binary.AppendUvarint(out, uint64(len(s)))
	return append(out, s...)
}
