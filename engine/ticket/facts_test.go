package ticket

import (
	"strings"
	"testing"
)

func TestFactsAndPins(t *testing.T) {
	for in, want := range map[string]string{
		`{"carrier":"PostNL","eta":"2026-09-08","lastScan":"2026-09-06 14:07 sorting hub","order":"SO20260901"}`: "2026-09-08|2026-09-06 14:07|SO20260901",
		"invoice INV-004213, VAT 21%, refund window 30 days, paid €49.95 and 12.50 EUR":                          "INV-004213|21%|30 days|€49.95|12.50 EUR",
		"photo at blob://tickets/2026/att-1.png, see https://example.com/a?b=1.":                                 "blob://tickets/2026/att-1.png|https://example.com/a?b=1",
		"review 1: approved t-1-order, 2 items":                                                                  "",
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
	// A long requirement is clipped but keeps its facts.
	long := "Please check " + strings.Repeat("the details carefully ", 20) + "for SO20260901 delivered 2026-09-03."
	got := keepVerbatim(long, mustKeep(long), lineCap)
	if len([]rune(got)) > lineCap || !strings.Contains(got, "SO20260901") || !strings.Contains(got, "2026-09-03") {
		t.Fatalf("clipped requirement %q", got)
	}
}
