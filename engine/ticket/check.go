package ticket

import (
	"fmt"
	"strconv"
	"strings"
)

// The check a summary passes before it is stored (seed 003: candidate →
// check budget, sources and tool trace → save). It has two parts:
//
//   - checkAnswer reads what the model wrote: one "#index speaker:" line
//     for every index it was given and none other, with each message's
//     facts verbatim. A failure here is the model's, so the model is asked
//     again with the failures.
//   - checkCandidate reads what code assembled from it (Compact) and the
//     facts ledger with the lines the compaction appends: within the
//     budget, every index covered once (CheckSummary, inside Compact),
//     every pinned line that was not retired into a phase keeping its
//     facts, every pinned fact of the head in the ledger (a line may fold,
//     a fact may not), and no tool result in the kept tail whose call was
//     summarized. A failure here is code's or the state's: asking the
//     model again cannot fix it.

// maxFailures bounds the failures reported, so a hopeless answer gives a
// short list the model (and a person reading the event) can act on.
const maxFailures = 12

// failures collects check failures up to maxFailures, then counts.
type failures struct {
	list []string
	more int
}

func (f *failures) add(format string, a ...any) {
	if len(f.list) < maxFailures {
		f.list = append(f.list, fmt.Sprintf(format, a...))
		return
	}
	f.more++
}

func (f *failures) out() []string {
	if f.more > 0 {
		return append(f.list, fmt.Sprintf("… and %d more", f.more))
	}
	return f.list
}

// checkAnswer lists what is wrong with the summarizer's answer for head;
// none means every line is usable as it is.
func checkAnswer(head []Message, answer string) []string {
	type given struct {
		speaker, content string
		said             bool
	}
	byIndex := make(map[int]*given, len(head))
	for _, m := range head {
		byIndex[m.Index] = &given{speaker: cleanSpeaker(m.Speaker), content: oneLine(m.Content)}
	}
	var f failures
	n := 0
	for rest := answer; rest != ""; {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		n++
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "```") {
			continue // blank lines and a code fence around the lines carry nothing
		}
		if h, ok := readLineHead(strings.TrimLeft(trimmed, "-*• ")); ok && h.phase {
			f.add("line %d merges #%d–#%d: write one line per input line", n, h.from, h.to)
			continue
		}
		i, sp, text, ok := readAnswerLine(line)
		if !ok {
			f.add("line %d does not start with \"#index speaker:\": %q", n, clipTo(oneLine(line), 40))
			continue
		}
		g := byIndex[i]
		switch {
		case g == nil:
			f.add("line %d is for #%d, which was not given", n, i)
			continue
		case g.said:
			f.add("#%d has more than one line", i)
			continue
		}
		g.said = true
		if sp = strings.TrimSpace(sp); !strings.EqualFold(sp, g.speaker) {
			f.add("#%d names speaker %q, given as %q", i, clipTo(sp, 40), g.speaker)
		}
		if text == "" {
			f.add("#%d has no text", i)
			continue
		}
		var lost []string
		for _, fact := range facts(g.content) {
			if !strings.Contains(text, fact) {
				lost = append(lost, fact)
			}
		}
		if len(lost) > 0 {
			f.add("#%d lost %s (keep them verbatim)", i, strings.Join(tokensWithin(lost, 80), ", "))
		}
	}
	var missing []string
	for _, m := range head {
		if !byIndex[m.Index].said {
			missing = append(missing, "#"+strconv.Itoa(m.Index))
		}
	}
	if len(missing) > 0 {
		shown := missing
		if len(shown) > 10 {
			shown = append(shown[:10:10], fmt.Sprintf("and %d more", len(missing)-10))
		}
		f.add("no line for %s", strings.Join(shown, ", "))
	}
	return f.out()
}

// checkCandidate lists what is wrong with a candidate summary code
// assembled for head, with tail the messages kept verbatim after it, l
// the facts ledger as it will be (the head's lines added) and turn the
// user message that began the turn of head's first messages (0: not
// known). Coverage and the budget are CheckSummary's, which Compact runs.
func checkCandidate(head, tail []Message, text string, l ledger, turn int) []string {
	lines := map[int]string{}
	for rest := text; rest != ""; {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		if h, ok := readLineHead(line); ok && !h.phase {
			lines[h.from] = h.text
		}
	}
	var f failures
	turns := turnStarts(head, turn)
	for i, m := range head {
		said, single := lines[m.Index]
		sp, content := cleanSpeaker(m.Speaker), oneLine(m.Content)
		if classify(sp, content) == notPinned {
			continue // nothing to keep
		}
		var unledgered []string
		for _, k := range mustKeep(content) {
			if _, ok := l.holds(k, turns[i], m.Index, sp); !ok {
				unledgered = append(unledgered, k)
			}
		}
		if len(unledgered) > 0 {
			f.add("pinned #%d has %s in no facts ledger line", m.Index, strings.Join(tokensWithin(unledgered, 80), ", "))
		}
		if !single {
			continue // its line folded into a phase within the budget: the ledger keeps its facts
		}
		// What a pinned line keeps when it is clipped to its cap: the
		// facts and sign-offs that fit half of it (see keepVerbatim).
		var lost []string
		for _, k := range tokensWithin(mustKeep(content), lineCap/2) {
			if !strings.Contains(said, k) {
				lost = append(lost, k)
			}
		}
		if len(lost) > 0 {
			f.add("pinned #%d lost %s", m.Index, strings.Join(lost, ", "))
		}
	}
	// A result answers the latest call with its id before it (ids repeat
	// from turn to turn).
	latest := map[string]int{}
	for _, m := range head {
		if m.ToolCall != nil {
			latest[m.ToolCall.ID] = m.Index
		}
	}
	for _, m := range tail {
		if m.ToolCall != nil {
			delete(latest, m.ToolCall.ID) // answered in the tail from here on
		}
		if at, ok := latest[m.ToolCallID]; ok && m.Role == RoleTool && m.ToolCallID != "" {
			f.add("tool result #%d stays verbatim but its call #%d would be summarized", m.Index, at)
		}
	}
	return f.out()
}

// retryPrompt is the transcript again, with why the last answer failed.
func retryPrompt(transcript string, failed []string) string {
	var b strings.Builder
	b.WriteString(transcript)
	b.WriteString("\nYOUR LAST ANSWER FAILED THE CHECK:\n")
	for _, x := range failed {
		b.WriteString("- ")
		b.WriteString(oneLine(x))
		b.WriteByte('\n')
	}
	b.WriteString("Write the lines again: one line per input line above, each starting with its \"#index speaker:\" exactly as given, every number, id, date, amount and reference verbatim.\n")
	return b.String()
}
