package ticket

import (
	"fmt"
	"strings"
)

// Fidelity statuses of one pinned fact of a summarized message.
const (
	// FactKept: the message's own "#index speaker:" line has it verbatim.
	FactKept = "kept"
	// FactFolded: the budget folded the message's line into a phase, and
	// the facts ledger keeps the fact verbatim under the message's
	// "#index speaker" (or an earlier message's of its turn that said it
	// first).
	FactFolded = "folded"
	// FactMoved: verbatim, but on a line of another index or speaker.
	FactMoved = "moved"
	// FactAltered: the message's line is there but says something else in
	// its place (another number, id or date).
	FactAltered = "altered"
	// FactLost: neither on the message's line nor in the facts ledger: a
	// phase line that folded it away, with its "n facts retired", does
	// not keep it.
	FactLost = "lost"
)

// FactCheck is the fate of one pinned fact in the summary.
type FactCheck struct {
	Index   int    `json:"index"`
	Speaker string `json:"speaker"`
	Fact    string `json:"fact"`
	Status  string `json:"status"`
	// Line is the summary line the verdict rests on ("" when none).
	Line string `json:"line,omitempty"`
	// Instead is what an altered line says in the fact's place.
	Instead []string `json:"instead,omitempty"`
}

// FidelityReport says which pinned facts a summary keeps with their exact
// index and speaker (seed 000: "facts kept verbatim"; seed 003: a summary
// must never rewrite numbers, ids or who approved what).
type FidelityReport struct {
	From           int         `json:"from"`
	To             int         `json:"to"`
	HistoryVersion int         `json:"historyVersion"`
	Messages       int         `json:"messages"`
	Facts          []FactCheck `json:"facts"`
	Counts         struct {
		Kept    int `json:"kept"`
		Folded  int `json:"folded"`
		Moved   int `json:"moved"`
		Altered int `json:"altered"`
		Lost    int `json:"lost"`
	} `json:"counts"`
}

// OK says no pinned fact was lost, altered or moved. A folded fact is
// kept in the facts ledger; one folded away without it is lost.
func (r FidelityReport) OK() bool {
	return r.Counts.Moved == 0 && r.Counts.Altered == 0 && r.Counts.Lost == 0
}

// Verdict is the one-line answer.
func (r FidelityReport) Verdict() string {
	total := len(r.Facts)
	if total == 0 {
		return fmt.Sprintf("no pinned facts in #%d–#%d: nothing to keep", r.From, r.To)
	}
	s := fmt.Sprintf("%d of %d pinned facts kept with their index and speaker", r.Counts.Kept+r.Counts.Folded, total)
	if r.Counts.Folded > 0 {
		s += fmt.Sprintf(" (%d in the facts ledger, their lines folded)", r.Counts.Folded)
	}
	if r.OK() {
		return "PASS: " + s
	}
	var bad []string
	for _, kv := range []struct {
		n    int
		what string
	}{{r.Counts.Altered, "altered"}, {r.Counts.Moved, "moved to another line"}, {r.Counts.Lost, "lost"}} {
		if kv.n > 0 {
			bad = append(bad, fmt.Sprintf("%d %s", kv.n, kv.what))
		}
	}
	return "FAIL: " + s + "; " + strings.Join(bad, ", ")
}

// CheckFidelity compares summary s and the facts ledger (State.Facts)
// with the original messages they cover (any others given are ignored):
// every fact token (ids, amounts, dates, references, sign-offs) of every
// summarized message that the summarizer pins must be on that message's
// own line, verbatim, or in the ledger under its "#index speaker" (or an
// earlier message's that said it first). A fact a phase line folded away
// is lost, whatever its "n facts retired" says.
func CheckFidelity(s *Summary, ledgerPages []string, originals []Message) FidelityReport {
	var r FidelityReport
	if s == nil {
		return r
	}
	r.From, r.To, r.HistoryVersion = max(s.From, 1), s.To, s.HistoryVersion
	entries := parseSummary(s)
	l := readLedger(ledgerPages)
	retired := retiredThrough(ledgerPages)
	lineOf := func(index int) (entry, bool) {
		for _, e := range entries {
			if e.from <= index && index <= e.to {
				return e, true
			}
		}
		return entry{}, false
	}
	turns := turnStarts(originals, 0)
	for i, m := range originals {
		if m.Index < r.From || m.Index > r.To {
			continue
		}
		r.Messages++
		speaker := cleanSpeaker(m.Speaker)
		content := oneLine(m.Content)
		if classify(speaker, content) == notPinned {
			continue
		}
		e, ok := lineOf(m.Index)
		for _, fact := range mustKeep(content) {
			c := FactCheck{Index: m.Index, Speaker: speaker, Fact: fact}
			switch {
			case !ok:
				c.Status = FactLost
			case e.phase:
				c.Status, c.Line = FactLost, e.render()
			case !strings.EqualFold(e.speakers[0], speaker):
				c.Status, c.Line = FactMoved, e.render()
			case strings.Contains(e.text, fact):
				c.Status, c.Line = FactKept, e.render()
			default:
				c.Line = e.render()
				c.Status = FactLost
				for _, other := range facts(e.text) {
					if !strings.Contains(content, other) {
						c.Instead = append(c.Instead, other)
					}
				}
				if len(c.Instead) > 0 {
					c.Status = FactAltered
				}
			}
			if at, kept := l.holds(fact, turns[i], m.Index, speaker); kept && c.Status == FactLost {
				c.Status, c.Line = FactKept, at.line
				if ok && e.phase {
					c.Status = FactFolded
				}
			}
			if c.Status == FactLost && ok && e.phase && m.Index <= retired {
				// Its ledger line was retired: the fact is in its message,
				// verbatim, which the transcript keeps for good.
				c.Status, c.Line = FactFolded, fmt.Sprintf("#%d (retired from the ledger; verbatim in the transcript)", m.Index)
			}
			if c.Status == FactLost && movedTo(entries, m.Index, fact) != "" {
				c.Status, c.Line = FactMoved, movedTo(entries, m.Index, fact)
			}
			r.count(c.Status)
			r.Facts = append(r.Facts, c)
		}
	}
	return r
}

func (r *FidelityReport) count(status string) {
	switch status {
	case FactKept:
		r.Counts.Kept++
	case FactFolded:
		r.Counts.Folded++
	case FactMoved:
		r.Counts.Moved++
	case FactAltered:
		r.Counts.Altered++
	default:
		r.Counts.Lost++
	}
}

// movedTo is another line holding fact verbatim, if one does.
func movedTo(entries []entry, index int, fact string) string {
	for _, e := range entries {
		if (e.from > index || e.to < index) && strings.Contains(e.text, fact) {
			return e.render()
		}
	}
	return ""
}
