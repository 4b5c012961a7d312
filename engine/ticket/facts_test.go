package ticket

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestFactsAndPins(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`{"carrier":"PostNL","eta":"2026-09-08","lastScan":"2026-09-06 14:07 sorting hub","order":"SO20260901"}`: "2026-09-08|2026-09-06 14:07|SO20260901",
		"invoice INV-004213, VAT 21%, refund window 30 days, paid €49.95 and 12.50 EUR":                          "INV-004213|21%|30 days|€49.95|12.50 EUR",
		"photo at blob://tickets/2026/att-1.png, see https://example.com/a?b=1.":                                 "blob://tickets/2026/att-1.png|https://example.com/a?b=1",
		"review 1: approved t-1-order, 2 items":                                                                  "",
		"poured 8 m3 of concrete; excavation reached 3.37 m, wind 24 km/h":                                       "8 m3|3.37 m|24 km",
		// An id's later parts belong to it: pinning INV-2026 alone let a
		// summary saying INV-2026-006 keep the fact.
		"invoice INV-2026-005 replaces INV-2026-004-B; CO-0103-signed, AB-1234-56-7x": "INV-2026-005|INV-2026-004-B|CO-0103|AB-1234-56",
	} {
		if got := strings.Join(facts(in), "|"); got != want {
			t.Errorf("facts(%q) = %q, want %q", in, got, want)
		}
	}
	for _, tc := range []struct {
		speaker, text string
		want          pinClass
	}{
		{"user", "hello", pinApproval},
		{"critic", "review 2: approved t-2-order", pinApproval},
		{"supervisor", "refund approved by Dana Smit", pinSignOff},
		{"executor[t-1-order]", "stage packed since 2026-09-04", pinFact},
		{"planner", "thinking about the plan", notPinned},
	} {
		if got := classify(tc.speaker, tc.text); got != tc.want {
			t.Errorf("classify(%s, %q) = %d, want %d", tc.speaker, tc.text, got, tc.want)
		}
	}
	// A sign-off keeps the signer's initials: "signed by J" named nobody.
	for in, want := range map[string]string{
		"the client approved change order CO-0103 in writing, signed by J. Devries; record who approved it.": "signed by J. Devries",
		"change order CO-4502, approved by M. Okafor, approvedOn 2026-10-03.":                                "approved by M. Okafor",
		"approved by the client. Then the pour":                                                              "approved by the client",
	} {
		if got := mustKeep(in); !slices.Contains(got, want) {
			t.Errorf("mustKeep(%q) = %q, want %q in it", in, got, want)
		}
	}
	// A long requirement is clipped but keeps its facts.
	long := "Please check " + strings.Repeat("the details carefully ", 20) + "for SO20260901 delivered 2026-09-03."
	got := keepVerbatim(long, mustKeep(long), lineCap)
	if len([]rune(got)) > lineCap || !strings.Contains(got, "SO20260901") || !strings.Contains(got, "2026-09-03") {
		t.Fatalf("clipped requirement %q", got)
	}
}

// factSpec is the grammar nextFact implements, as the regexp it replaced;
// the scanner must find exactly what this finds.
var factSpec = regexp.MustCompile(strings.Join([]string{
	`(?:blob|https?|s3|gs|file)://[^\s"'<>,;)\]}]*[^\s"'<>,;)\]}.!?:]`,
	`\b\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2})?)?`,
	`\b[A-Z]{2,}-?\d{4,}(?:-[A-Z0-9]+)*\b`,
	`[€$£]\s?\d+(?:[.,]\d+)?`,
	`\b\d+(?:[.,]\d+)?\s?(?:%|(?:EUR|USD|GBP|kg|km|cm|mm|m3|m|g)\b)`,
	`\b\d+(?:[.,]\d+)?\s(?:working\s)?(?:days?|hours?|weeks?|months?|years?)\b`,
	`\b\d+[.,]\d+\b`,
	`\b\d{5,}\b`,
}, "|"))

// approvalSpec is the regexp hasApproval implements.
var approvalSpec = regexp.MustCompile(`(?i)\bapprov(?:ed|es|e|al)\b`)

// checkScannerAgainstSpec fails when the hand-written scanners and the
// regexps they replaced disagree on s.
func checkScannerAgainstSpec(t *testing.T, s string) {
	t.Helper()
	var want []string
	for _, f := range factSpec.FindAllString(s, -1) {
		if !contains(want, f) {
			want = append(want, f)
		}
	}
	if got := facts(s); strings.Join(got, "\x00") != strings.Join(want, "\x00") || len(got) != len(want) {
		t.Fatalf("facts(%q) = %q, the regexp finds %q", s, got, want)
	}
	if got, want := hasFact(s), factSpec.MatchString(s); got != want {
		t.Fatalf("hasFact(%q) = %v, the regexp says %v", s, got, want)
	}
	if got, want := hasApproval(s), approvalSpec.MatchString(s); got != want {
		t.Fatalf("hasApproval(%q) = %v, the regexp says %v", s, got, want)
	}
	if got, want := hasBy(s), strings.Contains(strings.ToLower(s), " by "); got != want {
		t.Fatalf("hasBy(%q) = %v, lower-case search says %v", s, got, want)
	}
}

// factCorpus is the text the scanner is checked on: edge cases of every
// alternative, then random mixes of their pieces.
func factCorpus() []string {
	cases := []string{
		"", "1", "12345", "1234", "a12345", "12345a", "_12345", "12345_", "x 12345.", "1.5", "1,5", "1.", ".5", "a1.5", "1.5a", "1.5.6",
		"2026-09-08", "2026-09-08T10:11", "2026-09-08 10:11:12", "2026-09-08 10:1", "2026-09-08T10:11:1", "12026-09-08", "2026-09-081", "x2026-09-08", "-2026-09-08",
		"SO20260901", "INV-004213", "S20260901", "SO2026", "SO2026090x", "xSO20260901", "ABC-12", "AB--1234", "ABc1234", "AB1234_", "AB1234é",
		"INV-2026-005", "INV-2026-", "INV-2026-a", "INV-2026-005x", "INV-2026--5", "INV-2026-5-6-X7", "INV-2026-_", "INV-2026-É",
		"€49.95", "€ 49.95", "$5", "$ 5", "$x", "£12,50", "€", "€ ", "€ x", "\xe2\x82", "\xc2", "\xc2\xa3 7", "$5.", "$5.a",
		"21%", "21 %", "21  %", "12.50 EUR", "12.50EUR", "12.50 EURO", "3 kg", "3kgs", "3 m", "3 mm", "3 mmm", "3 g.", "3gr", "1,5 km", "5 cm!", "3 USD", "3 GBPx",
		"30 days", "30 day", "30 dayss", "1 working day", "3-5 working days", "5 working  days", "2 weeks", "2 weekend", "6 months", "1 year", "1.5 hours", "2\tyears", "2 workingdays", "2 working weeks",
		"blob://tickets/2026/att-1.png", "see https://example.com/a?b=1.", "http://x", "http://", "http://.", "https://a.b/c),", "s3://bucket/key;", "gs://b/k}", "file:///tmp/x:", "xhttps://a", "ftp://a", "blob://a b", "blob://é.", "blob://a\xff",
		"review 1: approved t-1-order", "Approved", "APPROVES it", "approval", "approve", "disapproved", "approvedx", "approveſ", "approveſx", "approv", "the approvals", "approve_", "pre-approved",
		"refund approved by Dana Smit", "done BY me", " by", "by ", "x BY y", "ſigned by x",
		"İ 12345", "K 12345", "12345\u00a0kg", "5\u00a0days", "1\v%", "1\f%",
	}
	pieces := []string{"2026", "-", "09", ":", " ", "T", "SO", "INV", "12", "12345", ".", ",", "5", "€", "$", "£", "EUR", "kg", "m", "g", "%", "days", "day", "working", "weeks", "s",
		"http", "https", "://", "blob", "a", "/", "?", "!", ")", "\"", "x", "_", "é", "\t", "approv", "ed", "es", "al", "e", "APPROV", "by", "BY", "ſ", "\xff"}
	seed := uint32(1)
	for n := 0; n < 20000; n++ {
		var b strings.Builder
		for k := 0; k < 1+n%9; k++ {
			seed = seed*1664525 + 1013904223
			b.WriteString(pieces[seed>>16%uint32(len(pieces))])
		}
		cases = append(cases, b.String())
	}
	return cases
}

func TestFactScannerMatchesTheRegexp(t *testing.T) {
	t.Parallel()
	for _, s := range factCorpus() {
		checkScannerAgainstSpec(t, s)
	}
	// And every line of a long conversation, as messages and as the
	// summary lines made of them.
	c := newConversation(t, mockAnswer)
	for turn := 0; turn < 200; turn++ {
		ms := simTurn(turn)
		c.add(ms...)
		for _, m := range ms {
			checkScannerAgainstSpec(t, m.Content)
		}
		if c.compact() {
			for _, line := range strings.Split(c.sum.Text, "\n") {
				checkScannerAgainstSpec(t, line)
			}
		}
	}
}

func FuzzFactScanner(f *testing.F) {
	for _, s := range factCorpus()[:200] {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkScannerAgainstSpec(t, s) })
}
