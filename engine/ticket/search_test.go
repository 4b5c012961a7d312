package ticket

import (
	"strings"
	"testing"

	"rewind/store"
)

// A hit reads what the message says (its content, then its tool calls)
// and marks the words the query begins; its snippet keeps the first
// match in view, cut with "…", the marks moved with it.
func TestHitsAndSnippets(t *testing.T) {
	t.Parallel()
	body := func(s string) store.Message {
		return store.Message{Index: 4, CheckpointID: 9, Body: []byte(s)}
	}
	long := strings.Repeat("padding words ", 20) + "the Refund window\nis 30 days " + strings.Repeat("and more ", 20)
	hits := Hits([]store.Message{
		body(`{"role":"assistant","speaker":"executor","content":"calling","toolCall":{"id":"c1","name":"refund_policy","args":{"order":"SO1"}}}`),
		body(`{"role":"user","speaker":"user","content":` + jsonQuote(long) + `}`),
		body(`{"role":"assistant","speaker":"executor","content":"calling refund_policy({\"order\":\"SO1\"})","toolCalls":[{"id":"c1","name":"refund_policy","args":{"order":"SO1"}}]}`),
	}, "REFUND win")
	// A call the content already spells out is not said twice.
	if h := hits[2]; h.Text != `calling refund_policy({"order":"SO1"})` || len(h.Matches) != 1 {
		t.Errorf("a call the content names = %q %v, want it once", h.Text, h.Matches)
	}
	if h := hits[0]; h.Speaker != "executor" || h.Checkpoint != 9 || h.Index != 4 || h.Text != `calling refund_policy({"order":"SO1"})` ||
		len(h.Matches) != 1 || h.Text[h.Matches[0][0]:h.Matches[0][1]] != "refund" {
		t.Errorf("a tool call's hit = %+v, want its call in the text and refund marked", h)
	}
	snip, spans := hits[1].Snippet(60)
	if !strings.HasPrefix(snip, "…") || !strings.HasSuffix(snip, "…") || strings.Contains(snip, "\n") {
		t.Errorf("snippet %q: want it cut on both sides, on one line", snip)
	}
	var marked []string
	for _, sp := range spans {
		marked = append(marked, snip[sp[0]:sp[1]])
	}
	if strings.Join(marked, ",") != "Refund,window" {
		t.Errorf("snippet %q marks %q, want Refund,window", snip, marked)
	}
	if snip, spans := (Hit{Text: "short refund"}).Snippet(60); snip != "short refund" || len(spans) != 0 {
		t.Errorf("a hit without matches = %q %v, want its text whole", snip, spans)
	}
}

func jsonQuote(s string) string {
	return `"` + strings.ReplaceAll(s, "\n", `\n`) + `"`
}
