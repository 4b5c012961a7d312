package check

import (
	"encoding/binary"
	"unicode/utf8"
)

// maxDepth is encoding/json's nesting limit (maxNestingDepth).
const maxDepth = 10000

// plain marks the bytes a string may hold as they are: not a quote, a
// backslash, a control character or the start of a multi-byte character.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// literals are the words a value may be, by their first byte.
var literals = [256]string{'t': "true", 'f': "false", 'n': "null"}

// accepts is JSON's rule in one pass: true exactly when json.Valid,
// utf8.Valid and numbers all accept doc. It only decides; the three
// passes say what is wrong (JSON calls them when this refuses), so a
// refusal here that they would not make costs time, never a result.
// The race detector sees doc read whole (raceRead), not byte by byte.
//
//go:norace
func accepts(doc []byte) bool {
	raceRead(doc)
	var buf [64]byte
	stack := buf[:0] // the open containers: '[' or '{'
	i, n := 0, len(doc)
	const (
		value = iota // a value is due
		key          // an object's key is due
		after        // a value ended
	)
	state := value
	for {
		for i < n && (doc[i] == ' ' || doc[i] == '\t' || doc[i] == '\n' || doc[i] == '\r') {
			i++
		}
		switch state {
		case value:
			if i >= n {
				return false
			}
			switch c := doc[i]; {
			case c == '{' || c == '[':
				if len(stack) == maxDepth {
					return false
				}
				stack = append(stack, c)
				i++
				for i < n && (doc[i] == ' ' || doc[i] == '\t' || doc[i] == '\n' || doc[i] == '\r') {
					i++
				}
				switch {
				case i < n && doc[i] == c+2: // ']' is '['+2, '}' is '{'+2
					stack = stack[:len(stack)-1]
					i++
					state = after
				case c == '{':
					state = key
				}
			case c == '"':
				if i = str(doc, i); i < 0 {
					return false
				}
				state = after
			case literals[c] != "":
				if i = word(doc, i, literals[c]); i < 0 {
					return false
				}
				state = after
			default:
				if i = num(doc, i); i < 0 {
					return false
				}
				state = after
			}
		case key:
			if i >= n || doc[i] != '"' {
				return false
			}
			if i = str(doc, i); i < 0 {
				return false
			}
			for i < n && (doc[i] == ' ' || doc[i] == '\t' || doc[i] == '\n' || doc[i] == '\r') {
				i++
			}
			if i >= n || doc[i] != ':' {
				return false
			}
			i++
			state = value
		case after:
			if len(stack) == 0 {
				return i == n
			}
			if i >= n {
				return false
			}
			top := stack[len(stack)-1]
			switch c := doc[i]; {
			case c == ',':
				i++
				state = value
				if top == '{' {
					state = key
				}
			case c == top+2:
				stack = stack[:len(stack)-1]
				i++
			default:
				return false
			}
		}
	}
}

// str returns the index after the string at doc[i], or -1 when it is not
// a valid JSON string of valid UTF-8.
//
//go:norace
func str(doc []byte, i int) int {
	n := len(doc)
	for i++; i < n; {
		for i+8 <= n && !special(binary.LittleEndian.Uint64(doc[i:])) {
			i += 8 // eight plain bytes at once: most of a document
		}
		if i >= n {
			break
		}
		c := doc[i]
		if plain[c] {
			i++
			continue
		}
		switch {
		case c == '"':
			return i + 1
		case c == '\\':
			if i+1 >= n {
				return -1
			}
			switch doc[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > n {
					return -1
				}
				for _, h := range doc[i+2 : i+6] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return -1
					}
				}
				i += 6
			default:
				return -1
			}
		case c < 0x20:
			return -1
		default:
			r, size := utf8.DecodeRune(doc[i:])
			if r == utf8.RuneError && size == 1 {
				return -1
			}
			i += size
		}
	}
	return -1
}

// special reports whether any of the eight bytes in x is not plain.
func special(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	q, b := x^'"'*ones, x^'\\'*ones // zero bytes where x has a quote, a backslash
	// A byte below 0x20, a zero byte of q or b (exact as an "any"), or a
	// byte from 0x80 up.
	return ((x-0x20*ones)&^x|(q-ones)&^q|(b-ones)&^b|x)&highs != 0
}

// word returns the index after the literal w at doc[i], or -1.
//
//go:norace
func word(doc []byte, i int, w string) int {
	if len(doc)-i < len(w) || string(doc[i:i+len(w)]) != w {
		return -1
	}
	return i + len(w)
}

// num returns the index after the number at doc[i], or -1 when it is not
// JSON's grammar or not a number PostgreSQL's numeric holds.
//
//go:norace
func num(doc []byte, i int) int {
	start, n := i, len(doc)
	if i < n && doc[i] == '-' {
		i++
	}
	exp := false
	switch {
	case i < n && doc[i] == '0':
		i++
	case i < n && '1' <= doc[i] && doc[i] <= '9':
		for i++; i < n && '0' <= doc[i] && doc[i] <= '9'; i++ {
		}
	default:
		return -1
	}
	if i < n && doc[i] == '.' {
		i++
		if i >= n || doc[i] < '0' || doc[i] > '9' {
			return -1
		}
		for i < n && '0' <= doc[i] && doc[i] <= '9' {
			i++
		}
	}
	if i < n && (doc[i] == 'e' || doc[i] == 'E') {
		exp = true
		i++
		if i < n && (doc[i] == '+' || doc[i] == '-') {
			i++
		}
		if i >= n || doc[i] < '0' || doc[i] > '9' {
			return -1
		}
		for i < n && '0' <= doc[i] && doc[i] <= '9' {
			i++
		}
	}
	// Without an exponent, fewer than 16,384 digits fit: numeric's
	// scale and weight limits are higher.
	if lit := doc[start:i]; exp || len(lit) > pgMaxDscale {
		if nb, ok := parseNumber(lit); !ok || !nb.fitsNumeric() {
			return -1
		}
	}
	return i
}
