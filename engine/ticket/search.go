package ticket

import (
	"encoding/json"
	"strings"

	"rewind/store"
	"rewind/store/browse"
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
		if m, ok := Said(sm.Body); ok {
			h.Role, h.Speaker, h.Text = m.Role, m.Speaker, m.Content
		}
		h.Matches = store.Matches(h.Text, words)
		out = append(out, h)
	}
	return out
}

// Said reads a stored message body as the ticket's message, its Content
// what a search reads it to say: the content, then its tool calls (name
// and arguments) that the content does not already spell out, or the
// call a tool result answers when it says nothing. ok false: the body is
// not a ticket's message.
func Said(body []byte) (Message, bool) {
	var m Message
	if json.Unmarshal(body, &m) != nil {
		return Message{}, false
	}
	text := m.Content
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
		if strings.Contains(text, call) {
			continue // the content already says it ("calling invoice_lookup({…})")
		}
		if text != "" {
			text += " "
		}
		text += call
	}
	if m.ToolCallID != "" && text == "" {
		text = m.ToolCallID
	}
	m.Content = text
	return m, true
}

// Snippet is a line of the hit's text around its first match, about
// width bytes (browse.Snippet).
func (h Hit) Snippet(width int) (string, [][2]int) {
	return browse.Snippet(h.Text, h.Matches, width)
}
