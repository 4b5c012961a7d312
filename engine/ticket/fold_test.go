package ticket

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// supportSentences are the turns of the long conversations; %s is the
// turn's own order number.
var supportSentences = []string{
	"My order %s hasn't arrived yet: what is the order status, where is the parcel now, and can I get a refund if it is lost?",
	"Please change the delivery address on %s and send me the invoice.",
	"The blender from order %s arrived damaged: is it still under warranty?",
	"Can I still cancel order %s? I think I was charged twice.",
	"Where is my parcel for %s and when will it arrive?",
	"I want to return %s: how does the refund work and how long does it take?",
	"What VAT rate is on the invoice for %s?",
	"I moved last week: can the address for %s still be changed, and what is the order status?",
	"My card was charged for %s but the order page shows nothing: please check the payment.",
	"The kettle in %s is broken after two weeks; can it be repaired? Photo at blob://tickets/2026/kettle-1.png",
}

func sentenceFor(turn int) string {
	return fmt.Sprintf(supportSentences[turn%len(supportSentences)], fmt.Sprintf("SO2026%04d", turn))
}

// simTurn is one turn shaped like the engine's: the request, a call, a
// tool result and a finding per planned subtask, the critic's verdict and
// the reply, with the mock's real tool results and findings.
func simTurn(turn int) []Message {
	text := sentenceFor(turn)
	ms := []Message{{Role: RoleUser, Speaker: "user", Content: text}}
	var ids, findings []string
	for _, st := range plan(text) {
		tp := topicOf(st.Topic)
		ref := refOf(st.Goal)
		args, _ := json.Marshal(map[string]any{"order": ref})
		res := runTool(tp.tool, ref, text, 0, BaseVersion)
		finding, err := executorAnswer(st.ID, string(res), "SUBTASK "+st.ID+": "+st.Goal)
		if err != nil {
			panic(err)
		}
		sp := "executor[" + st.ID + "]"
		call := fmt.Sprintf("call-%d-%s", turn, st.ID)
		ms = append(ms,
			Message{Role: RoleAssistant, Speaker: sp, Content: fmt.Sprintf("calling %s(%s)", tp.tool, args), ToolCall: &ToolCall{ID: call, Name: tp.tool, Args: args}},
			Message{Role: RoleTool, Speaker: "tool[" + tp.tool + "]", Content: string(res), ToolCallID: call},
			Message{Role: RoleAssistant, Speaker: sp, Content: finding})
		ids, findings = append(ids, st.ID), append(findings, "- "+finding)
	}
	ms = append(ms,
		Message{Role: RoleAssistant, Speaker: "critic", Content: "review 1: approved " + strings.Join(ids, ", ")},
		Message{Role: RoleAssistant, Speaker: "reply", Content: "Here is where things stand:\n" + strings.Join(findings, "\n")})
	return ms
}

// conversation drives compaction the way the summarizer node does, with
// a model answer made by answer.
type conversation struct {
	t        *testing.T
	next     int
	messages []Message
	sum      *Summary
	facts    []string // the facts ledger's pages
	turn     int      // the turn the last compaction's head began in
	answer   func(prompt string) string
	requests []Message // every user message, in order
	stats    []CompactStats
}

func newConversation(t *testing.T, answer func(string) string) *conversation {
	return &conversation{t: t, next: 1, answer: answer}
}

func (c *conversation) add(ms ...Message) {
	for _, m := range ms {
		m.Index = c.next
		c.next++
		c.messages = append(c.messages, m)
		if m.Speaker == "user" {
			c.requests = append(c.requests, m)
		}
	}
}

// compact runs one compaction if the trigger fires; it reports whether it did.
func (c *conversation) compact() bool {
	c.t.Helper()
	if NeedsSummary(c.messages, c.sum) == "" || Cut(c.messages) == 0 {
		return false
	}
	cut := Cut(c.messages)
	head := c.messages[:cut]
	answer := c.answer(Transcript(head))
	sum, st, err := Compact(c.sum, head, answer)
	if err != nil {
		c.t.Fatalf("compact #%d–#%d: %v", head[0].Index, head[len(head)-1].Index, err)
	}
	if len(c.stats)%25 == 0 {
		if again, _, _ := Compact(c.sum, head, answer); again.Text != sum.Text {
			c.t.Fatal("the same input compacted to a different summary")
		}
	}
	c.turn = 0
	if c.sum != nil {
		c.turn = c.sum.Turn
	}
	c.sum, c.messages = &sum, c.messages[cut:]
	c.facts = appendLedger(c.t, c.facts, readLedger(c.facts).addLines(head, c.turn))
	c.stats = append(c.stats, st)
	return true
}

// appendLedger is the facts channel's reducer applied to pages.
func appendLedger(t *testing.T, pages, lines []string) []string {
	t.Helper()
	cur, _ := json.Marshal(pages)
	w, _ := json.Marshal(lines)
	next, err := appendFacts(cur, w)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	if err := json.Unmarshal(next, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func mockAnswer(prompt string) string { return summaryAnswer(prompt) }

var (
	reShapeSingle = regexp.MustCompile(`^#(\d+) ([^:\n]+): (.+)$`)
	reShapeRange  = regexp.MustCompile(`^#(\d+)–#(\d+) ([^:\n]+): (.+)$`)
)

// shapeOf checks a stored summary with its own reading of the format: the
// budget, every line starting with its coordinates, every index From..To
// covered exactly once. It returns the single lines by index and the
// ranges.
func shapeOf(t *testing.T, when string, s *Summary) (singles map[int]string, ranges [][2]int) {
	t.Helper()
	if s == nil {
		t.Fatalf("%s: no summary", when)
	}
	if n := utf8.RuneCountInString(s.Text); n > SummaryBudget {
		t.Fatalf("%s: summary has %d runes, budget %d", when, n, SummaryBudget)
	}
	singles = map[int]string{}
	covered := map[int]int{}
	for _, line := range strings.Split(s.Text, "\n") {
		var a, b int
		if m := reShapeRange.FindStringSubmatch(line); m != nil {
			fmt.Sscan(m[1], &a)
			fmt.Sscan(m[2], &b)
			ranges = append(ranges, [2]int{a, b})
		} else if m := reShapeSingle.FindStringSubmatch(line); m != nil {
			fmt.Sscan(m[1], &a)
			b = a
			singles[a] = line
		} else {
			t.Fatalf("%s: line without coordinates: %q", when, line)
		}
		for i := a; i <= b; i++ {
			covered[i]++
		}
	}
	for i := s.From; i <= s.To; i++ {
		if covered[i] != 1 {
			t.Fatalf("%s: #%d covered %d times (summary #%d–#%d)\n%s", when, i, covered[i], s.From, s.To, s.Text)
		}
	}
	if len(covered) != s.To-s.From+1 {
		t.Fatalf("%s: lines cover %d indices, summary claims #%d–#%d", when, len(covered), s.From, s.To)
	}
	return singles, ranges
}

// requireRecentRequests checks that the newest RecentTurns user messages
// the summary covers are there verbatim, order number included.
func requireRecentRequests(t *testing.T, when string, s *Summary, singles map[int]string, requests []Message) {
	t.Helper()
	seen := 0
	for i := len(requests) - 1; i >= 0 && seen < RecentTurns; i-- {
		r := requests[i]
		if r.Index > s.To {
			continue
		}
		seen++
		if want := fmt.Sprintf("#%d user: %s", r.Index, r.Content); singles[r.Index] != want {
			t.Fatalf("%s: requirement #%d is %q, want %q", when, r.Index, singles[r.Index], want)
		}
		if ref := orderRef().FindString(r.Content); ref != "" && !strings.Contains(singles[r.Index], ref) {
			t.Fatalf("%s: requirement #%d lost its order number %s", when, r.Index, ref)
		}
	}
}

// Issue 9: a thousand turns, compacted with the mock's answers, keep the
// summary within its budget with every index covered once and the newest
// requirements verbatim.
func TestSummaryStaysBoundedOverAThousandTurns(t *testing.T) {
	t.Parallel()
	c := newConversation(t, mockAnswer)
	maxSize, folded, retired := 0, 0, 0
	for turn := 0; turn < 1000; turn++ {
		c.add(simTurn(turn)...)
		if !c.compact() {
			continue
		}
		when := fmt.Sprintf("turn %d", turn+1)
		singles, _ := shapeOf(t, when, c.sum)
		requireRecentRequests(t, when, c.sum, singles, c.requests)
		if c.messages[0].Index != c.sum.To+1 {
			t.Fatalf("%s: tail starts at #%d, summary ends at #%d", when, c.messages[0].Index, c.sum.To)
		}
		if c.sum.From != 1 || c.sum.Count != c.sum.To {
			t.Fatalf("%s: summary #%d–#%d counts %d", when, c.sum.From, c.sum.To, c.sum.Count)
		}
		maxSize = max(maxSize, utf8.RuneCountInString(c.sum.Text))
		st := c.stats[len(c.stats)-1]
		folded, retired = folded+st.Folded, retired+st.Retired
	}
	if len(c.stats) < 400 || retired == 0 {
		t.Fatalf("%d compactions, %d pins retired: the conversation did not exercise folding", len(c.stats), retired)
	}
	for _, sp := range []string{"user", "critic", "reply", "executor[t-1-order]", "tool[shipping_events]"} {
		if !contains(c.sum.Speakers, sp) {
			t.Errorf("speakers %v lack %s", c.sum.Speakers, sp)
		}
	}
	t.Logf("%d compactions over %d messages; summary at most %d runes; %d lines folded, %d pins retired", len(c.stats), c.next-1, maxSize, folded, retired)
}

// chatter is a message with nothing to pin: no facts, no approval.
func chatter(speaker string, i int) Message {
	words := []string{"looked", "into", "the", "customer's", "case", "and", "noted", "what", "the", "warehouse", "team", "said", "about", "it", "today"}
	return Message{Role: RoleAssistant, Speaker: speaker, Content: fmt.Sprintf("note %s: %s, %s", strings.Repeat("x", i%7+1), strings.Join(words, " "), strings.Join(words[i%5:], " "))}
}

// Folding keeps ranges contiguous, merges adjacent ones, and a range's
// speakers are exactly the union of the speakers it folded.
func TestFoldingKeepsRangesContiguousAndSpeakersAUnion(t *testing.T) {
	t.Parallel()
	speakers := []string{"executor[t-1-order]", "critic", "executor[t-2-shipping]", "reply", "planner"}
	c := newConversation(t, mockAnswer)
	byIndex := map[int]Message{}
	checked := 0
	for round := 0; round < 40; round++ {
		// A user turn, then chatter whose speakers change from round to round.
		c.add(Message{Role: RoleUser, Speaker: "user", Content: fmt.Sprintf("Round %d: please keep looking into it.", round)})
		for i := 0; i < 14; i++ {
			c.add(chatter(speakers[(round+i*(round%3+1))%len(speakers)], round*14+i))
		}
		for _, m := range c.messages {
			byIndex[m.Index] = m
		}
		if !c.compact() {
			continue
		}
		when := fmt.Sprintf("round %d", round)
		_, ranges := shapeOf(t, when, c.sum)
		lines := strings.Split(c.sum.Text, "\n")
		for i, line := range lines {
			m := reShapeRange.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			if i+1 < len(lines) && reShapeRange.MatchString(lines[i+1]) {
				t.Fatalf("%s: adjacent ranges not merged:\n%s\n%s", when, line, lines[i+1])
			}
			var a, b int
			fmt.Sscan(m[1], &a)
			fmt.Sscan(m[2], &b)
			var want []string
			for j := a; j <= b; j++ {
				if sp := byIndex[j].Speaker; !contains(want, sp) {
					want = append(want, sp)
				}
			}
			if got := strings.Split(m[3], ", "); strings.Join(got, ",") != strings.Join(want, ",") {
				t.Fatalf("%s: #%d–#%d lists speakers %v, folded %v", when, a, b, got, want)
			}
			checked++
		}
		if len(ranges) == 0 && round > 5 {
			t.Fatalf("%s: nothing folded yet:\n%s", when, c.sum.Text)
		}
	}
	if checked == 0 {
		t.Fatal("no range line was checked")
	}
}

// The oldest lines fold first: an unpinned line does not outlast the
// newer pins retiring around it.
func TestOldUnpinnedLineFoldsBeforeNewerPins(t *testing.T) {
	t.Parallel()
	c := newConversation(t, mockAnswer)
	c.add(Message{Role: RoleUser, Speaker: "user", Content: "Hello, I have a few questions."}, chatter("planner", 0))
	for turn := 0; turn < 12; turn++ {
		c.add(simTurn(turn)...)
		c.compact()
	}
	singles, _ := shapeOf(t, "after 12 turns", c.sum)
	if line, ok := singles[2]; ok || c.stats[len(c.stats)-1].Retired == 0 {
		t.Fatalf("#2 still a line of its own (%q) while newer pins retired:\n%s", line, c.sum.Text)
	}
}

// A sign-off ("approved by …") outlives many foldings, while requirements,
// facts and the critic's approvals around it retire.
func TestSignOffSurvivesManyFoldings(t *testing.T) {
	t.Parallel()
	c := newConversation(t, mockAnswer)
	signOff := Message{Role: RoleAssistant, Speaker: "supervisor", Content: "Refund of 49.95 EUR for SO20260001 approved by Dana Smit (team lead) on 2026-09-03."}
	c.add(simTurn(1)...)
	c.add(signOff)
	at := c.next - 1
	want := fmt.Sprintf("#%d supervisor: %s", at, signOff.Content)
	retired := 0
	for turn := 2; turn < 80; turn++ {
		c.add(simTurn(turn)...)
		if !c.compact() {
			continue
		}
		singles, _ := shapeOf(t, fmt.Sprintf("turn %d", turn), c.sum)
		if c.sum.To >= at && singles[at] != want {
			t.Fatalf("turn %d: the sign-off is gone; #%d reads %q\n%s", turn, at, singles[at], c.sum.Text)
		}
		retired += c.stats[len(c.stats)-1].Retired
	}
	if retired < 500 {
		t.Fatalf("only %d pins retired: not many foldings", retired)
	}
}

// A model that drops "#index speaker:" still yields a covered, bounded
// summary: code makes the lines it lost from the messages' first words.
func TestAnswerWithoutPrefixesFallsBackToCodeLines(t *testing.T) {
	t.Parallel()
	prose := func(prompt string) string {
		return "The user asked about orders and refunds, and the assistant proposed a plan.\n" +
			"- user: wants a refund\n#999999 user: a line for an index that was not sent\n"
	}
	c := newConversation(t, prose)
	for turn := 0; turn < 120; turn++ {
		c.add(simTurn(turn)...)
		if !c.compact() {
			continue
		}
		when := fmt.Sprintf("turn %d", turn)
		singles, _ := shapeOf(t, when, c.sum)
		requireRecentRequests(t, when, c.sum, singles, c.requests)
		if st := c.stats[len(c.stats)-1]; st.Fallback == 0 {
			t.Fatalf("%s: no fallback lines counted for a prose answer", when)
		}
	}
	// An unpinned message's fallback is its own first words.
	head := []Message{{Index: 1, Role: RoleAssistant, Speaker: "planner", Content: "thinking about the\nbest way to answer this customer"}}
	sum, st, err := Compact(nil, head, prose(""))
	if err != nil || st.Fallback != 1 || sum.Text != "#1 planner: thinking about the best way to answer this customer" {
		t.Fatalf("fallback line %q (fallback %d, %v)", sum.Text, st.Fallback, err)
	}
	// Half the lines right: only the other half falls back.
	msgs := []Message{
		{Index: 7, Role: RoleAssistant, Speaker: "planner", Content: "a long plan with many words that the model shortens nicely"},
		{Index: 8, Role: RoleAssistant, Speaker: "critic", Content: "a long remark with many words that the model loses"},
	}
	sum, st, err = Compact(nil, msgs, "#7 planner: plan shortened\n#8 reply: wrong speaker")
	if err != nil || st.Fallback != 1 || !strings.Contains(sum.Text, "#7 planner: plan shortened\n#8 critic: a long remark") {
		t.Fatalf("mixed answer: %q (fallback %d, %v)", sum.Text, st.Fallback, err)
	}
	// A prefix with nothing after it is no line either.
	sum, st, err = Compact(nil, msgs, "#7 planner:\n#8 critic:   ")
	if err != nil || st.Fallback != 2 || !strings.HasPrefix(sum.Text, "#7 planner: a long plan") {
		t.Fatalf("empty lines: %q (fallback %d, %v)", sum.Text, st.Fallback, err)
	}
}

// A summary written before the budget existed (a line per message, some
// repeated, one missing, a header the old mock echoed) folds into the
// budget on its next compaction, every index still covered once.
func TestUnboundedSummaryFoldsIntoTheBudget(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("PREVIOUS SUMMARY of #1–#3000 (history v7):\n")
	for i := 1; i <= 3000; i++ {
		if i == 1234 {
			continue // a line the old model dropped
		}
		fmt.Fprintf(&b, "#%d executor[t-1-order]: stage in transit since 2026-09-04 for order SO2026%04d\n", i, i)
		if i%100 == 0 {
			fmt.Fprintf(&b, "#%d executor[t-1-order]: a repeated line\n", i)
		}
	}
	prev := &Summary{Text: b.String(), From: 1, To: 3000, Count: 3000, Speakers: []string{"executor[t-1-order]"}, HistoryVersion: 7}
	head := simTurn(3001)
	for i := range head {
		head[i].Index = 3001 + i
	}
	sum, st, err := Compact(prev, head, summaryAnswer(Transcript(head)))
	if err != nil {
		t.Fatal(err)
	}
	shapeOf(t, "after the legacy summary", &sum)
	if !strings.Contains(sum.Text, "unknown") || st.Retired == 0 {
		t.Fatalf("the hole at #1234 is not marked or nothing retired (%+v):\n%s", st, sum.Text)
	}
	if sum.From != 1 || sum.To != head[len(head)-1].Index {
		t.Fatalf("covers #%d–#%d", sum.From, sum.To)
	}
}

func TestCandidateSummaryIsChecked(t *testing.T) {
	t.Parallel()
	good := "#1–#3 user, critic: began \"hello\"; 2 facts retired\n#4 user: SO20260901"
	if err := CheckSummary(good, 1, 4); err != nil {
		t.Fatalf("good summary refused: %v", err)
	}
	for name, tc := range map[string]struct {
		text     string
		from, to int
	}{
		"over budget":   {"#1 user: " + strings.Repeat("é", SummaryBudget), 1, 1},
		"no prefix":     {"#1 user: a\nthe user asked things", 1, 2},
		"hole":          {"#1 user: a\n#3 user: c", 1, 3},
		"overlap":       {"#1–#3 user: a\n#3 user: c", 1, 3},
		"short":         {"#1 user: a", 1, 2},
		"empty":         {"", 1, 1},
		"newline in it": {"#1 user: a\n\n#2 user: b", 1, 2},
	} {
		if err := CheckSummary(tc.text, tc.from, tc.to); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	// The gate runs inside Compact: a message without an index (0) makes
	// a line no summary can cover, and the candidate is refused.
	unindexed := []Message{{Role: RoleUser, Speaker: "user", Content: "a"}, {Index: 1, Role: RoleUser, Speaker: "user", Content: "b"}}
	if _, _, err := Compact(nil, unindexed, ""); err == nil || !strings.Contains(err.Error(), "candidate summary rejected") {
		t.Fatalf("an unindexed head: %v", err)
	}
	// A head the summary already covers is refused, not merged twice.
	prev := &Summary{Text: "#1 user: a\n#2 user: b", From: 1, To: 2}
	if _, _, err := Compact(prev, []Message{{Index: 2, Role: RoleUser, Speaker: "user", Content: "b"}}, ""); err == nil {
		t.Fatal("an overlapping head was merged")
	}
}

// The trigger counts what is sent: the summary plus the messages.
func TestTriggerCountsTheSummary(t *testing.T) {
	t.Parallel()
	ms := []Message{
		{Index: 30, Role: RoleUser, Speaker: "user", Content: strings.Repeat("a", 3500)},
		{Index: 31, Role: RoleAssistant, Speaker: "reply", Content: strings.Repeat("b", 3500)},
	}
	sum := &Summary{Text: "#1–#29 user: " + strings.Repeat("c", 1487), From: 1, To: 29}
	if why := NeedsSummary(ms); why != "" {
		t.Fatalf("messages alone (7,000) triggered: %s", why)
	}
	if why := NeedsSummary(ms, sum); why != "estimated 8500 tokens (summary 1500 + messages 7000) exceeds 8000" {
		t.Fatalf("summary + messages: %q", why)
	}
	sum.Text = sum.Text[:len(sum.Text)-500]
	if why := NeedsSummary(ms, sum); why != "" {
		t.Fatalf("8,000 in all triggered: %s", why)
	}
}
