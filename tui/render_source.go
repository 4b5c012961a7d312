package tui

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"rewind/store/browse"
	"rewind/themes"
	"rewind/tui/termtext"
)

// What the panes show of a checkpoint a read-only source gives (a
// LangGraph database: detail.src): the conversation when the state holds
// a message list, else its channels as JSON; the channels in the State
// pane; its listing and the writes of the superstep from it in the
// inspector.

// stateOf is the State pane's lines for d, of either kind.
func (r *renderer) stateOf(d *detail, w int, unfold bool) []string {
	if d != nil && d.src != nil {
		return r.sourceState(d.src, w, unfold)
	}
	return r.state(d, w, unfold)
}

// inspectorOf is the inspector's lines for d, of either kind.
func (r *renderer) inspectorOf(d *detail, w int, unfold bool) []string {
	if d != nil && d.src != nil {
		return r.sourceInspector(d.src, w, unfold)
	}
	return r.inspector(d, w, unfold)
}

// hasConversation is whether cp's messages channel holds LangChain
// messages.
func hasConversation(cp browse.Checkpoint) bool {
	v, ok := cp.Value("messages")
	if !ok {
		return false
	}
	_, ok = browse.Messages(v)
	return ok
}

func (r *renderer) sourceConversation(sd *sourceDetail, w int, unfold bool) []string {
	if hasConversation(sd.cp) {
		return convLines(r.theme, sd.cp, w)
	}
	head := r.theme.Muted.Render("no message list at this checkpoint: its channels, as JSON")
	return append([]string{head, ""}, r.sourceState(sd, w, unfold)...)
}

// sourceState is the graph's channels (not LangGraph's bookkeeping ones),
// each as JSON under its name.
func (r *renderer) sourceState(sd *sourceDetail, w int, unfold bool) []string {
	th := r.theme
	var out []string
	if sd.cp.Damaged != "" {
		out = append(out, wrapStyled(th.Error, "read in part: "+termtext.Line(sd.cp.Damaged), w)...)
	}
	if st := sd.cp.Stored; st != nil {
		out = append(out, wrapStyled(th.Muted, st.Head(), w)...)
	}
	state := sd.cp.State()
	names := slices.Sorted(maps.Keys(state))
	if len(names) == 0 {
		out = append(out, th.Muted.Render("no channel holds a value at this checkpoint"))
	}
	for _, name := range names {
		out = append(out, r.sourceValue(" "+termtext.Line(name), state[name], "", w, unfold)...)
	}
	out = append(out, notStoredLines(th, sd.cp, w)...)
	return append(out, r.storedLines(sd.cp.Stored, w, unfold)...)
}

// sourceValue is label = raw: a plain value on its line, as rewind show
// prints it, a list or an object as JSON under it; say (a DeltaChannel
// snapshot's wording) goes before the value.
func (r *renderer) sourceValue(label string, raw json.RawMessage, say string, w int, unfold bool) []string {
	th := r.theme
	head := th.Strong.Render(label) + th.Muted.Render(" = ")
	if say != "" {
		head += th.Muted.Render(say + ":")
	}
	if len(raw) == 0 || raw[0] != '[' && raw[0] != '{' {
		if say != "" {
			head += " "
		}
		return []string{head + th.Text.Render(termtext.Line(string(raw)))}
	}
	return append([]string{head}, r.json(raw, w, "   ", unfold)...)
}

// notStoredLines is the "not stored" row of a checkpoint whose saver
// stores a channel from its first write on, worded as rewind show's NOT
// STORED section (browse.DescribeAbsent): what LangGraph may show there
// that no row holds.
func notStoredLines(th *themes.Theme, cp browse.Checkpoint, w int) []string {
	if !cp.FromFirstWrite {
		return nil
	}
	head := "not stored"
	if len(cp.Absent) > 0 {
		head = fmt.Sprintf("not stored (%d)", len(cp.Absent))
	}
	out := []string{"", th.Heading.Render(head)}
	return append(out, wrapText(th.Muted.Render(termtext.Line(browse.DescribeAbsent(cp.Absent))), w, "  ")...)
}

// storedLines is the "as stored" row: what the database holds where the
// state above applies pending writes or rebuilds DeltaChannels, each
// channel worded as rewind show's STORED section (browse.DescribeStored).
func (r *renderer) storedLines(st *browse.Stored, w int, unfold bool) []string {
	if st == nil {
		return nil
	}
	th := r.theme
	out := []string{"", th.Heading.Render("as stored")}
	for _, ch := range st.Channels {
		name := termtext.Line(ch.Name)
		say := browse.DescribeStored(ch, lgShortID)
		if !ch.Held { // its wrapped lines under the name, as a value's
			lines := wrapText(th.Strong.Render(name)+th.Muted.Render(": "+termtext.Line(say)), w, "   ")
			lines[0] = " " + strings.TrimPrefix(lines[0], "   ")
			out = append(out, lines...)
			continue
		}
		name = " " + name
		if !ch.Delta {
			say = ""
		}
		raw, err := json.Marshal(ch.Value)
		if err != nil {
			raw = json.RawMessage(fmt.Sprintf("%q", fmt.Sprint(ch.Value)))
		}
		out = append(out, r.sourceValue(name, raw, say, w, unfold)...)
	}
	if st.Next != nil {
		names := make([]string, len(st.Next))
		for i, t := range st.Next {
			names[i] = termtext.Name(t.Node)
		}
		out = append(out, th.Strong.Render(" next")+th.Muted.Render(": ")+th.Text.Render(strings.Join(names, ", ")))
	}
	return out
}

// sourceInspector is the checkpoint's listing, the writes of its
// superstep, then the diff against its parent in its chain.
func (r *renderer) sourceInspector(sd *sourceDetail, w int, unfold bool) []string {
	th := r.theme
	cp := sd.cp
	out := []string{th.Heading.Render("Checkpoint @"+lgShortID(cp.ID)) +
		th.Muted.Render(fmt.Sprintf("  step %d · %s", cp.Step, termtext.Line(cp.Source)))}
	kv := func(k, v string) {
		for i, l := range wrap(v, max(w-11, 8)) {
			label := "           "
			if i == 0 {
				label = fmt.Sprintf("  %-8s ", k)
			}
			out = append(out, th.Muted.Render(label)+th.Text.Render(l))
		}
	}
	kv("id", termtext.Line(cp.ID))
	if cp.Parent != "" {
		kv("parent", "@"+lgShortID(cp.Parent))
	}
	if !cp.CreatedAt.IsZero() {
		kv("created", cp.CreatedAt.UTC().Format("2006-01-02 15:04:05"))
	}
	if len(cp.WrittenBy) > 0 {
		kv("wrote", termtext.Line(strings.Join(cp.WrittenBy, ", ")))
	}
	next := browse.DescribeNext(cp.Next) // "—" when nothing is due
	if len(cp.Next) > 0 {
		next = "→ " + next
	}
	kv("next", termtext.Line(next))
	out = append(out, "", th.Heading.Render("Writes of the superstep from here"))
	out = append(out, writesLines(th, sd.writes, w)...)
	out = append(out, "")
	switch {
	case cp.Parent == "":
		return append(out, th.Heading.Render("Diff")+th.Muted.Render(" · the first checkpoint of this chain: no parent to diff against"))
	case sd.diffErr != "":
		return append(out, th.Heading.Render("Diff")+th.Error.Render(" · the parent @"+lgShortID(cp.Parent)+" does not read: "+termtext.Line(sd.diffErr)))
	}
	out = append(out, th.Heading.Render("Diff against parent @"+lgShortID(cp.Parent))+th.Muted.Render(" · "+plural(len(sd.diff), "channel", "channels")+" changed"))
	if len(sd.diff) == 0 {
		out = append(out, th.Muted.Render("  no channel changed"))
	}
	return append(out, r.diffLines(sd.diff, w, unfold)...)
}

// convLines draws the messages of cp at width w.
func convLines(th *themes.Theme, cp browse.Checkpoint, w int) []string {
	v, has := cp.Value("messages")
	if !has {
		return []string{th.Muted.Render("no messages channel at this checkpoint: this graph keeps no conversation here."),
			th.Muted.Render("Its channels are in the state pane (2).")}
	}
	msgs, ok := browse.Messages(v)
	if !ok {
		return []string{th.Muted.Render("the messages channel holds something other than LangChain messages:"),
			th.Muted.Render("see it in the state pane (2).")}
	}
	if len(msgs) == 0 {
		return []string{th.Muted.Render("no messages yet")}
	}
	var out []string
	for _, m := range msgs {
		out = append(out, convHeader(th, m, msgs))
		if m.Content != "" || len(m.ToolCalls) == 0 {
			text := termtext.Text(m.Content)
			if text == "" {
				text = th.Muted.Render("(empty)")
			}
			out = append(out, wrapText(text, w, "   ")...)
		}
		for i, tc := range m.ToolCalls {
			out = append(out, "   "+th.ToolRail.Render("┌ ")+th.ToolCall.Render(termtext.Line(tc.Name))+
				th.Muted.Render(" "+termtext.Name(tc.ID)+" ")+oneLine(tc.Args))
			rail := "└→ "
			if i < len(m.ToolCalls)-1 {
				rail = "├→ "
			}
			if tc.Result >= 0 && tc.Result < len(msgs) {
				res := msgs[tc.Result]
				out = append(out, "   "+th.ToolRail.Render(rail)+th.SpeakerTool.Render(fmt.Sprintf("#%d tool", res.Index+1))+": "+
					termtext.Line(firstLineOf(res.Content)))
			} else {
				out = append(out, "   "+th.ToolRail.Render(rail)+th.Warning.Render("no result yet"))
			}
		}
	}
	return out
}

func convHeader(th *themes.Theme, m browse.Message, all []browse.Message) string {
	style := th.SpeakerOther
	switch m.Role {
	case "human":
		style = th.SpeakerUser
	case "ai":
		style = th.SpeakerReply
	case "tool":
		style = th.SpeakerTool
	}
	h := th.Index.Render(fmt.Sprintf("#%d ", m.Index+1)) + style.Render(termtext.Line(m.Role))
	if m.Name != "" {
		h += th.Muted.Render(" (" + termtext.Line(m.Name) + ")")
	}
	if m.ToolCallID != "" {
		back := th.Warning.Render(" (no call in the channel)")
		if m.CallIndex >= 0 && m.CallIndex < len(all) {
			back = fmt.Sprintf(" of #%d", m.CallIndex+1)
		}
		h += th.ToolRail.Render(" ← ") + th.Muted.Render(termtext.Name(m.ToolCallID)+back)
	}
	if n := len(m.ToolCalls); n > 0 {
		h += th.Muted.Render(fmt.Sprintf(" · %d tool call(s)", n))
	}
	return h
}

func firstLineOf(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

// writesLines draws ws at width w.
func writesLines(th *themes.Theme, ws []browse.TaskWrites, w int) []string {
	if len(ws) == 0 {
		return []string{th.Muted.Render("no writes stored for the superstep from this checkpoint")}
	}
	var out []string
	for _, tw := range ws {
		who := termtext.Name(tw.Who())
		head := th.Strong.Render(who) + th.Muted.Render(" task "+lgShortID(tw.Task)+fmt.Sprintf(" · %d write(s)", len(tw.Writes)))
		switch {
		case tw.Error != "":
			head = th.Error.Render("✗ ") + head
		case len(tw.Interrupts) > 0:
			head = th.Paused.Render("⏸ ") + head
		default:
			head = th.Success.Render("✓ ") + head
		}
		out = append(out, head)
		for _, wr := range tw.Writes {
			ch := termtext.Line(wr.Channel)
			if wr.Kind != "" {
				ch = th.Warning.Render("["+termtext.Line(wr.Kind)+"]") + " " + ch
			}
			out = append(out, fmt.Sprintf("  %3d %s = %s", wr.Idx, ch, oneLine(wr.Value)))
		}
		if tw.Error != "" {
			out = append(out, wrapText(th.Error.Render("error: ")+termtext.Line(tw.Error), w, "    ")...)
		}
		for _, in := range tw.Interrupts {
			out = append(out, "    "+th.Paused.Render("interrupt")+" "+th.Muted.Render(lgShortID(in.ID))+": "+oneLine(in.Value))
		}
	}
	return out
}

// oneLine is a value as compact JSON on one line.
func oneLine(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return termtext.Line(fmt.Sprint(v))
	}
	return termtext.Line(string(b))
}

// wrapText breaks sanitized text into lines of at most w cells, each
// prefixed with indent.
func wrapText(s string, w int, indent string) []string {
	var out []string
	width := max(8, w-ansi.StringWidth(indent))
	for _, para := range strings.Split(s, "\n") {
		wrapped := ansi.Wrap(para, width, "")
		for _, l := range strings.Split(wrapped, "\n") {
			out = append(out, indent+l)
		}
	}
	return out
}
