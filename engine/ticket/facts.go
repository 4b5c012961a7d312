package ticket

import (
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"
)

// Fact tokens are what a summary must copy verbatim, never rewrite:
// references, dates, ids, amounts and measured numbers. A hand-written
// scanner, nextFact, finds them: the summarizer reads every line at every
// compaction, and regexp matching was most of its cost. It finds exactly
// what this regexp finds (factSpec in facts_test.go; a test and a fuzz
// target compare the two), the alternatives tried in order so the longer
// readings come first ("49.95 EUR" before "49.95"):
//
//	(?:blob|https?|s3|gs|file)://[^\s"'<>,;)\]}]*[^\s"'<>,;)\]}.!?:]          references, without a sentence's last stop
//	\b\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2})?)?                        dates, with a time
//	\b[A-Z]{2,}-?\d{4,}(?:-[A-Z0-9]+)*\b                                        ids: SO20260901, INV-004213, INV-2026-005
//	[€$£]\s?\d+(?:[.,]\d+)?                                                    amounts, currency first
//	\b\d+(?:[.,]\d+)?\s?(?:%|(?:EUR|USD|GBP|kg|km|cm|mm|m3|m|g)\b)             amounts and measures
//	\b\d+(?:[.,]\d+)?\s(?:working\s)?(?:days?|hours?|weeks?|months?|years?)\b   durations
//	\b\d+[.,]\d+\b                                                              other decimals
//	\b\d{5,}\b                                                                   long numbers: tracking, accounts

// reSignOff is an explicit approval naming who gave it: the signature of
// the construction-site log, the last pin to retire. It only runs on text
// with " by " in it, which is rare.
// A name's initials ("J. Devries") are part of it: a period after a single
// letter does not end the sign-off.
var reSignOff = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)\b(?:approved|signed(?: off)?|authori[sz]ed|confirmed) by (?:[a-z]\. ?)*[^,.;:()\[\]]{1,40}`)
})

// facts lists a text's fact tokens once each, in order of appearance.
func facts(s string) []string {
	var out []string
	refs := hasRefs(s)
	for i := 0; i < len(s); {
		a, b := nextFact(s, i, refs)
		if a < 0 {
			break
		}
		if f := s[a:b]; !contains(out, f) {
			out = append(out, f)
		}
		i = b
	}
	return out
}

// hasFact says whether s holds any fact token.
func hasFact(s string) bool {
	a, _ := nextFact(s, 0, hasRefs(s))
	return a >= 0
}

// hasRefs says whether s may hold a reference, so the scanner need not try
// one at every lower-case letter.
func hasRefs(s string) bool { return strings.Contains(s, "://") }

// pinClass is why a line is pinned; a higher class retires later.
type pinClass int

const (
	notPinned   pinClass = iota
	pinFact              // numbers, ids, references
	pinApproval          // a user's requirement or an approval
	pinSignOff           // "approved by …": kept longest
)

// classify decides from a line's speaker and text whether it is pinned.
// It reads the rendered text, so a summary parsed back classifies its
// lines the way they were classified when written.
func classify(speaker, text string) pinClass {
	switch {
	case hasBy(text) && reSignOff().MatchString(text):
		return pinSignOff
	case speaker == "user" || hasApproval(text):
		return pinApproval
	case hasFact(text):
		return pinFact
	}
	return notPinned
}

// hasBy is the cheap filter before reSignOff: " by " in any case. Only B
// and Y lower-case to b and y, so the four ASCII spellings are all.
func hasBy(s string) bool {
	return strings.Contains(s, " by ") || strings.Contains(s, " By ") || strings.Contains(s, " BY ") || strings.Contains(s, " bY ")
}

// hasApproval matches (?i)\bapprov(?:ed|es|e|al)\b, such as the critic's
// "review 1: approved t-1-order". ASCII folding is exact: of these letters
// only s folds to another rune, ſ, and "approveſ" matches as "approve".
func hasApproval(s string) bool {
	for i := 0; i+7 <= len(s); i++ {
		if !hasPrefixFold(s[i:], "approv") || !wordStart(s, i) {
			continue
		}
		rest := i + len("approv")
		for _, suffix := range approvalEndings {
			if hasPrefixFold(s[rest:], suffix) && wordEnd(s, rest+len(suffix)) {
				return true
			}
		}
	}
	return false
}

var approvalEndings = []string{"ed", "es", "e", "al"}

// hasPrefixFold is strings.HasPrefix with ASCII letters in any case;
// prefix is lower case.
func hasPrefixFold(s, prefix string) bool {
	if len(s) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		if s[i]|0x20 != prefix[i] {
			return false
		}
	}
	return true
}

// mustKeep is what a pinned line may not lose: its facts and its sign-offs.
func mustKeep(s string) []string {
	if !hasBy(s) {
		return facts(s)
	}
	return append(facts(s), reSignOff().FindAllString(s, -1)...)
}

// nextFact finds the first fact token starting at or after i: its bounds,
// or -1, -1. Each alternative of the grammar starts with its own kind of
// byte, so the byte at a position says which to try; refs is hasRefs(s).
func nextFact(s string, i int, refs bool) (int, int) {
	for ; i < len(s); i++ {
		end := -1
		switch factStart[s[i]] {
		case startsNothing:
			continue
		case startsNumber:
			if wordStart(s, i) {
				end = numberFact(s, i)
			}
		case startsReference:
			if refs {
				end = referenceFact(s, i)
			}
		case startsID:
			if wordStart(s, i) {
				end = idFact(s, i)
			}
		case startsAmount:
			end = amountFact(s, i)
		}
		if end > i {
			return i, end
		}
	}
	return -1, -1
}

// What a fact starting with a byte can be.
const (
	startsNothing = iota
	startsNumber
	startsReference
	startsID
	startsAmount
)

// factStart classifies bytes by the facts they can start, so the scanner
// passes over the rest with one lookup each.
var factStart = func() (t [256]uint8) {
	for c := '0'; c <= '9'; c++ {
		t[c] = startsNumber
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = startsID
	}
	for _, c := range "bhsgf" { // blob, http(s), s3, gs, file
		t[c] = startsReference
	}
	t['$'], t[0xC2], t[0xE2] = startsAmount, startsAmount, startsAmount // $, and £ and € start with these bytes
	return t
}()

var schemes = []string{"blob://", "https://", "http://", "s3://", "gs://", "file://"}

// referenceFact: a scheme, then the longest run of reference bytes that
// ends on one a sentence does not end with.
func referenceFact(s string, i int) int {
	for _, sc := range schemes {
		if s[i] != sc[0] || !strings.HasPrefix(s[i:], sc) {
			continue
		}
		end := -1
		for j := i + len(sc); j < len(s) && !refStop(s[j]); j++ {
			if !sentenceStop(s[j]) {
				end = j + 1
			}
		}
		return end
	}
	return -1
}

// refStop ends a reference: [\s"'<>,;)\]}].
func refStop(c byte) bool {
	switch c {
	case '"', '\'', '<', '>', ',', ';', ')', ']', '}':
		return true
	}
	return isSpace(c)
}

// sentenceStop may not end a reference: [.!?:].
func sentenceStop(c byte) bool { return c == '.' || c == '!' || c == '?' || c == ':' }

// idFact: two or more capitals, an optional dash and four or more digits,
// as a whole word.
func idFact(s string, i int) int {
	j := skip(s, i, isUpper)
	if j-i < 2 {
		return -1
	}
	if j < len(s) && s[j] == '-' {
		j++
	}
	k := skip(s, j, isDigit)
	if k-j < 4 || !wordEnd(s, k) {
		return -1
	}
	// Its later parts: INV-2026-005 is one id. Pinning INV-2026 alone let
	// a summary that said INV-2026-006 pass the fidelity check.
	for k < len(s) && s[k] == '-' {
		m := skip(s, k+1, isUpperOrDigit)
		if m == k+1 || !wordEnd(s, m) {
			break
		}
		k = m
	}
	return k
}

func isUpperOrDigit(c byte) bool { return isUpper(c) || isDigit(c) }

// amountFact: a currency sign, an optional space and a number.
func amountFact(s string, i int) int {
	j := i
	switch {
	case s[i] == '$':
		j++
	case strings.HasPrefix(s[i:], "£"):
		j += len("£")
	case strings.HasPrefix(s[i:], "€"):
		j += len("€")
	default:
		return -1
	}
	if j < len(s) && isSpace(s[j]) {
		j++
	}
	if j >= len(s) || !isDigit(s[j]) {
		return -1
	}
	return number(s, j)
}

// numberFact tries, in the grammar's order, the alternatives that start
// with a digit at a word start: a date, a measure, a duration, a decimal
// and a long number.
func numberFact(s string, i int) int {
	if end := dateFact(s, i); end > 0 {
		return end
	}
	n := number(s, i)
	if end := measureFact(s, n); end > 0 {
		return end
	}
	if end := durationFact(s, n); end > 0 {
		return end
	}
	run := skip(s, i, isDigit)
	if n > run && wordEnd(s, n) { // a decimal
		return n
	}
	if run-i >= 5 && wordEnd(s, run) {
		return run
	}
	return -1
}

// number is the end of digits with an optional decimal part, [.,]\d+.
func number(s string, i int) int {
	j := skip(s, i, isDigit)
	if j+1 < len(s) && (s[j] == '.' || s[j] == ',') && isDigit(s[j+1]) {
		j = skip(s, j+1, isDigit)
	}
	return j
}

// dateFact: yyyy-mm-dd, then optionally " hh:mm" or "Thh:mm", then
// optionally ":ss".
func dateFact(s string, i int) int {
	j, ok := fixed(s, i, "dddd-dd-dd")
	if !ok {
		return -1
	}
	t, ok := fixed(s, j, " dd:dd")
	if !ok {
		t, ok = fixed(s, j, "Tdd:dd")
	}
	if !ok {
		return j
	}
	if sec, ok := fixed(s, t, ":dd"); ok {
		return sec
	}
	return t
}

// fixed reads pattern at i, a 'd' standing for any digit: where it ends,
// and whether it was there.
func fixed(s string, i int, pattern string) (int, bool) {
	if len(s)-i < len(pattern) {
		return i, false
	}
	for k := 0; k < len(pattern); k++ {
		if c := s[i+k]; pattern[k] == 'd' && !isDigit(c) || pattern[k] != 'd' && c != pattern[k] {
			return i, false
		}
	}
	return i + len(pattern), true
}

var measureUnits = []string{"EUR", "USD", "GBP", "kg", "km", "cm", "mm", "m3", "m", "g"}

// measureFact: after a number at n, an optional space, then % or a unit
// as a whole word.
func measureFact(s string, n int) int {
	if n < len(s) && isSpace(s[n]) {
		n++
	}
	if n >= len(s) || !strings.ContainsRune("%EUGkcmg", rune(s[n])) { // the units' first bytes
		return -1
	}
	if s[n] == '%' {
		return n + 1
	}
	for _, u := range measureUnits {
		if strings.HasPrefix(s[n:], u) && wordEnd(s, n+len(u)) {
			return n + len(u)
		}
	}
	return -1
}

var durationUnits = []string{"day", "hour", "week", "month", "year"}

// durationFact: after a number at n, a space, optionally "working" and a
// space, then a unit of time.
func durationFact(s string, n int) int {
	if n >= len(s) || !isSpace(s[n]) {
		return -1
	}
	n++
	if strings.HasPrefix(s[n:], "working") && n+7 < len(s) && isSpace(s[n+7]) {
		if end := timeUnit(s, n+8); end > 0 {
			return end
		}
	}
	return timeUnit(s, n)
}

// timeUnit: a unit of time at i, singular or plural, as a whole word.
func timeUnit(s string, i int) int {
	if i >= len(s) || !strings.ContainsRune("dhwmy", rune(s[i])) { // the units' first bytes
		return -1
	}
	for _, u := range durationUnits {
		if !strings.HasPrefix(s[i:], u) {
			continue
		}
		end := i + len(u)
		if end < len(s) && s[end] == 's' && wordEnd(s, end+1) {
			return end + 1
		}
		if wordEnd(s, end) {
			return end
		}
	}
	return -1
}

// skip is the end of the run of bytes from i that satisfy ok.
func skip(s string, i int, ok func(byte) bool) int {
	for i < len(s) && ok(s[i]) {
		i++
	}
	return i
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
func isUpper(c byte) bool { return 'A' <= c && c <= 'Z' }

// isSpace is the regexp class \s: [\t\n\f\r ].
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}

// isWord is the regexp class \w. Word bytes are ASCII, so a byte of a
// multi-byte rune is never one: \b can be read from single bytes.
func isWord(c byte) bool {
	return isDigit(c) || isUpper(c) || 'a' <= c && c <= 'z' || c == '_'
}

// wordStart is \b before the word byte at i.
func wordStart(s string, i int) bool { return i == 0 || !isWord(s[i-1]) }

// wordEnd is \b after the word byte before i.
func wordEnd(s string, i int) bool { return i >= len(s) || !isWord(s[i]) }

// keepVerbatim fits s into limit runes: s itself when it fits, else its
// beginning with the kept tokens it cut off appended, so facts survive the
// clip.
func keepVerbatim(s string, keep []string, limit int) string {
	if utf8.RuneCountInString(s) <= limit {
		return s
	}
	// Reserve room for the tokens first: they matter more than the prose.
	reserved := tokensWithin(keep, limit/2)
	room := limit
	if len(reserved) > 0 {
		room -= utf8.RuneCountInString(" [+ ]") + utf8.RuneCountInString(strings.Join(reserved, " "))
	}
	head := clipTo(s, room)
	var lost []string
	for _, k := range reserved {
		if !strings.Contains(head, k) {
			lost = append(lost, k)
		}
	}
	if len(lost) == 0 {
		return head
	}
	return head + " [+ " + strings.Join(lost, " ") + "]"
}

// tokensWithin takes tokens in order while their joined length fits limit.
func tokensWithin(tokens []string, limit int) []string {
	var out []string
	n := 0
	for _, t := range tokens {
		w := utf8.RuneCountInString(t)
		if len(out) > 0 {
			w++
		}
		if n+w > limit {
			break
		}
		n += w
		out = append(out, t)
	}
	return out
}

// clipTo shortens s to at most n runes, the last being "…" when cut.
func clipTo(s string, n int) string {
	if len(s) <= n { // no more bytes than n: no more runes
		return s
	}
	if n <= 0 {
		return ""
	}
	// One pass: find where rune n-1 starts, and whether there is a rune n.
	k, cut := 0, 0
	for i, r := range s {
		if r == utf8.RuneError {
			return clipRunes(s, n) // invalid bytes become U+FFFD, as they always did
		}
		if k == n-1 {
			cut = i
		}
		if k == n {
			return strings.TrimRight(s[:cut], " ") + "…"
		}
		k++
	}
	return s
}

// clipRunes is clipTo by way of a []rune copy, for text that is not valid
// UTF-8.
func clipRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimRight(string(r[:n-1]), " ") + "…"
}
