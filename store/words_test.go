package store_test

import (
	"fmt"
	"rewind/store"
	"strings"
	"testing"
)

// The words a search finds: every string value's, not the keys', escapes
// read, each once, in order; cut at MaxWordBytes and MaxWords the same
// way for every store.
func TestBodyWords(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{`{"role":"user","content":"Where is SO20260901? The café: CAFÉ."}`, "user where is so20260901 the café"},
		{`{"content" : "a \"quoted\" word", "n": 12, "ok": true, "x": null}`, "a quoted word"},
		{`{"content":"\u00c9cole\nnext\\line"}`, "école next line"},
		{`{"toolCall":{"name":"refund_policy","args":{"order":"SO1","lines":["one","two"]}}}`, "refund policy so1 one two"},
		{`{"speaker":"executor[t-1-refund]","speaker":"second"}`, "executor t 1 refund second"}, // both: words of every value
		{`{"content":"東京 depot, Ünïcode"}`, "東京 depot ünïcode"},
		{`{"content":"key: \"not a key\": no"}`, "key not a no"},
		{`{"a":{"b":"deep"},"c":[["deeper"]]}`, "deep deeper"},
		{`["x","y"]`, "x y"},
		{`{"content":"unterminated`, ""},
		{`not json`, ""},
	} {
		if got := strings.Join(store.BodyWords([]byte(c.body)), " "); got != c.want {
			t.Errorf("BodyWords(%s) = %q, want %q", c.body, got, c.want)
		}
	}
	long := strings.Repeat("é", 80) // 160 bytes
	if got := store.BodyWords([]byte(`{"content":"` + long + `"}`)); len(got) != 1 || got[0] != strings.Repeat("é", 50) {
		t.Errorf("a 160-byte word = %q, want it cut at %d bytes, whole characters", got, store.MaxWordBytes)
	}
	var many strings.Builder
	for i := range store.MaxWords + 100 {
		fmt.Fprintf(&many, "w%d w%d ", i, i)
	}
	got := store.BodyWords([]byte(`{"content":"` + many.String() + `"}`))
	if len(got) != store.MaxWords || got[0] != "w0" || got[store.MaxWords-1] != fmt.Sprintf("w%d", store.MaxWords-1) {
		t.Errorf("%d distinct words: kept %d (%q…%q), want the first %d", store.MaxWords+100, len(got), got[0], got[len(got)-1], store.MaxWords)
	}
}

// A query's words, and the spans a hit marks: the words a query word
// begins.
func TestSearchQueryAndMatches(t *testing.T) {
	if got := strings.Join(store.SearchQuery(`"Refund" OR refund, SO2026*`), " "); got != "refund or so2026" {
		t.Errorf("SearchQuery = %q", got)
	}
	text := "Refund SO20260901 (refunded), not prefund."
	var got []string
	for _, sp := range store.Matches(text, store.SearchQuery("refund so2026")) {
		got = append(got, text[sp[0]:sp[1]])
	}
	if strings.Join(got, ",") != "Refund,SO20260901,refunded" {
		t.Errorf("Matches = %q, want Refund,SO20260901,refunded (not prefund)", got)
	}
	if !store.HasWords(store.BodyWords([]byte(`{"c":"refunded twice"}`)), store.SearchQuery("TWI ref")) || store.HasWords([]string{"refund"}, store.SearchQuery("refund twice")) {
		t.Error("HasWords: every query word must begin a word")
	}
}
