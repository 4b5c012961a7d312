package ticket

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"rewind/engine/internal/jsonstr"
)

// The facts ledger (the "facts" channel) is the summary's facts section:
// every pinned fact of every compacted message (its facts and sign-offs,
// mustKeep), verbatim, on a line under the "#index speaker" that said it:
//
//	#21 user: DL20261003; CO-0103; 2 hours; signed by J. Devries
//	#23 tool[change_orders]: 2026-10-03
//
// A fact a later message of the same turn repeats (the tool echoing the
// log, the finding and the reply passing it on) is not written again: the
// turn's first line keeps it, and CheckFidelity counts the repeat kept
// there. Another turn's same value is another fact (J. Devries signing
// another change order) and gets its own line. The narrative
// summary (Summary.Text) stays within SummaryBudget and may fold any line
// into a phase; the ledger never folds, drops or rewrites a fact.
//
// It grows with the facts a thread states, not with its turns or its
// compactions: a compaction appends the lines of its head's new facts
// (a delta of a few hundred bytes) and never rewrites an old one. Lines
// go into pages of at most FactPageBytes; a full page is never written
// again, so, as any string of a kilobyte or more, it is stored once per
// thread as a blob, and a base checkpoint holds its hash, not its text.

// FactPageBytes is the size past which the ledger starts a new page.
const FactPageBytes = 4096

// FactPagesKept is how many pages the ledger keeps in the state: past it
// the oldest pages are retired (a marker says through which message). A
// retired line is derived from messages the transcript keeps verbatim for
// good (`rewind show T --message N`), so nothing is lost; the state, and
// the newest checkpoint's snapshot every process loads, stay bounded on a
// 1,000-turn thread (the ledger alone grew to 87 KB there, and loading the
// newest checkpoint went from 0.1 ms to 2–4 ms). The model is shown the
// newest FactsShown runes in any case.
const FactPagesKept = 4

// retiredPrefix opens the marker page that stands for retired pages.
const retiredPrefix = "retired: the facts of #1–#"

// retiredThrough is the last message whose ledger line was retired (0:
// none).
func retiredThrough(pages []string) int {
	if len(pages) == 0 || !strings.HasPrefix(pages[0], retiredPrefix) {
		return 0
	}
	n, _ := strconv.Atoi(leadingDigits(pages[0][len(retiredPrefix):]))
	return n
}

func leadingDigits(s string) string {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i]
}

// retire keeps the newest FactPagesKept pages and folds the older ones
// into the marker page.
func retire(pages []string) []string {
	through := retiredThrough(pages)
	live := pages
	if through > 0 {
		live = pages[1:]
	}
	if len(live) <= FactPagesKept {
		return pages
	}
	for _, p := range live[:len(live)-FactPagesKept] {
		for rest := p; rest != ""; {
			var line string
			line, rest, _ = strings.Cut(rest, "\n")
			if h, ok := readLineHead(line); ok && h.valid() {
				through = max(through, h.to)
			}
		}
	}
	marker := fmt.Sprintf("%s%d are retired from the ledger: each is in its message, verbatim, in the transcript, by its number", retiredPrefix, through)
	return append([]string{marker}, live[len(live)-FactPagesKept:]...)
}

// FactsShown is the most runes of the ledger a model is shown: its newest
// lines, the older ones named by count (they stay in the ledger, which
// CheckFidelity and `rewind show` read).
const FactsShown = 4000

// appendFacts is the facts channel's reducer: a write is a list of lines,
// appended to the last page, or to a new one when they would pass
// FactPageBytes. Pages before the last are never changed.
//
// A replay runs it for every write of the chain it rebuilds, over a ledger
// of up to 20 KB: decoding and encoding the whole ledger each time was a
// quarter of loading an older checkpoint. So a ledger as json.Marshal
// writes it (ledgerPages) keeps its unchanged pages' bytes as they are and
// encodes only the lines it appends; anything else, and a write that
// retires pages, takes appendFactsSlow. Both give the same bytes
// (TestAppendFactsFastAgreesWithSlow).
func appendFacts(current, write json.RawMessage) (json.RawMessage, error) {
	lines, ok := plainLines(write)
	if !ok {
		if err := json.Unmarshal(write, &lines); err != nil {
			return nil, fmt.Errorf("facts: want a list of lines: %w", err)
		}
	}
	pages, ok := ledgerPages(current)
	if !ok {
		return appendFactsSlow(current, lines)
	}
	// last is the length of the last page's string.
	last := 0
	if n := len(pages); n > 0 {
		last = decodedLen(pages[n-1])
	}
	for _, l := range lines {
		if l = oneLine(l); l == "" {
			continue
		}
		enc := jsonstr.Append(nil, l)
		n := len(pages)
		if n == 0 || last+1+len(l) > FactPageBytes {
			pages = append(pages, enc)
			last = len(l)
			continue
		}
		// A new slice: the old token is current's bytes.
		p := pages[n-1]
		grown := make([]byte, 0, len(p)+1+len(enc))
		grown = append(append(append(grown, p[:len(p)-1]...), `\n`...), enc[1:]...)
		pages[n-1] = grown
		last += 1 + len(l)
	}
	live := len(pages)
	if live > 0 && markerThrough(pages[0]) > 0 {
		live--
	}
	if live > FactPagesKept {
		return appendFactsSlow(current, lines)
	}
	size := 2 + len(pages)
	for _, p := range pages {
		size += len(p)
	}
	out := make([]byte, 0, size)
	out = append(out, '[')
	for i, p := range pages {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, p...)
	}
	return append(out, ']'), nil
}

// ledgerPages splits a ledger into its pages' JSON strings, quotes
// included, when json.Marshal would write those very bytes for the pages
// they hold: no white space, and no escape but \n, \" and \\ (Marshal
// writes every other it uses as \uXXXX, and the fast path counts one
// decoded byte per escape), no byte it escapes, valid UTF-8. Else false.
func ledgerPages(c []byte) ([][]byte, bool) {
	if len(c) < 2 || c[0] != '[' || c[len(c)-1] != ']' {
		return nil, false
	}
	pages := make([][]byte, 0, FactPagesKept+2)
	if len(c) == 2 {
		return pages, true
	}
	end := len(c) - 1 // the closing bracket
	for i := 1; ; {
		if c[i] != '"' {
			return nil, false
		}
		start := i
		for i++; ; {
			if i >= end {
				return nil, false
			}
			b := c[i]
			if b == '"' {
				break
			}
			switch {
			case b == '\\':
				if i+1 >= end {
					return nil, false
				}
				switch c[i+1] {
				case 'n', '"', '\\':
					i += 2
					continue
				}
				return nil, false
			case b < 0x20 || b == '<' || b == '>' || b == '&':
				return nil, false
			case b < utf8.RuneSelf:
				i++
			default:
				r, size := utf8.DecodeRune(c[i:end])
				if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
					return nil, false
				}
				i += size
			}
		}
		i++
		pages = append(pages, c[start:i])
		if i == end {
			return pages, true
		}
		if c[i] != ',' || i+1 >= end {
			return nil, false
		}
		i++
	}
}

// markerThrough is retiredThrough of a ledger whose first page's token
// from ledgerPages is tok.
func markerThrough(tok []byte) int {
	rest, ok := bytes.CutPrefix(tok[1:], []byte(retiredPrefix))
	if !ok {
		return 0
	}
	n, _ := strconv.Atoi(leadingDigits(string(rest[:len(rest)-len(bytes.TrimLeft(rest, "0123456789"))])))
	return n
}

// decodedLen is the length of the string a page's token from ledgerPages
// holds: each of its escapes is two bytes for one.
func decodedLen(tok []byte) int {
	n := 0
	for i := 1; i < len(tok)-1; i++ {
		if tok[i] == '\\' {
			i++
		}
		n++
	}
	return n
}

// plainLines reads write, a JSON list of strings, when none has an
// escape and all are valid UTF-8 (a model's lines, as the summarizer
// writes them): the strings encoding/json's Unmarshal would give, without
// its reflection. Any other list is not ok (ask encoding/json).
func plainLines(write []byte) ([]string, bool) {
	b := jsonSpace(write)
	if len(b) < 2 || b[0] != '[' || b[len(b)-1] != ']' {
		return nil, false
	}
	lines := []string{}
	rest := jsonSpace(b[1 : len(b)-1])
	for len(rest) > 0 {
		if rest[0] != '"' {
			return nil, false
		}
		end := bytes.IndexByte(rest[1:], '"') + 1
		if end == 0 {
			return nil, false
		}
		s := rest[1:end]
		for _, c := range s {
			if c == '\\' || c < 0x20 {
				return nil, false
			}
		}
		if !utf8.Valid(s) {
			return nil, false
		}
		lines = append(lines, string(s))
		rest = jsonSpace(rest[end+1:])
		if len(rest) == 0 {
			break
		}
		if rest[0] != ',' {
			return nil, false
		}
		if rest = jsonSpace(rest[1:]); len(rest) == 0 {
			return nil, false // a trailing comma
		}
	}
	return lines, true
}

// jsonSpace is b without the white space JSON allows around a value.
func jsonSpace(b []byte) []byte {
	return bytes.Trim(b, " \t\r\n")
}

// appendFactsSlow is appendFacts through encoding/json: the reference, and
// the path of a ledger not as Marshal writes it and of a write that
// retires pages.
func appendFactsSlow(current json.RawMessage, lines []string) (json.RawMessage, error) {
	var pages []string
	if c := bytes.TrimSpace(current); len(c) > 0 && string(c) != "null" {
		if err := json.Unmarshal(c, &pages); err != nil {
			return nil, fmt.Errorf("facts: the ledger is not a list of pages: %w", err)
		}
	}
	for _, l := range lines {
		if l = oneLine(l); l == "" {
			continue
		}
		n := len(pages)
		if n == 0 || len(pages[n-1])+1+len(l) > FactPageBytes {
			pages = append(pages, l)
			continue
		}
		pages[n-1] += "\n" + l
	}
	if pages == nil {
		pages = []string{}
	}
	return json.Marshal(retire(pages))
}

// factAt is a ledger line that holds a fact.
type factAt struct {
	index   int
	speaker string
	line    string
}

// ledger is the facts ledger read back: the lines that hold each fact, in
// the order written (by index).
type ledger map[string][]factAt

// readLedger reads the ledger's pages. A line it cannot read (none this
// code wrote) holds nothing.
func readLedger(pages []string) ledger {
	l := ledger{}
	for _, p := range pages {
		for rest := p; rest != ""; {
			var line string
			line, rest, _ = strings.Cut(rest, "\n")
			h, ok := readLineHead(line)
			if !ok || h.phase || !h.valid() {
				continue
			}
			at := factAt{index: h.from, speaker: strings.TrimSpace(h.speakers), line: line}
			for _, f := range strings.Split(h.text, "; ") {
				if f != "" {
					l[f] = append(l[f], at)
				}
			}
		}
	}
	return l
}

// holds is the ledger line that keeps fact for message index of speaker,
// whose turn began at message turn (its user message; 0 when not known):
// the message's own line, or the line of an earlier message of the same
// turn that said it first (a tool repeating the log, the reply repeating
// a finding). A line of another turn does not keep it: the same name or
// hours on another day is another fact.
func (l ledger) holds(fact string, turn, index int, speaker string) (factAt, bool) {
	ats := l[fact]
	for i := len(ats) - 1; i >= 0; i-- {
		at := ats[i]
		if at.index > index || at.index == index && !strings.EqualFold(at.speaker, speaker) {
			continue
		}
		if at.index < turn {
			break
		}
		return at, true
	}
	return factAt{}, false
}

// addLines adds the ledger lines of head's pinned facts and returns them:
// what a compaction of head appends. A message's line holds its facts
// that no earlier message of its turn said. turn is the user message that
// began the turn of head's first messages (Summary.Turn: the turn the
// previous compaction ended in), 0 when not known: then they write every
// fact of theirs.
func (l ledger) addLines(head []Message, turn int) []string {
	var out []string
	said := map[string]bool{} // facts written since the turn began
	if turn > 0 {
		for f, ats := range l {
			if ats[len(ats)-1].index >= turn {
				said[f] = true
			}
		}
	}
	for _, m := range head {
		if m.Role == RoleUser {
			clear(said)
		}
		sp := cleanSpeaker(m.Speaker)
		content := oneLine(m.Content)
		if classify(sp, content) == notPinned {
			continue
		}
		var fresh []string
		for _, f := range mustKeep(content) {
			if !said[f] && !strings.Contains(f, "; ") {
				said[f] = true
				fresh = append(fresh, f)
			}
		}
		if len(fresh) == 0 {
			continue
		}
		line := "#" + strconv.Itoa(m.Index) + " " + sp + ": " + strings.Join(fresh, "; ")
		at := factAt{index: m.Index, speaker: sp, line: line}
		for _, f := range fresh {
			l[f] = append(l[f], at)
		}
		out = append(out, line)
	}
	return out
}

// turnStarts is, for each message, the index of the user message that
// began its turn: turn (0: not known) before the first one.
func turnStarts(ms []Message, turn int) []int {
	out := make([]int, len(ms))
	for i, m := range ms {
		if m.Role == RoleUser {
			turn = m.Index
		}
		out[i] = turn
	}
	return out
}

// factsText is the ledger as a model is shown it: its newest lines within
// FactsShown runes, oldest first, and how many older lines are not shown.
func factsText(pages []string) string {
	var lines []string
	for _, p := range pages {
		if p != "" && !strings.HasPrefix(p, retiredPrefix) {
			lines = append(lines, strings.Split(p, "\n")...)
		}
	}
	if len(lines) == 0 {
		return ""
	}
	first, n := len(lines), 0
	for first > 0 {
		w := utf8.RuneCountInString(lines[first-1]) + 1
		if n+w > FactsShown {
			break
		}
		n += w
		first--
	}
	head := "PINNED FACTS of the summarized messages, verbatim, each under the #index speaker that said it (a later message of the same turn repeating a fact is not listed again):"
	if first > 0 {
		head += fmt.Sprintf("\n(%d older lines, up to %s, are kept in the facts ledger and not shown here)", first, lineCoordinates(lines[first-1]))
	}
	return head + "\n" + strings.Join(lines[first:], "\n")
}

// lineCoordinates is a ledger line's "#index speaker".
func lineCoordinates(line string) string {
	c, _, _ := strings.Cut(line, ":")
	return c
}
