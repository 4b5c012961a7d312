package postgres

import (
	"bytes"
	"fmt"
	"unicode/utf8"

	"rewind/store/internal/check"
)

// jsonb refuses two things a JSON document may legally hold: the escape
// \u0000 (Go's encoding/json writes it for a NUL rune) and unpaired UTF-16
// surrogate escapes such as \ud800. Before a document goes into a jsonb
// column, toJSONB rewrites them inside strings (and keys) as a private-use
// marker rune followed by a tag; fromJSONB undoes it on the way out:
//
//	\u0000           -> marker '0'
//	lone \udXXX      -> marker 's' xxxx (four lowercase hex digits)
//	marker itself    -> marker marker (raw or written as \ue000)
//
// The rewrite is a function of each string's value, so documents equal as
// JSON stay equal as jsonb and `state = $1::jsonb` still compares content.
// jsonb prints every non-control, non-ASCII rune raw, so the marker comes
// back byte for byte. Only documents that contain the marker or one of those
// escapes pay for the rewrite.
const marker = '\uE000'

var markerBytes = []byte(string(marker))

// errBadUTF8 is returned for documents that are not UTF-8: PostgreSQL
// cannot store them as text of any kind.
var errBadUTF8 = check.Invalid("is not valid UTF-8 (PostgreSQL stores JSON as UTF-8 text)")

// toJSONB returns doc in a form that jsonb accepts; see marker.
func toJSONB(doc []byte) ([]byte, error) {
	if !utf8.Valid(doc) {
		return nil, errBadUTF8
	}
	if !bytes.Contains(doc, []byte(`\u`)) && !bytes.Contains(doc, markerBytes) {
		return doc, nil
	}
	var out []byte
	last := 0 // doc[last:i] is still to be copied
	emit := func(i, skip int, repl ...[]byte) {
		if out == nil {
			out = make([]byte, 0, len(doc)+16)
		}
		out = append(out, doc[last:i]...)
		for _, r := range repl {
			out = append(out, r...)
		}
		last = i + skip
	}
	for i := 0; i < len(doc); {
		switch {
		case bytes.HasPrefix(doc[i:], markerBytes):
			emit(i, len(markerBytes), markerBytes, markerBytes)
			i += len(markerBytes)
		case doc[i] == '\\' && i+1 < len(doc) && doc[i+1] == 'u':
			cu, ok := hex4(doc, i+2)
			switch {
			case !ok:
				// Not JSON; jsonb will say so.
				i += 2
			case cu == 0:
				emit(i, 6, markerBytes, []byte("0"))
				i += 6
			case cu == marker:
				emit(i, 6, markerBytes, markerBytes)
				i += 6
			case isHighSurrogate(cu):
				if i+12 <= len(doc) && doc[i+6] == '\\' && doc[i+7] == 'u' {
					if lo, ok := hex4(doc, i+8); ok && isLowSurrogate(lo) {
						i += 12 // a proper pair: jsonb takes it as is
						continue
					}
				}
				emit(i, 6, markerBytes, fmt.Appendf(nil, "s%04x", cu))
				i += 6
			case isLowSurrogate(cu):
				emit(i, 6, markerBytes, fmt.Appendf(nil, "s%04x", cu))
				i += 6
			default:
				i += 6
			}
		case doc[i] == '\\' && i+1 < len(doc) && doc[i+1] < utf8.RuneSelf:
			i += 2 // \" \\ \n ...: never the start of \u
		default:
			i++
		}
	}
	if out == nil {
		return doc, nil
	}
	return append(out, doc[last:]...), nil
}

// fromJSONB undoes toJSONB on jsonb's text output.
func fromJSONB(doc []byte) ([]byte, error) {
	i := bytes.Index(doc, markerBytes)
	if i < 0 {
		return doc, nil
	}
	out := make([]byte, 0, len(doc)+16)
	for i >= 0 {
		out = append(out, doc[:i]...)
		rest := doc[i+len(markerBytes):]
		switch {
		case bytes.HasPrefix(rest, markerBytes):
			out = append(out, markerBytes...)
			doc = rest[len(markerBytes):]
		case len(rest) > 0 && rest[0] == '0':
			out = append(out, `\u0000`...)
			doc = rest[1:]
		case len(rest) >= 5 && rest[0] == 's':
			cu, ok := hex4(rest, 1)
			if !ok || !(isHighSurrogate(cu) || isLowSurrogate(cu)) {
				return nil, errBadMarker
			}
			out = append(out, `\u`...)
			out = append(out, rest[1:5]...)
			doc = rest[5:]
		default:
			return nil, errBadMarker
		}
		i = bytes.Index(doc, markerBytes)
	}
	return append(out, doc...), nil
}

var errBadMarker = fmt.Errorf("holds a stray U+%04X that rewind did not write (was the row edited by hand?)", marker)

func hex4(b []byte, at int) (rune, bool) {
	if at+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[at : at+4] {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

func isHighSurrogate(r rune) bool { return 0xD800 <= r && r <= 0xDBFF }
func isLowSurrogate(r rune) bool  { return 0xDC00 <= r && r <= 0xDFFF }
