// Package event holds the data of every event type rewind's runtime and
// its graphs emit: one struct per type, emitted as it is and decoded by
// the CLI and the TUI with Decode, so an emit site and its readers share
// one definition.
//
// A payload marshals to the bytes the untyped maps it replaces wrote (a
// map's keys sorted, so the fields of a struct made from one are in key
// order): events in existing stores decode, and new ones store the same.
// A key the map wrote only sometimes is omitempty, or a pointer when the
// map could write it empty; an event type with two forms (Fork, Update,
// Rechecked) marshals the form its fields say.
package event

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// Payload is an event's data: Type is the event type it is emitted as.
type Payload interface{ Type() string }

// Event types.
const (
	TypeInput           = "input.received"
	TypeFork            = "fork.created"
	TypeUpdate          = "state.updated"
	TypeStepStarted     = "step.started"
	TypeNodeStarted     = "node.started"
	TypeNodeFinished    = "node.finished"
	TypeModelCalled     = "model.called"
	TypeTaskReused      = "task.reused"
	TypeInterrupt       = "interrupt"
	TypeCheckpointSaved = "checkpoint.saved"
	TypeBlocked         = "operation.blocked"
	TypeTokenBudget     = "run.token_budget"
	TypeRunFailed       = "run.failed"
	TypeRunCancelled    = "run.cancelled"
	TypeRechecked       = "resume.rechecked"

	TypeContextMeasured    = "context.measured"
	TypeContextCompacted   = "context.compacted"
	TypeCompactionSkipped  = "context.compaction_skipped"
	TypeCompactionRejected = "context.compaction_rejected"
	TypeDraftVerified      = "draft.verified"
	TypeToolError          = "tool.error"
	TypeToolRefused        = "tool.refused"
	TypeToolLoop           = "tool.loop"
	TypeToolCalled         = "tool.called"
	TypeGrantAttached      = "approval.grant"
	TypeSideEffectRecorded = "side_effect.recorded"
	TypePlannerRetried     = "planner.retried"
	TypePlannerDegraded    = "planner.degraded"
	TypeCriticDegraded     = "critic.degraded"
)

// kinds is every event type and its payload: Decoding any of them, and a
// test walks it, so a type emitted without a payload here is caught.
var kinds = map[string]func() Payload{
	TypeInput:              func() Payload { return &Input{} },
	TypeFork:               func() Payload { return &Fork{} },
	TypeUpdate:             func() Payload { return &Update{} },
	TypeStepStarted:        func() Payload { return &StepStarted{} },
	TypeNodeStarted:        func() Payload { return &NodeStarted{} },
	TypeNodeFinished:       func() Payload { return &NodeFinished{} },
	TypeModelCalled:        func() Payload { return &ModelCalled{} },
	TypeTaskReused:         func() Payload { return &TaskReused{} },
	TypeInterrupt:          func() Payload { return &Interrupt{} },
	TypeCheckpointSaved:    func() Payload { return &CheckpointSaved{} },
	TypeBlocked:            func() Payload { return &Blocked{} },
	TypeTokenBudget:        func() Payload { return &TokenBudget{} },
	TypeRunFailed:          func() Payload { return &RunFailed{} },
	TypeRunCancelled:       func() Payload { return &RunCancelled{} },
	TypeRechecked:          func() Payload { return &Rechecked{} },
	TypeContextMeasured:    func() Payload { return &ContextMeasured{} },
	TypeContextCompacted:   func() Payload { return &ContextCompacted{} },
	TypeCompactionSkipped:  func() Payload { return &CompactionSkipped{} },
	TypeCompactionRejected: func() Payload { return &CompactionRejected{} },
	TypeDraftVerified:      func() Payload { return &DraftVerified{} },
	TypeToolError:          func() Payload { return &ToolError{} },
	TypeToolRefused:        func() Payload { return &ToolRefused{} },
	TypeToolLoop:           func() Payload { return &ToolLoop{} },
	TypeToolCalled:         func() Payload { return &ToolCalled{} },
	TypeGrantAttached:      func() Payload { return &GrantAttached{} },
	TypeSideEffectRecorded: func() Payload { return &SideEffectRecorded{} },
	TypePlannerRetried:     func() Payload { return &PlannerRetried{} },
	TypePlannerDegraded:    func() Payload { return &PlannerDegraded{} },
	TypeCriticDegraded:     func() Payload { return &CriticDegraded{} },
}

// Types lists every event type, sorted.
func Types() []string {
	out := make([]string, 0, len(kinds))
	for t := range kinds {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

// ErrUnknown is an event type this rewind has no payload for (a graph's
// own, or a newer rewind's).
var ErrUnknown = errors.New("an event type this rewind does not know")

// Decode reads data of an event of type typ as P; an event of another
// type, or data that is not P's, is an error naming the event type.
func Decode[P Payload](typ string, data []byte) (P, error) {
	var p P
	if typ != p.Type() {
		return p, fmt.Errorf("a %s event read as %s", typ, p.Type())
	}
	if len(data) == 0 {
		return p, fmt.Errorf("the %s event has no data", typ)
	}
	if err := json.Unmarshal(data, &p); err != nil {
		return p, fmt.Errorf("the %s event's data does not decode: %w", typ, err)
	}
	return p, nil
}

// DecodeAny reads data of an event of type typ as that type's payload (a
// pointer to it).
func DecodeAny(typ string, data []byte) (Payload, error) {
	mk, ok := kinds[typ]
	if !ok {
		return nil, fmt.Errorf("%q is %w", typ, ErrUnknown)
	}
	p := mk()
	if len(data) == 0 {
		return nil, fmt.Errorf("the %s event has no data", typ)
	}
	if err := json.Unmarshal(data, p); err != nil {
		return nil, fmt.Errorf("the %s event's data does not decode: %w", typ, err)
	}
	return p, nil
}

// Input is a new turn's input.
type Input struct {
	Channels []string `json:"channels"`
	Parent   int64    `json:"parent"`
}

// Fork is a fork with input (Channels) or a replay of what was due at
// Parent (Replay, Tasks).
type Fork struct {
	Channels []string
	Parent   int64
	Replay   bool
	Tasks    string // the replayed tasks, described
}

type forkInput struct {
	Channels []string `json:"channels"`
	Parent   int64    `json:"parent"`
}

type forkReplay struct {
	Parent int64  `json:"parent"`
	Replay bool   `json:"replay"`
	Tasks  string `json:"tasks"`
}

// MarshalJSON writes the form Replay says.
func (f Fork) MarshalJSON() ([]byte, error) {
	if f.Replay {
		return json.Marshal(forkReplay{Parent: f.Parent, Replay: true, Tasks: f.Tasks})
	}
	return json.Marshal(forkInput{Channels: f.Channels, Parent: f.Parent})
}

// UnmarshalJSON reads either form.
func (f *Fork) UnmarshalJSON(b []byte) error {
	var d struct {
		Channels []string `json:"channels"`
		Parent   int64    `json:"parent"`
		Replay   bool     `json:"replay"`
		Tasks    string   `json:"tasks"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		return err
	}
	*f = Fork(d)
	return nil
}

// Update is an edit of the state (AsNode, Channels) or, with Discarded
// set, a discard of that many pending tasks.
type Update struct {
	AsNode    string
	Channels  []string
	Discarded *int
}

// MarshalJSON writes the form Discarded says.
func (u Update) MarshalJSON() ([]byte, error) {
	if u.Discarded != nil {
		return json.Marshal(struct {
			Discarded int `json:"discarded"`
		}{*u.Discarded})
	}
	return json.Marshal(struct {
		AsNode   string   `json:"asNode"`
		Channels []string `json:"channels"`
	}{u.AsNode, u.Channels})
}

// UnmarshalJSON reads either form.
func (u *Update) UnmarshalJSON(b []byte) error {
	var d struct {
		AsNode    string   `json:"asNode"`
		Channels  []string `json:"channels"`
		Discarded *int     `json:"discarded"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		return err
	}
	*u = Update(d)
	return nil
}

// StepStarted is a superstep begun (observers only).
type StepStarted struct {
	Checkpoint int64 `json:"checkpoint"`
	Tasks      int   `json:"tasks"`
	ToRun      int   `json:"toRun"`
}

// NodeStarted is a task begun (observers only).
type NodeStarted struct {
	Args json.RawMessage `json:"args"`
}

// NodeFinished is a task done (observers only).
type NodeFinished struct {
	DurationMs int64 `json:"durationMs"`
}

// ModelCalled is one model call of a task.
type ModelCalled struct {
	Answer           string `json:"answer,omitempty"` // kept only when the request asked (KeepAnswer)
	CompletionTokens int    `json:"completionTokens"`
	DurationMs       int64  `json:"durationMs"`
	Error            string `json:"error,omitempty"`
	JSONMode         string `json:"jsonMode,omitempty"`
	PromptTokens     int    `json:"promptTokens"`
	Request          string `json:"request,omitempty"` // the request's hash, cut
	Role             string `json:"role"`
}

// TaskReused is a task whose stored writes were taken instead of running
// it again.
type TaskReused struct {
	From int64 `json:"from"`
}

// Interrupt is a run stopped before or after a node, or at an approval
// gate (engine.Interrupt's fields, in its order).
type Interrupt struct {
	When      string `json:"when"`
	Node      string `json:"node"`
	Operation string `json:"operation,omitempty"`
	Question  string `json:"question,omitempty"`
}

// CheckpointSaved is a checkpoint committed (observers only).
type CheckpointSaved struct {
	ID      int64    `json:"id"`
	Next    string   `json:"next"`
	Nodes   []string `json:"nodes"`
	Parent  int64    `json:"parent"`
	Pending int      `json:"pending"`
	Source  string   `json:"source"`
	Step    int      `json:"step"`
}

// Blocked is a side effect a node refused to perform. Fixes are what
// would get past it, as the engine's actions by name (engine.Action's
// String), on the event's thread: Reason names no command, each front
// end words them. Events stored before have none.
type Blocked struct {
	Fixes     []string `json:"fixes,omitempty"`
	Operation string   `json:"operation"`
	Reason    string   `json:"reason"`
}

// TokenBudget is a turn that used its token budget with tasks pending.
type TokenBudget struct {
	Budget  int    `json:"budget"`
	Pending string `json:"pending"`
	Used    int    `json:"used"`
}

// RunFailed is a run that failed: a node's Fail (Reason alone) or the
// checkpoint that ends the run (Discarded set; Task, the failed task).
// Fixes are as Blocked's.
type RunFailed struct {
	Discarded *string  `json:"discarded,omitempty"`
	Fixes     []string `json:"fixes,omitempty"`
	Reason    string   `json:"reason"`
	Task      string   `json:"task,omitempty"`
}

// RunCancelled is a run cancelled, and the pending tasks it dropped.
type RunCancelled struct {
	Discarded string `json:"discarded"`
	Reason    string `json:"reason"`
	Task      string `json:"task,omitempty"`
}

// Rechecked is a resume's recheck that changed what runs: its writes
// stored and Next due, or (Next nil) the tasks to run again, Rerun.
type Rechecked struct {
	Next   *string
	Reason string
	Rerun  map[string]string
}

// MarshalJSON writes the form Next says.
func (r Rechecked) MarshalJSON() ([]byte, error) {
	if r.Next != nil {
		return json.Marshal(struct {
			Next   string `json:"next"`
			Reason string `json:"reason"`
		}{*r.Next, r.Reason})
	}
	return json.Marshal(struct {
		Reason string            `json:"reason"`
		Rerun  map[string]string `json:"rerun"`
	}{r.Reason, r.Rerun})
}

// UnmarshalJSON reads either form.
func (r *Rechecked) UnmarshalJSON(b []byte) error {
	var d struct {
		Next   *string           `json:"next"`
		Reason string            `json:"reason"`
		Rerun  map[string]string `json:"rerun"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		return err
	}
	*r = Rechecked(d)
	return nil
}

// ContextMeasured is the summarizer's measure of the history.
type ContextMeasured struct {
	MaxMessages   int    `json:"maxMessages"`
	MaxTokens     int    `json:"maxTokens"`
	MessageTokens int    `json:"messageTokens"`
	Messages      int    `json:"messages"`
	SummaryChars  int    `json:"summaryChars"`
	Tokens        int    `json:"tokens"`
	Trigger       string `json:"trigger"`
	Window        int    `json:"window"`
}

// ContextCompacted is a compaction that passed its checks.
type ContextCompacted struct {
	AfterMessages        int      `json:"afterMessages"`
	AfterRefusals        int      `json:"afterRefusals,omitempty"` // rewind's own summary: the refusals before it
	AfterTokens          int      `json:"afterTokens"`
	Attempts             int      `json:"attempts"`
	BeforeMessages       int      `json:"beforeMessages"`
	BeforeTokens         int      `json:"beforeTokens"`
	FactLines            int      `json:"factLines"`
	FallbackLines        int      `json:"fallbackLines"`
	Folded               int      `json:"folded"`
	HistoryVersionAfter  int      `json:"historyVersionAfter"`
	HistoryVersionBefore int      `json:"historyVersionBefore"`
	Model                *string  `json:"model,omitempty"` // nil in events stored before it was recorded
	Phases               int      `json:"phases"`
	Pinned               int      `json:"pinned"`
	Retired              int      `json:"retired"`
	RetriedFor           []string `json:"retriedFor"`
	SourceIndices        []int    `json:"sourceIndices"`
	Strategy             string   `json:"strategy"`
	SummaryBudget        int      `json:"summaryBudget"`
	SummaryChars         int      `json:"summaryChars"`
	SummaryCharsBefore   int      `json:"summaryCharsBefore"`
	SummaryID            string   `json:"summaryId"`
	SummaryLines         int      `json:"summaryLines"`
	Trigger              string   `json:"trigger"`
}

// CompactionSkipped is a summary call that failed: compaction waits.
type CompactionSkipped struct {
	Error          string `json:"error"`
	HistoryVersion int    `json:"historyVersion"`
	RefusalsInARow int    `json:"refusalsInARow"`
	Trigger        string `json:"trigger"`
}

// CompactionRejected is a candidate summary that failed its check
// (Strategy set: rewind's own, which failed too).
type CompactionRejected struct {
	Attempts       int      `json:"attempts"`
	Failures       []string `json:"failures"`
	HistoryVersion int      `json:"historyVersion"`
	RefusalsInARow int      `json:"refusalsInARow,omitempty"`
	RetriedFor     []string `json:"retriedFor,omitempty"`
	Strategy       string   `json:"strategy,omitempty"`
	Trigger        string   `json:"trigger"`
}

// DraftVerified is the verify step's findings, by operation.
type DraftVerified map[string]Verification

// Verification is one draft's check (ticket.Verification's fields).
type Verification struct {
	Operation string   `json:"operation"`
	OK        bool     `json:"ok"`
	Checks    []string `json:"checks"`
	Problems  []string `json:"problems,omitempty"`
}

// ToolError is a tool call that failed, or an empty answer (Tool nil).
type ToolError struct {
	Error string  `json:"error"`
	Round int     `json:"round"`
	Tool  *string `json:"tool,omitempty"`
}

// ToolRefused is a tool call not run, and why.
type ToolRefused struct {
	Round int    `json:"round"`
	Tool  string `json:"tool"`
	Why   string `json:"why"`
}

// ToolLoop is a tool loop that ended: its rounds and calls.
type ToolLoop struct {
	Calls   int `json:"calls"`
	Refused int `json:"refused"`
	Rounds  int `json:"rounds"`
}

// ToolCalled is a tool call run (observers only: the tool's message in
// the task's writes says what it returned).
type ToolCalled struct {
	DurationMs int64  `json:"durationMs"`
	Round      int    `json:"round"`
	Source     string `json:"source"`
	Tool       string `json:"tool"`
}

// GrantAttached is a grant given with an approval.
type GrantAttached struct {
	By        string `json:"by"`
	ExpiresAt string `json:"expiresAt"`
	Operation string `json:"operation"`
	Ref       string `json:"ref"`
}

// SideEffectRecorded is a side effect done (or found done: Reused).
type SideEffectRecorded struct {
	Operation     string `json:"operation"`
	PayloadSha256 string `json:"payloadSha256"`
	Reused        bool   `json:"reused"`
}

// PlannerRetried is a planner answer that was not a plan, asked again.
type PlannerRetried struct {
	Answer string `json:"answer"`
	Error  string `json:"error"`
}

// PlannerDegraded is a planner that failed twice: one subtask instead.
type PlannerDegraded struct {
	Answer   string `json:"answer"`
	Error    string `json:"error"`
	Subtasks int    `json:"subtasks"`
	What     string `json:"what"`
}

// CriticDegraded is a critic answer that could not be read.
type CriticDegraded struct {
	Answer     string   `json:"answer"`
	Error      string   `json:"error"`
	Unreviewed []string `json:"unreviewed"`
}

func (Input) Type() string              { return TypeInput }
func (Fork) Type() string               { return TypeFork }
func (Update) Type() string             { return TypeUpdate }
func (StepStarted) Type() string        { return TypeStepStarted }
func (NodeStarted) Type() string        { return TypeNodeStarted }
func (NodeFinished) Type() string       { return TypeNodeFinished }
func (ModelCalled) Type() string        { return TypeModelCalled }
func (TaskReused) Type() string         { return TypeTaskReused }
func (Interrupt) Type() string          { return TypeInterrupt }
func (CheckpointSaved) Type() string    { return TypeCheckpointSaved }
func (Blocked) Type() string            { return TypeBlocked }
func (TokenBudget) Type() string        { return TypeTokenBudget }
func (RunFailed) Type() string          { return TypeRunFailed }
func (RunCancelled) Type() string       { return TypeRunCancelled }
func (Rechecked) Type() string          { return TypeRechecked }
func (ContextMeasured) Type() string    { return TypeContextMeasured }
func (ContextCompacted) Type() string   { return TypeContextCompacted }
func (CompactionSkipped) Type() string  { return TypeCompactionSkipped }
func (CompactionRejected) Type() string { return TypeCompactionRejected }
func (DraftVerified) Type() string      { return TypeDraftVerified }
func (ToolError) Type() string          { return TypeToolError }
func (ToolRefused) Type() string        { return TypeToolRefused }
func (ToolLoop) Type() string           { return TypeToolLoop }
func (ToolCalled) Type() string         { return TypeToolCalled }
func (GrantAttached) Type() string      { return TypeGrantAttached }
func (SideEffectRecorded) Type() string { return TypeSideEffectRecorded }
func (PlannerRetried) Type() string     { return TypePlannerRetried }
func (PlannerDegraded) Type() string    { return TypePlannerDegraded }
func (CriticDegraded) Type() string     { return TypeCriticDegraded }
