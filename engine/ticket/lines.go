package ticket

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Limits of one summary line, so no single message can eat the budget.
const (
	lineCap     = 200 // runes of a single line's text
	gistCap     = 48  // runes of a phase line's digest
	speakersCap = 120 // runes of a phase line's speaker list before it collapses
)

// entry is one line of the summary. Code owns its coordinates; only the
// text of a single line may come from the model.
type entry struct {
	from, to int
	speakers []string // one for a single line, the union for a phase
	text     string   // a single line's text, or a phase's digest
	phase    bool
	retired  int      // phase: pinned facts folded into it
	class    pinClass // single: why it is pinned, if it is
}

func (e entry) pinned() bool { return !e.phase && e.class != notPinned }

var (
	reSingleLine = regexp.MustCompile(`^#(\d+) ([^:\n]+): (.*)$`)
	reRangeLine  = regexp.MustCompile(`^#(\d+)–#(\d+) ([^:\n]+): (.*)$`)
	reRetired    = regexp.MustCompile(`^(.*?)(?:; )?(\d+) facts? retired$`)
)

// render writes an entry as one line: "#12 user: …" or
// "#1–#40 user, critic: …".
func (e entry) render() string {
	if !e.phase {
		return fmt.Sprintf("#%d %s: %s", e.from, e.speakers[0], e.text)
	}
	digest := e.text
	if e.retired > 0 {
		noun := "facts"
		if e.retired == 1 {
			noun = "fact"
		}
		digest = strings.TrimPrefix(fmt.Sprintf("%s; %d %s retired", digest, e.retired, noun), "; ")
	}
	return fmt.Sprintf("#%d–#%d %s: %s", e.from, e.to, speakerList(e.speakers), digest)
}

// size is the entry's length in runes, as stored.
func (e entry) size() int { return utf8.RuneCountInString(e.render()) }

// speakerList joins speakers; past speakersCap, bracketed roles collapse
// to their family ("executor[…]") so a long phase stays one short line.
func speakerList(sp []string) string {
	s := strings.Join(sp, ", ")
	if utf8.RuneCountInString(s) <= speakersCap {
		return s
	}
	var fams []string
	for _, x := range sp {
		if f := family(x); !contains(fams, f) {
			fams = append(fams, f)
		}
	}
	return clipTo(strings.Join(fams, ", "), speakersCap)
}

func renderAll(es []entry) string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.render()
	}
	return strings.Join(lines, "\n")
}

// parseLine reads one rendered line back; ok is false for anything else.
func parseLine(line string) (entry, bool) {
	if m := reRangeLine.FindStringSubmatch(line); m != nil {
		from, _ := strconv.Atoi(m[1])
		to, _ := strconv.Atoi(m[2])
		e := entry{from: from, to: to, speakers: splitSpeakers(m[3]), text: m[4], phase: true}
		if r := reRetired.FindStringSubmatch(m[4]); r != nil {
			e.text = r[1]
			e.retired, _ = strconv.Atoi(r[2])
		}
		return e, from > 0 && to >= from
	}
	if m := reSingleLine.FindStringSubmatch(line); m != nil {
		i, _ := strconv.Atoi(m[1])
		sp := strings.TrimSpace(m[2])
		return entry{from: i, to: i, speakers: []string{sp}, text: m[3], class: classify(sp, m[3])}, i > 0
	}
	return entry{}, false
}

func splitSpeakers(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ", ") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

// parseSummary reads a stored summary back into entries covering
// From..To exactly once, in order. Text written before summaries had a
// budget may repeat, skip or garble lines: repeats are dropped and holes
// become "unknown" phase lines, so coverage holds and the fold can bound it.
func parseSummary(s *Summary) []entry {
	if s == nil || s.To < max(s.From, 1) {
		return nil
	}
	from := max(s.From, 1) // a summary without From still starts at #1
	var got []entry
	for _, line := range strings.Split(s.Text, "\n") {
		if e, ok := parseLine(strings.TrimSpace(line)); ok {
			got = append(got, e)
		}
	}
	sort.SliceStable(got, func(i, j int) bool { return got[i].from < got[j].from }) // the first line for an index wins
	var out []entry
	next := from
	for _, e := range got {
		if e.from < next || e.to > s.To {
			continue // a repeat, an overlap or outside the summary
		}
		if e.from > next {
			out = append(out, gap(next, e.from-1))
		}
		out = append(out, e)
		next = e.to + 1
	}
	if next <= s.To {
		out = append(out, gap(next, s.To))
	}
	return out
}

// gap stands for indices no line covers, so they are not silently lost;
// the raw transcript still has them.
func gap(from, to int) entry {
	return entry{from: from, to: to, speakers: []string{"unknown"}, text: "no summary line; see the transcript", phase: true}
}

// CheckSummary is the gate a candidate passes before it is stored: within
// the budget, one "#N speaker:" or "#A–#B speakers:" line per entry, and
// every index from..to covered exactly once, in order.
func CheckSummary(text string, from, to int) error {
	if n := utf8.RuneCountInString(text); n > SummaryBudget {
		return fmt.Errorf("summary has %d runes, budget %d", n, SummaryBudget)
	}
	if text == "" {
		return errors.New("summary is empty")
	}
	next := from
	for i, line := range strings.Split(text, "\n") {
		e, ok := parseLine(line)
		if !ok {
			return fmt.Errorf("summary line %d has no #index speaker: %q", i+1, clipTo(line, 60))
		}
		if e.from != next {
			return fmt.Errorf("summary line %d starts at #%d, want #%d", i+1, e.from, next)
		}
		next = e.to + 1
	}
	if next != to+1 {
		return fmt.Errorf("summary ends at #%d, want #%d", next-1, to)
	}
	return nil
}
