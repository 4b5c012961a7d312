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

// TestSnippetStaysNarrowInARunOfContinuationBytes: a long run of UTF-8
// continuation bytes (invalid UTF-8 a LangGraph writer stored) on either
// side of the match does not widen the snippet: a search result stays one
// line of about its width, not 10 KB of ⟨0x80⟩.
func TestSnippetStaysNarrowInARunOfContinuationBytes(t *testing.T) {
	run := strings.Repeat("\x80", 10_000)
	const width = 60
	for name, text := range map[string]string{
		"run before the match": run + " refund please",
		"run after the match":  "refund please " + run,
		"match inside the run": run + "refund" + run,
	} {
		i := strings.Index(text, "refund")
		snip, spans := Snippet(text, [][2]int{{i, i + len("refund")}}, width)
		// width, at most 3 bytes more on each edge, and an ellipsis each side.
		if limit := width + 2*3 + 2*len("…"); len(snip) > limit {
			t.Errorf("%s: snippet is %d bytes, want at most %d", name, len(snip), limit)
		}
		if len(spans) != 1 || snip[spans[0][0]:spans[0][1]] != "refund" {
			t.Errorf("%s: spans %v do not point at \"refund\" in the snippet", name, spans)
		}
	}
}
