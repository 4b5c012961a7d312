package browse

import (
	"encoding/json"
	"strings"
)

// Message is a LangChain message made plain for display.
type Message struct {
	// Index is the message's place in its channel.
	Index int    `json:"index"`
	ID    string `json:"id,omitempty"`
	// Role is "human", "ai", "tool", "system", or what a generic message
	// says ("function", a ChatMessage's role…).
	Role string `json:"role"`
	Name string `json:"name,omitempty"`
	// Content is the text: a string, or the text parts of a list of
	// content blocks (Blocks keeps the list).
	Content string `json:"content"`
	Blocks  []any  `json:"blocks,omitempty"`
	// ToolCalls are an AI message's calls.
	ToolCalls []ToolCall `json:"toolCalls,omitempty"`
	// ToolCallID is the call a tool message answers, and CallIndex the
	// index of the AI message that made it (-1 when not in the channel).
	ToolCallID string `json:"toolCallId,omitempty"`
	CallIndex  int    `json:"callIndex"`
	// Type is the stored constructor path ("" for a plain dict).
	Type string `json:"type,omitempty"`
}

// ToolCall is one call an AI message made, joined to its result.
type ToolCall struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Args any    `json:"args"`
	// Result is the index of the tool message answering it (-1: none yet).
	Result int `json:"result"`
}

// Messages reads a list of LangChain messages (the value of an
// add_messages channel), or of a Go graph's (goFields), and joins each tool call to its result by id. ok
// is false when v is not such a list.
func Messages(v any) (msgs []Message, ok bool) {
	l, isList := v.([]any)
	if !isList {
		return nil, false
	}
	msgs = make([]Message, 0, len(l))
	for i, it := range l {
		m, isMsg := message(it)
		if !isMsg {
			return nil, false
		}
		m.Index = i
		msgs = append(msgs, m)
	}
	join(msgs)
	return msgs, true
}

// Messages reads the checkpoint's "messages" channel (see package
// function Messages); nil when it has none.
func (c Checkpoint) Messages() []Message {
	v, _ := c.Value("messages")
	msgs, _ := Messages(v)
	return msgs
}

// KeyType marks a decoded value stored by its constructor path (see
// store/langgraph's Decode): {"$type": "langchain_core.messages.ai.AIMessage", …}.
const KeyType = "$type"

// TypeOf is a decoded value's constructor path ("" for a plain value).
func TypeOf(v any) string {
	if m, ok := v.(map[string]any); ok {
		s, _ := m[KeyType].(string)
		return s
	}
	return ""
}

// roles maps LangChain's class names to roles.
var roles = map[string]string{
	"HumanMessage": "human", "AIMessage": "ai", "ToolMessage": "tool", "SystemMessage": "system",
	"FunctionMessage": "function", "ChatMessage": "chat", "RemoveMessage": "remove",
}

// message reads one message: a typed LangChain message, or a plain dict
// with a role (OpenAI style) or a type.
func message(v any) (Message, bool) {
	f, ok := v.(map[string]any)
	if !ok {
		return Message{}, false
	}
	m := Message{Type: TypeOf(f), CallIndex: -1}
	class := m.Type[strings.LastIndex(m.Type, ".")+1:]
	class = strings.TrimSuffix(class, "Chunk")
	role, _ := f["type"].(string)
	switch {
	case roles[class] != "":
		m.Role = roles[class]
	case m.Type != "":
		return Message{}, false // a typed object, not a message
	case role != "":
		m.Role = role
	default:
		r, has := f["role"].(string)
		if !has {
			return Message{}, false
		}
		m.Role = map[string]string{"user": "human", "assistant": "ai"}[r]
		if m.Role == "" {
			m.Role = r
		}
	}
	if r, ok := f["role"].(string); ok && m.Role == "chat" {
		m.Role = r
	}
	if _, has := f["content"]; !has {
		return Message{}, false
	}
	m.ID, _ = f["id"].(string)
	m.Name, _ = f["name"].(string)
	m.ToolCallID, _ = f["tool_call_id"].(string)
	m.Content, m.Blocks = content(f["content"])
	m.ToolCalls = toolCalls(f)
	goFields(&m, f)
	return m, true
}

// goFields reads what a Go graph's messages name in its own words
// (rewind's: speaker, toolCallId, toolCall, toolCalls) where the
// LangChain fields are absent.
func goFields(m *Message, f map[string]any) {
	if sp, _ := f["speaker"].(string); m.Name == "" && sp != "" {
		m.Name = sp
	}
	if id, _ := f["toolCallId"].(string); m.ToolCallID == "" && id != "" {
		m.ToolCallID = id
	}
	if len(m.ToolCalls) > 0 {
		return
	}
	var calls []any
	if one, ok := f["toolCall"].(map[string]any); ok {
		calls = append(calls, one)
	}
	more, _ := f["toolCalls"].([]any)
	for _, c := range append(calls, more...) {
		c, ok := c.(map[string]any)
		if !ok {
			continue
		}
		tc := ToolCall{Args: c["args"], Result: -1}
		tc.ID, _ = c["id"].(string)
		tc.Name, _ = c["name"].(string)
		m.ToolCalls = append(m.ToolCalls, tc)
	}
}

// content is a message's text: a string, or the text of its blocks.
func content(v any) (string, []any) {
	switch x := v.(type) {
	case string:
		return x, nil
	case []any:
		var parts []string
		for _, b := range x {
			switch blk := b.(type) {
			case string:
				parts = append(parts, blk)
			case map[string]any:
				if t, ok := blk["text"].(string); ok {
					parts = append(parts, t)
				}
			}
		}
		return strings.Join(parts, "\n"), x
	case nil:
		return "", nil
	}
	b, _ := json.Marshal(v)
	return string(b), nil
}

// toolCalls reads "tool_calls" ({id, name, args}), or the OpenAI form
// older messages kept in additional_kwargs ({id, function: {name,
// arguments}}).
func toolCalls(f map[string]any) []ToolCall {
	var out []ToolCall
	calls, _ := f["tool_calls"].([]any)
	for _, c := range calls {
		m, ok := c.(map[string]any)
		if !ok {
			continue
		}
		tc := ToolCall{Args: m["args"], Result: -1}
		tc.ID, _ = m["id"].(string)
		tc.Name, _ = m["name"].(string)
		out = append(out, tc)
	}
	if len(out) > 0 {
		return out
	}
	extra, _ := f["additional_kwargs"].(map[string]any)
	calls, _ = extra["tool_calls"].([]any)
	for _, c := range calls {
		m, ok := c.(map[string]any)
		if !ok {
			continue
		}
		fn, _ := m["function"].(map[string]any)
		tc := ToolCall{Args: fn["arguments"], Result: -1}
		tc.ID, _ = m["id"].(string)
		tc.Name, _ = fn["name"].(string)
		if s, ok := tc.Args.(string); ok { // OpenAI sends the arguments as JSON text
			var parsed any
			if json.Unmarshal([]byte(s), &parsed) == nil {
				tc.Args = parsed
			}
		}
		out = append(out, tc)
	}
	return out
}

// join links each tool message to the call it answers, and back.
func join(msgs []Message) {
	type call struct{ msg, call int }
	byID := map[string]call{}
	for i, m := range msgs {
		for j, tc := range m.ToolCalls {
			if tc.ID != "" {
				byID[tc.ID] = call{i, j}
			}
		}
		if m.Role != "tool" || m.ToolCallID == "" {
			continue
		}
		if c, ok := byID[m.ToolCallID]; ok {
			msgs[i].CallIndex = c.msg
			msgs[c.msg].ToolCalls[c.call].Result = i
		}
	}
}
