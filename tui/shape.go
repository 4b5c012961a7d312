package tui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strings"

	"rewind/engine"
	"rewind/store/browse"
	"rewind/tui/termtext"
)

// Any graph's checkpoint shown by the shape of its channels (no
// Extension): a message list (items with a role and content, a speaker
// or name, tool calls) as a conversation, anything else as JSON.

// messageList reads raw as a message list: a non-empty JSON list whose
// every item has a role (or a LangChain type) and content. An empty list
// has no shape to tell by.
func messageList(raw json.RawMessage) ([]browse.Message, bool) {
	if len(raw) == 0 || raw[0] != '[' {
		return nil, false
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil, false
	}
	msgs, ok := browse.Messages(v)
	if !ok || len(msgs) == 0 {
		return nil, false
	}
	return msgs, true
}

// conversationOf is v's first channel, by name, that holds a message
// list.
func conversationOf(v engine.Values) (string, []browse.Message, bool) {
	for _, name := range slices.Sorted(maps.Keys(v)) {
		if msgs, ok := messageList(v[name]); ok {
			return name, msgs, true
		}
	}
	return "", nil, false
}

// isInput is whether a message is a person's (or the caller's) input.
func isInput(m browse.Message) bool { return m.Role == "human" || m.Role == "user" }

// shapeInput is the newest input message of v's conversation; with none,
// what the input that made cp wrote ("trail: go"); ok false when neither.
func shapeInput(cp engine.Checkpoint) (string, bool) {
	if _, msgs, ok := conversationOf(cp.Values); ok {
		for i := len(msgs) - 1; i >= 0; i-- {
			if isInput(msgs[i]) {
				return msgs[i].Content, true
			}
		}
	}
	var parts []string
	for _, g := range cp.Applied {
		if g.Task != "" { // a node's writes, not the input's
			continue
		}
		for _, w := range g.Writes {
			parts = append(parts, w.Channel+": "+plainValue(w.Value))
		}
	}
	return strings.Join(parts, " · "), len(parts) > 0
}

// shapeLast is v's conversation's newest input, else its newest message.
func shapeLast(v engine.Values) (string, bool) {
	_, msgs, ok := conversationOf(v)
	if !ok {
		return "", false
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		if isInput(msgs[i]) {
			return msgs[i].Content, true
		}
	}
	return msgs[len(msgs)-1].Content, true
}

// plainValue is a JSON value on one line: a string unquoted.
func plainValue(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// shapeState is every channel of the checkpoint, by name: a message list
// as a conversation, anything else as JSON; changed channels marked
// against the parent.
func (r *renderer) shapeState(d *detail, w int, unfold bool) []string {
	th := r.theme
	names := slices.Sorted(maps.Keys(d.cp.Values))
	if len(names) == 0 {
		return []string{th.Muted.Render("no channel holds a value at this checkpoint")}
	}
	changed := map[string]bool{}
	for _, cd := range d.diff {
		changed[cd.Channel] = d.parent != nil
	}
	var out []string
	for i, name := range names {
		if i > 0 {
			out = append(out, "")
		}
		mark := ""
		if changed[name] {
			mark = th.Warning.Render(" • changed")
		}
		raw := d.cp.Values[name]
		if msgs, ok := messageList(raw); ok {
			head := th.Strong.Render(" "+termtext.Line(name)) + mark + th.Muted.Render(" · "+plural(len(msgs), "message", "messages"))
			out = append(out, trunc(head, w))
			out = append(out, r.chatLines(msgs, w, unfold, "   ")...)
			continue
		}
		out = append(out, r.shapeValue(name, mark, raw, w, unfold)...)
	}
	return out
}

// shapeValue is name = raw: a plain value on the name's line when it
// fits, else (and a list or an object always) as JSON under it, wrapped
// and folded.
func (r *renderer) shapeValue(name, mark string, raw json.RawMessage, w int, unfold bool) []string {
	th := r.theme
	raw = unescapeHTML(raw)
	head := th.Strong.Render(" "+termtext.Line(name)) + mark
	if len(raw) > 0 && raw[0] != '[' && raw[0] != '{' {
		if one := head + th.Muted.Render(" = ") + th.Text.Render(termtext.Line(string(raw))); width(one) <= w {
			return []string{one}
		}
	}
	return append([]string{trunc(head, w)}, r.json(raw, w, "   ", unfold)...)
}

// unescapeHTML undoes encoding/json's HTML escapes (\u003c, \u003e,
// \u0026): a Go graph's "a>b" is stored as "a\u003eb", and shown as
// written.
func unescapeHTML(raw json.RawMessage) json.RawMessage {
	if !bytes.Contains(raw, []byte(`\u00`)) {
		return raw
	}
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' || i+1 >= len(raw) {
			out = append(out, raw[i])
			continue
		}
		if raw[i+1] == 'u' && i+6 <= len(raw) {
			switch string(raw[i+2 : i+6]) {
			case "003c", "003C":
				out, i = append(out, '<'), i+5
				continue
			case "003e", "003E":
				out, i = append(out, '>'), i+5
				continue
			case "0026":
				out, i = append(out, '&'), i+5
				continue
			}
		}
		out, i = append(out, raw[i], raw[i+1]), i+1 // an escape kept whole
	}
	return out
}

// shapeConversation is the first channel holding a message list, or a
// line saying there is none.
func (r *renderer) shapeConversation(d *detail, w int, unfold bool) []string {
	th := r.theme
	name, msgs, ok := conversationOf(d.cp.Values)
	if !ok {
		return append(wrapStyled(th.Muted, "this graph keeps no conversation at this checkpoint: no channel holds a message list (items with a role and content).", w),
			wrapStyled(th.Muted, "Its channels are in the State pane (2).", w)...)
	}
	out := []string{rule(th, termtext.Line(name)+" · "+plural(len(msgs), "message", "messages"), w)}
	return append(out, r.chatLines(msgs, w, unfold, "")...)
}

// chatLines draws a message list: each message's role (and speaker),
// its text wrapped and folded, its tool calls joined to their results.
func (r *renderer) chatLines(msgs []browse.Message, w int, unfold bool, indent string) []string {
	inner := max(w-width(indent), 8)
	var out []string
	for i, m := range msgs {
		if i > 0 {
			out = append(out, "")
		}
		k := chatKey{hash: chatHash(m, msgs, indent), w: w, unfold: unfold}
		lines, ok := r.chatCache[k]
		if !ok {
			lines = r.chatMessage(m, msgs, w, unfold, indent, inner)
			if len(r.chatCache) > 4096 {
				r.chatCache = map[chatKey][]string{}
			}
			r.chatCache[k] = lines
		}
		out = append(out, lines...)
	}
	return out
}

// chatKey is a message drawn by chatLines: the scrub from a checkpoint
// to the next draws only the messages it added.
type chatKey struct {
	hash   uint64
	w      int
	unfold bool
}

// chatHash is all chatMessage draws m from: m, its calls' results, the
// indent.
func chatHash(m browse.Message, msgs []browse.Message, indent string) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s\x00%d\x00%s\x00%s\x00%s\x00%s\x00%d\x00", indent, m.Index, m.Role, m.Name, m.Content, m.ToolCallID, m.CallIndex)
	for _, tc := range m.ToolCalls {
		fmt.Fprintf(h, "%s\x00%s\x00%s\x00%d\x00", tc.ID, tc.Name, oneLine(tc.Args), tc.Result)
		if tc.Result >= 0 && tc.Result < len(msgs) {
			res := msgs[tc.Result]
			fmt.Fprintf(h, "%d\x00%s\x00%s\x00", res.Index, res.Role, firstLineOf(res.Content))
		}
	}
	return h.Sum64()
}

// chatMessage draws one message of msgs.
func (r *renderer) chatMessage(m browse.Message, msgs []browse.Message, w int, unfold bool, indent string, inner int) []string {
	th := r.theme
	out := []string{indent + trunc(convHeader(th, m, msgs), inner)}
	if m.Content != "" || len(m.ToolCalls) == 0 {
		text := m.Content
		if text == "" {
			text = "(empty)"
		}
		out = append(out, r.body(text, w, unfold, indent+"   ", th.Text, th.Text)...)
	}
	for j, tc := range m.ToolCalls {
		call := indent + "   " + th.ToolRail.Render("┌ ") + th.ToolCall.Render(termtext.Line(tc.Name)) +
			th.Muted.Render(" "+termtext.Name(tc.ID)+" ") + oneLine(tc.Args)
		out = append(out, trunc(call, w))
		rail := "└→ "
		if j < len(m.ToolCalls)-1 {
			rail = "├→ "
		}
		res := th.Warning.Render("no result yet")
		if tc.Result >= 0 && tc.Result < len(msgs) {
			res = th.SpeakerTool.Render(fmt.Sprintf("#%d %s", msgs[tc.Result].Index+1, termtext.Line(msgs[tc.Result].Role))) + ": " +
				termtext.Line(firstLineOf(msgs[tc.Result].Content))
		}
		out = append(out, trunc(indent+"   "+th.ToolRail.Render(rail)+res, w))
	}
	return out
}
