package ticket

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"rewind/engine"
	"rewind/engine/model"
)

// What a model sees: every call of every role is built here from the
// checkpoint, in one shape (the spec's):
//
//  1. the role's system prompt, which says how to read what follows;
//  2. the summary, when there is one: its lines keep each compacted
//     message's "#index speaker" (pinned facts verbatim among them);
//  3. the verbatim tail as chat messages: the user's as user messages,
//     the agents' as assistant messages, a tool call as an assistant
//     message's tool_calls answered by the tool message right after it;
//  4. the call's task, as the last user message.
//
// The aligned cut (Cut) keeps a tool call and its result on the same side,
// so the request never holds a call without its result: a server answers
// that with a 400.

// contextPreamble opens every role's system prompt but the summarizer's.
const contextPreamble = `You are one agent of a multi-agent team. The conversation so far follows: first, when the conversation is long, a SUMMARY of its early messages, one line per message or phase, each starting with the message's original "#index speaker:"; then the recent messages verbatim, each starting with its "#index speaker:" (executor[t-1] is the executor of subtask t-1; tool results answer the tool call before them). Your own task for this turn is the last message. Never start your answer with an "#index speaker:" prefix.`

// conversationMessages is parts 2 and 3 of every request: the summary (its
// narrative lines, then its facts ledger) and the verbatim tail of the
// checkpoint's values.
func conversationMessages(v engine.Values) ([]model.Message, error) {
	s, err := Decode(v, "summary", "messages", "facts")
	if err != nil {
		return nil, err
	}
	return append(summaryMessages(s.Summary, s.Facts), tailMessages(s.Messages)...), nil
}

// summaryMessages are the summary as the system messages a model reads:
// its lines (model.PartSummary), then the facts ledger's
// (model.PartFacts), each a part of its own so a call's tokens count them
// apart.
func summaryMessages(sum *Summary, facts []string) []model.Message {
	var out []model.Message
	pinned := factsText(facts)
	if sum != nil && sum.Text != "" {
		head := fmt.Sprintf("SUMMARY of messages #%d–#%d (history version %d). Each line keeps the original #index and speaker; numbers, ids, dates and names are verbatim.", sum.From, sum.To, sum.HistoryVersion)
		if pinned != "" {
			head += " A phase line (#a–#b) folds several; their pinned facts are in the PINNED FACTS that follow."
		}
		out = append(out, model.Message{Role: model.ChatSystem, Content: head + "\n" + sum.Text, Part: model.PartSummary})
	}
	if pinned != "" {
		out = append(out, model.Message{Role: model.ChatSystem, Content: pinned, Part: model.PartFacts})
	}
	return out
}

// tailMessages is the verbatim messages as chat messages.
func tailMessages(ms []Message) []model.Message {
	out := make([]model.Message, 0, len(ms))
	for _, m := range ms {
		out = append(out, chatMessage(m))
	}
	return out
}

// chatMessage is one conversation message as a model receives it.
func chatMessage(m Message) model.Message {
	switch m.Role {
	case RoleTool:
		return model.Message{Role: model.ChatTool, Content: m.Content, ToolCallID: m.ToolCallID, Part: model.PartTail}
	case RoleUser:
		return model.Message{Role: model.ChatUser, Content: coordinates(m) + m.Content, Part: model.PartTail}
	}
	cm := model.Message{Role: model.ChatAssistant, Content: coordinates(m) + m.Content, Part: model.PartTail}
	for _, c := range m.Calls() {
		cm.ToolCalls = append(cm.ToolCalls, c.wire())
	}
	return cm
}

// coordinates is "#12 user: ", the prefix that keeps a message's index and
// speaker in front of a model.
func coordinates(m Message) string {
	return "#" + strconv.Itoa(m.Index) + " " + cleanSpeaker(m.Speaker) + ": "
}

// Calls are the message's tool calls, in the order made.
func (m Message) Calls() []ToolCall {
	if m.ToolCall != nil {
		return append([]ToolCall{*m.ToolCall}, m.ToolCalls...)
	}
	return m.ToolCalls
}

// wire is the call as a model wrote it: arguments as text.
func (c ToolCall) wire() model.ToolCall {
	args := c.ArgsText
	if args == "" {
		args = string(c.Args)
	}
	return model.ToolCall{ID: c.ID, Name: c.Name, Arguments: args}
}

// callOf is a model's tool call as the conversation stores it: arguments
// that are a JSON value are kept as JSON, anything else as the text
// written.
func callOf(c model.ToolCall) ToolCall {
	tc := ToolCall{ID: c.ID, Name: c.Name}
	var compact bytes.Buffer
	if a := strings.TrimSpace(c.Arguments); a != "" && json.Compact(&compact, []byte(a)) == nil {
		// Compacted as the store keeps it, so the next round's request
		// is the one a rebuild from the stored message gives.
		tc.Args = json.RawMessage(compact.Bytes())
	} else {
		tc.ArgsText = c.Arguments
		if tc.ArgsText == "" {
			tc.ArgsText = " " // an empty text is still what was written
		}
	}
	return tc
}

// buildRequest is a role's request from the checkpoint's values: the
// system prompt, the conversation, then the task.
func buildRequest(role, system string, v engine.Values, task string) (model.Request, error) {
	conv, err := conversationMessages(v)
	if err != nil {
		return model.Request{}, err
	}
	ms := make([]model.Message, 0, len(conv)+2)
	ms = append(ms, model.Message{Role: model.ChatSystem, Content: contextPreamble + "\n\n" + system, Part: model.PartInstructions})
	ms = append(ms, conv...)
	ms = append(ms, model.Message{Role: model.ChatUser, Content: task, Part: model.PartInstructions})
	return model.Request{Role: role, Messages: ms}, nil
}

// stripCoordinates takes a leading "#12 speaker: " off a model's answer: a
// model that read the conversation with them may copy the form.
func stripCoordinates(s string) string {
	s = strings.TrimSpace(s)
	if _, _, text, ok := transcriptLine(firstLine(s)); ok {
		return strings.TrimSpace(text + s[len(firstLine(s)):])
	}
	return s
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// The requests of each role, from the checkpoint's values (and the task's
// arguments): what the nodes send, and what `rewind show --calls` builds
// again to show what a model saw. s holds the channels each decodes.

// plannerRequest is the planner's request, and the message it plans (s:
// request, scenario).
func plannerRequest(v engine.Values, s State) (model.Request, Message, error) {
	req, ok := lastUser(v, s.Request)
	if !ok {
		return model.Request{}, Message{}, errors.New("no user message to plan from")
	}
	task := fmt.Sprintf("Plan the customer's newest message, #%d %s. A follow-up that names no order is about the order the conversation was about: put that order's number in each goal.\nREQUEST: %s", req.Index, cleanSpeaker(req.Speaker), oneLine(req.Content))
	system := plannerSystem
	if s.Scenario == ScenarioSiteLog {
		task = fmt.Sprintf("Plan the site manager's newest log entry, #%d %s.\nREQUEST: %s\nSCENARIO: %s", req.Index, cleanSpeaker(req.Speaker), oneLine(req.Content), ScenarioSiteLog)
		system = sitePlannerSystem
	}
	call, err := buildRequest(model.RolePlanner, system, v, task)
	call.JSON, call.KeepAnswer = plannerSchema, true
	return call, req, err
}

// plannerRetry is the planner's second request: the first, its answer,
// and why the answer could not be used.
func plannerRetry(first model.Request, answer string, why error) model.Request {
	again := first
	again.Messages = append(slices.Clone(first.Messages),
		model.Message{Role: model.ChatAssistant, Content: answer, Part: model.PartRounds},
		model.Message{Role: model.ChatUser, Content: "YOUR LAST ANSWER COULD NOT BE USED: " + why.Error() + ". Answer again with only the JSON object the instructions describe.", Part: model.PartInstructions})
	return again
}

// executorRequest is an executor's first request (s: scenario); its tool
// rounds follow it (toolWork.run).
func executorRequest(v engine.Values, s State, args ExecutorArgs) (model.Request, error) {
	st := args.Task
	task := fmt.Sprintf("SUBTASK %s: %s\nTOPIC: %s", st.ID, st.Goal, st.Topic)
	if args.Feedback != "" {
		task += "\nFEEDBACK: " + args.Feedback
	}
	system := executorSystem
	if s.Scenario == ScenarioSiteLog {
		system = siteExecutorSystem
	}
	call, err := buildRequest(model.RoleExecutor, system, v, task)
	call.Tools = modelTools(s.Scenario)
	return call, err
}

// criticRequest is the critic's request and the outputs it reviews (s:
// request, subtasks, reviewRounds). The requirement keeps its "#index
// speaker" whether it is in the tail or folded into the summary.
func criticRequest(v engine.Values, s State) (model.Request, []Subtask, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "REVIEW ROUND %d\n", s.ReviewRounds+1)
	if req, ok := lastUser(v, s.Request); ok {
		fmt.Fprintf(&b, "REQUIREMENT #%d %s: %s\n", req.Index, cleanSpeaker(req.Speaker), oneLine(req.Content))
	}
	var reviewed []Subtask
	for _, st := range s.Subtasks {
		if st.Status == StatusDone {
			fmt.Fprintf(&b, "OUTPUT %s [%s]: %s\n", st.ID, st.Topic, oneLine(st.Result))
			reviewed = append(reviewed, st)
		}
	}
	call, err := buildRequest(model.RoleCritic, criticSystem, v, b.String())
	call.JSON, call.KeepAnswer = criticSchema, true
	return call, reviewed, err
}

// replyRequest is the reply's request and, for a redraft, what it revises
// (s: request, subtasks, degraded, operations, scenario).
func replyRequest(v engine.Values, s State, rawArgs json.RawMessage) (model.Request, ReplyArgs, error) {
	var b strings.Builder
	if req, ok := lastUser(v, s.Request); ok {
		fmt.Fprintf(&b, "Write the reply to #%d %s from the findings below.\nREQUEST: %s\n", req.Index, cleanSpeaker(req.Speaker), oneLine(req.Content))
	}
	for _, st := range s.Subtasks {
		fmt.Fprintf(&b, "FINDING %s [%s]: %s\n", st.ID, st.Status, oneLine(st.Result))
	}
	if s.Degraded {
		b.WriteString("NOTE: some findings are unverified or blocked; say so.\n")
	}
	var revise ReplyArgs
	if len(rawArgs) > 0 && string(rawArgs) != "null" {
		if err := json.Unmarshal(rawArgs, &revise); err != nil {
			return model.Request{}, revise, fmt.Errorf("reply arguments: %w", err)
		}
	}
	if revise.Revise != "" {
		if old, ok := s.Operations[revise.Revise]; ok {
			fmt.Fprintf(&b, "PREVIOUS DRAFT: %s\n", strings.ReplaceAll(old.Payload, "\n", " "))
		}
		fmt.Fprintf(&b, "REVISE: the operator rejected the previous draft: %s\n", revise.Reason)
	}
	system := replySystem
	if s.Scenario == ScenarioSiteLog {
		b.WriteString("SCENARIO: " + ScenarioSiteLog + "\n")
		system = siteReplySystem
	}
	call, err := buildRequest(model.RoleReply, system, v, b.String())
	return call, revise, err
}
