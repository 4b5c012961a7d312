package ticket

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"rewind/engine"
	"rewind/engine/model"
	"rewind/store/memory"
)

// The site-log scenario plans checks of the day's matters with its own
// tools, writes a daily report, and its summary keeps the seed's facts
// (depths, batches, change orders, who signed) through compaction: the
// fidelity check passes on the mock's summary after two weeks of days.
func TestSiteLogScenarioKeepsItsFacts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, err := engine.New(memory.New(), NewGraph(), NewMock())
	if err != nil {
		t.Fatal(err)
	}
	const days = 14
	for d := 1; d <= days; d++ {
		turn := Turn{Text: SiteLogDay(d)}
		if d == 1 {
			turn.Scenario = ScenarioSiteLog
		}
		if _, err := e.Run(ctx, "site", turn.Writes(), engine.RunConfig{}); err != nil {
			t.Fatalf("day %d: %v", d, err)
		}
		head, err := e.Latest(ctx, "site")
		if err != nil {
			t.Fatal(err)
		}
		s, err := Decode(head.Values)
		if err != nil {
			t.Fatal(err)
		}
		if s.Scenario != ScenarioSiteLog {
			t.Fatalf("day %d: scenario %q, want it kept from day 1", d, s.Scenario)
		}
		want := map[int]string{1: "excavation", 2: "concrete", 3: "change", 0: "inspection"}[d%4]
		found := false
		for _, st := range s.Subtasks {
			found = found || st.Topic == want
			if topicOf(st.Topic).tool == "search_kb" || !strings.Contains(st.Goal, "DL2026") {
				t.Errorf("day %d: subtask %+v is not a site check of the day's log", d, st)
			}
		}
		if !found {
			t.Errorf("day %d (%q): subtasks %+v, want a %s check", d, SiteLogDay(d), s.Subtasks, want)
		}
		last := s.Messages[len(s.Messages)-1]
		if last.Speaker != "reply" || !strings.HasPrefix(last.Content, "Daily report:") {
			t.Errorf("day %d: the reply is %q, want a daily report", d, last.Content)
		}
	}
	head, err := e.Latest(ctx, "site")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Decode(head.Values)
	if err != nil {
		t.Fatal(err)
	}
	if s.Summary == nil || s.Summary.HistoryVersion < 2 {
		t.Fatalf("two weeks of days compacted %v times, want at least twice", s.Summary)
	}
	stored, err := e.Transcript(ctx, "site", head.ID, int64(s.Summary.From), int64(s.Summary.To))
	if err != nil {
		t.Fatal(err)
	}
	var msgs []Message
	for _, m := range stored {
		var msg Message
		if err := json.Unmarshal(m.Body, &msg); err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, msg)
	}
	r := CheckFidelity(s.Summary, s.Facts, msgs)
	if !r.OK() || r.Counts.Kept == 0 {
		t.Fatalf("fidelity of the site log's summary: %s", r.Verdict())
	}
	// Sign-offs retire last: the newest summarized one is still verbatim.
	if !strings.Contains(s.Summary.Text, "signed by J. Devries") {
		t.Errorf("no sign-off kept verbatim in the summary:\n%s", s.Summary.Text)
	}
	if !strings.Contains(s.Summary.Text, "CO-0") {
		t.Errorf("no change order kept in the summary:\n%s", s.Summary.Text)
	}
}

func TestUnknownScenarioIsRefused(t *testing.T) {
	t.Parallel()
	if err := CheckScenario("space-station"); err == nil || !strings.Contains(err.Error(), "ticket or site-log") {
		t.Fatalf("CheckScenario(space-station) = %v", err)
	}
	for _, s := range []string{"", ScenarioTicket, ScenarioSiteLog} {
		if err := CheckScenario(s); err != nil {
			t.Errorf("CheckScenario(%q) = %v", s, err)
		}
	}
}

// siteFigures are a text's figures by kind, as the log writes them or as
// the mock's findings label them ("depth 3.37 m", "batch BT-10014").
type siteFigures map[string][]string

var reportFigures = map[string]*regexp.Regexp{
	"depth":  regexp.MustCompile(`\bdepth (\d+\.\d+ m)\b`),
	"grid":   regexp.MustCompile(`\bgrid ([A-Z]\d+)\b`),
	"batch":  regexp.MustCompile(`\b(BT-\d+)\b`),
	"volume": regexp.MustCompile(`\bvolume (\d+ m3)\b`),
	"change": regexp.MustCompile(`\b(CO-\d+)\b`),
	"signer": regexp.MustCompile(`\b(?:approved|signed) by ([A-Z]\. [A-Z][a-z]+)`),
	"hours":  regexp.MustCompile(`\bhoursLost (\d+ hours?)\b`),
}

func figuresOf(text string) siteFigures {
	out := siteFigures{}
	for kind, re := range reportFigures {
		for _, m := range re.FindAllStringSubmatch(text, -1) {
			out[kind] = append(out[kind], m[1])
		}
	}
	return out
}

// logFigures are what SiteLogDay(n) says, spelled out here again (not read
// back with the code's own parsers).
func logFigures(n int) siteFigures {
	switch n % 4 {
	case 1:
		return siteFigures{"depth": {fmt.Sprintf("%d.%02d m", 2+n%3, (n*37)%100)}, "grid": {fmt.Sprintf("C%d", 1+n%8)}}
	case 2:
		return siteFigures{"batch": {fmt.Sprintf("BT-%05d", 10000+n*7)}, "volume": {fmt.Sprintf("%d m3", 6+n%20)}}
	case 3:
		return siteFigures{"change": {fmt.Sprintf("CO-%04d", 100+n)}, "signer": {"J. Devries"}, "hours": {"2 hours"}}
	}
	return siteFigures{}
}

// Every figure of every daily report (the reply, which passes on the
// approved findings) is the one the day's log entry gives: the tools
// answer from records seeded from the log, so nothing the site manager
// wrote is contradicted (day 3 said CO-0103, J. Devries, 2 hours; the
// tool said CO-4502, M. Okafor, 4 hours, and the report repeated it).
func TestDailyReportsAgreeWithTheLog(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, err := engine.New(memory.New(), NewGraph(), NewMock())
	if err != nil {
		t.Fatal(err)
	}
	for d := 1; d <= 14; d++ {
		turn := Turn{Text: SiteLogDay(d), Scenario: ScenarioSiteLog}
		if _, err := e.Run(ctx, "site", turn.Writes(), engine.RunConfig{}); err != nil {
			t.Fatalf("day %d: %v", d, err)
		}
		head, err := e.Latest(ctx, "site")
		if err != nil {
			t.Fatal(err)
		}
		s, err := Decode(head.Values, "messages")
		if err != nil {
			t.Fatal(err)
		}
		report := s.Messages[len(s.Messages)-1].Content
		want, got := logFigures(d), figuresOf(report)
		for kind, ws := range want {
			if len(got[kind]) == 0 {
				t.Errorf("day %d: the report gives no %s; the log says %v\nlog: %s\nreport: %s", d, kind, ws, SiteLogDay(d), report)
			}
			for _, g := range got[kind] {
				if g != ws[0] {
					t.Errorf("day %d: the report's %s is %s, the log's %s\nlog: %s\nreport: %s", d, kind, g, ws[0], SiteLogDay(d), report)
				}
			}
		}
		for kind, gs := range got {
			if want[kind] == nil && (kind == "batch" || kind == "change" || kind == "signer") {
				t.Errorf("day %d: the report names %s %v, which the log never did\nlog: %s\nreport: %s", d, kind, gs, SiteLogDay(d), report)
			}
		}
	}
}

// The records the tools read agree with what was written about them, and
// only a bumped record (changed since) reads otherwise.
func TestToolsAnswerFromWhatTheConversationSaid(t *testing.T) {
	t.Parallel()
	field := func(tool, ref, said string, version int, key string) string {
		var v map[string]any
		if err := json.Unmarshal(runTool(tool, ref, said, 0, version), &v); err != nil {
			t.Fatal(err)
		}
		if key == "charges" {
			b, _ := json.Marshal(v[key])
			return string(b)
		}
		return fmt.Sprint(v[key])
	}
	const day3 = "Day 3 (DL20261003): the client approved change order CO-0103 in writing, signed by J. Devries; record who approved it. Rain stopped work for 2 hours."
	for _, c := range []struct{ tool, ref, said, key, want string }{
		{"change_orders", "DL20261003", day3, "changeOrder", "CO-0103"},
		{"change_orders", "DL20261003", day3, "approvedBy", "J. Devries"},
		{"change_orders", "DL20261003", day3, "approvedOn", "2026-10-03"},
		{"weather_log", "DL20261003", day3, "hoursLost", "2 hours"},
		{"site_survey", "DL20261001", SiteLogDay(1), "depth", "3.37 m"},
		{"site_survey", "DL20261001", SiteLogDay(1), "grid", "C2"},
		{"batch_ticket", "DL20261002", SiteLogDay(2), "batch", "BT-10014"},
		{"batch_ticket", "DL20261002", SiteLogDay(2), "volume", "8 m3"},
		{"lookup_order", "SO20260901", "Order SO20260901 arrived damaged; I paid 49.95 EUR on 2026-09-01.", "stage", "delivered"},
		{"address_change", "SO20260901", "My parcel SO20260901 was delivered yesterday", "changeable", "false"},
		{"cancel_check", "SO20260901", "SO20260901 arrived broken", "cancellable", "false"},
		{"payment_lookup", "SO20260901", "Order SO20260901 arrived damaged; I paid 49.95 EUR on 2026-09-01.", "charges", `[{"amount":"49.95 EUR","date":"2026-09-01"}]`},
	} {
		if got := field(c.tool, c.ref, c.said, BaseVersion, c.key); got != c.want {
			t.Errorf("%s(%s) after %q: %s is %s, want %s", c.tool, c.ref, c.said, c.key, got, c.want)
		}
		if bumped := field(c.tool, c.ref, c.said, BaseVersion+1, c.key); bumped == c.want && c.key != "changeable" && c.key != "cancellable" && c.key != "approvedOn" {
			t.Errorf("%s(%s) bumped: %s still %s: a bumped record must read differently", c.tool, c.ref, c.key, bumped)
		}
	}
	// An order the customer says has not arrived is not delivered.
	for _, said := range []string{"My order SO20260901 hasn't arrived", "SO20260901 has not arrived yet", "SO20260901 never arrived"} {
		if got := field("lookup_order", "SO20260901", said, BaseVersion, "stage"); got == "delivered" {
			t.Errorf("after %q the order is %s", said, got)
		}
	}
	// Nothing said: the generated record, as before.
	if a, b := runTool("site_survey", "DL20261001", "", 0, BaseVersion), runTool("site_survey", "DL20261001", "", 0, BaseVersion); string(a) != string(b) {
		t.Errorf("the record of a log nobody wrote about is not deterministic: %s, %s", a, b)
	}
}

// The site log's pinned facts after 14 days and after 100: every depth,
// batch and volume, change order, hours lost and signature of every
// day's entry is in the facts ledger, verbatim, on the line of that day's
// "#index user"; the narrative stays within its budget; the fidelity
// check passes with nothing lost; and the models see the facts as a part
// of their own. Before the ledger, day 14's summary held 1 of 36 depths
// and 0 of 18 batch numbers, the rest "folded", and the check passed.
func TestSiteLogKeepsEveryPinnedFact(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, err := engine.New(memory.New(), NewGraph(), NewMock())
	if err != nil {
		t.Fatal(err)
	}
	days := 100
	if testing.Short() {
		days = 14
	}
	for d := 1; d <= days; d++ {
		turn := Turn{Text: SiteLogDay(d), Scenario: ScenarioSiteLog}
		if _, err := e.Run(ctx, "site", turn.Writes(), engine.RunConfig{}); err != nil {
			t.Fatalf("day %d: %v", d, err)
		}
		if d != 14 && d != 100 {
			continue
		}
		head, err := e.Latest(ctx, "site")
		if err != nil {
			t.Fatal(err)
		}
		s, err := Decode(head.Values)
		if err != nil {
			t.Fatal(err)
		}
		if n := len([]rune(s.Summary.Text)); n > SummaryBudget {
			t.Errorf("day %d: the narrative has %d runes, budget %d", d, n, SummaryBudget)
		}
		stored, err := e.Transcript(ctx, "site", head.ID, 1, int64(s.Summary.To))
		if err != nil {
			t.Fatal(err)
		}
		var msgs []Message
		dayAt := map[int]int{} // day → its entry's index
		for _, m := range stored {
			var msg Message
			if err := json.Unmarshal(m.Body, &msg); err != nil {
				t.Fatal(err)
			}
			msgs = append(msgs, msg)
			for day := 1; day <= d; day++ {
				if msg.Role == RoleUser && msg.Content == SiteLogDay(day) {
					dayAt[day] = msg.Index
				}
			}
		}
		l := readLedger(s.Facts)
		kept, want := 0, 0
		for day := 1; day <= d; day++ {
			at, ok := dayAt[day]
			if !ok {
				continue // still in the verbatim tail
			}
			figures := logFigures(day)
			pinned := append(figures["depth"], figures["batch"]...)
			pinned = append(pinned, figures["change"]...)
			pinned = append(pinned, figures["volume"]...)
			if figures["signer"] != nil {
				pinned = append(pinned, "signed by J. Devries", "2 hours")
			}
			for _, f := range pinned {
				want++
				if line, ok := l.holds(f, at, at, "user"); ok && line.index == at {
					kept++
					continue
				}
				t.Errorf("day %d: %q is not on the ledger line of #%d user:\n%s", day, f, at, strings.Join(s.Facts, "\n"))
			}
		}
		r := CheckFidelity(s.Summary, s.Facts, msgs)
		if !r.OK() || r.Counts.Lost != 0 || r.Counts.Folded == 0 {
			t.Errorf("day %d: %s", d, r.Verdict())
		}
		req, _, err := plannerRequest(head.Values, s)
		if err != nil {
			t.Fatal(err)
		}
		var facts string
		for _, m := range req.Messages {
			if m.Part == model.PartFacts {
				facts = m.Content
			}
		}
		if !strings.HasPrefix(facts, "PINNED FACTS") || len([]rune(facts)) > FactsShown+400 {
			t.Errorf("day %d: the planner's facts part is %d runes: %.200q", d, len([]rune(facts)), facts)
		}
		t.Logf("day %d: %d of %d of the log's depths, batches, volumes, change orders, hours and signatures on their day's ledger line; %s; ledger %d pages", d, kept, want, r.Verdict(), len(s.Facts))
	}
}
