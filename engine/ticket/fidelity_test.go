package ticket

import (
	"strings"
	"testing"
)

func TestFidelityNamesKeptFoldedAlteredMovedAndLostFacts(t *testing.T) {
	t.Parallel()
	originals := []Message{
		{Index: 1, Role: RoleUser, Speaker: "user", Content: "Order SO20260901 arrived damaged; I paid 49.95 EUR on 2026-09-01."},
		{Index: 2, Role: RoleAssistant, Speaker: "critic", Content: "review 1: approved t-1-order"},
		{Index: 3, Role: RoleTool, Speaker: "tool[refund_policy]", Content: `{"window":"30 days","order":"SO20260901"}`},
		{Index: 4, Role: RoleAssistant, Speaker: "executor[t-2]", Content: "invoice INV-004213 has VAT 21%"},
		{Index: 5, Role: RoleAssistant, Speaker: "executor[t-3]", Content: "the parcel 99887766 is at the hub"},
		{Index: 6, Role: RoleUser, Speaker: "user", Content: "thanks, that is all"},
	}
	// The facts ledger as the summarizer writes it for these messages: #4
	// repeats no fact, #3 repeats #1's order.
	ledger := []string{"#1 user: SO20260901; 49.95 EUR; 2026-09-01\n#3 tool[refund_policy]: 30 days\n#4 executor[t-2]: INV-004213; 21%\n#5 executor[t-3]: 99887766"}
	cases := []struct {
		name, text string
		want       map[string]string // fact → status
		ok         bool
		facts      []string
	}{
		{"faithful", "#1 user: Order SO20260901 arrived damaged; paid 49.95 EUR on 2026-09-01.\n#2 critic: review 1: approved t-1-order\n#3 tool[refund_policy]: window 30 days, order SO20260901\n#4 executor[t-2]: invoice INV-004213, VAT 21%\n#5 executor[t-3]: parcel 99887766 at the hub\n#6 user: thanks",
			map[string]string{"SO20260901": FactKept, "49.95 EUR": FactKept, "2026-09-01": FactKept, "INV-004213": FactKept, "21%": FactKept, "99887766": FactKept}, true, nil},
		{"folded, the ledger keeps the facts", "#1 user: Order SO20260901 arrived damaged; paid 49.95 EUR on 2026-09-01.\n#2–#6 critic, tool[refund_policy], executor[t-2], executor[t-3], user: reviewed and answered; 5 facts retired",
			map[string]string{"SO20260901": FactKept, "INV-004213": FactFolded, "99887766": FactFolded, "30 days": FactFolded}, true, ledger},
		{"folded away: no ledger keeps them", "#1 user: Order SO20260901 arrived damaged; paid 49.95 EUR on 2026-09-01.\n#2–#6 critic, tool[refund_policy], executor[t-2], executor[t-3], user: reviewed and answered; 5 facts retired",
			map[string]string{"SO20260901": FactKept, "INV-004213": FactLost, "99887766": FactLost}, false, nil},
		{"altered amount", "#1 user: Order SO20260901 arrived damaged; paid 94.95 EUR on 2026-09-01.\n#2–#6 critic, tool[refund_policy], executor[t-2], executor[t-3], user: reviewed and answered; 5 facts retired",
			map[string]string{"49.95 EUR": FactAltered, "SO20260901": FactKept, "INV-004213": FactFolded}, false, ledger},
		{"lost", "#1 user: my order arrived damaged\n#2–#6 critic, tool[refund_policy], executor[t-2], executor[t-3], user: reviewed and answered",
			map[string]string{"SO20260901": FactLost, "INV-004213": FactLost}, false, nil},
		{"the ledger names another speaker", "#1 user: my order\n#2–#6 critic, tool[refund_policy], executor[t-2], executor[t-3], user: reviewed",
			map[string]string{"SO20260901": FactLost, "INV-004213": FactLost}, false, []string{"#1 critic: SO20260901\n#4 executor[t-9]: INV-004213"}},
		{"the ledger has it only later", "#1 user: my order\n#2–#6 critic, tool[refund_policy], executor[t-2], executor[t-3], user: reviewed",
			map[string]string{"SO20260901": FactLost}, false, []string{"#3 tool[refund_policy]: SO20260901"}},
		{"moved to another speaker", "#1 critic: Order SO20260901 arrived damaged; paid 49.95 EUR on 2026-09-01.\n#2–#6 critic, tool[refund_policy], executor[t-2], executor[t-3], user: reviewed; 5 facts retired",
			map[string]string{"SO20260901": FactMoved, "49.95 EUR": FactMoved}, false, ledger},
	}
	for _, tc := range cases {
		r := CheckFidelity(&Summary{Text: tc.text, From: 1, To: 6, HistoryVersion: 1}, tc.facts, originals)
		got := map[string]string{}
		for _, f := range r.Facts {
			if _, seen := got[f.Fact]; !seen || f.Index == 1 {
				got[f.Fact] = f.Status
			}
		}
		for fact, want := range tc.want {
			if got[fact] != want {
				t.Errorf("%s: %s is %q, want %q (all: %v)", tc.name, fact, got[fact], want, got)
			}
		}
		if r.OK() != tc.ok {
			t.Errorf("%s: OK %v, want %v: %s", tc.name, r.OK(), tc.ok, r.Verdict())
		}
		if tc.ok != strings.HasPrefix(r.Verdict(), "PASS") {
			t.Errorf("%s: verdict %q", tc.name, r.Verdict())
		}
		if r.Messages != 6 {
			t.Errorf("%s: %d messages checked, want 6", tc.name, r.Messages)
		}
	}
	r := CheckFidelity(&Summary{Text: "#1 user: Order SO20260901 arrived damaged; paid 94.95 EUR on 2026-09-01.", From: 1, To: 1}, nil, originals)
	for _, f := range r.Facts {
		if f.Fact == "49.95 EUR" && (len(f.Instead) != 1 || f.Instead[0] != "94.95 EUR") {
			t.Errorf("an altered amount says %v instead, want [94.95 EUR]", f.Instead)
		}
	}
}

// The mock summarizer of a real compaction passes, and the summarizer the
// lesson breaks on purpose fails.
func TestFidelityOfTheMockSummary(t *testing.T) {
	t.Parallel()
	var msgs []Message
	for i := 1; i <= 24; i++ {
		msgs = append(msgs, Message{Index: i, Role: RoleUser, Speaker: "user", Content: "order SO2026090" + string(rune('0'+i%10)) + " costs 12.50 EUR, ship by 2026-10-0" + string(rune('1'+i%9))})
	}
	sum, _, err := Compact(nil, msgs[:18], summaryAnswer(Transcript(msgs[:18])))
	if err != nil {
		t.Fatal(err)
	}
	s := &sum
	if r := CheckFidelity(s, nil, msgs); !r.OK() || r.Counts.Kept == 0 {
		t.Fatalf("the mock's summary: %s", r.Verdict())
	}
	bad := *s
	bad.Text = strings.ReplaceAll(bad.Text, "12.50 EUR", "21.50 EUR")
	if r := CheckFidelity(&bad, nil, msgs); r.OK() || r.Counts.Altered == 0 {
		t.Fatalf("a summary with every amount changed: %s", r.Verdict())
	}
}
