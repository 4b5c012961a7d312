package tui

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// safe makes untrusted text (model output, stored state, thread names)
// harmless on a terminal while keeping it visible: C0 controls become their
// Unicode control pictures (ESC → ␛, so an OSC 52 or OSC 8 sequence reads
// "␛]52;…"), and C1 controls, bidi overrides, other invisible format
// characters and invalid UTF-8 become ⟨U+XXXX⟩ / ⟨0xXX⟩. Newlines are kept
// (CRLF is folded to LF); a tab becomes four spaces so widths stay exact.
func safe(s string) string {
	if isPlain(s) {
		return s
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
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
		case r == '\n':
			b.WriteByte('\n')
		case r == '\t':
			b.WriteString("    ")
		case r < 0x20:
			b.WriteRune(0x2400 + r) // control pictures: ␀ … ␟
		case r == 0x7f:
			b.WriteRune('␡')
		case r >= 0x80 && r <= 0x9f, // C1 controls (CSI 0x9b, OSC 0x9d, …)
			r == 0x2028, r == 0x2029, // line/paragraph separators
			unicode.Is(unicode.Cf, r), // bidi overrides and isolates, zero-width chars, BOM
			unicode.Is(unicode.Co, r), // private use
			unicode.Is(unicode.Cs, r),
			r == utf8.RuneError:
			fmt.Fprintf(&b, "⟨U+%04X⟩", r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// isPlain is the fast path: printable ASCII and newlines only.
func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 || (c < 0x20 && c != '\n') || c == 0x7f {
			return false
		}
	}
	return true
}

// safeLine is safe for text shown on one line: newlines become ⏎.
func safeLine(s string) string {
	return strings.ReplaceAll(safe(s), "\n", "⏎")
}
