package tui

// The browser's conversation pane: the LangChain messages of the
// checkpoint under the cursor (its "messages" channel), an AI message's
// tool calls drawn joined to the tool messages that answer them (by
// tool_call_id), and a tool message pointing back at its call.

import (
	"fmt"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"rewind/store/browse"
	"rewind/themes"
	"rewind/tui/termtext"
)

// browseConv draws one checkpoint's messages.
type browseConv struct {
	theme *themes.Theme
	pane  linePane
	cp    *browse.Checkpoint
	// drawn is the checkpoint and width the lines were made for.
	drawnID string
	drawnW  int
}

func newBrowseConv(th *themes.Theme) *browseConv {
	return &browseConv{theme: th, pane: newLinePane()}
}

// KeyMap is the pane's scrolling keys.
func (c *browseConv) KeyMap() paneKeys { return c.pane.keys }

// SetSize sets the pane's size and redraws for the width.
func (c *browseConv) SetSize(w, h int) {
	c.pane.SetSize(w, h)
	if w != c.drawnW {
		c.draw(true)
	}
}

// SetCheckpoint shows cp (nil: not read yet).
func (c *browseConv) SetCheckpoint(cp *browse.Checkpoint) {
	id := ""
	if cp != nil {
		id = cp.ID
	}
	if c.cp != nil && cp != nil && id == c.drawnID && c.pane.w == c.drawnW {
		return
	}
	c.cp = cp
	c.draw(false)
}

// Update scrolls.
func (c *browseConv) Update(msg tea.Msg) bool {
	if k, ok := msg.(tea.KeyMsg); ok {
		return c.pane.Update(k)
	}
	return false
}

// View is the visible part.
func (c *browseConv) View() string { return c.pane.View() }

func (c *browseConv) draw(keep bool) {
	c.drawnW = c.pane.w
	if c.cp == nil {
		c.drawnID = ""
		c.pane.setLines([]string{c.theme.Muted.Render("reading…")}, false)
		return
	}
	c.drawnID = c.cp.ID
	c.pane.setLines(convLines(c.theme, *c.cp, c.pane.w), keep)
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
