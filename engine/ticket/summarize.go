package ticket

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"rewind/engine"
	"rewind/engine/model"
)

// Compaction thresholds (seed: compress when either line is crossed).
const (
	MaxMessages = 20
	MaxTokens   = 8000
	KeepRecent  = 6
)

// Event types of the summarizer.
const (
	EventContextMeasured  = "context.measured"
	EventContextCompacted = "context.compacted"
	EventCompactionFailed = "context.compaction_skipped"
)

// EstimateTokens is the conservative 1 character ≈ 1 token estimate:
// overestimating keeps the threshold able to fire.
func EstimateTokens(ms []Message) int {
	n := 0
	for _, m := range ms {
		n += utf8.RuneCountInString(m.Content)
	}
	return n
}

// NeedsSummary says why the history must be compacted, or "" when not.
func NeedsSummary(ms []Message) string {
	if len(ms) > MaxMessages {
		return fmt.Sprintf("count %d exceeds %d", len(ms), MaxMessages)
	}
	if t := EstimateTokens(ms); t > MaxTokens {
		return fmt.Sprintf("estimated %d tokens exceeds %d", t, MaxTokens)
	}
	return ""
}

// Cut is where the verbatim tail starts: the last KeepRecent messages, moved
// backwards so a tool result is never separated from its call. 0 means
// nothing can be compacted.
func Cut(ms []Message) int {
	cut := len(ms) - KeepRecent
	for cut > 0 && ms[cut].Role == RoleTool {
		cut--
	}
	if cut < 0 {
		return 0
	}
	return cut
}

// Transcript renders messages as "#index speaker: content" lines, so the
// summary can keep who said what at which step.
func Transcript(prev *Summary, ms []Message) string {
	var b strings.Builder
	if prev != nil {
		fmt.Fprintf(&b, "PREVIOUS SUMMARY of #%d–#%d (history v%d):\n%s\n", prev.From, prev.To, prev.HistoryVersion, prev.Text)
	}
	for _, m := range ms {
		fmt.Fprintf(&b, "#%d %s: %s\n", m.Index, m.Speaker, oneLine(m.Content))
	}
	return b.String()
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

const summarizerSystem = `You compress the early history of a multi-agent support conversation. Keep one line per message, starting with its original "#index speaker:" exactly as given, and keep every number, id, reference and requirement verbatim. Requirements from the user must stay distinguishable from executor output.`

// summarizer compacts long history into the summary field. Attachments and
// structured fields are never touched; a failed summary call skips
// compaction for this round and the run goes on.
func summarizer(ctx context.Context, nc *engine.NodeContext) ([]engine.Write, error) {
	s, err := Decode(nc.Values)
	if err != nil {
		return nil, err
	}
	tokens := EstimateTokens(s.Messages)
	trigger := NeedsSummary(s.Messages)
	nc.Emit(EventContextMeasured, map[string]any{"messages": len(s.Messages), "tokens": tokens, "maxMessages": MaxMessages, "maxTokens": MaxTokens, "trigger": trigger})
	if trigger == "" {
		return nil, nil
	}
	cut := Cut(s.Messages)
	if cut == 0 {
		return nil, nil
	}
	head, tail := s.Messages[:cut], s.Messages[cut:]
	resp, err := nc.Model.Complete(ctx, model.Request{Role: model.RoleSummarizer, System: summarizerSystem, Prompt: Transcript(s.Summary, head)})
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		nc.Emit(EventCompactionFailed, map[string]any{"trigger": trigger, "error": err.Error(), "historyVersion": s.HistoryVersion})
		return nil, nil
	}
	from := head[0].Index
	if s.Summary != nil && s.Summary.From > 0 {
		from = s.Summary.From
	}
	speakers := map[string]bool{}
	if s.Summary != nil {
		for _, sp := range s.Summary.Speakers {
			speakers[sp] = true
		}
	}
	sources := make([]int, len(head))
	for i, m := range head {
		sources[i] = m.Index
		speakers[m.Speaker] = true
	}
	spk := make([]string, 0, len(speakers))
	for sp := range speakers {
		spk = append(spk, sp)
	}
	sort.Strings(spk)
	version := s.HistoryVersion + 1
	sum := Summary{Text: strings.TrimSpace(resp.Text), From: from, To: head[len(head)-1].Index, Count: head[len(head)-1].Index - from + 1,
		Speakers: spk, HistoryVersion: version, Trigger: trigger}
	nc.Emit(EventContextCompacted, map[string]any{
		"historyVersionBefore": s.HistoryVersion, "historyVersionAfter": version,
		"trigger": trigger, "strategy": "indexed-transcript@v1",
		"sourceIndices": sources, "beforeMessages": len(s.Messages), "afterMessages": len(tail),
		"beforeTokens": tokens, "afterTokens": EstimateTokens(tail),
		"summaryId": fmt.Sprintf("summary:%s:v%d", nc.Thread, version),
	})
	return []engine.Write{
		engine.Replace("messages", tail),
		engine.Put("summary", sum),
		engine.Put("historyVersion", 1),
	}, nil
}
