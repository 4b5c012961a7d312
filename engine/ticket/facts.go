package ticket

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// reFact finds the tokens a summary must copy verbatim, never rewrite:
// references, dates, ids, amounts and measured numbers. Alternatives are
// tried left to right, so the longer readings come first ("49.95 EUR"
// before "49.95").
var reFact = regexp.MustCompile(strings.Join([]string{
	`(?:blob|https?|s3|gs|file)://[^\s"'<>,;)\]}]*[^\s"'<>,;)\]}.!?:]`, // references, without a sentence's last stop
	`\b\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2})?)?`,               // dates, with a time
	`\b[A-Z]{2,}-?\d{4,}\b`,                                                     // ids: SO20260901, INV-004213
	`[€$£]\s?\d+(?:[.,]\d+)?`,                                                   // amounts, currency first
	`\b\d+(?:[.,]\d+)?\s?(?:%|(?:EUR|USD|GBP|kg|km|cm|mm|m|g)\b)`,               // amounts and measures
	`\b\d+(?:[.,]\d+)?\s(?:working\s)?(?:days?|hours?|weeks?|months?|years?)\b`, // durations
	`\b\d+[.,]\d+\b`, // other decimals
	`\b\d{5,}\b`,     // long numbers: tracking, accounts
}, "|"))

// reSignOff is an explicit approval naming who gave it: the signature of
// the construction-site log, the last pin to retire.
var reSignOff = regexp.MustCompile(`(?i)\b(?:approved|signed(?: off)?|authori[sz]ed|confirmed) by [^,.;:()\[\]]{1,40}`)

// reApproval is any approval, such as the critic's "review 1: approved t-1-order".
var reApproval = regexp.MustCompile(`(?i)\bapprov(?:ed|es|e|al)\b`)

// facts lists a text's fact tokens once each, in order of appearance.
func facts(s string) []string {
	if !mayHaveFacts(s) {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for _, f := range reFact.FindAllString(s, -1) {
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	return out
}

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
	lower := strings.ToLower(text)
	switch {
	case strings.Contains(lower, " by ") && reSignOff.MatchString(text):
		return pinSignOff
	case speaker == "user" || strings.Contains(lower, "approv") && reApproval.MatchString(text):
		return pinApproval
	case mayHaveFacts(text) && reFact.MatchString(text):
		return pinFact
	}
	return notPinned
}

// mayHaveFacts is a cheap filter before reFact: every fact has a digit or
// is a reference.
func mayHaveFacts(s string) bool {
	return strings.ContainsAny(s, "0123456789") || strings.Contains(s, "://")
}

// mustKeep is what a pinned line may not lose: its facts and its sign-offs.
func mustKeep(s string) []string {
	if !strings.Contains(strings.ToLower(s), " by ") {
		return facts(s)
	}
	return append(facts(s), reSignOff.FindAllString(s, -1)...)
}

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
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	r := []rune(s)
	return strings.TrimRight(string(r[:n-1]), " ") + "…"
}
