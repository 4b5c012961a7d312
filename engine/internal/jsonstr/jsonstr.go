// Package jsonstr writes JSON strings and raw values byte for byte as
// encoding/json's Marshal does, without reflection: stored forms and
// request hashes are Marshal's bytes, and the hot paths that make them
// (a state document, a model request's hash) write them by hand.
package jsonstr

import (
	"bytes"
	"unicode/utf8"
)

// Esc is how encoding/json spells each ASCII byte inside a string:
// written out, not asked of json.Marshal as the process starts (that was
// a tenth of a millisecond of every start); TestEscIsEncodingJSONs
// holds it to json.Marshal.
var Esc = [utf8.RuneSelf]string{
	`\u0000`, `\u0001`, `\u0002`, `\u0003`, `\u0004`, `\u0005`, `\u0006`, `\u0007`,
	`\b`, `\t`, `\n`, `\u000b`, `\f`, `\r`, `\u000e`, `\u000f`,
	`\u0010`, `\u0011`, `\u0012`, `\u0013`, `\u0014`, `\u0015`, `\u0016`, `\u0017`,
	`\u0018`, `\u0019`, `\u001a`, `\u001b`, `\u001c`, `\u001d`, `\u001e`, `\u001f`,
	" ", "!", `\"`, "#", "$", "%", `\u0026`, "'",
	"(", ")", "*", "+", ",", "-", ".", "/",
	"0", "1", "2", "3", "4", "5", "6", "7",
	"8", "9", ":", ";", `\u003c`, "=", `\u003e`, "?",
	"@", "A", "B", "C", "D", "E", "F", "G",
	"H", "I", "J", "K", "L", "M", "N", "O",
	"P", "Q", "R", "S", "T", "U", "V", "W",
	"X", "Y", "Z", "[", `\\`, "]", "^", "_",
	"`", "a", "b", "c", "d", "e", "f", "g",
	"h", "i", "j", "k", "l", "m", "n", "o",
	"p", "q", "r", "s", "t", "u", "v", "w",
	"x", "y", "z", "{", "|", "}", "~", "\x7f",
}

// HTMLEscaped says whether b holds a byte json.Marshal escapes in a raw
// value: <, >, & or the first byte of U+2028 or U+2029 (then it looks
// closer). A byte search each: ContainsAny decodes every rune when the set
// has one past ASCII, and a head snapshot holds the whole transcript.
func HTMLEscaped(b []byte) bool {
	if bytes.IndexByte(b, '<') >= 0 || bytes.IndexByte(b, '>') >= 0 || bytes.IndexByte(b, '&') >= 0 {
		return true
	}
	for i := bytes.IndexByte(b, 0xe2); i >= 0 && i+2 < len(b); {
		if b[i+1] == 0x80 && (b[i+2] == 0xa8 || b[i+2] == 0xa9) {
			return true
		}
		j := bytes.IndexByte(b[i+1:], 0xe2)
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return false
}

// Append appends s quoted as encoding/json's Marshal writes a string
// (HTML-escaped: <, >, & as \u00XX; invalid UTF-8 as \ufffd; U+2028 and
// U+2029 escaped).
func Append(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if e := Esc[b]; len(e) != 1 {
				dst = append(dst, s[start:i]...)
				dst = append(dst, e...)
				start = i + 1
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\u202`...)
			dst = append(dst, "0123456789abcdef"[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
