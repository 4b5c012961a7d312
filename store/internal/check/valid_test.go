package check

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"rewind/store"
)

// threePass is JSON's rule as it was before accepts: the three passes.
func threePass(doc []byte) bool {
	return json.Valid(doc) && utf8.Valid(doc) && numbers("doc", doc) == nil
}

// hostile are documents at the edges of each of the three rules.
func hostile() []string {
	deep := func(n int, open, close string) string {
		return strings.Repeat(open, n) + "1" + strings.Repeat(close, n)
	}
	docs := []string{
		// Nesting: encoding/json takes 10,000 levels, not 10,001.
		deep(10000, "[", "]"), deep(10001, "[", "]"), deep(10000, `{"a":`, "}"), deep(10001, `{"a":`, "}"),
		strings.Repeat("[", 10000) + strings.Repeat("]", 10000), strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
		strings.Repeat(`[{"a":`, 5000) + "0" + strings.Repeat("}]", 5000), strings.Repeat(`[{"a":`, 5001) + strings.Repeat("}]", 5001),
		deep(10000, "[", "]") + " ", deep(9999, "[", "]") + "]",
		// Syntax.
		``, ` `, `{`, `}`, `[`, `]`, `{]`, `[}`, `[1,]`, `[,1]`, `[1 2]`, `{"a"}`, `{"a":}`, `{"a" 1}`, `{"a":1,}`, `{,"a":1}`,
		`{"a":1 "b":2}`, `{1:2}`, `{a:1}`, `{"a":1}}`, `[[]`, `[]]`, `1 2`, `"a" "b"`, `{}{}`, `[]x`, `nul`, `nulll`, `tru`, `true1`,
		`True`, `NULL`, `falsey`, `[true,false,null]`, ` {"a" : [ 1 , { } , [ ] ] } `, "\t\n\r[1]\r\n\t", "\v1", "\f1", "1\v",
		"\u00a01", "\ufeff{}", `{"":""}`, `{"a":1,"a":2}`, `[""]`, `"`, `"\"`, `"\\"`, `"\\\"`, `'a'`,
		// Strings and escapes.
		`"\u0000"`, `"\u12"`, `"\u12G4"`, `"\uD800"`, `"\ud800\udc00"`, `"\udc00"`, `"\U1234"`, `"\x41"`, `"\a"`, `"\'"`, `"\/"`,
		`"\b\f\n\r\t\"\\"`, `"\u00e9\u00E9"`, "\"\\u", "\"\\u0", "\"\\u00e", "\"\\u00e9", "\"\\", "\"a\\", "\"\x00\"", "\"\x1f\"",
		"\"\x7f\"", "\"\t\"", "\"\n\"", "\"a\"\x00",
		// UTF-8: in a string, outside one, cut short, overlong, surrogates.
		"\"é\"", "\"😀\"", "\"\ufffd\"", "\"\xff\"", "\"\xc3\"", "\"\xc3\x28\"", "\"\xe2\x82\"", "\"\xf0\x9f\x98\"", "\"\xc0\xaf\"",
		"\"\xe0\x80\xaf\"", "\"\xed\xa0\x80\"", "\"\xed\xbf\xbf\"", "\"\xf4\x90\x80\x80\"", "\"\xf8\x88\x80\x80\x80\"", "\"\x80\"",
		"\xff", "[\xff]", "{\"a\xff\":1}", "{\"a\":\"\xff\"}", "é", "\"é", "\"\xe2\x82\xac\"",
		// Numbers: the grammar, then numeric's range.
		`0`, `-0`, `-`, `--1`, `+1`, `01`, `-01`, `00`, `1.`, `.5`, `-.5`, `1.5`, `1.e5`, `1e`, `1e+`, `1e-`, `1E5`, `1e+5`, `1e-5`,
		`1ee5`, `1e5.5`, `1.5.5`, `0x10`, `1_000`, `Infinity`, `NaN`, `-Infinity`, `[1e5,]`, `{"a":-}`, `[-]`, `[01]`, `[1.]`,
		`123456789012345678`, `1234567890123456789`, `-123456789012345678`, `-1234567890123456789`, `0.0`, `-0.0e-0`,
		`1e131071`, `1e131072`, `9.9999e131071`, `10e131071`, `1e-16383`, `1e-16384`, `1.0e-16383`, `0e-16384`, `0e1073741823`,
		`1e99999999999999999999`, `1e-99999999999999999999`, `-1e99999999999999999999`, `[1e131072]`, `{"a":1e131072}`,
		`{"1e131072":"1e131072"}`, `"1e131072"`, `[0.` + strings.Repeat("0", 16383) + `]`, `[0.` + strings.Repeat("0", 16384) + `]`,
		`1` + strings.Repeat("0", 131071), `1` + strings.Repeat("0", 131072),
		// The order of the rules: a bad number after bad UTF-8 or bad syntax.
		"[\"\xff\",1e131072]", "[1e131072,\"\xff\"]", "[1e131072,]", "[\"\xff\",]", "[1e131072", "[\"\xff\"",
	}
	return docs
}

func TestAcceptsIsTheThreePassRule(t *testing.T) {
	for _, doc := range hostile() {
		if got, want := accepts([]byte(doc)), threePass([]byte(doc)); got != want {
			t.Errorf("accepts(%.60q) = %v, the three passes say %v", doc, got, want)
		}
		if doc == "" {
			continue
		}
		// And JSON refuses as the three passes do, message and all.
		if got, want := fmt.Sprint(JSON("doc", []byte(doc))), fmt.Sprint(refusal("doc", []byte(doc))); got != want {
			t.Errorf("JSON(%.60q) = %.100s, the three passes say %.100s", doc, got, want)
		}
	}
}

// TestAcceptsMutants compares the two on many small edits of valid
// documents: each a byte changed, inserted or dropped.
func TestAcceptsMutants(t *testing.T) {
	seeds := []string{
		`{"role":"user","content":"héllo \"x\" \\ \u00e9 😀","n":[0,-1,2.5,1e3,-0.0E+2,123456789012345678],"ok":true,"no":false,"z":null}`,
		`[{"a":[[],{}]},"\ud83d\ude00",1e131071,0.5e-16383]`,
		// Long plain runs, which str skips eight bytes at a time.
		`{"text":"The invoice for ticket 4411 was sent twice; please refund one of them","k":"abcdefghijklmnopqrstuvwxyz0123456789"}`,
	}
	bytesOf := []byte("{}[]\":,\\ \t\n0123456789-+.eEtrufalsn\x00\x1f\x7f\x80\xbf\xc3\xe2\xed\xf0\xffu")
	rng := rand.New(rand.NewPCG(1, 2))
	for _, seed := range seeds {
		for range 20000 {
			doc := []byte(seed)
			for range 1 + rng.IntN(3) {
				at := rng.IntN(len(doc) + 1)
				b := bytesOf[rng.IntN(len(bytesOf))]
				switch rng.IntN(3) {
				case 0:
					if at < len(doc) {
						doc[at] = b
					}
				case 1:
					doc = append(doc[:at], append([]byte{b}, doc[at:]...)...)
				default:
					if at < len(doc) {
						doc = append(doc[:at], doc[at+1:]...)
					}
				}
			}
			if got, want := accepts(doc), threePass(doc); got != want {
				t.Fatalf("accepts(%q) = %v, the three passes say %v", doc, got, want)
			}
		}
	}
}

func FuzzAccepts(f *testing.F) {
	for _, s := range hostile() {
		if len(s) < 1000 {
			f.Add([]byte(s))
		}
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		if got, want := accepts(doc), threePass(doc); got != want {
			t.Fatalf("accepts(%q) = %v, the three passes say %v", doc, got, want)
		}
	})
}

func BenchmarkJSON(b *testing.B) {
	doc := []byte(`{"role":"assistant","content":"` + strings.Repeat("Ticket 4411: the invoice é was sent twice. ", 6) +
		`","tokens":{"in":1234,"out":567},"at":1.5,"tools":[{"name":"lookup","args":{"id":"4411"}}],"done":true}`)
	b.Run("accepts", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		for b.Loop() {
			if err := JSON("doc", doc); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("threePass", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		for b.Loop() {
			if err := refusal("doc", doc); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestBodyOKIsBody: Put decides bodies by bodyOK and names them only
// when Body refuses.
func TestBodyOKIsBody(t *testing.T) {
	for _, body := range []string{`{"a":1}`, `"x"`, ``, `{`, "\"\xff\"", `[1e131072]`} {
		good := store.ContentHash([]byte(body))
		for _, hash := range []string{good, strings.ToUpper(good), good[1:] + "0", "", good + "0"} {
			if got, want := bodyOK(hash, []byte(body)), Body("m", hash, []byte(body)) == nil; got != want {
				t.Errorf("bodyOK(%q, %q) = %v, Body says %v", hash, body, got, want)
			}
		}
	}
	cp := store.Checkpoint{ThreadID: "t", ID: 1, State: []byte(`{}`), Messages: []store.Message{
		{Hash: store.ContentHash([]byte(`1`)), Body: []byte(`1`)}, {Hash: store.ContentHash([]byte(`1`)), Body: []byte(`2`)}}}
	if _, err := Put(cp, nil); err == nil || !strings.HasPrefix(err.Error(), "message 2 has hash") {
		t.Errorf("Put of a message with another's hash: %v", err)
	}
	cp.Messages = cp.Messages[:1]
	if _, err := Put(cp, []store.Event{{Type: "a"}, {Type: "b", Payload: []byte(`[`)}}); err == nil ||
		!strings.HasPrefix(err.Error(), "payload of event 2 is not valid JSON") {
		t.Errorf("Put of an event with a bad payload: %v", err)
	}
}
