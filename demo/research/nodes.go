package research

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"rewind/engine"
	"rewind/engine/model"
)

// The roles' instructions. Each starts with the words that tell a model
// (and the mock, which sees no role over the wire) which role it plays.
const (
	planSystem   = "You are the planner of a research assistant. Split the question into 2 to 4 independent sub-questions, each about one topic of the corpus (" + "%s" + "). Answer only JSON: {\"subquestions\":[{\"id\":\"q1\",\"question\":\"…\",\"topic\":\"…\"}]}"
	searchSystem = "You are a searcher of a research assistant. Answer the sub-question in two sentences from the passages alone, and end with the passage ids you used in brackets, e.g. [wal-1, wal-2]."
	writeSystem  = "You are the writer of a research assistant. Answer the question from the research notes: call cite(note_id) to read each note you use and lookup(topic) for anything the notes lack, then answer in a few bullet points, each ending with the note or passage id it rests on."
)

var planSchema = &model.Schema{Name: "plan", Schema: json.RawMessage(`{"type":"object","properties":{"subquestions":{"type":"array","items":{"type":"object","properties":{"id":{"type":"string"},"question":{"type":"string"},"topic":{"type":"string"}},"required":["id","question","topic"],"additionalProperties":false}}},"required":["subquestions"],"additionalProperties":false}`)}

// plan asks the model for the sub-questions.
func plan(ctx context.Context, nc *engine.NodeContext) ([]engine.Write, error) {
	var s State
	if err := nc.Values.Decode(&s, ChanQuestion); err != nil {
		return nil, err
	}
	req := model.Simple(RolePlan, fmt.Sprintf(planSystem, strings.Join(Topics(), ", ")), "Question: "+s.Question)
	req.JSON, req.KeepAnswer = planSchema, true
	resp, err := nc.Model.Complete(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	subs, err := readPlan(resp.Text)
	if err != nil {
		return nil, err
	}
	lines := make([]string, len(subs))
	for i, sq := range subs {
		lines[i] = fmt.Sprintf("%s (%s): %s", sq.ID, sq.Topic, sq.Question)
	}
	return []engine.Write{
		engine.Put(ChanSubs, subs),
		engine.Put(ChanMessages, []Message{{Role: model.ChatAssistant, Speaker: NodePlan, Content: "sub-questions:\n" + strings.Join(lines, "\n")}}),
	}, nil
}

// readPlan reads the planner's answer: 1 to 4 sub-questions with unique
// ids (more are cut to 4: a Send each).
func readPlan(text string) ([]Sub, error) {
	for _, c := range model.Candidates(text) {
		var p struct {
			Subquestions []Sub `json:"subquestions"`
		}
		if json.Unmarshal([]byte(c), &p) != nil || len(p.Subquestions) == 0 {
			continue
		}
		subs := p.Subquestions
		if len(subs) > 4 {
			subs = subs[:4]
		}
		seen := map[string]bool{}
		for i := range subs {
			if subs[i].ID == "" || seen[subs[i].ID] {
				subs[i].ID = fmt.Sprintf("q%d", i+1)
			}
			seen[subs[i].ID] = true
		}
		return subs, nil
	}
	return nil, fmt.Errorf("plan: the planner's answer holds no sub-questions: %q", clip(text, 200))
}

// fanOut sends each sub-question to a search task of its own.
func fanOut(v engine.Values) ([]engine.Target, error) {
	var s State
	if err := v.Decode(&s, ChanSubs); err != nil {
		return nil, err
	}
	out := make([]engine.Target, len(s.Subquestions))
	for i, sq := range s.Subquestions {
		out[i] = engine.Send(NodeSearch, sq)
	}
	return out, nil
}

// search answers one sub-question from the corpus's passages.
func search(ctx context.Context, nc *engine.NodeContext) ([]engine.Write, error) {
	var sq Sub
	if err := json.Unmarshal(nc.Task.Args, &sq); err != nil {
		return nil, fmt.Errorf("search: its arguments are not a sub-question: %w", err)
	}
	ps := Lookup(sq.Topic + " " + sq.Question)
	ids := make([]string, len(ps))
	for i, p := range ps {
		ids[i] = p.ID
	}
	prompt := fmt.Sprintf("Sub-question %s: %s\nPassages:\n%s", sq.ID, sq.Question, passagesText(ps))
	if len(ps) == 0 {
		prompt = fmt.Sprintf("Sub-question %s: %s\nPassages: none (say the corpus has nothing on it)", sq.ID, sq.Question)
	}
	resp, err := nc.Model.Complete(ctx, model.Simple(RoleSearch, searchSystem, prompt))
	if err != nil {
		return nil, fmt.Errorf("search %s: %w", sq.ID, err)
	}
	text := strings.TrimSpace(resp.Text)
	return []engine.Write{
		engine.Put(ChanNotes, []Note{{ID: sq.ID, Question: sq.Question, Text: text, Sources: ids}}),
		engine.Put(ChanMessages, []Message{{Role: model.ChatAssistant, Speaker: "search[" + sq.ID + "]", Content: text}}),
	}, nil
}

// write is the tool-calling loop: ask, run the calls the model returned,
// give it their results, ask again, until it answers with text alone.
func write(ctx context.Context, nc *engine.NodeContext) ([]engine.Write, error) {
	var s State
	if err := nc.Values.Decode(&s, ChanQuestion, ChanNotes, ChanDraft, ChanReview); err != nil {
		return nil, err
	}
	req := model.Simple(RoleWrite, writeSystem, writePrompt(s))
	req.Tools = tools
	var said []Message
	for round := 1; round <= MaxToolRounds; round++ {
		resp, err := nc.Model.Complete(ctx, req)
		if err != nil {
			return nil, fmt.Errorf("write, round %d: %w", round, err)
		}
		if len(resp.ToolCalls) == 0 {
			draft := strings.TrimSpace(resp.Text)
			said = append(said, Message{Role: model.ChatAssistant, Speaker: NodeWrite, Content: draft})
			return []engine.Write{
				engine.Put(ChanMessages, said),
				engine.Put(ChanDraft, draft),
				engine.Put(ChanReview, Review{}), // read: publish asks again
			}, nil
		}
		calls := make([]model.ToolCall, len(resp.ToolCalls))
		asked := Message{Role: model.ChatAssistant, Speaker: NodeWrite, Content: resp.Text}
		for i, c := range resp.ToolCalls {
			if c.ID == "" { // some servers give none; the transcript pairs by id
				c.ID = fmt.Sprintf("call-%d-%d", round, i+1)
			}
			calls[i] = c
			asked.ToolCalls = append(asked.ToolCalls, ToolCall{ID: c.ID, Name: c.Name, Args: argsJSON(c.Arguments)})
		}
		req.Messages = append(req.Messages, model.Message{Role: model.ChatAssistant, Content: resp.Text, ToolCalls: calls, Part: model.PartRounds})
		said = append(said, asked)
		for _, c := range calls {
			result := runTool(c, s.Notes)
			req.Messages = append(req.Messages, model.Message{Role: model.ChatTool, Content: result, ToolCallID: c.ID, Part: model.PartRounds})
			said = append(said, Message{Role: model.ChatTool, Speaker: c.Name, Content: result, ToolCallID: c.ID})
		}
	}
	return nil, engine.Fail(fmt.Errorf("write: the model still called tools after %d rounds without answering", MaxToolRounds))
}

// writePrompt is the writer's task: the question, the notes it may cite,
// and the reviewer's note when the draft was sent back.
func writePrompt(s State) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Question: %s\nNotes:\n", s.Question)
	for _, n := range s.Notes {
		fmt.Fprintf(&b, "- %s: %s\n", n.ID, n.Question)
	}
	if s.Review.Decision == Revise {
		fmt.Fprintf(&b, "The reviewer sent the draft back: %s\nThe draft was:\n%s\n", s.Review.Note, s.Draft)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// argsJSON is a call's arguments as stored: the model's JSON, or a string
// of what it wrote when that is not JSON.
func argsJSON(s string) json.RawMessage {
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	b, _ := json.Marshal(s)
	return b
}

// publish waits for the person's answer (review), then publishes the
// draft or sends it back.
func publish(_ context.Context, nc *engine.NodeContext) ([]engine.Write, error) {
	var s State
	if err := nc.Values.Decode(&s, ChanDraft, ChanReview); err != nil {
		return nil, err
	}
	switch s.Review.Decision {
	case Approve:
		return []engine.Write{
			engine.Put(ChanPublished, s.Draft),
			engine.Put(ChanMessages, []Message{{Role: model.ChatAssistant, Speaker: NodePublish, Content: "published the approved draft"}}),
		}, nil
	case Revise:
		return []engine.Write{
			engine.Put(ChanRevisions, 1),
			engine.Put(ChanMessages, []Message{{Role: model.ChatUser, Speaker: "reviewer", Content: "revise: " + s.Review.Note}}),
		}, nil
	case "":
		return nil, engine.AwaitApproval(NodePublish, `publish the draft? answer review: {"decision": "approve"} or {"decision": "revise", "note": "…"}`)
	}
	return nil, engine.Fail(CheckReview(s.Review))
}

// afterPublish: a revision goes back to the writer; anything else ends.
func afterPublish(v engine.Values) ([]engine.Target, error) {
	var s State
	if err := v.Decode(&s, ChanReview); err != nil {
		return nil, err
	}
	if s.Review.Decision == Revise {
		return []engine.Target{engine.Goto(NodeWrite)}, nil
	}
	return []engine.Target{engine.Goto(engine.End)}, nil
}

// clip is s cut to at most n bytes, between characters, with "…".
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
