package langgraph_test

import (
	"reflect"
	"testing"

	"rewind/store/langgraph"
)

func TestMessagesNormalised(t *testing.T) {
	t.Parallel()
	in := []any{
		obj{"role": "system", "content": "be brief"},
		obj{"role": "user", "content": []any{obj{"type": "text", "text": "look"}, obj{"type": "image_url", "image_url": "u"}}},
		obj{"$type": "langchain_core.messages.ai.AIMessageChunk", "content": "", "id": "a1",
			"additional_kwargs": obj{"tool_calls": []any{obj{"id": "c9", "type": "function", "function": obj{"name": "lookup", "arguments": `{"k": 1}`}}}}},
		obj{"type": "tool", "content": "found", "tool_call_id": "c9", "name": "lookup"},
		obj{"$type": "langchain_core.messages.ChatMessage", "role": "critic", "content": "hmm"},
		obj{"$type": "langchain_core.messages.ToolMessage", "content": "orphan", "tool_call_id": "nope"},
	}
	msgs, ok := langgraph.Messages(in)
	if !ok {
		t.Fatal("not read as messages")
	}
	want := []langgraph.Message{
		{Index: 0, Role: "system", Content: "be brief", CallIndex: -1},
		{Index: 1, Role: "human", Content: "look", Blocks: in[1].(obj)["content"].([]any), CallIndex: -1},
		{Index: 2, ID: "a1", Role: "ai", CallIndex: -1, Type: "langchain_core.messages.ai.AIMessageChunk",
			ToolCalls: []langgraph.ToolCall{{ID: "c9", Name: "lookup", Args: map[string]any{"k": float64(1)}, Result: 3}}},
		{Index: 3, Role: "tool", Name: "lookup", Content: "found", ToolCallID: "c9", CallIndex: 2},
		{Index: 4, Role: "critic", Content: "hmm", CallIndex: -1, Type: "langchain_core.messages.ChatMessage"},
		{Index: 5, Role: "tool", Content: "orphan", ToolCallID: "nope", CallIndex: -1, Type: "langchain_core.messages.ToolMessage"},
	}
	if !reflect.DeepEqual(msgs, want) {
		t.Errorf("got\n%+v\nwant\n%+v", msgs, want)
	}
	for _, notMessages := range []any{
		"text", []any{"a", "b"}, []any{obj{"$type": "app.Note", "content": "x"}}, []any{obj{"content": "no role"}},
	} {
		if _, ok := langgraph.Messages(notMessages); ok {
			t.Errorf("%#v read as messages", notMessages)
		}
	}
}
