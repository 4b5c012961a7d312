package tui

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"rewind/engine"
	"rewind/themes"
)

// TestMessageListByShape: what the panes take for a conversation. A Go
// graph's own message words (speaker, toolCall, toolCallId) count, and
// their calls join their results; a list of anything else, or an empty
// one, is not a conversation.
func TestMessageListByShape(t *testing.T) {
	for _, tc := range []struct {
		name, raw string
		want      int
	}{
		{"role and content", `[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]`, 2},
		{"LangChain type", `[{"type":"human","content":"hi"}]`, 1},
		{"objects without a role", `[{"name":"a","content":"x"}]`, 0},
		{"a role without content", `[{"role":"user"}]`, 0},
		{"strings", `["a","b"]`, 0},
		{"empty", `[]`, 0},
		{"an object", `{"role":"user","content":"hi"}`, 0},
		{"not JSON", `[{"role":`, 0},
	} {
		msgs, ok := messageList(json.RawMessage(tc.raw))
		if ok != (tc.want > 0) || len(msgs) != tc.want {
			t.Errorf("%s: %d messages (ok %v), want %d", tc.name, len(msgs), ok, tc.want)
		}
	}
	raw := `[{"role":"assistant","speaker":"planner","content":"","toolCall":{"id":"c1","name":"lookup","args":{"q":"x"}}},
		{"role":"tool","speaker":"lookup","content":"found it","toolCallId":"c1"}]`
	msgs, ok := messageList(json.RawMessage(raw))
	if !ok || len(msgs) != 2 {
		t.Fatalf("rewind's message words: %v %v", msgs, ok)
	}
	if msgs[0].Name != "planner" || len(msgs[0].ToolCalls) != 1 || msgs[0].ToolCalls[0].Result != 1 || msgs[1].CallIndex != 0 {
		t.Fatalf("speaker or the call's join lost: %+v", msgs)
	}
	r := newRenderer(themes.Or(themes.Dark))
	lines := ansi.Strip(strings.Join(r.chatLines(msgs, 60, false, ""), "\n"))
	for _, want := range []string{"(planner)", "┌ lookup c1", "└→ #2 tool: found it"} {
		if !strings.Contains(lines, want) {
			t.Errorf("the conversation lacks %q:\n%s", want, lines)
		}
	}
}

// TestShapeStateFoldsAndUnescapes: a long value in the State pane wraps
// to the pane and folds until z; a Go graph's "a>b" (stored "a\u003eb")
// reads as written.
func TestShapeStateFoldsAndUnescapes(t *testing.T) {
	long, _ := json.Marshal(map[string]string{"text": strings.Repeat("word ", 4000)})
	d := &detail{cp: engine.Checkpoint{Values: engine.Values{"doc": long, "path": json.RawMessage(`"a\u003eb \u0026 \\u003e"`)}}}
	r := newRenderer(themes.Or(themes.Dark))
	folded := r.state(d, 50, false)
	text := ansi.Strip(strings.Join(folded, "\n"))
	if !strings.Contains(text, "z unfolds") {
		t.Errorf("a 20,000-character value is not folded:\n%s", text[:min(len(text), 400)])
	}
	if !strings.Contains(text, `path = "a>b & \\u003e"`) {
		t.Errorf("the string is not shown as written:\n%s", text[len(text)-min(len(text), 300):])
	}
	for _, l := range folded {
		if width(l) > 50 {
			t.Fatalf("line %q is wider than the pane", ansi.Strip(l))
		}
	}
	if unfolded := r.state(d, 50, true); len(unfolded) <= len(folded) {
		t.Errorf("unfolding shows no more: %d lines, folded %d", len(unfolded), len(folded))
	}
}
