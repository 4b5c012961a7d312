package ticket

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"rewind/engine/model"
)

// MockCallsPerSubtask is how many model calls the mock's executor makes
// for a subtask: one asks for the tool, one writes the finding from its
// result.
const MockCallsPerSubtask = 2

// NewMock is the deterministic offline model for this graph: its answers
// depend on its input, so a different sentence plans different subtasks.
func NewMock() *model.Mock { return model.NewMock(Respond) }

// The prompts' lines are read by hand-written matchers (mockLine): each
// does what the regexp in its comment does (mock_test.go holds them to
// it), at a fraction of a regexp's cost.
var (
	reRequest  = restAfter("REQUEST: ")                                          // (?m)^REQUEST: (.*)$
	reRevise   = restAfter("REVISE: the operator rejected the previous draft: ") // (?m)^REVISE: the operator rejected the previous draft: (.*)$
	reScenario = mockLine(func(l string) []string {                              // (?m)^SCENARIO: (\S+)$
		rest, ok := strings.CutPrefix(l, "SCENARIO: ")
		if !ok || rest == "" || nonSpace(rest) != len(rest) {
			return nil
		}
		return []string{l, rest}
	})
	reContext = mockLine(func(l string) []string { // (?m)^CONTEXT: order (\S+)
		rest, ok := strings.CutPrefix(l, "CONTEXT: order ")
		if n := nonSpace(rest); ok && n > 0 {
			return []string{l[:len(l)-len(rest)+n], rest[:n]}
		}
		return nil
	})
	reSubtask = mockLine(func(l string) []string { // (?m)^SUBTASK (\S+): (.*)$
		rest, ok := strings.CutPrefix(l, "SUBTASK ")
		n := nonSpace(rest)
		if !ok || n < 2 || rest[n-1] != ':' || n == len(rest) || rest[n] != ' ' {
			return nil
		}
		return []string{l, rest[:n-1], rest[n+1:]}
	})
	reTool = mockLine(func(l string) []string { // (?m)^TOOL (\w+)\((.*?)\) RESULT: (.*)$
		rest, ok := strings.CutPrefix(l, "TOOL ")
		n := wordRun(rest)
		if !ok || n == 0 || n == len(rest) || rest[n] != '(' {
			return nil
		}
		args, result, ok := strings.Cut(rest[n+1:], ") RESULT: ")
		if !ok {
			return nil
		}
		return []string{l, rest[:n], args, result}
	})
	reFeedback = restAfter("FEEDBACK: ")            // (?m)^FEEDBACK: (.*)$
	reRound    = mockLine(func(l string) []string { // (?m)^REVIEW ROUND (\d+)$
		rest, ok := strings.CutPrefix(l, "REVIEW ROUND ")
		if !ok || rest == "" || strings.TrimLeft(rest, "0123456789") != "" {
			return nil
		}
		return []string{l, rest}
	})
	reOutput  = itemLine("OUTPUT ")  // (?m)^OUTPUT (\S+) \[(\w+)\]: (.*)$
	reFinding = itemLine("FINDING ") // (?m)^FINDING (\S+) \[(\w+)\]: (.*)$
)

// mockLine finds the lines of a prompt that match: match gives the
// submatches of a line (nil: none), as a (?m)^…$ regexp's.
type mockLine func(line string) []string

func (m mockLine) FindStringSubmatch(s string) []string {
	for {
		line, rest, more := strings.Cut(s, "\n")
		if sub := m(line); sub != nil {
			return sub
		}
		if !more {
			return nil
		}
		s = rest
	}
}

func (m mockLine) FindAllStringSubmatch(s string, _ int) [][]string {
	var out [][]string
	for {
		line, rest, more := strings.Cut(s, "\n")
		if sub := m(line); sub != nil {
			out = append(out, sub)
		}
		if !more {
			return out
		}
		s = rest
	}
}

func (m mockLine) MatchString(s string) bool { return m.FindStringSubmatch(s) != nil }

// restAfter is (?m)^prefix(.*)$.
func restAfter(prefix string) mockLine {
	return func(l string) []string {
		if rest, ok := strings.CutPrefix(l, prefix); ok {
			return []string{l, rest}
		}
		return nil
	}
}

// itemLine is (?m)^prefix(\S+) \[(\w+)\]: (.*)$.
func itemLine(prefix string) mockLine {
	return func(l string) []string {
		rest, ok := strings.CutPrefix(l, prefix)
		n := nonSpace(rest)
		if !ok || n == 0 || !strings.HasPrefix(rest[n:], " [") {
			return nil
		}
		tag := rest[n+2:]
		w := wordRun(tag)
		if w == 0 || !strings.HasPrefix(tag[w:], "]: ") {
			return nil
		}
		return []string{l, rest[:n], tag[:w], tag[w+3:]}
	}
}

// nonSpace is the length of s's leading run of \S (RE2's \s is [\t\n\f\r ]).
func nonSpace(s string) int {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\t', '\n', '\f', '\r', ' ':
			return i
		}
	}
	return len(s)
}

// wordRun is the length of s's leading run of \w ([0-9A-Za-z_]).
func wordRun(s string) int {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return i
		}
	}
	return len(s)
}

// Respond answers the ticket graph's requests deterministically, reading
// them as a chat model would: the task in the last instructions, the
// conversation before it, and its own tool rounds after it.
func Respond(req model.Request) (model.Response, error) {
	task := Instructions(req)
	text := func(s string, err error) (model.Response, error) { return model.Response{Text: s}, err }
	switch req.Role {
	case model.RolePlanner:
		m := reRequest.FindStringSubmatch(task)
		if m == nil {
			return model.Response{}, fmt.Errorf("planner request has no REQUEST line")
		}
		request := m[1]
		// A follow-up without an order number is about the order the
		// conversation was about: the newest one it names.
		if !orderRef().MatchString(request) {
			if ref := ConversationRef(req); ref != "" {
				request += " [" + ref + "]"
			}
		}
		scenario := ScenarioTicket
		if s := reScenario.FindStringSubmatch(task); s != nil {
			scenario = s[1]
		}
		// The plan as the instructions ask for it: id, goal, topic.
		var items []planItem
		for _, st := range planIn(scenario, request) {
			items = append(items, planItem{ID: st.ID, Goal: st.Goal, Topic: st.Topic})
		}
		b, err := json.Marshal(map[string]any{"subtasks": items})
		return text(string(b), err)
	case model.RoleExecutor:
		return executorAct(req, task)
	case model.RoleCritic:
		return text(criticAnswer(req, task))
	case model.RoleSummarizer:
		return text(summaryAnswer(req.Prompt()), nil)
	case model.RoleReply:
		return text(replyAnswer(task), nil)
	}
	return model.Response{}, fmt.Errorf("mock has no answer for role %q", req.Role)
}

// Instructions is the text of a request's instruction messages (the
// task, and a retry's reason), the conversation left out.
func Instructions(req model.Request) string {
	var b strings.Builder
	for i, part := range Parts(req.Messages) {
		if m := req.Messages[i]; m.Role == model.ChatUser && part == model.PartInstructions {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(m.Content)
		}
	}
	if b.Len() == 0 {
		return req.Prompt()
	}
	return b.String()
}

// Parts tells each message's part of the context as a model reading the
// request would: a message's own Part when it has one (rewind's), else by
// its form (what came over the wire): the first system message and any
// user message without "#index speaker:" are instructions, a system
// message opening "SUMMARY" the summary, one opening "PINNED FACTS" the
// facts, messages with coordinates the
// tail, and whatever follows the last instruction the call's own rounds.
func Parts(ms []model.Message) []string {
	out := make([]string, len(ms))
	lastTask := -1
	for i, m := range ms {
		switch {
		case m.Part != "":
			out[i] = m.Part
		case m.Role == model.ChatSystem && strings.HasPrefix(m.Content, "SUMMARY"):
			out[i] = model.PartSummary
		case m.Role == model.ChatSystem && strings.HasPrefix(m.Content, "PINNED FACTS"):
			out[i] = model.PartFacts
		case m.Role == model.ChatSystem && i == 0:
			out[i] = model.PartInstructions
		case m.Role == model.ChatUser && !hasCoordinates(m.Content):
			out[i] = model.PartInstructions
		default:
			out[i] = model.PartTail
		}
		if m.Role == model.ChatUser && out[i] == model.PartInstructions {
			lastTask = i
		}
	}
	for i := lastTask + 1; lastTask >= 0 && i < len(ms); i++ {
		if ms[i].Part == "" {
			out[i] = model.PartRounds
		}
	}
	return out
}

// hasCoordinates says whether s opens with "#index speaker: ".
func hasCoordinates(s string) bool {
	_, _, _, ok := transcriptLine(firstLine(s))
	return ok
}

// ConversationRef is the newest order (or day-log) number the request's
// conversation names: the verbatim tail from its end, then the summary's
// lines from the last. "" when it names none.
func ConversationRef(req model.Request) string {
	parts := Parts(req.Messages)
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if parts[i] != model.PartTail && parts[i] != model.PartSummary && parts[i] != model.PartFacts {
			continue
		}
		lines := strings.Split(req.Messages[i].Content, "\n")
		for j := len(lines) - 1; j >= 0; j-- {
			if refs := orderRef().FindAllString(lines[j], -1); len(refs) > 0 {
				return refs[len(refs)-1]
			}
		}
	}
	return ""
}

// executorAct is the mock executor: with no result yet for its subtask it
// calls the topic's tool with the goal's reference; with one, it writes
// the finding from it.
func executorAct(req model.Request, task string) (model.Response, error) {
	st := reSubtask.FindStringSubmatch(task)
	if st == nil {
		return model.Response{}, fmt.Errorf("executor request lacks a SUBTASK line")
	}
	var result string
	for i, part := range Parts(req.Messages) {
		if m := req.Messages[i]; part == model.PartRounds && m.Role == model.ChatTool {
			result = m.Content
		}
	}
	if result == "" {
		tool := topicOf(topicLine(task)).tool
		arg := "order"
		if _, site := siteSources[tool]; site {
			arg = "log"
		}
		args, _ := json.Marshal(map[string]string{arg: refOf(st[2])})
		prefix := "call-" + st[1] + "-"
		n := 1
		for _, m := range req.Messages {
			for _, c := range m.ToolCalls {
				if strings.HasPrefix(c.ID, prefix) {
					n++
				}
			}
		}
		return model.Response{ToolCalls: []model.ToolCall{{ID: prefix + fmt.Sprint(n), Name: tool, Arguments: string(args)}}}, nil
	}
	answer, err := executorAnswer(st[1], result, task)
	return model.Response{Text: answer}, err
}

// topicLine is the task's TOPIC line.
func topicLine(task string) string {
	for _, l := range strings.Split(task, "\n") {
		if t, ok := strings.CutPrefix(l, "TOPIC: "); ok {
			return strings.TrimSpace(t)
		}
	}
	return ""
}

func executorAnswer(id, toolResult, task string) (string, error) {
	var result map[string]any
	if err := json.Unmarshal([]byte(toolResult), &result); err != nil {
		return "", fmt.Errorf("tool result is not JSON: %w", err)
	}
	if e, ok := result["error"].(string); ok {
		return fmt.Sprintf("%s: could not look it up (%s).", id, e), nil
	}
	keys := make([]string, 0, len(result))
	for _, k := range append([]string{"stage", "since", "carrier", "lastScan", "eta", "eligible", "window", "method", "changeable", "until", "invoice", "vat", "covered", "covers", "cancellable", "fee", "charges", "article"}, siteResultKeys...) {
		if v, ok := result[k]; ok {
			keys = append(keys, findingLabel(k)+" "+plain(v))
		}
	}
	answer := fmt.Sprintf("%s: %s.", id, strings.Join(keys, ", "))
	if fb := reFeedback.FindStringSubmatch(task); fb != nil {
		answer += " Verified per review: " + fb[1] + "."
	}
	return answer, nil
}

// findingLabel is how the mock executor names a tool field in its
// finding: as the field, but a sign-off reads "approved by M. Okafor", so
// the summary pins it (reSignOff) as it pins the log's "signed by".
func findingLabel(key string) string {
	if key == "approvedBy" {
		return "approved by"
	}
	return key
}

// plain writes a tool field as a person would quote it: text as is,
// anything else (a list of charges) as JSON, never Go's map syntax.
func plain(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case map[string]any, []any:
		b, err := json.Marshal(v)
		if err == nil {
			return string(b)
		}
	}
	return fmt.Sprint(v)
}

// criticAnswer judges each output against the customer's requirement, as
// a chat model reading the request would: the requirement is what it can
// find with its coordinates, the task's "REQUIREMENT #N user:" line or,
// when the task names none, the newest "#N user:" line of the summary. An
// output that answers a question the requirement does not ask is sent
// back, saying so. A requirement found nowhere (a summary flattened into
// a narrative keeps no "#N user:" line) leaves nothing to check against:
// everything is approved. Otherwise, the first round bounces one output
// back (shipping if present, else the last) and later rounds approve.
func criticAnswer(req model.Request, prompt string) (string, error) {
	round := 1
	if m := reRound.FindStringSubmatch(prompt); m != nil {
		fmt.Sscan(m[1], &round)
	}
	outs := reOutput.FindAllStringSubmatch(prompt, -1)
	type redo struct {
		ID     string `json:"id"`
		Reason string `json:"reason"`
	}
	verdict := struct {
		Approve []string `json:"approve"`
		Redo    []redo   `json:"redo"`
	}{Approve: []string{}, Redo: []redo{}}
	at, requirement, found := requirementOf(req, prompt)
	offQuestion := map[int]string{}
	if asked := askedTopics(requirement); found && len(asked) > 0 {
		for i, o := range outs {
			if t := answeredTopic(o[3]); t != "" && !asked[t] {
				offQuestion[i] = fmt.Sprintf("it answers another question (%s): %s user asked about %s", t, at, strings.Join(slices.Sorted(maps.Keys(asked)), ", "))
			}
		}
	}
	// First round: bounce one output back (shipping if present, else the
	// last); from the second round on, approve everything.
	bounce := -1
	if found && len(offQuestion) == 0 && round == 1 && len(outs) > 0 {
		bounce = len(outs) - 1
		for i, o := range outs {
			if o[2] == "shipping" {
				bounce = i
				break
			}
		}
	}
	for i, o := range outs {
		if reason, off := offQuestion[i]; off {
			verdict.Redo = append(verdict.Redo, redo{ID: o[1], Reason: reason})
			continue
		}
		if i == bounce {
			verdict.Redo = append(verdict.Redo, redo{ID: o[1], Reason: topicOf(o[2]).redo})
			continue
		}
		verdict.Approve = append(verdict.Approve, o[1])
	}
	b, err := json.Marshal(verdict)
	return string(b), err
}

// requirementOf is the requirement the critic can find with its
// coordinates: the task's "REQUIREMENT #N user: …" line, else the newest
// "#N user: …" line of the summary (or pinned facts) the request carries.
// at is its "#N"; found is false when there is none.
func requirementOf(req model.Request, task string) (at, text string, found bool) {
	if m := restAfter("REQUIREMENT ").FindStringSubmatch(task); m != nil {
		if index, _, said, ok := transcriptLine(m[1]); ok {
			return index, said, true
		}
	}
	parts := Parts(req.Messages)
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if parts[i] != model.PartSummary && parts[i] != model.PartFacts {
			continue
		}
		lines := strings.Split(req.Messages[i].Content, "\n")
		for j := len(lines) - 1; j >= 0; j-- {
			if index, speaker, said, ok := transcriptLine(lines[j]); ok && speaker == "user" {
				return index, said, true
			}
		}
	}
	return "", "", false
}

// askedTopics are the questions a requirement asks, as the planner splits
// them (either scenario's topics; "general" is no question of its own).
func askedTopics(requirement string) map[string]bool {
	asked := map[string]bool{}
	if requirement == "" {
		return asked
	}
	for _, scenario := range []string{ScenarioTicket, ScenarioSiteLog} {
		for _, st := range planIn(scenario, requirement) {
			asked[st.Topic] = true
		}
	}
	delete(asked, "general")
	return asked
}

// answerMarks are the words only an answer to a topic's question holds:
// the fields of its tool's record the mock executor cites (its tool's
// name is one too, as a chat model's prose cites it).
var answerMarks = map[string][]string{
	"order": {"stage"}, "shipping": {"carrier", "lastscan", "eta"}, "refund": {"eligible", "window"},
	"address": {"changeable"}, "invoice": {"invoice", "vat"}, "warranty": {"covered", "covers"},
	"cancel": {"cancellable"}, "payment": {"charges"}, "general": {"article"},
}

// answeredTopic is the question an output answers: the topic whose mark
// comes first in it ("" when none does: a site check, an error).
func answeredTopic(output string) string {
	lower := strings.ToLower(output)
	best, at := "", -1
	for name, marks := range answerMarks {
		for _, m := range append([]string{topicOf(name).tool}, marks...) {
			if p := wordIndex(lower, m); p >= 0 && (at < 0 || p < at || p == at && name < best) {
				best, at = name, p
			}
		}
	}
	return best
}

// summaryAnswer writes one line per transcript line, as the summarizer's
// system prompt asks: its "#index speaker:", its first words, and any
// fact token those words cut off, verbatim. Deterministic: the same
// transcript gives the same lines. It is also what rewind falls back to
// when the model's summaries keep being refused (ExtractiveStrategy).
func summaryAnswer(prompt string) string {
	var b strings.Builder
	for len(prompt) > 0 {
		var line string
		line, prompt, _ = strings.Cut(prompt, "\n")
		index, speaker, said, ok := transcriptLine(line)
		if !ok {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(index)
		b.WriteByte(' ')
		b.WriteString(speaker)
		b.WriteString(": ")
		words := strings.Fields(said)
		if len(words) <= 14 {
			b.WriteString(strings.Join(words, " "))
			continue
		}
		text := strings.Join(words[:14], " ") + " …"
		for _, f := range facts(said) {
			if !strings.Contains(text, f) {
				text += " " + f
			}
		}
		b.WriteString(text)
	}
	return b.String()
}

// transcriptLine splits a "#index speaker: text" line by hand, as
// ^(#\d+) ([^:]+): (.*)$ did: the speaker ends at the first colon.
func transcriptLine(line string) (index, speaker, text string, ok bool) {
	if !strings.HasPrefix(line, "#") {
		return "", "", "", false
	}
	n := skip(line, 1, isDigit)
	if n == 1 || !strings.HasPrefix(line[n:], " ") {
		return "", "", "", false
	}
	rest := line[n+1:]
	colon := strings.IndexByte(rest, ':')
	if colon <= 0 || !strings.HasPrefix(rest[colon+1:], " ") || strings.IndexByte(rest[colon+2:], '\n') >= 0 {
		return "", "", "", false
	}
	return line[:n], rest[:colon], rest[colon+2:], true
}

func replyAnswer(prompt string) string {
	var b strings.Builder
	if reScenario.MatchString(prompt) {
		b.WriteString("Daily report:")
	} else {
		b.WriteString("Here is where things stand:")
	}
	for _, f := range reFinding.FindAllStringSubmatch(prompt, -1) {
		fmt.Fprintf(&b, "\n- %s", f[3])
	}
	if strings.Contains(prompt, "NOTE: some findings are unverified") {
		b.WriteString("\nSome points could not be fully verified; a colleague will follow up.")
	}
	if m := reRevise.FindStringSubmatch(prompt); m != nil {
		fmt.Fprintf(&b, "\n(Revised: %s.)", strings.TrimRight(m[1], ". "))
	}
	return b.String()
}
