// Package research is rewind's second demo graph, of another shape than
// the support ticket: a research assistant built with the engine's public
// API alone, to show what rewind does with a graph it did not write.
//
//   - plan: one model call splits the question into 2–4 sub-questions;
//   - search: one task per sub-question (Send fan-out), run in parallel,
//     each writing its note into ONE channel, notes, through a keyed
//     reducer (MergeByID("id"));
//   - write: a tool-calling loop: the model gets the tools lookup(topic)
//     (a small fixed offline corpus) and cite(note_id); the node runs the
//     calls it returns, feeds the results back as tool messages and asks
//     again, at most MaxToolRounds times, until the model answers without
//     a call; every message goes into messages, a message list (role,
//     speaker, content, toolCalls, toolCallId), so rewind's TUI shows it
//     as a conversation;
//   - publish: a gate (Graph.Gate). The engine has no interrupt() that
//     returns a value into a node, as LangGraph's does: publish pauses the
//     run (engine.AwaitApproval) until review holds a person's answer. The
//     answer is state: Answer writes it under the thread's lock and the
//     run resumes (Engine.Answer), or a person edits review (rewind's TUI:
//     e on the review channel) and resumes. approve publishes the draft;
//     revise, with a note, sends the run back to write, which reads the
//     note and clears review, so publish asks again.
//
// The engine has no subgraphs, so neither has this graph.
//
// Graph takes nothing and NewEngine only a store and a model, so another
// process (a worker, a drill) builds the same engine. The model roles are the ticket's
// (planner, executor for search, reply for write), so the same provider
// flags and environment (REWIND_MODEL_PLANNER, …) choose the models.
package research

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"rewind/engine"
	"rewind/engine/model"
	"rewind/store"
)

// Name is the graph's name (engine.Graph.Name).
const Name = "research"

// The graph's nodes.
const (
	NodePlan    = "plan"
	NodeSearch  = "search"
	NodeWrite   = "write"
	NodePublish = "publish"
)

// The graph's channels.
const (
	ChanQuestion  = "question"
	ChanMessages  = "messages"
	ChanSubs      = "subquestions"
	ChanNotes     = "notes"
	ChanDraft     = "draft"
	ChanReview    = "review"
	ChanPublished = "published"
	ChanRevisions = "revisions"
)

// Roles of the graph's model calls: the ticket's names, so the
// OpenAI-compatible provider maps each to a model as it does the ticket's.
const (
	RolePlan   = model.RolePlanner
	RoleSearch = model.RoleExecutor
	RoleWrite  = model.RoleReply
)

// Roles are the roles the graph's model calls are made as (and its mock
// plays): what --mock-fail may name on it.
var Roles = []string{RolePlan, RoleSearch, RoleWrite}

// The demo session (the lesson, the recording): a question on three of
// the corpus's topics, and the note a person sends the first draft back
// with.
const (
	Question   = "How does WAL mode keep readers and writers apart, and what can a power cut lose?"
	ReviseNote = "say more on locking"
)

// MaxToolRounds bounds the writer's loop: model calls that may return tool
// calls before the node gives up.
const MaxToolRounds = 4

// The person's answers at the publish gate.
const (
	Approve = "approve"
	Revise  = "revise"
)

// Review is the person's answer at the publish gate: the resume value,
// stored in state (channel review). Zero: no answer yet.
type Review struct {
	Decision string `json:"decision"`
	Note     string `json:"note"`
}

// Sub is one sub-question: a search task's arguments (its Send packet).
type Sub struct {
	ID       string `json:"id"`
	Question string `json:"question"`
	Topic    string `json:"topic"`
}

// Note is what one search branch found, keyed by its sub-question's id.
type Note struct {
	ID       string   `json:"id"`
	Question string   `json:"question"`
	Text     string   `json:"text"`
	Sources  []string `json:"sources"`
}

// Message is one item of the messages channel.
type Message struct {
	Index      int        `json:"index,omitempty"`
	Role       string     `json:"role"`
	Speaker    string     `json:"speaker"`
	Content    string     `json:"content"`
	ToolCalls  []ToolCall `json:"toolCalls,omitempty"`
	ToolCallID string     `json:"toolCallId,omitempty"`
}

// ToolCall is a call the writer's model made, its arguments as JSON.
type ToolCall struct {
	ID   string          `json:"id"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

// State is the graph's state, decoded.
type State struct {
	Question     string    `json:"question"`
	Messages     []Message `json:"messages"`
	Subquestions []Sub     `json:"subquestions"`
	Notes        []Note    `json:"notes"`
	Draft        string    `json:"draft"`
	Review       Review    `json:"review"`
	Published    string    `json:"published"`
	Revisions    int       `json:"revisions"`
}

// Decode reads a checkpoint's values as the graph's state.
func Decode(v engine.Values) (State, error) {
	var s State
	err := v.Decode(&s)
	return s, err
}

// Graph is the research assistant's graph. It takes nothing: nodes call
// the model the engine gives them (NodeContext.Model), so any process
// builds the same graph and gives it its own model through NewEngine.
func Graph() *engine.Graph {
	return engine.NewGraph(Name, 1).
		Channel(ChanQuestion, engine.LastValue, "").
		Channel(ChanMessages, engine.IndexedAppend("index"), []any{}).
		Transcript(ChanMessages, "index").
		Channel(ChanSubs, engine.LastValue, []any{}).
		Channel(ChanNotes, engine.MergeByID("id"), []any{}).
		Keyed(ChanNotes, "id").
		Channel(ChanDraft, engine.LastValue, "").
		Channel(ChanReview, engine.LastValue, Review{}).
		Channel(ChanPublished, engine.LastValue, "").
		Channel(ChanRevisions, engine.Counter, 0).
		Input(input).
		CheckChannel(ChanReview, checkReview).
		Node(NodePlan, plan).
		Node(NodeSearch, search).
		Node(NodeWrite, write).
		Node(NodePublish, publish).
		Gate(NodePublish).
		Entry(NodePlan).
		Route(NodePlan, fanOut, engine.Send(NodeSearch, nil)).
		Edge(NodeSearch, NodeWrite).
		Edge(NodeWrite, NodePublish).
		Route(NodePublish, afterPublish, engine.Goto(NodeWrite), engine.Goto(engine.End))
}

// NewEngine is the graph's engine on st with model m.
func NewEngine(st store.Store, m model.Model, opts ...engine.Option) (*engine.Engine, error) {
	return engine.New(st, Graph(), m, opts...)
}

// input is a turn's writes: the question, as the conversation's first
// message, and a fresh slate for the turn's notes, draft and review.
func input(in engine.Input, _ time.Time) ([]engine.Write, error) {
	q := strings.TrimSpace(in.Text)
	if q == "" {
		return nil, nil
	}
	if in.Extra != nil {
		return nil, fmt.Errorf("the research graph takes a question alone, not a %T (no attachments, no draft)", in.Extra)
	}
	return []engine.Write{
		engine.Put(ChanQuestion, q),
		engine.Put(ChanMessages, []Message{{Role: model.ChatUser, Speaker: "user", Content: q}}),
		engine.Put(ChanSubs, []Sub{}),
		engine.Replace(ChanNotes, []Note{}),
		engine.Put(ChanDraft, ""),
		engine.Put(ChanReview, Review{}),
		engine.Put(ChanPublished, ""),
	}, nil
}

// Input is the writes of a turn asking question (the graph's declared
// input, as the TUI and the CLI give it).
func Input(question string) ([]engine.Write, error) {
	ws, err := input(engine.Input{Text: question}, time.Time{})
	if err == nil && len(ws) == 0 {
		err = errors.New("the question is empty: ask something")
	}
	return ws, err
}

// CheckReview says what is wrong with a person's answer, and what to give.
func CheckReview(r Review) error {
	switch r.Decision {
	case "":
		if r.Note != "" {
			return errors.New(`a note without a decision: give {"decision": "revise", "note": "…"}`)
		}
	case Approve:
	case Revise:
		if strings.TrimSpace(r.Note) == "" {
			return errors.New(`revise needs a note saying what to change: {"decision": "revise", "note": "…"}`)
		}
	default:
		return fmt.Errorf(`decision %q: give "approve" or "revise" (with a note)`, r.Decision)
	}
	return nil
}

// checkReview holds an edit of review to what publish reads.
func checkReview(_ context.Context, in engine.ChannelEdit) error {
	var s State
	if err := in.Values.Decode(&s, ChanReview); err != nil {
		return fmt.Errorf(`review is {"decision": "approve"|"revise", "note": "…"}: %w`, err)
	}
	return CheckReview(s.Review)
}

// Answer is the person's answer at the publish gate as Engine.Answer takes
// it: refused when the head is not waiting at publish or the answer is
// malformed.
func Answer(r Review) func(head engine.Checkpoint) ([]engine.Write, error) {
	return func(head engine.Checkpoint) ([]engine.Write, error) {
		if err := CheckReview(r); err != nil {
			return nil, err
		}
		if r.Decision == "" {
			return nil, errors.New(`no decision: give "approve" or "revise" (with a note)`)
		}
		if len(head.Tasks) != 1 || head.Tasks[0].Node != NodePublish {
			return nil, fmt.Errorf("nothing awaits review at @%d (pending: %s)", head.ID, orNone(engine.DescribeTasks(head.Tasks)))
		}
		return []engine.Write{engine.Put(ChanReview, r)}, nil
	}
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
