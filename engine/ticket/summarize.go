package ticket

import (
	"context"
	"fmt"
	"rewind/engine/event"
	"strconv"
	"strings"
	"unicode"
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
	EventContextMeasured  = event.TypeContextMeasured
	EventContextCompacted = event.TypeContextCompacted
	// EventCompactionFailed: the summary call failed; compaction waits for
	// the next round.
	EventCompactionFailed = event.TypeCompactionSkipped
	// EventCompactionRejected: the candidate summary failed its check
	// (after one retry with the failures, when the model's answer was at
	// fault); its failures are named and compaction waits for the next
	// round.
	EventCompactionRejected = event.TypeCompactionRejected
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

// NeedsSummary says why the history must be compacted, or "" when not. The
// token estimate counts what the model is sent: the current summary, when
// given, plus the messages. (prev is optional so callers that hold only
// messages keep compiling; they undercount by the summary.)
func NeedsSummary(ms []Message, prev ...*Summary) string {
	sum := 0
	for _, p := range prev {
		sum += summaryChars(p)
	}
	return needsSummary(len(ms), sum, EstimateTokens(ms))
}

// needsSummary is NeedsSummary from the figures, for a caller that has
// them already.
func needsSummary(count, sum, msgTokens int) string {
	if count > MaxMessages {
		return fmt.Sprintf("count %d exceeds %d", count, MaxMessages)
	}
	t := sum + msgTokens
	if t <= MaxTokens {
		return ""
	}
	if sum > 0 {
		return fmt.Sprintf("estimated %d tokens (summary %d + messages %d) exceeds %d", t, sum, t-sum, MaxTokens)
	}
	return fmt.Sprintf("estimated %d tokens exceeds %d", t, MaxTokens)
}

// measureMessages is the number of messages and EstimateTokens of them,
// each message decoded once in this process (decodeMessage: the same
// messages are measured every turn until compaction). ok is false when one
// does not decode: Decode then says why.
func measureMessages(v engine.Values) (count, tokens int, ok bool) {
	items, err := v.Items("messages")
	if err != nil {
		return 0, 0, false
	}
	for _, it := range items {
		m, err := decodeMessage(it)
		if err != nil {
			return 0, 0, false
		}
		tokens += utf8.RuneCountInString(m.Content)
	}
	return len(items), tokens, true
}

// summaryChars is the summary's size in the same 1 char ≈ 1 token estimate.
func summaryChars(s *Summary) int {
	if s == nil {
		return 0
	}
	return utf8.RuneCountInString(s.Text)
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

// Transcript renders the newly compacted messages as "#index speaker:
// content" lines, so the summary can keep who said what at which step. The
// previous summary is not sent: code merges and folds it.
func Transcript(ms []Message) string {
	var b strings.Builder
	n := 0
	for _, m := range ms {
		n += len(m.Speaker) + len(m.Content) + 16
	}
	b.Grow(n)
	var num [20]byte
	for _, m := range ms {
		b.WriteByte('#')
		b.Write(strconv.AppendInt(num[:0], int64(m.Index), 10))
		b.WriteByte(' ')
		b.WriteString(cleanSpeaker(m.Speaker))
		b.WriteString(": ")
		b.WriteString(oneLine(m.Content))
		b.WriteByte('\n')
	}
	return b.String()
}

// oneLine collapses every run of white space into one space and trims the
// ends. Most text already reads so and is returned as it is.
func oneLine(s string) string {
	if isOneLine(s) {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}

// isOneLine says whether strings.Fields and a join would give s back: no
// white space but single ASCII spaces between words.
func isOneLine(s string) bool {
	if s == "" {
		return true
	}
	if s[0] == ' ' || s[len(s)-1] == ' ' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ':
			if s[i+1] == ' ' {
				return false
			}
		case c < utf8.RuneSelf:
			if asciiSpace[c] {
				return false
			}
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if unicode.IsSpace(r) {
				return false
			}
			i += size - 1
		}
	}
	return true
}

// asciiSpace are the ASCII bytes unicode.IsSpace accepts, but ' '.
var asciiSpace = [utf8.RuneSelf]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true}

// The "You compress" opening is how a chat-model test double tells this
// role apart; keep it.
const summarizerSystem = `You compress the newest part of a multi-agent support conversation. For every input line write exactly one output line, starting with its original "#index speaker:" exactly as given, then at most 20 words. Keep every number, id, date, amount and reference verbatim. Requirements from the user must stay distinguishable from executor output. Do not merge, skip or reorder lines.`

// summarizer compacts long history into the summary field. Attachments and
// structured fields are never touched. A failed summary call skips
// compaction for this round; a candidate summary that fails its check is
// asked for once more with the failures, then rejected for this round.
// Either way the run goes on.
func summarizer(ctx context.Context, nc *engine.NodeContext) ([]engine.Write, error) {
	// The compaction's event names the model that wrote the summary, so a
	// resume can check it is one this version accepts (CheckCompactions).
	name := nc.ModelName(model.RoleSummarizer)
	emit := func(p event.Payload) {
		if c, ok := p.(event.ContextCompacted); ok && c.Model == nil { // rewind's own summary names itself
			c.Model = new(name)
			p = c
		}
		nc.Emit(p)
	}
	return summarize(ctx, nc.Values, nc.Model, nc.Thread, emit)
}

// ExtractiveStrategy is the summary rewind writes itself, with no model,
// after the model's were refused twice in a row (SummaryRefusals): each
// compacted message's "#index speaker:", its first words and its facts
// verbatim, folded as any summary is. The context still shrinks when the
// model cannot summarize.
const ExtractiveStrategy = "extractive@v1"

// ExtractiveModel is what a compaction's event names as its model when
// rewind wrote the summary.
const ExtractiveModel = "rewind (extractive, no model)"

// WindowShare is how much of the context window the next request may take
// before the history is compacted: the rest is the task's, the tools' and
// the answer's.
const WindowShare = 0.75

// summarize is the summarizer's work, apart from the NodeContext so that a
// benchmark can run it.
func summarize(ctx context.Context, values engine.Values, m model.Model, thread string, emit func(event.Payload)) ([]engine.Write, error) {
	// Only the channels it reads: decoding is most of a quiet turn's cost,
	// and a quiet turn only measures the messages (measureMessages).
	s, err := Decode(values, "summary", "historyVersion", "summaryRefusals")
	count, msgTokens, measured := measureMessages(values)
	if err != nil || !measured {
		if s, err = Decode(values, "messages", "summary", "historyVersion", "summaryRefusals"); err != nil {
			return nil, err
		}
		count, msgTokens = len(s.Messages), EstimateTokens(s.Messages)
	}
	sumChars := summaryChars(s.Summary)
	trigger := needsSummary(count, sumChars, msgTokens)
	window := smallestWindow(m)
	if trigger == "" {
		trigger = windowTrigger(values, window, sumChars+msgTokens)
	}
	emit(event.ContextMeasured{Messages: count, Tokens: sumChars + msgTokens,
		MessageTokens: msgTokens, SummaryChars: sumChars, MaxMessages: MaxMessages, MaxTokens: MaxTokens, Window: window, Trigger: trigger})
	if trigger == "" {
		return nil, nil
	}
	if s.Messages == nil {
		if s, err = Decode(values, "messages", "summary", "historyVersion", "summaryRefusals"); err != nil {
			return nil, err
		}
	}
	cut := Cut(s.Messages)
	if cut == 0 {
		return nil, nil
	}
	head, tail := s.Messages[:cut], s.Messages[cut:]
	ledgered, err := Decode(values, "facts")
	if err != nil {
		return nil, err
	}
	facts := readLedger(ledgered.Facts)
	turn := 0 // the turn the previous compaction ended in, which head's first messages continue
	if s.Summary != nil {
		turn = s.Summary.Turn
	}
	factLines := facts.addLines(head, turn) // code's, from the messages: the model cannot drop a fact
	transcript := Transcript(head)
	var retried []string // the first answer's failures, when it was asked again
	// refused ends this round without a compaction by the model: the
	// refusals in a row are counted, and at the second rewind writes the
	// summary itself.
	refused := func() ([]engine.Write, error) {
		n := s.SummaryRefusals + 1
		if n < 2 {
			return []engine.Write{engine.Put("summaryRefusals", n)}, nil
		}
		sum, st, err := Compact(s.Summary, head, summaryAnswer(transcript))
		if err == nil {
			if failed := checkCandidate(head, tail, sum.Text, facts, turn); len(failed) > 0 {
				err = fmt.Errorf("%s", strings.Join(failed, "; "))
			}
		}
		if err != nil {
			// Not even rewind's own lines pass (the state is at fault):
			// wait for the next round, as after any refusal.
			emit(event.CompactionRejected{Trigger: trigger, Failures: []string{"rewind's own summary: " + err.Error()}, Attempts: 0, HistoryVersion: s.HistoryVersion, Strategy: ExtractiveStrategy})
			return []engine.Write{engine.Put("summaryRefusals", n)}, nil
		}
		return compacted(s, sum, st, head, tail, factLines, trigger, thread, sumChars, msgTokens, ExtractiveStrategy, n, retried, emit), nil
	}
	reject := func(failed []string, attempts int) ([]engine.Write, error) {
		emit(event.CompactionRejected{Trigger: trigger, Failures: failed, Attempts: attempts, HistoryVersion: s.HistoryVersion, RefusalsInARow: s.SummaryRefusals + 1,
			RetriedFor: retried})
		return refused()
	}
	var sum Summary
	var st CompactStats
	prompt := transcript
	for attempt := 1; ; attempt++ {
		resp, err := m.Complete(ctx, summarizerRequest(prompt))
		if err != nil {
			if ctx.Err() != nil {
				return nil, err
			}
			emit(event.CompactionSkipped{Trigger: trigger, Error: err.Error(), HistoryVersion: s.HistoryVersion, RefusalsInARow: s.SummaryRefusals + 1})
			return refused()
		}
		if failed := checkAnswer(head, resp.Text); len(failed) > 0 {
			if attempt == 1 {
				retried, prompt = failed, retryPrompt(transcript, failed)
				continue
			}
			return reject(failed, attempt)
		}
		// From here a failure is code's or the state's: another answer
		// would not change it.
		if sum, st, err = Compact(s.Summary, head, resp.Text); err != nil {
			return reject([]string{err.Error()}, attempt)
		}
		if failed := checkCandidate(head, tail, sum.Text, facts, turn); len(failed) > 0 {
			return reject(failed, attempt)
		}
		break
	}
	return compacted(s, sum, st, head, tail, factLines, trigger, thread, sumChars, msgTokens, "indexed-fold@v2", 0, retried, emit), nil
}

// compacted is the writes and the event of a compaction that passed.
func compacted(s State, sum Summary, st CompactStats, head, tail []Message, factLines []string, trigger, thread string, sumChars, msgTokens int, strategy string, refusals int, retried []string, emit func(event.Payload)) []engine.Write {
	version := s.HistoryVersion + 1
	sum.HistoryVersion, sum.Trigger = version, trigger
	sources := make([]int, len(head))
	for i, msg := range head {
		sources[i] = msg.Index
	}
	ev := event.ContextCompacted{
		HistoryVersionBefore: s.HistoryVersion, HistoryVersionAfter: version,
		Trigger: trigger, Strategy: strategy,
		SourceIndices: sources, BeforeMessages: len(s.Messages), AfterMessages: len(tail),
		BeforeTokens: sumChars + msgTokens, AfterTokens: summaryChars(&sum) + EstimateTokens(tail),
		SummaryCharsBefore: sumChars, SummaryChars: summaryChars(&sum), SummaryBudget: SummaryBudget,
		SummaryLines: st.Lines, Pinned: st.Pinned, Phases: st.Phases,
		Folded: st.Folded, Retired: st.Retired, FallbackLines: st.Fallback,
		FactLines: len(factLines),
		SummaryID: fmt.Sprintf("summary:%s:v%d", thread, version),
		Attempts:  1 + min(len(retried), 1), RetriedFor: retried,
	}
	if strategy == ExtractiveStrategy {
		ev.Model = new(ExtractiveModel)
		ev.Attempts = 0
		ev.AfterRefusals = refusals
	}
	emit(ev)
	ws := []engine.Write{
		engine.Replace("messages", tail),
		engine.Put("summary", sum),
		engine.Put("historyVersion", 1),
	}
	if len(factLines) > 0 {
		ws = append(ws, engine.Put("facts", factLines))
	}
	if s.SummaryRefusals != 0 {
		ws = append(ws, engine.Put("summaryRefusals", 0))
	}
	return ws
}

// smallestWindow is the smallest context window of the graph's roles: the
// history must fit the one that takes least.
func smallestWindow(m model.Model) int {
	w := 0
	for _, role := range []string{model.RolePlanner, model.RoleExecutor, model.RoleCritic, model.RoleReply} {
		if n := model.WindowOf(m, role); w == 0 || n < w {
			w = n
		}
	}
	return w
}

// windowTrigger says why the next request would pass WindowShare of the
// context window, or "". chars is the summary's and the messages' length:
// when that, the facts a model is shown (FactsShown) and the instructions
// and tools leave room, the request is not built.
func windowTrigger(v engine.Values, window, chars int) string {
	limit := int(float64(window) * WindowShare)
	if (chars+FactsShown)/4+2048 < limit {
		return ""
	}
	s, err := Decode(v, "scenario")
	if err != nil {
		return ""
	}
	// The largest request of a turn: an executor's, with the tools.
	req, err := executorRequest(v, s, ExecutorArgs{Task: Subtask{ID: "t-1", Goal: "the request"}})
	if err != nil {
		return ""
	}
	if n := req.TotalTokens(); n > limit {
		return fmt.Sprintf("the next request, ~%d tokens, would pass %d%% of the %d-token context window", n, int(WindowShare*100), window)
	}
	return ""
}

// summarizerRequest is the summarizer's request for a transcript (or a
// retry's prompt): the previous summary is not sent, code merges it. Its
// answer is not kept with the call (a kilobyte or two each compaction):
// what it became is the summary field, and a retry's reasons are in the
// compaction's event.
func summarizerRequest(prompt string) model.Request {
	return model.Simple(model.RoleSummarizer, summarizerSystem, prompt)
}

// RefusalLine is a refused compaction's event as a person reads it: the
// first failure, how many more, and what happens next.
func RefusalLine(d event.CompactionRejected) string {
	if len(d.Failures) == 0 {
		return "the candidate summary failed its check"
	}
	line := d.Failures[0]
	if n := len(d.Failures) - 1; n > 0 {
		line += fmt.Sprintf(" (and %d more)", n)
	}
	if d.RefusalsInARow == 1 {
		line += "; the history stays as it is this round, and a second refusal makes rewind summarize it without the model"
	}
	return line
}
