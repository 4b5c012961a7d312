package ticket

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
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

// render writes an entry as one line: "#12 user: …" or
// "#1–#40 user, critic: …".
func (e entry) render() string {
	if !e.phase {
		return "#" + strconv.Itoa(e.from) + " " + e.speakers[0] + ": " + e.text
	}
	return "#" + strconv.Itoa(e.from) + "–#" + strconv.Itoa(e.to) + " " + speakerList(e.speakers) + ": " + e.digest()
}

// digest is a phase line's text: its digest and how many facts retired.
func (e entry) digest() string {
	if e.retired <= 0 {
		return e.text
	}
	noun := "facts"
	if e.retired == 1 {
		noun = "fact"
	}
	return strings.TrimPrefix(e.text+"; "+strconv.Itoa(e.retired)+" "+noun+" retired", "; ")
}

// size is the entry's length in runes, as stored, counted without
// rendering: the folder asks for it at every step.
func (e entry) size() int {
	if !e.phase {
		return 1 + digits(e.from) + 1 + utf8.RuneCountInString(e.speakers[0]) + 2 + utf8.RuneCountInString(e.text)
	}
	return 1 + digits(e.from) + 2 + digits(e.to) + 1 + speakerListSize(e.speakers) + 2 + e.digestSize()
}

// digestSize is utf8.RuneCountInString(e.digest()).
func (e entry) digestSize() int {
	n := utf8.RuneCountInString(e.text)
	if e.retired <= 0 {
		return n
	}
	n += len("; ") + digits(e.retired) + len(" facts retired")
	if e.retired == 1 {
		n-- // "fact"
	}
	if e.text == "" || strings.HasPrefix(e.text, "; ") {
		n -= len("; ") // digest trims a leading "; "
	}
	return n
}

// digits is the length of n in decimal, sign included.
func digits(n int) int {
	d, u := 1, uint64(n)
	if n < 0 {
		d, u = 2, -u // two's complement: right for the most negative int too
	}
	for ; u >= 10; u /= 10 {
		d++
	}
	return d
}

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

// speakerListSize is utf8.RuneCountInString(speakerList(sp)), without
// joining when the list is short enough to stay as it is.
func speakerListSize(sp []string) int {
	n := 0
	for i, x := range sp {
		if i > 0 {
			n += len(", ")
		}
		n += utf8.RuneCountInString(x)
	}
	if n <= speakersCap {
		return n
	}
	return utf8.RuneCountInString(speakerList(sp))
}

func renderAll(es []entry) string {
	var b strings.Builder
	b.Grow(SummaryBudget + SummaryBudget/4) // mostly ASCII, within the budget
	for i, e := range es {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.render())
	}
	return b.String()
}

// lineHead is a line's coordinates, its speakers as written and its text.
// Lines are read by hand, not by regexp (every compaction reads every line
// of the previous summary and of the candidate), and accepted exactly when
// ^#(\d+) ([^:\n]+): (.*)$ or ^#(\d+)–#(\d+) ([^:\n]+): (.*)$ matches.
type lineHead struct {
	from, to int
	phase    bool
	speakers string
	text     string
}

// readLineHead reads a line's coordinates; ok is false when it has none.
func readLineHead(line string) (h lineHead, ok bool) {
	if strings.IndexByte(line, '\n') >= 0 {
		return h, false // neither (.*)$ nor [^:\n] crosses a newline
	}
	rest, ok := strings.CutPrefix(line, "#")
	if ok {
		h.from, rest, ok = leadingInt(rest)
		h.to = h.from
	}
	if ok && strings.HasPrefix(rest, "–#") {
		h.phase = true
		h.to, rest, ok = leadingInt(rest[len("–#"):])
	}
	if ok {
		rest, ok = strings.CutPrefix(rest, " ")
	}
	if !ok {
		return h, false
	}
	// [^:\n]+ then ": ": the speakers end at the first colon.
	colon := strings.IndexByte(rest, ':')
	if colon <= 0 || !strings.HasPrefix(rest[colon+1:], " ") {
		return h, false
	}
	h.speakers, h.text = rest[:colon], rest[colon+2:]
	return h, true
}

// valid says whether a line's coordinates can stand in a summary.
func (h lineHead) valid() bool { return h.from > 0 && h.to >= h.from }

// leadingInt splits off s's leading ASCII digits, read by strconv.Atoi
// with its error ignored: too large an index reads as the largest int.
func leadingInt(s string) (int, string, bool) {
	n := skip(s, 0, isDigit)
	if n == 0 {
		return 0, s, false
	}
	v, _ := strconv.Atoi(s[:n])
	return v, s[n:], true
}

// parseLine reads one rendered line back; ok is false for anything else.
func parseLine(line string) (entry, bool) {
	h, ok := readLineHead(line)
	if !ok {
		return entry{}, false
	}
	if h.phase {
		e := entry{from: h.from, to: h.to, speakers: splitSpeakers(h.speakers), text: h.text, phase: true}
		if text, n, ok := cutRetired(h.text); ok {
			e.text, e.retired = text, n
		}
		return e, h.valid()
	}
	sp := strings.TrimSpace(h.speakers)
	return entry{from: h.from, to: h.from, speakers: []string{sp}, text: h.text, class: classify(sp, h.text)}, h.valid()
}

// cutRetired splits "digest; 3 facts retired" into the digest and the
// count, as ^(.*?)(?:; )?(\d+) facts? retired$ did: the count is the
// whole run of digits before " fact(s) retired", and a "; " before it goes.
func cutRetired(text string) (string, int, bool) {
	body, ok := strings.CutSuffix(text, " facts retired")
	if !ok {
		body, ok = strings.CutSuffix(text, " fact retired")
	}
	if !ok {
		return text, 0, false
	}
	start := len(body)
	for start > 0 && isDigit(body[start-1]) {
		start--
	}
	if start == len(body) {
		return text, 0, false
	}
	n, _ := strconv.Atoi(body[start:])
	return strings.TrimSuffix(body[:start], "; "), n, true
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
	got := make([]entry, 0, strings.Count(s.Text, "\n")+1)
	for text := s.Text; text != ""; {
		var line string
		line, text, _ = strings.Cut(text, "\n")
		if e, ok := parseLine(strings.TrimSpace(line)); ok {
			got = append(got, e)
		}
	}
	// The first line for an index wins. A summary this code wrote is in
	// order already.
	byFrom := func(a, b entry) int { return cmp.Compare(a.from, b.from) }
	if !slices.IsSortedFunc(got, byFrom) {
		slices.SortStableFunc(got, byFrom)
	}
	out := make([]entry, 0, len(got)+1)
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
	for i, rest, more := 0, text, true; more; i++ { // as strings.Split, without the slice
		var line string
		line, rest, more = strings.Cut(rest, "\n")
		e, ok := readLineHead(line) // coordinates only: the gate needs no classes
		if !ok || !e.valid() {
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
