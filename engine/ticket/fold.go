package ticket

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// SummaryBudget is the most runes Summary.Text may hold, at any turn and
// with any model: older lines fold into phase lines to stay within it.
const SummaryBudget = 2000

// PinBudget is the share of the budget pinned facts may take. Past it the
// least important pins retire into the phase line covering their index.
const PinBudget = SummaryBudget / 2

// RecentTurns is how many of the newest user requirements, with the facts
// and approvals of their turns, retire after everything older.
const RecentTurns = 2

// CompactStats says what one compaction did to the summary's lines.
type CompactStats struct {
	Lines    int `json:"lines"`    // lines of the new summary
	Pinned   int `json:"pinned"`   // pinned lines kept verbatim
	Phases   int `json:"phases"`   // phase lines
	Folded   int `json:"folded"`   // unpinned lines folded into phases this round
	Retired  int `json:"retired"`  // pinned lines retired into phases this round
	Fallback int `json:"fallback"` // head messages whose model line was unusable
}

// Compact merges the previous summary with the newly compacted head. The
// model's answer only supplies the text of the head's lines; code keeps
// the coordinates, pins facts, folds the oldest lines within SummaryBudget
// and checks the result. From, To, Count, Speakers and Turn are set; the
// caller sets HistoryVersion and Trigger.
func Compact(prev *Summary, head []Message, answer string) (Summary, CompactStats, error) {
	var st CompactStats
	if len(head) == 0 {
		return Summary{}, st, fmt.Errorf("nothing to compact")
	}
	es := parseSummary(prev)
	next := head[0].Index
	if len(es) > 0 {
		next = es[len(es)-1].to + 1
	}
	if head[0].Index < next {
		return Summary{}, st, fmt.Errorf("head starts at #%d, but the summary already covers up to #%d", head[0].Index, next-1)
	}
	if head[0].Index > next {
		es = append(es, gap(next, head[0].Index-1))
	}
	fresh, fallback, err := headEntries(head, answer)
	if err != nil {
		return Summary{}, st, err
	}
	st.Fallback = fallback
	f := &folder{es: append(es, fresh...)}
	f.fit()
	st.Folded, st.Retired = f.folded, f.retired
	for _, e := range f.es {
		if e.phase {
			st.Phases++
		} else if e.pinned() {
			st.Pinned++
		}
	}
	st.Lines = len(f.es)
	sum := Summary{Text: renderAll(f.es), From: f.es[0].from, To: f.es[len(f.es)-1].to}
	sum.Count = sum.To - sum.From + 1
	sum.Speakers = speakersOf(prev, head)
	if prev != nil {
		sum.Turn = prev.Turn
	}
	for _, m := range head {
		if m.Role == RoleUser {
			sum.Turn = m.Index
		}
	}
	if err := CheckSummary(sum.Text, sum.From, sum.To); err != nil {
		return Summary{}, st, fmt.Errorf("candidate summary rejected: %w", err)
	}
	return sum, st, nil
}

// speakersOf is the sorted set of the previous summary's speakers and the
// head's.
func speakersOf(prev *Summary, head []Message) []string {
	out := []string{} // never nil: it is stored as []
	add := func(sp string) {
		if !contains(out, sp) { // few distinct speakers, many repeats
			out = append(out, sp)
		}
	}
	if prev != nil {
		for _, sp := range prev.Speakers {
			add(sp)
		}
	}
	for _, m := range head {
		add(m.Speaker)
	}
	slices.Sort(out)
	return out
}

// headEntries makes one line per head message. A pinned message's text is
// made by code from the message itself; an unpinned one takes the model's
// line when it kept "#index speaker:", else the message's first words.
func headEntries(head []Message, answer string) ([]entry, int, error) {
	texts := answerLines(answer)
	out := make([]entry, 0, len(head))
	fallback := 0
	for i, m := range head {
		if i > 0 && m.Index <= head[i-1].Index {
			return nil, 0, fmt.Errorf("head indices not increasing at #%d", m.Index)
		}
		sp := cleanSpeaker(m.Speaker)
		content := oneLine(m.Content)
		said, ok := texts[m.Index]
		if ok && (said.text == "" || !strings.EqualFold(said.speaker, sp)) {
			ok = false // empty, renumbered or renamed: do not trust its text here
		}
		if !ok {
			fallback++
			said.text = firstWords(content, 12)
		}
		class := classify(sp, content)
		text := lineText(class, content, clipTo(said.text, lineCap))
		if text != content {
			class = classify(sp, text) // the line is classified as it reads
		}
		out = append(out, entry{from: m.Index, to: m.Index, speakers: []string{sp}, text: text, class: class})
	}
	return out, fallback, nil
}

type answerLine struct{ speaker, text string }

// answerLines reads the model's "#index speaker: text" lines; the first
// line for an index wins, anything else is ignored.
func answerLines(answer string) map[int]answerLine {
	out := make(map[int]answerLine, strings.Count(answer, "\n")+1)
	for len(answer) > 0 {
		var line string
		line, answer, _ = strings.Cut(answer, "\n")
		i, sp, text, ok := readAnswerLine(line)
		if _, dup := out[i]; !ok || dup {
			continue
		}
		out[i] = answerLine{speaker: strings.TrimSpace(sp), text: oneLine(text)}
	}
	return out
}

// readAnswerLine reads what ^[\s\-*•]*#(\d+) ([^:\n]+):\s*(.*)$ did, by
// hand: markdown bullets, then "#index speaker:" and the text. ok is false
// for anything else, and for an index too large for an int.
func readAnswerLine(line string) (i int, speaker, text string, ok bool) {
	rest, ok := strings.CutPrefix(strings.TrimLeft(line, " \t\n\f\r-*•"), "#")
	n := skip(rest, 0, isDigit)
	if !ok || n == 0 || !strings.HasPrefix(rest[n:], " ") {
		return 0, "", "", false
	}
	i, err := strconv.Atoi(rest[:n])
	rest = rest[n+1:]
	colon := strings.IndexByte(rest, ':')
	if err != nil || colon <= 0 || strings.IndexByte(rest[:colon], '\n') >= 0 {
		return 0, "", "", false
	}
	text = strings.TrimLeft(rest[colon+1:], " \t\n\f\r")
	if strings.IndexByte(text, '\n') >= 0 {
		return 0, "", "", false // (.*)$ stops at a newline
	}
	return i, rest[:colon], text, true
}

// lineText is what a head message's line says. Requirements and approvals
// are copied verbatim (clipped, their facts kept); other lines with facts
// keep the model's words only if every fact survived, else just the facts.
func lineText(class pinClass, content, said string) string {
	text := said
	switch class {
	case pinApproval, pinSignOff:
		text = content
		if utf8.RuneCountInString(content) > lineCap { // only a clip needs the facts
			text = keepVerbatim(content, mustKeep(content), lineCap)
		}
	case pinFact:
		fs := facts(content)
		for _, f := range fs {
			if !strings.Contains(said, f) {
				text = strings.Join(tokensWithin(fs, lineCap), " ")
				break
			}
		}
	}
	if text == "" {
		return "(empty)"
	}
	return text
}

func firstWords(s string, n int) string {
	w := strings.Fields(s)
	if len(w) > n {
		return strings.Join(w[:n], " ") + " …"
	}
	return strings.Join(w, " ")
}

// speakerCleaner is built once: a Replacer prepares its tables on first use.
var speakerCleaner = strings.NewReplacer(":", "_", ", ", ",")

// cleanSpeaker keeps a speaker parseable as a line's coordinate.
func cleanSpeaker(s string) string {
	s = oneLine(s)
	if strings.Contains(s, ":") || strings.Contains(s, ", ") { // Replace copies even when nothing changes
		s = speakerCleaner.Replace(s)
	}
	if s == "" {
		return "unknown"
	}
	return s
}

// folder fits entries into the budget. Sizes are tracked as entries
// change, so a long summary written before the budget existed folds in one
// pass without re-rendering everything at each step.
type folder struct {
	es              []entry
	sizes           []int // es[i].size(), kept alongside: a phase's is not cheap
	total, pins     int   // runes of the rendered text and of its pinned lines
	folded, retired int
	lineCursor      int   // lines older than this index are already folded
	victims         []int // pinned lines' indices, in retirement order
	victimCursor    int
	victimsComputed bool
}

func (f *folder) fit() {
	f.total, f.pins = len(f.es)-1, 0
	f.sizes = make([]int, len(f.es))
	for i, e := range f.es {
		f.sizes[i] = e.size()
		f.total += f.sizes[i]
		if e.pinned() {
			f.pins += f.sizes[i] + 1
		}
	}
	// Nothing folds while the whole fits. Past the budget the oldest
	// unpinned lines fold first; pins over their share retire once they
	// are older than every unpinned line left; pins within their share
	// retire only when nothing else is left to fold.
	for f.total > SummaryBudget {
		line, victim := f.oldestLine(), f.nextVictim()
		switch {
		case line >= 0 && (f.pins <= PinBudget || victim < 0 || f.es[line].from < f.es[victim].from):
			f.foldAt(line)
		case victim >= 0:
			f.retireAt(victim)
		default:
			return
		}
	}
}

// oldestLine is the position of the oldest unpinned single line, or -1.
func (f *folder) oldestLine() int {
	for ; f.lineCursor < len(f.es); f.lineCursor++ {
		if e := f.es[f.lineCursor]; !e.phase && !e.pinned() {
			return f.lineCursor
		}
	}
	return -1
}

// nextVictim is the position of the next pinned line in retirement order,
// or -1.
func (f *folder) nextVictim() int {
	if !f.victimsComputed {
		f.victims, f.victimsComputed = retirementOrder(f.es), true
	}
	for ; f.victimCursor < len(f.victims); f.victimCursor++ {
		if at := f.find(f.victims[f.victimCursor]); at >= 0 && f.es[at].pinned() {
			return at
		}
	}
	return -1
}

func (f *folder) foldAt(i int) {
	f.toPhase(i)
	f.folded++
}

func (f *folder) retireAt(i int) {
	f.pins -= f.sizes[i] + 1
	f.toPhase(i)
	f.retired++
	f.victimCursor++
}

// retirementOrder lists pinned lines' indices, first to retire first:
// older facts, then older requirements and approvals, then the facts of
// the recent turns, then recent requirements and approvals, and last the
// sign-offs ("approved by …"); oldest first within each.
func retirementOrder(es []entry) []int {
	recentFrom := 0
	seen := 0
	for i := len(es) - 1; i >= 0 && seen < RecentTurns; i-- {
		if es[i].pinned() && es[i].speakers[0] == "user" {
			seen++
			recentFrom = es[i].from
		}
	}
	rank := func(e entry) int {
		recent := 0
		if e.from >= recentFrom {
			recent = 2
		}
		switch e.class {
		case pinSignOff:
			return 4
		case pinApproval:
			return 1 + recent
		}
		return recent
	}
	// A stable sort by rank, as buckets: ranks are 0 to 4.
	var byRank [5][]int
	n := 0
	for _, e := range es {
		if e.pinned() {
			r := rank(e)
			byRank[r] = append(byRank[r], e.from)
			n++
		}
	}
	out := make([]int, 0, n)
	for _, froms := range byRank {
		out = append(out, froms...)
	}
	return out
}

// find is the position of the entry starting at index from, or -1.
func (f *folder) find(from int) int {
	i := sort.Search(len(f.es), func(i int) bool { return f.es[i].to >= from })
	if i < len(f.es) && f.es[i].from == from {
		return i
	}
	return -1
}

// toPhase turns the line at position i into a phase line and merges it
// with phase neighbours, keeping ranges contiguous and speakers a union.
func (f *folder) toPhase(i int) {
	e := f.es[i]
	p := entry{from: e.from, to: e.to, speakers: e.speakers, text: gist(e), phase: true, retired: e.retired}
	if e.pinned() {
		p.retired++
	}
	lo, hi := i, i+1
	if lo > 0 && f.es[lo-1].phase {
		lo--
		p = mergePhases(f.es[lo], p)
	}
	if hi < len(f.es) && f.es[hi].phase {
		p = mergePhases(p, f.es[hi])
		hi++
	}
	for _, n := range f.sizes[lo:hi] {
		f.total -= n + 1
	}
	n := p.size()
	f.total += n + 1
	f.es[lo], f.sizes[lo] = p, n
	f.es = append(f.es[:lo+1], f.es[hi:]...) // shift in place: no copy per fold
	f.sizes = append(f.sizes[:lo+1], f.sizes[hi:]...)
	if f.lineCursor > lo {
		f.lineCursor = lo
	}
}

// gist is a new phase's digest: how its oldest line opens.
func gist(e entry) string {
	if e.phase {
		return e.text
	}
	return "began \"" + clipTo(e.text, gistCap) + "\""
}

// mergePhases joins two adjacent phases: the older digest stays, retired
// counts add up and speakers are the union.
func mergePhases(a, b entry) entry {
	return entry{from: a.from, to: b.to, speakers: unionSpeakers(a.speakers, b.speakers), text: a.text, phase: true, retired: a.retired + b.retired}
}

// unionSpeakers is a's speakers then b's new ones, in order of first
// appearance; a family collapsed by an earlier render ("executor[…]")
// absorbs its members, so the list does not regrow them. Lists are short:
// a linear search beats a map.
func unionSpeakers(a, b []string) []string {
	all := make([]string, 0, len(a)+len(b))
	for _, xs := range [][]string{a, b} {
		for _, x := range xs {
			if !contains(all, x) {
				all = append(all, x)
			}
		}
	}
	if !slices.ContainsFunc(all, func(x string) bool { return collapsedIn(all, x) }) {
		return all
	}
	out := make([]string, 0, len(all)) // not all[:0]: all is still searched
	for _, x := range all {
		if !collapsedIn(all, x) {
			out = append(out, x)
		}
	}
	return out
}

// collapsedIn says whether x's family, other than x, is in xs: whether
// family(x) != x && contains(xs, family(x)), without building family(x).
func collapsedIn(xs []string, x string) bool {
	i := strings.IndexByte(x, '[')
	if i <= 0 || x[i:] == "[…]" {
		return false
	}
	for _, y := range xs {
		if len(y) == i+len("[…]") && y[:i] == x[:i] && y[i:] == "[…]" {
			return true
		}
	}
	return false
}

// family is a bracketed speaker's collapsed form: "executor[t-1-order]" →
// "executor[…]"; other speakers are their own family.
func family(sp string) string {
	if i := strings.IndexByte(sp, '['); i > 0 {
		return sp[:i] + "[…]"
	}
	return sp
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
