// Package termtext is rewind's one sanitizer: every text that reaches a
// terminal from stored data, a model, an id or an error goes through it,
// in the CLI's plain output, the TUI and error messages alike, and --json
// output is escaped by the same rule. Nothing a terminal acts on (C0 and C1
// controls, DEL, bidi overrides and isolates, other invisible format
// characters, invalid UTF-8) gets through raw; each is shown instead,
// visibly: C0 controls as their Unicode control pictures (ESC → ␛, so an
// OSC 52 sequence reads "␛]52;…"), the rest as ⟨U+XXXX⟩ or, for a byte that
// is not UTF-8, ⟨0xXX⟩.
//
// It lives under tui only because the top level is fixed; it imports
// nothing of rewind, and the CLI uses it as much as the TUI.
package termtext

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Unsafe reports whether a terminal could act on r, or show it invisibly:
// the rule every function here applies (newline and tab included; each
// function says what it keeps of them).
func Unsafe(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f:
		return true
	case r < 0x80:
		return false
	}
	return r <= 0x9f || // C1 controls (CSI 0x9b, OSC 0x9d, …)
		r == 0x2028 || r == 0x2029 || // line and paragraph separators
		unicode.Is(unicode.Cf, r) || // bidi overrides and isolates, zero-width characters, BOM
		unicode.Is(unicode.Co, r) || // private use
		unicode.Is(unicode.Cs, r) ||
		r == utf8.RuneError
}

// Text is multi-line text (a message, a summary, an argument dump) made
// harmless: newlines are kept (CRLF folded to LF), a tab becomes four
// spaces so widths stay exact, anything else unsafe is shown as above.
func Text(s string) string { return show(s, true, "    ") }

// Line is text shown on one line: Text, with each newline shown as ⏎.
func Line(s string) string { return strings.ReplaceAll(Text(s), "\n", "⏎") }

// Name is an id (a thread, task or operation): every control is shown,
// newline (␊) and tab (␉) too, so a crafted id can neither fake a row nor
// a column and two ids that print alike are alike.
func Name(s string) string { return show(s, false, "") }

// Error is an error message on one line, cause first: a library's line
// breaks, with the indentation after them, become "; ", then the rest is
// as Line.
func Error(s string) string {
	s = strings.TrimSpace(strings.ReplaceAll(s, "\r\n", "\n"))
	if !strings.Contains(s, "\n") {
		return Line(s)
	}
	parts := strings.Split(s, "\n")
	out := parts[:0]
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, strings.TrimSuffix(p, ":"))
		}
	}
	return Line(strings.Join(out, "; "))
}

// show does the work: keepNL keeps newlines (and folds CRLF); tab, when
// not empty, replaces each tab.
func show(s string, keepNL bool, tab string) string {
	if plain(s, keepNL && tab != "") {
		return s
	}
	if keepNL {
		s = strings.ReplaceAll(s, "\r\n", "\n")
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size <= 1 {
			fmt.Fprintf(&b, "⟨0x%02X⟩", s[i])
			i++
			continue
		}
		i += size
		switch {
		case r == '\n' && keepNL:
			b.WriteByte('\n')
		case r == '\t' && tab != "":
			b.WriteString(tab)
		case r < 0x20:
			b.WriteRune(0x2400 + r) // control pictures: ␀ … ␟
		case r == 0x7f:
			b.WriteRune('␡')
		case Unsafe(r):
			fmt.Fprintf(&b, "⟨U+%04X⟩", r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// plain is the fast path: printable ASCII, and newlines when kept.
func plain(s string, nl bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 || c == 0x7f || (c < 0x20 && !(nl && c == '\n')) {
			return false
		}
	}
	return true
}

// JSON escapes, in encoded JSON, every unsafe character encoding/json
// leaves raw (C1 controls, DEL, bidi and other format characters; it
// escapes C0 itself) as \uXXXX, so the output is harmless on a terminal
// and still decodes to the same strings. Outside strings JSON is ASCII,
// so escaping wherever such a character appears is always inside one.
func JSON(b []byte) []byte {
	i := 0
	for i < len(b) && b[i] < 0x7f {
		i++
	}
	if i == len(b) {
		return b
	}
	out := make([]byte, 0, len(b)+32)
	out = append(out, b[:i]...)
	for i < len(b) {
		c := b[i]
		if c < 0x7f {
			out = append(out, c)
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if size <= 1 && r == utf8.RuneError {
			// Not from encoding/json, which writes valid UTF-8: show the
			// byte as U+FFFD rather than pass it on.
			out = append(out, `\ufffd`...)
			i++
			continue
		}
		if Unsafe(r) {
			if r > 0xffff {
				r1, r2 := utf16.EncodeRune(r)
				out = fmt.Appendf(out, `\u%04x\u%04x`, r1, r2)
			} else {
				out = fmt.Appendf(out, `\u%04x`, r)
			}
		} else {
			out = append(out, b[i:i+size]...)
		}
		i += size
	}
	return out
}
