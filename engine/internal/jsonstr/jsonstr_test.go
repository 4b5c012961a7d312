package jsonstr

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// Esc is written out by hand: each entry must be what json.Marshal writes
// for that byte inside a string, or stored forms and request hashes would
// differ from encoding/json's.
func TestEscIsEncodingJSONs(t *testing.T) {
	for b := range len(Esc) {
		enc, err := json.Marshal(string(rune(b)))
		if err != nil {
			t.Fatalf("json.Marshal(%q): %v", rune(b), err)
		}
		if want := string(enc[1 : len(enc)-1]); Esc[b] != want {
			t.Errorf("Esc[%#x] = %q, json.Marshal writes %q", b, Esc[b], want)
		}
	}
}

// Append is json.Marshal of a string, over random strings of hostile
// pieces (control bytes, HTML, invalid UTF-8, U+2028/2029, non-ASCII).
func TestAppendIsMarshals(t *testing.T) {
	pieces := []string{"", "a", `"`, `\`, "<b>", "&", "\n", "\t", "\b", "\f", "\x00", "\x1f", "\x7f", "é", "日本",
		"\u2028", "\u2029", "\xff", "\xe2\x80", "\xed\xa0\x80", "😀", "\ufffd"}
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < 5000; n++ {
		var sb strings.Builder
		for k := rng.IntN(8); k > 0; k-- {
			sb.WriteString(pieces[rng.IntN(len(pieces))])
		}
		s := sb.String()
		want, _ := json.Marshal(s)
		if got := Append([]byte("x"), s); string(got) != "x"+string(want) {
			t.Fatalf("Append(%q) = %q, json.Marshal writes %q", s, got[1:], want)
		}
		if got, want := HTMLEscaped([]byte(s)), bytes.ContainsAny([]byte(s), "<>&\u2028\u2029"); got != want {
			t.Fatalf("HTMLEscaped(%q) = %v, want %v", s, got, want)
		}
	}
}

func FuzzAppend(f *testing.F) {
	for _, s := range []string{"", "plain", "<a&b>", "\u2028\u2029", "\xff\xfe", "tab\t\x00\x1f\x7f", "é😀", `"\`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := Append(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("Append(%q) = %s, want %s", s, got, want)
		}
	})
}

// HTMLEscaped is bytes.ContainsAny(b, "<>&\u2028\u2029"), faster.
func FuzzHTMLEscaped(f *testing.F) {
	for _, seed := range []string{"", "plain", "a<b", "x&", "\u2028", "\u2029", "\u2027\u202a", "\xe2\x80", "\xe2\xe2\x80\xa8", "é ✓ \u2026"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := HTMLEscaped(b), bytes.ContainsAny(b, "<>&\u2028\u2029"); got != want {
			t.Fatalf("HTMLEscaped(%q) = %v, want %v", b, got, want)
		}
	})
}
