package check

import (
	"encoding/json"
	"fmt"
	"testing"
)

// numbers and skipString as they were before their fast paths.
func refNumbers(what string, doc []byte) error {
	for i := 0; i < len(doc); {
		switch c := doc[i]; {
		case c == '"':
			i = refSkipString(doc, i)
		case c == '-' || '0' <= c && c <= '9':
			j := numberEnd(doc, i)
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
func refSkipString(doc []byte, i int) int {
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

func checkNumbers(t *testing.T, doc []byte) {
	t.Helper()
	if !json.Valid(doc) {
		return // numbers runs on valid JSON only
	}
	if got, want := fmt.Sprint(numbers("doc", doc)), fmt.Sprint(refNumbers("doc", doc)); got != want {
		t.Fatalf("numbers(%q) = %s, want %s", doc, got, want)
	}
}

func FuzzNumbers(f *testing.F) {
	for _, s := range []string{`0`, `-12`, `123456789012345678`, `1234567890123456789`, `1e5`, `1e999999999`, `{"a\"":[1,-0.5,"x\\"]}`, `["\u00221"]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) { checkNumbers(t, doc) })
}
