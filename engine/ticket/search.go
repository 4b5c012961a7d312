package ticket

import (
	"encoding/json"
	"strings"
	"unicode/utf8"

	"rewind/store"
)

// Hit is a message a search found (engine.Search), as the CLI and the TUI
// show it: where it is, who said it, its text and the words that matched.
type Hit struct {
	// Checkpoint is the checkpoint whose put stored the message first:
	// its branch's.
	Checkpoint int64  `json:"checkpoint"`
	Index      int64  `json:"index"`
	Role       string `json:"role"`
	Speaker    string `json:"speaker"`
	// Text is what the message says: its content, then its tool calls
	// (name and arguments) that the content does not already spell out.
	Text string `json:"text"`
	// Matches are the byte spans of Text's words that begin with a word
	// of the query (store.Matches), in order.
	Matches [][2]int `json:"matches"`
}

// Hits reads the messages a search found for query.
func Hits(found []store.Message, query string) []Hit {
	words := store.SearchQuery(query)
	out := make([]Hit, 0, len(found))
	for _, sm := range found {
		h := Hit{Checkpoint: sm.CheckpointID, Index: sm.Index, Text: string(sm.Body)}
		var m Message
		if json.Unmarshal(sm.Body, &m) == nil {
			h.Role, h.Speaker, h.Text = m.Role, m.Speaker, m.Content
			calls := m.ToolCalls
			if m.ToolCall != nil {
				calls = append([]ToolCall{*m.ToolCall}, calls...)
			}
			for _, c := range calls {
				args := string(c.Args)
				if args == "" {
					args = c.ArgsText
				}
				call := c.Name + "(" + args + ")"
				if strings.Contains(h.Text, call) {
					continue // the content already says it ("calling invoice_lookup({…})")
				}
				if h.Text != "" {
					h.Text += " "
				}
				h.Text += call
			}
			if m.ToolCallID != "" && h.Text == "" {
				h.Text = m.ToolCallID
			}
		}
		h.Matches = store.Matches(h.Text, words)
		out = append(out, h)
	}
	return out
}

// Snippet is a line of the hit's text around its first match, about
// width bytes (whitespace shown as spaces, "…" where it was cut), and the
// spans of the matches it shows, in the snippet's bytes.
func (h Hit) Snippet(width int) (string, [][2]int) {
	text, from := h.Text, 0
	if len(h.Matches) > 0 {
		from = max(h.Matches[0][0]-width/4, 0)
	}
	for from > 0 && !utf8.RuneStart(text[from]) {
		from--
	}
	to := min(from+width, len(text))
	for to < len(text) && !utf8.RuneStart(text[to]) {
		to++
	}
	var b strings.Builder
	shift := -from
	if from > 0 {
		b.WriteString("…")
		shift += len("…")
	}
	for _, r := range text[from:to] {
		if r == '\n' || r == '\t' || r == '\r' {
			r = ' ' // one byte for one: the spans hold
		}
		b.WriteRune(r)
	}
	if to < len(text) {
		b.WriteString("…")
	}
	var spans [][2]int
	for _, m := range h.Matches {
		if m[0] >= from && m[1] <= to {
			spans = append(spans, [2]int{m[0] + shift, m[1] + shift})
		}
	}
	return b.String(), spans
}
