package browse

import (
	"strings"
	"testing"
)

// TestSnippetSpansOverBytesNotUTF8: a text with a byte that is not UTF-8
// (a LangGraph message's string as its writer stored it) keeps its match
// highlighted on the match: the snippet keeps the byte as it is (the
// screen shows it as ⟨0xFF⟩), so the spans still point at the word.
func TestSnippetSpansOverBytesNotUTF8(t *testing.T) {
	for _, text := range []string{"\xff\xfe refund please", "bad \xc3 byte: refund please", "refund\tplease \xff"} {
		i := strings.Index(text, "refund")
		snip, spans := Snippet(text, [][2]int{{i, i + len("refund")}}, 60)
		if len(spans) != 1 {
			t.Fatalf("%q: spans %v, want one", text, spans)
		}
		if got := snip[spans[0][0]:spans[0][1]]; got != "refund" {
			t.Errorf("%q: the span shows %q of snippet %q, want \"refund\"", text, got, snip)
		}
	}
}
