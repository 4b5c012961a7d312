package postgres

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestToJSONB(t *testing.T) {
	t.Parallel()
	m := string(marker)
	cases := []struct{ in, want string }{
		{`{"a":1}`, `{"a":1}`},
		{`"\u0000"`, `"` + m + `0"`},
		{`"\\u0000"`, `"\\u0000"`}, // an escaped backslash, then text
		{`"\\\u0000"`, `"\\` + m + `0"`},
		{`"` + m + `"`, `"` + m + m + `"`},
		{`"\ue000\uE000"`, `"` + m + m + m + m + `"`},
		{`"\ud800"`, `"` + m + `sd800"`},
		{`"\uDBFFx"`, `"` + m + `sdbffx"`},
		{`"\udc00"`, `"` + m + `sdc00"`},
		{`"\ud800\u0000"`, `"` + m + `sd800` + m + `0"`},
		{`"\ud83d\ude00"`, `"\ud83d\ude00"`}, // a real pair is fine as it is
		{`"\ud800\ud800\udc00"`, `"` + m + `sd800\ud800\udc00"`},
		{`"\u12"`, `"\u12"`}, // not JSON: left for jsonb to refuse
	}
	for _, c := range cases {
		got, err := toJSONB([]byte(c.in))
		if err != nil || string(got) != c.want {
			t.Errorf("toJSONB(%s) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	if _, err := toJSONB([]byte("\"\xff\"")); err != errBadUTF8 {
		t.Errorf("invalid UTF-8: %v, want errBadUTF8", err)
	}
	for _, bad := range []string{m, m + "x", m + "s12", m + "s0041"} {
		if _, err := fromJSONB([]byte(`"` + bad + `"`)); err != errBadMarker {
			t.Errorf("fromJSONB(%q) = %v, want errBadMarker", bad, err)
		}
	}
}

// FuzzJSONBRoundTrip: what toJSONB writes holds nothing jsonb refuses, and
// fromJSONB gives the document back byte for byte, except that \ue000
// comes back as the raw rune it stands for and a lone surrogate's hex
// digits in lower case (so that equal documents stay equal in jsonb).
func FuzzJSONBRoundTrip(f *testing.F) {
	for _, doc := range tricky {
		f.Add(doc)
	}
	f.Add(`{"k":"` + string(marker) + `0\u0000` + string(marker) + `sd800"}`)
	// Not JSON, but once mishandled.
	f.Add("0\\\ue000")
	f.Add(`0\u\ud800\udC00`)
	f.Add(`0\u0\uDA000`)
	f.Fuzz(func(t *testing.T, s string) {
		// Half the inputs: a string as Go's encoder writes it.
		docs := []string{s}
		if b, err := json.Marshal(map[string]string{s: s}); err == nil {
			docs = append(docs, string(b))
		}
		for _, doc := range docs {
			enc, err := toJSONB([]byte(doc))
			if err != nil {
				continue // not UTF-8
			}
			if hasRefusedEscape(enc) {
				t.Fatalf("toJSONB(%q) = %q still holds an escape jsonb refuses", doc, enc)
			}
			back, err := fromJSONB(enc)
			if err != nil {
				t.Fatalf("fromJSONB(toJSONB(%q)): %v", doc, err)
			}
			want := []byte(doc)
			if strings.Contains(strings.ToLower(doc), `\ue000`) {
				want = nil // compare as JSON below
			}
			if want != nil && !bytes.Equal(lowerEscapes(back), lowerEscapes(want)) {
				t.Fatalf("round trip of %q gave %q", doc, back)
			}
			if json.Valid([]byte(doc)) {
				var a, b any
				_ = json.Unmarshal([]byte(doc), &a)
				if err := json.Unmarshal(back, &b); err != nil {
					t.Fatalf("round trip of %q gave invalid JSON %q", doc, back)
				}
			}
		}
	})
}

// lowerEscapes writes the hex digits of every \u escape in lower case.
func lowerEscapes(doc []byte) []byte {
	out := bytes.Clone(doc)
	for i := 0; i+1 < len(out); i++ {
		if out[i] != '\\' {
			continue
		}
		if _, ok := hex4(out, i+2); out[i+1] == 'u' && ok {
			copy(out[i+2:i+6], bytes.ToLower(out[i+2:i+6]))
			i += 5
			continue
		}
		i++
	}
	return out
}

// hasRefusedEscape reports a \u0000 or unpaired surrogate escape.
func hasRefusedEscape(doc []byte) bool {
	for i := 0; i < len(doc); i++ {
		if doc[i] != '\\' || i+1 >= len(doc) {
			continue
		}
		if doc[i+1] != 'u' {
			i++
			continue
		}
		cu, ok := hex4(doc, i+2)
		switch {
		case !ok: // not JSON; skip the "\\u" as toJSONB does
			i++
			continue
		case cu == 0:
			return true
		case isHighSurrogate(cu):
			if lo, ok := hex4(doc, i+8); !ok || doc[i+6] != '\\' || doc[i+7] != 'u' || !isLowSurrogate(lo) {
				return true
			}
			i += 11
			continue
		case isLowSurrogate(cu):
			return true
		}
		i += 5
	}
	return false
}
