package model

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Chat roles of a request's messages, as OpenAI-compatible servers name
// them.
const (
	ChatSystem    = "system"
	ChatUser      = "user"
	ChatAssistant = "assistant"
	ChatTool      = "tool"
)

// Parts of a request, for accounting what a call's tokens went to. A
// provider sends every part the same way; only the display tells them
// apart.
const (
	PartInstructions = "instructions" // the role's system prompt and this call's task
	PartSummary      = "summary"      // the compacted history, as indexed lines
	PartFacts        = "facts"        // pinned facts, verbatim
	PartTail         = "tail"         // the verbatim messages after the cut
	PartRounds       = "rounds"       // this call's own earlier tool rounds
)

// Message is one chat message of a request: what an OpenAI-compatible
// server receives, plus the part of the context it belongs to.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content,omitempty"`
	// ToolCalls are an assistant message's calls; each must be answered
	// by a tool message with its id before the next other message.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID is the call a tool message answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// Part is which part of the context this is (PartTail, …); never sent.
	Part string `json:"part,omitempty"`
}

// ToolCall is a model's request to run a tool. Arguments are the JSON
// text the model wrote, which may not be valid JSON.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Tool is a function the model may call: Parameters is its JSON Schema.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// System is the text of the request's system messages that carry the
// role's instructions (the first system message): how a test double, like
// a real model, tells which role it plays.
func (r Request) System() string {
	for _, m := range r.Messages {
		if m.Role == ChatSystem {
			return m.Content
		}
	}
	return ""
}

// Prompt is the last user message's text: the call's task.
func (r Request) Prompt() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == ChatUser {
			return r.Messages[i].Content
		}
	}
	return ""
}

// Simple is a request of a system prompt and one user message.
func Simple(role, system, prompt string) Request {
	var ms []Message
	if system != "" {
		ms = append(ms, Message{Role: ChatSystem, Content: system, Part: PartInstructions})
	}
	ms = append(ms, Message{Role: ChatUser, Content: prompt, Part: PartInstructions})
	return Request{Role: role, Messages: ms}
}

// Tokens estimates the request's prompt tokens by part, at the mock's 4
// bytes a token (a real server counts its own): message text, tool calls'
// names and arguments; tools and the schema count under
// PartInstructions.
func (r Request) Tokens() map[string]int {
	out := map[string]int{}
	for _, m := range r.Messages {
		part := m.Part
		if part == "" {
			part = PartTail
		}
		n := len(m.Content) + 4
		for _, c := range m.ToolCalls {
			n += len(c.Name) + len(c.Arguments) + len(c.ID)
		}
		out[part] += (n + 3) / 4
	}
	for _, t := range r.Tools {
		out[PartInstructions] += approxTokens(t.Name + t.Description + string(t.Parameters))
	}
	if r.JSON != nil {
		out[PartInstructions] += approxTokens(string(r.JSON.Schema))
	}
	return out
}

// TotalTokens is the sum of Tokens.
func (r Request) TotalTokens() int {
	n := 0
	for _, v := range r.Tokens() {
		n += v
	}
	return n
}

// CheckSequence applies the rules OpenAI-compatible servers hold a
// request's messages to, and says which one broke (nil when none did):
// every tool call of an assistant message is answered by a tool message
// with its id before any other message, and every tool message answers a
// call of the assistant message before it. A server answers a request
// that breaks them with a 400; so do rewind's test doubles.
func CheckSequence(ms []Message) error {
	open := map[string]int{} // call id → index of its assistant message
	var order []string
	closeOpen := func(at int) error {
		for _, id := range order {
			if i, ok := open[id]; ok {
				return fmt.Errorf("messages[%d]: an assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'; the following tool_call_ids did not have response messages: %s (before messages[%d])", i, id, at)
			}
		}
		clear(open)
		order = order[:0]
		return nil
	}
	answerable := map[string]bool{} // ids of the latest assistant message's calls
	for i, m := range ms {
		switch m.Role {
		case ChatTool:
			if m.ToolCallID == "" || !answerable[m.ToolCallID] {
				return fmt.Errorf("messages[%d]: messages with role 'tool' must be a response to a preceding message with 'tool_calls' (tool_call_id %q answers no call)", i, m.ToolCallID)
			}
			delete(open, m.ToolCallID)
		default:
			if err := closeOpen(i); err != nil {
				return err
			}
			clear(answerable)
			for _, c := range m.ToolCalls {
				if m.Role != ChatAssistant {
					return fmt.Errorf("messages[%d]: only assistant messages may carry 'tool_calls'", i)
				}
				open[c.ID] = i
				order = append(order, c.ID)
				answerable[c.ID] = true
			}
		}
	}
	return closeOpen(len(ms))
}

// Render writes messages as plain text, one block a message: its role
// (and the call it answers), its text, then its tool calls. It is how a
// request is diffed and printed; nothing is sent in this form.
func Render(ms []Message) string {
	var b strings.Builder
	for _, m := range ms {
		b.WriteString("[" + m.Role)
		if m.ToolCallID != "" {
			b.WriteString(" " + m.ToolCallID)
		}
		b.WriteString("]\n")
		if m.Content != "" {
			b.WriteString(m.Content)
			b.WriteByte('\n')
		}
		for _, c := range m.ToolCalls {
			fmt.Fprintf(&b, "→ %s %s(%s)\n", c.ID, c.Name, c.Arguments)
		}
	}
	return b.String()
}
