package ticket

import (
	"context"
	"encoding/json"
	"fmt"
	"rewind/engine/event"

	"rewind/engine"
	"rewind/engine/model"
)

// What the model saw: each call a checkpoint's tasks made, with its
// request built again from the checkpoint the task ran from (the same
// functions the nodes call) and checked against the hash stored with the
// call, and the model's answer.

// Call is one model call as the model saw it.
type Call struct {
	Node string `json:"node"`
	Task string `json:"task"`
	Role string `json:"role"`
	// Round counts the task's calls of this role from 1: an executor's
	// tool rounds, a planner's or summarizer's retry.
	Round int `json:"round"`
	// Request is the request rebuilt from the parent checkpoint.
	Request model.Request `json:"request"`
	// Hash is the stored hash of the request sent; Rebuilt the rebuilt
	// one's. Exact when they match; a call stored before hashes were has
	// none (Exact false, Hash "").
	Hash    string `json:"hash,omitempty"`
	Rebuilt string `json:"rebuilt"`
	Exact   bool   `json:"exact"`
	// Answer is what the model answered: its text (kept with the call, or
	// the message the task wrote) and its tool calls.
	Answer    string           `json:"answer,omitempty"`
	ToolCalls []model.ToolCall `json:"toolCalls,omitempty"`
	// Parts are the request's estimated tokens by part (summary, facts,
	// tail, rounds, instructions); Reported what the server counted.
	Parts    map[string]int `json:"parts"`
	Reported model.Usage    `json:"reported"`
	Error    string         `json:"error,omitempty"`
	JSONMode string         `json:"jsonMode,omitempty"`
}

// CallReader is what Calls reads: checkpoints (migrated, with the writes
// that made them) and their events. *engine.Engine is one.
type CallReader interface {
	Get(ctx context.Context, thread string, id int64) (engine.Checkpoint, error)
	Events(ctx context.Context, thread string, id int64) ([]engine.Event, error)
}

// Calls lists the model calls the tasks that made checkpoint id made, in
// order, each with its request as the model saw it. A checkpoint no task
// made (an input, an update) has none.
func Calls(ctx context.Context, e CallReader, thread string, id int64) ([]Call, error) {
	cp, err := e.Get(ctx, thread, id)
	if err != nil {
		return nil, err
	}
	if cp.ParentID == 0 {
		return nil, nil
	}
	parent, err := e.Get(ctx, thread, cp.ParentID)
	if err != nil {
		return nil, err
	}
	s, err := Decode(parent.Values)
	if err != nil {
		return nil, fmt.Errorf("read @%d, which the calls of @%d were built from: %w", parent.ID, id, err)
	}
	args := map[string]json.RawMessage{}
	for _, t := range parent.Tasks {
		args[t.ID] = t.Args
	}
	retried, err := retriedFor(ctx, e, thread, id)
	if err != nil {
		return nil, err
	}
	var out []Call
	for _, g := range cp.Applied {
		if len(g.Calls) == 0 {
			continue
		}
		b := rebuilder{v: parent.Values, s: s, args: args[g.Task], node: g.Node, retriedFor: retried[g.Task]}
		for _, w := range g.Writes {
			if w.Channel == "messages" {
				var ms []Message
				if json.Unmarshal(w.Value, &ms) == nil {
					b.written = append(b.written, ms...)
				}
			}
		}
		out = append(out, b.calls(g)...)
	}
	return out, nil
}

func joinErr(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// rebuilder builds one task's requests again, call by call.
type rebuilder struct {
	v       engine.Values
	s       State
	args    json.RawMessage
	node    string
	written []Message // the task's messages: its tool rounds and finding
	answers []string  // the answers of the calls rebuilt so far
	// retriedFor is why a summarizer's first answer was refused.
	retriedFor []string
}

// request is the task's round-th call of role, with the answer the task
// wrote for it (when the answer was not kept with the call).
func (b *rebuilder) request(role string, round int) (model.Request, string, []model.ToolCall, error) {
	switch role {
	case model.RolePlanner:
		first, _, err := plannerRequest(b.v, b.s)
		if err != nil || round == 1 {
			return first, "", nil, err
		}
		prev := b.answers[len(b.answers)-1]
		_, perr := parsePlanIn(b.s.Scenario, prev)
		if perr == nil {
			return model.Request{}, "", nil, fmt.Errorf("the planner's first answer parses, so it was not asked again")
		}
		return plannerRetry(first, prev, perr), "", nil, nil
	case model.RoleCritic:
		call, _, err := criticRequest(b.v, b.s)
		return call, "", nil, err
	case model.RoleReply:
		call, _, err := replyRequest(b.v, b.s, b.args)
		answer := ""
		for _, m := range b.written {
			if m.Speaker == NodeReply {
				answer = m.Content
			}
		}
		return call, answer, nil, err
	case model.RoleSummarizer:
		cut := Cut(b.s.Messages)
		if cut == 0 {
			return model.Request{}, "", nil, fmt.Errorf("nothing to compact at the parent checkpoint")
		}
		head := b.s.Messages[:cut]
		transcript := Transcript(head)
		answer := "(not kept: the summary field holds what it became)"
		if round == 1 {
			return summarizerRequest(transcript), answer, nil, nil
		}
		if len(b.retriedFor) == 0 {
			return model.Request{}, "", nil, fmt.Errorf("the summarizer was asked again but its compaction event names no reasons")
		}
		return summarizerRequest(retryPrompt(transcript, b.retriedFor)), answer, nil, nil
	case model.RoleExecutor:
		var args ExecutorArgs
		if err := json.Unmarshal(b.args, &args); err != nil {
			return model.Request{}, "", nil, fmt.Errorf("the executor's arguments: %w", err)
		}
		call, err := executorRequest(b.v, b.s, args)
		if err != nil {
			return call, "", nil, err
		}
		// The task's messages, round by round: a call message and its
		// results, then the finding.
		k := 1
		for i := 0; i < len(b.written); {
			m := b.written[i]
			if len(m.Calls()) == 0 {
				if k == round {
					return call, m.Content, nil, nil
				}
				break
			}
			if k == round {
				var tcs []model.ToolCall
				for _, c := range m.Calls() {
					tcs = append(tcs, c.wire())
				}
				text := m.Content
				if text == describeToolCalls(tcs) {
					text = "" // written for the reader: the model wrote none
				}
				return call, text, tcs, nil
			}
			call.Messages = append(call.Messages, roundMessage(m))
			for i++; i < len(b.written) && b.written[i].Role == RoleTool; i++ {
				call.Messages = append(call.Messages, roundMessage(b.written[i]))
			}
			k++
		}
		return call, "", nil, nil
	}
	return model.Request{}, "", nil, fmt.Errorf("no request of role %q in this graph", role)
}

// retriedFor is, by task, why a summarizer was asked again: its
// compaction's event says.
func retriedFor(ctx context.Context, e CallReader, thread string, id int64) (map[string][]string, error) {
	retried := map[string][]string{}
	evs, err := e.Events(ctx, thread, id)
	if err != nil {
		return retried, nil // the calls still list, without the reason
	}
	for _, ev := range evs {
		var why []string
		switch ev.Type {
		case EventContextCompacted:
			d, err := event.Decode[event.ContextCompacted](ev.Type, ev.Data)
			if err != nil {
				return nil, fmt.Errorf("read the events of @%d: %w", id, err)
			}
			why = d.RetriedFor
		case EventCompactionRejected:
			d, err := event.Decode[event.CompactionRejected](ev.Type, ev.Data)
			if err != nil {
				return nil, fmt.Errorf("read the events of @%d: %w", id, err)
			}
			why = d.RetriedFor
		}
		if len(why) > 0 {
			retried[ev.Task] = why
		}
	}
	return retried, nil
}

// calls rebuilds the requests of one task's model calls, in order.
func (b *rebuilder) calls(g engine.WriteGroup) []Call {
	var out []Call
	rounds := map[string]int{}
	for _, ev := range g.Calls {
		d, derr := event.Decode[event.ModelCalled](ev.Type, ev.Data)
		rounds[d.Role]++
		c := Call{Node: g.Node, Task: g.Task, Role: d.Role, Round: rounds[d.Role], Hash: d.Request, Error: d.Error, JSONMode: d.JSONMode,
			Reported: model.Usage{PromptTokens: d.PromptTokens, CompletionTokens: d.CompletionTokens}, Answer: d.Answer}
		if derr != nil {
			c.Error = joinErr(c.Error, derr.Error())
		}
		req, answer, calls, rerr := b.request(d.Role, c.Round)
		if rerr != nil {
			c.Error = joinErr(c.Error, "cannot build the request again: "+rerr.Error())
		} else {
			c.Request = req
			c.Rebuilt = req.Hash()[:engine.RequestHashLen]
			c.Exact = c.Hash != "" && c.Hash == c.Rebuilt
			c.Parts = req.Tokens()
			if c.Answer == "" {
				c.Answer, c.ToolCalls = answer, calls
			}
		}
		b.answers = append(b.answers, c.Answer)
		out = append(out, c)
	}
	return out
}
