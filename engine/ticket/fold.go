package ticket

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
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
// and checks the result. From, To, Count and Speakers are set; the caller
// sets HistoryVersion and Trigger.
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
	if err := CheckSummary(sum.Text, sum.From, sum.To); err != nil {
		return Summary{}, st, fmt.Errorf("candidate summary rejected: %w", err)
	}
	return sum, st, nil
}

func speakersOf(prev *Summary, head []Message) []string {
	set := map[string]bool{}
	if prev != nil {
		for _, sp := range prev.Speakers {
			set[sp] = true
		}
	}
	for _, m := range head {
		set[m.Speaker] = true
	}
	out := make([]string, 0, len(set))
	for sp := range set {
		out = append(out, sp)
	}
	sort.Strings(out)
	return out
}

var reAnswerLine = regexp.MustCompile(`^[\s\-*•]*#(\d+) ([^:\n]+):\s*(.*)$`)

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
		text := lineText(sp, content, clipTo(said.text, lineCap))
		out = append(out, entry{from: m.Index, to: m.Index, speakers: []string{sp}, text: text, class: classify(sp, text)})
	}
	return out, fallback, nil
}

type answerLine struct{ speaker, text string }

// answerLines reads the model's "#index speaker: text" lines; the first
// line for an index wins, anything else is ignored.
func answerLines(answer string) map[int]answerLine {
	out := map[int]answerLine{}
	for _, line := range strings.Split(answer, "\n") {
		m := reAnswerLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		i, err := strconv.Atoi(m[1])
		if _, dup := out[i]; err != nil || dup {
			continue
		}
		out[i] = answerLine{speaker: strings.TrimSpace(m[2]), text: oneLine(m[3])}
	}
	return out
}

// lineText is what a head message's line says. Requirements and approvals
// are copied verbatim (clipped, their facts kept); other lines with facts
// keep the model's words only if every fact survived, else just the facts.
func lineText(speaker, content, said string) string {
	text := said
	switch classify(speaker, content) {
	case pinApproval, pinSignOff:
		text = keepVerbatim(content, mustKeep(content), lineCap)
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

// cleanSpeaker keeps a speaker parseable as a line's coordinate.
func cleanSpeaker(s string) string {
	s = strings.NewReplacer(":", "_", ", ", ",").Replace(oneLine(s))
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
	total, pins     int // runes of the rendered text and of its pinned lines
	folded, retired int
	lineCursor      int   // lines older than this index are already folded
	victims         []int // pinned lines' indices, in retirement order
	victimCursor    int
	victimsComputed bool
}

func (f *folder) fit() {
	f.total, f.pins = len(f.es)-1, 0
	for _, e := range f.es {
		f.total += e.size()
		if e.pinned() {
			f.pins += e.size() + 1
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
	f.pins -= f.es[i].size() + 1
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
	var pins []entry
	for _, e := range es {
		if e.pinned() {
			pins = append(pins, e)
		}
	}
	sort.SliceStable(pins, func(i, j int) bool { return rank(pins[i]) < rank(pins[j]) })
	out := make([]int, len(pins))
	for i, e := range pins {
		out[i] = e.from
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
	for _, old := range f.es[lo:hi] {
		f.total -= old.size() + 1
	}
	f.total += p.size() + 1
	f.es[lo] = p
	f.es = append(f.es[:lo+1], f.es[hi:]...) // shift in place: no copy per fold
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
// absorbs its members, so the list does not regrow them.
func unionSpeakers(a, b []string) []string {
	seen := map[string]bool{}
	var all []string
	for _, x := range append(append([]string(nil), a...), b...) {
		if !seen[x] {
			seen[x] = true
			all = append(all, x)
		}
	}
	out := all[:0]
	for _, x := range all {
		if f := family(x); f != x && seen[f] {
			continue
		}
		out = append(out, x)
	}
	return out
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
