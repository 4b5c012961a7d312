package ticketview

import (
	"fmt"
	"hash/fnv"
	"sort"
	"strings"

	"github.com/charmbracelet/lipgloss"

	"rewind/engine/ticket"
	"rewind/themes"
	"rewind/tui"
	"rewind/tui/draw"
	"rewind/tui/termtext"
)

func hashMessage(m ticket.Message) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\x00", m.Role, m.Speaker, m.Content, m.ToolCallID)
	if m.ToolCall != nil {
		fmt.Fprintf(h, "%s\x00%s\x00%s", m.ToolCall.ID, m.ToolCall.Name, m.ToolCall.Args)
	}
	return h.Sum64()
}

// speakerStyle is the colour of m's speaker.
func speakerStyle(th *themes.Theme, m ticket.Message) lipgloss.Style {
	sp := m.Speaker
	switch {
	case m.Role == ticket.RoleUser:
		return th.SpeakerUser
	case m.Role == ticket.RoleTool:
		return th.SpeakerTool
	case strings.HasPrefix(sp, "executor"):
		return th.SpeakerExecutor
	case sp == "critic":
		return th.SpeakerCritic
	case sp == "reply":
		return th.SpeakerReply
	}
	return th.SpeakerOther
}

// message renders one message. attached means it is a tool result directly
// under its call; note explains a result whose call is elsewhere.
func (x *extension) message(th *themes.Theme, m ticket.Message, w int, unfold, attached bool, note string) []string {
	k := msgKey{theme: th, index: m.Index, hash: hashMessage(m), width: w, unfold: unfold, attached: attached, note: note}
	x.mu.Lock()
	lines, ok := x.msgs[k]
	x.mu.Unlock()
	if ok {
		return lines
	}
	idx := th.Index.Render(fmt.Sprintf("#%d", m.Index))
	spk := speakerStyle(th, m).Render(draw.Cut(termtext.Line(m.Speaker), max(w/2, 12)))
	switch {
	case m.Role == ticket.RoleTool:
		head := th.ToolRail.Render("╰▶ ") + idx + " " + spk + th.Muted.Render(" result")
		if m.ToolCallID != "" {
			head += th.Muted.Render(" ⇠ " + termtext.Name(m.ToolCallID))
		}
		if !attached && note != "" {
			head += " " + th.Warning.Render(note)
		}
		lines = append(lines, draw.Cut(head, w))
		lines = append(lines, draw.Body(th, m.Content, w, unfold, "   │ ", th.ToolRail, th.Text)...)
	case m.ToolCall != nil:
		head := idx + " " + spk + " " + th.ToolCall.Render("⚙ tool call")
		lines = append(lines, draw.Cut(head, w))
		call := fmt.Sprintf("%s(%s)", m.ToolCall.Name, string(m.ToolCall.Args))
		if m.ToolCall.ID != "" {
			call += "  [" + m.ToolCall.ID + "]"
		}
		lines = append(lines, draw.Body(th, call, w, unfold, "   ┃ ", th.ToolRail, th.ToolCall)...)
	default:
		lines = append(lines, draw.Cut(idx+" "+spk, w))
		lines = append(lines, draw.Body(th, m.Content, w, unfold, "   ", th.Text, th.Text)...)
	}
	x.mu.Lock()
	if len(x.msgs) > 4096 {
		x.msgs = map[msgKey][]string{}
	}
	x.msgs[k] = lines
	x.mu.Unlock()
	return lines
}

// conversation draws the summary panel, a compaction notice, and the
// verbatim tail with original indices and speakers; tool calls and their
// results are drawn joined.
func (x *extension) conversation(sh tui.Shown) []string {
	th, w, unfold := sh.Theme, sh.Width, sh.Unfold
	if sh.Err != nil {
		return append([]string{th.Error.Render("this checkpoint's state does not decode:")}, draw.Wrap(sh.Err.Error(), w)...)
	}
	s := stateOf(sh.Value)
	var out []string
	if s.Summary != nil && unfold {
		out = append(out, summary(th, s.Summary, w, unfold)...)
	}
	if c := compactionOf(sh); c != nil {
		text := fmt.Sprintf("⇣ compacted at this checkpoint: %s moved into the summary (history v%d → v%d, %d → %d messages); the tail below is verbatim",
			indexSpan(c.moved), c.fromVersion, c.toVersion, c.before, c.after)
		for _, l := range draw.Wrap(text, w) {
			out = append(out, th.Notice.Render(l))
		}
	}
	if len(s.Messages) == 0 {
		if s.Summary == nil {
			out = append(out, th.Muted.Render("(no messages at this checkpoint)"))
		} else {
			out = append(out, draw.Rule(th, "verbatim tail · empty", w))
		}
		return out
	}
	out = append(out, draw.Rule(th, convTitle(s.Messages[0].Index, s.Messages[len(s.Messages)-1].Index, len(s.Messages), s.Summary != nil), w))
	calls := map[string]int{}
	for i, m := range s.Messages {
		if m.ToolCall != nil && m.ToolCall.ID != "" {
			calls[m.ToolCall.ID] = i
		}
	}
	for i, m := range s.Messages {
		attached, note := false, ""
		if m.Role == ticket.RoleTool {
			j, ok := calls[m.ToolCallID]
			switch {
			case ok && j == i-1:
				attached = true
			case ok:
				note = fmt.Sprintf("(call at #%d)", s.Messages[j].Index)
			case m.ToolCallID != "" && s.Summary != nil:
				note = "(its call is in the summary)"
			default:
				note = "(no matching call)"
			}
		}
		if i > 0 && !attached {
			out = append(out, "")
		}
		out = append(out, x.message(th, m, w, unfold, attached, note)...)
	}
	return out
}

type compactionInfo struct {
	fromVersion, toVersion int
	moved                  []int // indices that left the verbatim tail
	before, after          int
}

// compactionOf tells what moved into the summary at this checkpoint.
func compactionOf(sh tui.Shown) *compactionInfo {
	s, ps := stateOf(sh.Value), parentStateOf(sh)
	if sh.Err != nil || ps == nil || s.HistoryVersion <= ps.HistoryVersion {
		return nil
	}
	kept := map[int]bool{}
	for _, m := range s.Messages {
		kept[m.Index] = true
	}
	ci := &compactionInfo{fromVersion: ps.HistoryVersion, toVersion: s.HistoryVersion,
		before: len(ps.Messages), after: len(s.Messages)}
	for _, m := range ps.Messages {
		if !kept[m.Index] {
			ci.moved = append(ci.moved, m.Index)
		}
	}
	return ci
}

// summary is the summary's box (z: unfolded).
func summary(th *themes.Theme, sm *ticket.Summary, w int, unfold bool) []string {
	title := fmt.Sprintf("Summary · #%d–#%d · %d msgs · history v%d", sm.From, sm.To, sm.Count, sm.HistoryVersion)
	inner := max(w-4, 8)
	var body []string
	for _, l := range draw.Wrap(sm.Text, inner) {
		body = append(body, th.SummaryText.Render(l))
	}
	limit := 8
	if unfold {
		limit = draw.UnfoldedLines
	}
	if len(body) > limit {
		hidden := len(body) - (limit - 1)
		body = append(body[:limit-1], th.Fold.Render(fmt.Sprintf("… %d more lines · z unfolds", hidden)))
	}
	if len(sm.Speakers) > 0 {
		sp := append([]string(nil), sm.Speakers...)
		sort.Strings(sp)
		for _, l := range draw.Wrap("speakers: "+strings.Join(sp, ", "), inner) {
			body = append(body, th.Muted.Render(l))
		}
	}
	if sm.Trigger != "" {
		for _, l := range draw.Wrap("trigger: "+sm.Trigger, inner) {
			body = append(body, th.Muted.Render(l))
		}
	}
	padded := make([]string, len(body))
	for i, l := range body {
		padded[i] = " " + l
	}
	box := draw.Frame(title, padded, w, len(padded)+2, false, th.SummaryBorder, th.SummaryTitle)
	return strings.Split(box, "\n")
}

// indexSpan prints message indices as "#1–#14" (or a list when not a run).
func indexSpan(ix []int) string {
	if len(ix) == 0 {
		return "nothing"
	}
	contiguous := true
	for i := 1; i < len(ix); i++ {
		if ix[i] != ix[i-1]+1 {
			contiguous = false
			break
		}
	}
	if len(ix) == 1 {
		return fmt.Sprintf("#%d", ix[0])
	}
	if contiguous {
		return fmt.Sprintf("#%d–#%d", ix[0], ix[len(ix)-1])
	}
	parts := make([]string, 0, min(len(ix), 6))
	for i, x := range ix {
		if i == 5 {
			parts = append(parts, "…")
			break
		}
		parts = append(parts, fmt.Sprintf("#%d", x))
	}
	return strings.Join(parts, ", ")
}

// convTitle heads the conversation: n messages, #first to #last, the
// verbatim tail when a summary covers what came before.
func convTitle(first, last, n int, summarized bool) string {
	msgs := draw.Plural(n, "message", "messages")
	if !summarized {
		return "conversation · " + msgs
	}
	span := fmt.Sprintf("#%d–#%d", first, last)
	if first == last {
		span = fmt.Sprintf("#%d", first)
	}
	return "verbatim tail · " + span + " · " + msgs
}
