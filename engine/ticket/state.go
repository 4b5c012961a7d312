// Package ticket is the support-ticket agent graph rewind drives: a planner
// splits the request into subtasks, executors run one per subtask in
// parallel (Send fan-out), a critic bounces weak findings back for a redo,
// a summarizer compacts long history, and a reply closes the turn.
//
// It owns the state schema (v2) and the migration from v1.
package ticket

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"maps"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"rewind/engine"
)

// SchemaVersion is the state shape this package writes.
const SchemaVersion = 2

// TurnToolBudget is how many tool calls one turn may make. It is set by each
// new turn and never reset by a resume.
const TurnToolBudget = 5

// MaxReviewRounds bounds the critic loop; past it the turn is degraded.
const MaxReviewRounds = 2

// Message roles.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Message is one entry of the conversation as the agents see it. Index is
// its original position (from 1) and survives compaction.
type Message struct {
	Index   int    `json:"index,omitempty"` // 0 on write: the reducer assigns it
	Role    string `json:"role"`
	Speaker string `json:"speaker"`
	Content string `json:"content"`
	// ToolCall is an assistant message's one tool call; ToolCalls holds
	// the calls after the first when a model made several at once (Calls
	// lists them all).
	ToolCall   *ToolCall  `json:"toolCall,omitempty"`
	ToolCalls  []ToolCall `json:"toolCalls,omitempty"`
	ToolCallID string     `json:"toolCallId,omitempty"`
	// Source is the record a tool result read, at the version read.
	Source *SourceRead `json:"source,omitempty"`
}

// ToolCall is a tool call a model made. Args are its arguments when they
// are JSON; ArgsText the text it wrote when they are not (a malformed
// call is kept as made, and answered with an error).
type ToolCall struct {
	ID       string          `json:"id"`
	Name     string          `json:"name"`
	Args     json.RawMessage `json:"args,omitempty"`
	ArgsText string          `json:"argsText,omitempty"`
}

// Summary is the compacted early history, kept apart from the messages.
type Summary struct {
	// Text is at most SummaryBudget runes of lines, each starting with its
	// coordinates: "#12 user: …" for one message (pinned facts verbatim),
	// "#1–#40 user, critic: …" for a folded phase.
	Text string `json:"text"`
	// From and To are the original message indices it covers.
	From           int      `json:"from"`
	To             int      `json:"to"`
	Count          int      `json:"count"`
	Speakers       []string `json:"speakers"`
	HistoryVersion int      `json:"historyVersion"`
	Trigger        string   `json:"trigger"`
	// Turn is the index of the user message that began the turn of the
	// summary's last message (0 when none is known): the facts ledger
	// does not repeat a fact within a turn, across compactions too.
	Turn int `json:"turn,omitempty"`
}

// Attachment is a reference to content stored elsewhere, never the content.
type Attachment struct {
	ID      string `json:"id"`
	Kind    string `json:"kind"`
	Ref     string `json:"ref"`
	Caption string `json:"caption,omitempty"`
}

// Subtask statuses.
const (
	StatusPending          = "pending"
	StatusDone             = "done"
	StatusRedo             = "redo"
	StatusApproved         = "approved"
	StatusBlocked          = "blocked"
	StatusAwaitingApproval = "AWAITING_APPROVAL"
)

// Subtask is one planned piece of work.
type Subtask struct {
	ID        string `json:"id"`
	Goal      string `json:"goal"`
	Topic     string `json:"topic,omitempty"`
	ToolCalls int    `json:"toolCalls"`
	Status    string `json:"status"`
	Result    string `json:"result,omitempty"`
	Feedback  string `json:"feedback,omitempty"`
	// Source and SourceVersion are the record its result was read from.
	Source        string `json:"source,omitempty"`
	SourceVersion int    `json:"sourceVersion,omitempty"`
}

// Operation statuses.
const (
	OpAwaitingApproval = "awaiting_approval"
	OpApproved         = "approved"
	OpRejected         = "rejected"
	OpDone             = "done"
	OpBlocked          = "blocked"
	// OpSuperseded: a draft that waited for approval when a newer reply
	// was written, or that a later run found waiting (a replay of its
	// gate); it was never performed by that run.
	OpSuperseded = "superseded"
	// OpCancelled: a draft whose run was cancelled (or its pending tasks
	// discarded) before it was performed; Result says why. Nothing
	// performs it after.
	OpCancelled = "cancelled"
)

// Operation is a side effect recorded by id in a checkpoint before it runs
// and updated with its result after, so a resume looks it up instead of
// guessing from the conversation.
type Operation struct {
	ID      string `json:"id"`
	Kind    string `json:"kind"`
	Status  string `json:"status"`
	Payload string `json:"payload,omitempty"`
	Result  string `json:"result,omitempty"`
	// Reused is set when a retry found the side effect already done.
	Reused bool `json:"reused,omitempty"`
	// Sources are the versions of the records the payload was built from:
	// the gate blocks the write, and verify fails the draft, when one of
	// them changed since.
	Sources map[string]int `json:"sources,omitempty"`
	// RedraftedBy is the operation of the reply written again after this
	// one was rejected with Redraft.
	RedraftedBy string `json:"redraftedBy,omitempty"`
	// EditedBy is who edited the payload before approving it; Original is
	// the payload as the reply wrote it.
	EditedBy string `json:"editedBy,omitempty"`
	Original string `json:"original,omitempty"`
}

// Verification is the verify step's finding on one draft.
type Verification struct {
	Operation string `json:"operation"`
	OK        bool   `json:"ok"`
	// Checks are what held; Problems what did not.
	Checks   []string `json:"checks"`
	Problems []string `json:"problems,omitempty"`
}

// Request is the current turn's requirement, kept as a structured field so
// the critic and the reply still see it after compaction folds the user's
// message into the summary.
type Request struct {
	Index int    `json:"index"`
	Text  string `json:"text"`
}

// Decision is a person's answer at an approval gate. It is state (what
// happened in this conversation), recorded in its own channel, never as a
// conversation message.
type Decision struct {
	Approved bool   `json:"approved"`
	Reason   string `json:"reason,omitempty"`
	By       string `json:"by,omitempty"`
	At       string `json:"at,omitempty"`
	// Redraft (a rejection only) sends the reply back to be written again
	// with Reason; the new reply is a new draft behind the gate.
	Redraft bool `json:"redraft,omitempty"`
	// Payload (an approval only) is the draft as the operator edited it:
	// what the operation records and create_draft writes.
	Payload string `json:"payload,omitempty"`
	// Grant (an approval only) is the authorization the person gave with
	// the answer, for a draft written under none (a v1 document's): the
	// answer's writes make it the thread's grant, which create_draft
	// checks. Zero: none given.
	Grant Authorization `json:"grant,omitzero"`
}

// Authorization is a reference to a grant, with its expiry (RFC 3339).
// GrantedAt, when recorded (NewGrant), lets a grant with a zero or
// negative lifetime be told from an expired one.
type Authorization struct {
	Ref       string `json:"ref"`
	GrantedAt string `json:"grantedAt,omitempty"`
	ExpiresAt string `json:"expiresAt"`
}

// State is the typed view of the channels.
type State struct {
	Messages        []Message            `json:"messages"`
	Summary         *Summary             `json:"summary"`
	Attachments     []Attachment         `json:"attachments"`
	Subtasks        []Subtask            `json:"subtasks"`
	ReviewRounds    int                  `json:"reviewRounds"`
	Degraded        bool                 `json:"degraded"`
	BudgetRemaining *int                 `json:"budgetRemaining"`
	HistoryVersion  int                  `json:"historyVersion"`
	Operations      map[string]Operation `json:"operations"`
	Authorization   *Authorization       `json:"authorization"`
	Request         *Request             `json:"request"`
	DraftRequested  bool                 `json:"draftRequested"`
	Approvals       map[string]Decision  `json:"approvals"`
	// Scenario is what the thread is about: "" (the ticket) or site-log.
	Scenario string `json:"scenario"`
	// SourceVersions is the version of each record this turn's tools read
	// (a new turn starts it afresh, so it does not grow with the thread;
	// what pending work depends on is kept with that work: subtasks and
	// operations).
	SourceVersions map[string]int `json:"sourceVersions"`
	// VerificationResults are the verify step's findings, by operation.
	VerificationResults map[string]Verification `json:"verificationResults"`
	// SummaryRefusals counts the compactions refused in a row (a summary
	// that failed its check, a summary call that failed): at the second,
	// rewind summarizes without the model (ExtractiveStrategy).
	SummaryRefusals int `json:"summaryRefusals"`
	// Facts is the facts ledger (ledger.go): the pages of "#index
	// speaker: fact; fact" lines holding every pinned fact of the
	// compacted messages, appended to by each compaction, never rewritten.
	Facts []string `json:"facts"`
}

// Decode reads the typed state from channel values: all of them, or only
// the named channels (the other fields stay zero). A tool budget the
// values do not hold (null, as an older rewind could store it) reads as 0,
// never as no ceiling (BudgetMissing tells it apart).
func Decode(v engine.Values, channels ...string) (State, error) {
	s, err := decode(v, channels...)
	if err == nil && s.BudgetRemaining == nil && (len(channels) == 0 || slices.Contains(channels, "budgetRemaining")) {
		s.BudgetRemaining = new(int)
	}
	return s, err
}

// BudgetMissing says v holds no tool budget (null or absent: an older
// rewind could store one through an edit). Decode reads it as 0, so no
// tool is called: never as no ceiling.
func BudgetMissing(v engine.Values) bool {
	raw := bytes.TrimSpace(v["budgetRemaining"])
	return len(raw) == 0 || string(raw) == "null"
}

// budgetSpent is what an executor says when the budget leaves it no call.
// It goes to the model, which cannot run a command: it says what is
// wrong, and a person reads how to set the budget in `rewind show`.
func budgetSpent(v engine.Values) string {
	if BudgetMissing(v) {
		return "not checked: this state holds no tool budget (budgetRemaining is missing, as an older rewind could store it), which counts as 0 calls left, so no tool is called until a person sets the budget"
	}
	return fmt.Sprintf("not checked: the turn's tool budget of %d calls is used up", TurnToolBudget)
}

func decode(v engine.Values, channels ...string) (State, error) {
	var s State
	rest := channels
	if len(channels) > 0 {
		rest = make([]string, 0, len(channels))
		for _, ch := range channels {
			if !decodedMemo.read(v, ch, &s) {
				rest = append(rest, ch)
			}
		}
		if len(rest) == 0 {
			return s, nil
		}
	}
	missed := rest
	if i := slices.Index(rest, "messages"); i >= 0 {
		if ms, ok := decodeMessages(v); ok {
			s.Messages = ms
			rest = slices.Delete(slices.Clone(rest), i, i+1)
		}
	}
	// No names left is nothing left to decode (no names at all is all).
	if len(channels) == 0 || len(rest) > 0 {
		if err := v.Decode(&s, rest...); err != nil {
			return State{}, fmt.Errorf("decode ticket state: %w", err)
		}
	}
	if len(channels) > 0 {
		for _, ch := range missed {
			decodedMemo.keep(v, ch, &s)
		}
	}
	return s, nil
}

// decodeMessages is the transcript decoded item by item, each item once
// in its life (decodeMessage): a compaction decodes twenty messages of
// which it decoded eighteen before. False when it cannot tell (then the
// whole decode says what is wrong).
func decodeMessages(v engine.Values) ([]Message, bool) {
	items, err := v.Items("messages")
	if err != nil || len(items) == 0 {
		return nil, false
	}
	ms := make([]Message, len(items))
	for i, it := range items {
		if ms[i], err = decodeMessage(it); err != nil {
			return nil, false
		}
	}
	return ms, true
}

// decodeMessage is json.Unmarshal of one transcript item, remembered by
// its bytes: a message is read by every turn until compaction retires it.
func decodeMessage(it json.RawMessage) (Message, error) {
	messagesMu.Lock()
	m, ok := messagesMemo[string(it)]
	messagesMu.Unlock()
	if ok {
		return m.clone(), nil
	}
	if err := json.Unmarshal(it, &m); err != nil {
		return Message{}, err
	}
	messagesMu.Lock()
	if len(messagesMemo) >= 4096 {
		clear(messagesMemo)
	}
	messagesMemo[string(it)] = m.clone()
	messagesMu.Unlock()
	return m, nil
}

var (
	messagesMu   sync.Mutex
	messagesMemo = map[string]Message{}
)

// clone is m with its own ToolCall and Source.
func (m Message) clone() Message {
	if m.ToolCall != nil {
		tc := *m.ToolCall
		m.ToolCall = &tc
	}
	m.ToolCalls = slices.Clone(m.ToolCalls)
	if m.Source != nil {
		sr := *m.Source
		m.Source = &sr
	}
	return m
}

// decodedMemo remembers the channels every node decodes (the transcript,
// the summary, the subtasks, the operations), by content: a turn's nodes
// decode the same bytes again and again, and a copy of the Go value costs
// a fraction of decoding it. A read hands out a deep copy, so a node may
// change what it got.
var decodedMemo = channelMemo{seed: maphash.MakeSeed(), copies: map[string]func(dst, src *State){
	"messages": func(dst, src *State) {
		dst.Messages = slices.Clone(src.Messages)
		for i, m := range dst.Messages {
			dst.Messages[i] = m.clone()
		}
	},
	"summary": func(dst, src *State) {
		if src.Summary != nil {
			sum := *src.Summary
			sum.Speakers = slices.Clone(sum.Speakers)
			dst.Summary = &sum
		}
	},
	"subtasks":    func(dst, src *State) { dst.Subtasks = slices.Clone(src.Subtasks) },
	"attachments": func(dst, src *State) { dst.Attachments = slices.Clone(src.Attachments) },
	// The small ones too: a hit on every channel a node names skips
	// encoding/json (and its reflection) altogether.
	"reviewRounds":    func(dst, src *State) { dst.ReviewRounds = src.ReviewRounds },
	"degraded":        func(dst, src *State) { dst.Degraded = src.Degraded },
	"historyVersion":  func(dst, src *State) { dst.HistoryVersion = src.HistoryVersion },
	"draftRequested":  func(dst, src *State) { dst.DraftRequested = src.DraftRequested },
	"scenario":        func(dst, src *State) { dst.Scenario = src.Scenario },
	"summaryRefusals": func(dst, src *State) { dst.SummaryRefusals = src.SummaryRefusals },
	"facts":           func(dst, src *State) { dst.Facts = slices.Clone(src.Facts) },
	"budgetRemaining": func(dst, src *State) { dst.BudgetRemaining = clonePtr(src.BudgetRemaining) },
	"request":         func(dst, src *State) { dst.Request = clonePtr(src.Request) },
	"authorization":   func(dst, src *State) { dst.Authorization = clonePtr(src.Authorization) },
	"approvals":       func(dst, src *State) { dst.Approvals = maps.Clone(src.Approvals) },
	"sourceVersions":  func(dst, src *State) { dst.SourceVersions = maps.Clone(src.SourceVersions) },
	"verificationResults": func(dst, src *State) {
		dst.VerificationResults = maps.Clone(src.VerificationResults)
		for k, r := range dst.VerificationResults {
			r.Checks, r.Problems = slices.Clone(r.Checks), slices.Clone(r.Problems)
			dst.VerificationResults[k] = r
		}
	},
	"operations": func(dst, src *State) {
		dst.Operations = maps.Clone(src.Operations)
		for id, op := range dst.Operations {
			op.Sources = maps.Clone(op.Sources)
			dst.Operations[id] = op
		}
	},
}}

// clonePtr is a pointer to a copy of *p (nil for nil).
func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	c := *p
	return &c
}

// channelMemo holds a few decodings of each channel it has a copy for.
type channelMemo struct {
	seed   maphash.Seed
	copies map[string]func(dst, src *State)
	mu     sync.Mutex
	memo   map[string]*[4]decoded
	next   map[string]int
}

// decoded is one channel's value: its own copy of the bytes (compared on
// a hit) and the state with that channel decoded.
type decoded struct {
	hash uint64
	raw  []byte
	s    State
}

// read fills the channel ch of s from the memo; false when it cannot.
func (m *channelMemo) read(v engine.Values, ch string, s *State) bool {
	cp, raw := m.copies[ch], v[ch]
	if cp == nil || len(raw) == 0 {
		return false
	}
	h := maphash.Bytes(m.seed, raw)
	m.mu.Lock()
	defer m.mu.Unlock()
	ring := m.memo[ch]
	if ring == nil {
		return false
	}
	for i := range ring {
		if e := &ring[i]; e.hash == h && e.raw != nil && bytes.Equal(e.raw, raw) {
			cp(s, &e.s)
			return true
		}
	}
	return false
}

// keep remembers channel ch as s holds it, decoded from v.
func (m *channelMemo) keep(v engine.Values, ch string, s *State) {
	cp, raw := m.copies[ch], v[ch]
	if cp == nil || len(raw) == 0 {
		return
	}
	var e decoded
	cp(&e.s, s) // a copy: the caller may change s
	e.hash, e.raw = maphash.Bytes(m.seed, raw), bytes.Clone(raw)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.memo == nil {
		m.memo, m.next = map[string]*[4]decoded{}, map[string]int{}
	}
	ring := m.memo[ch]
	if ring == nil {
		ring = &[4]decoded{}
		m.memo[ch] = ring
	}
	ring[m.next[ch]] = e
	m.next[ch] = (m.next[ch] + 1) % len(ring)
}

func declareChannels(g *engine.Graph) {
	g.Channel("messages", engine.IndexedAppend("index"), []Message{}).
		Channel("summary", engine.LastValue, nil).
		Channel("attachments", engine.MergeByID("id"), []Attachment{}).
		Channel("subtasks", engine.MergeByID("id"), []Subtask{}).
		Channel("reviewRounds", engine.Counter, 0).
		Channel("degraded", engine.LastValue, false).
		Channel("budgetRemaining", engine.Counter, nil).
		Channel("historyVersion", engine.Counter, 0).
		Channel("operations", engine.MergeMap, map[string]Operation{}).
		Channel("authorization", engine.LastValue, nil).
		Channel("request", engine.LastValue, nil).
		Channel("draftRequested", engine.LastValue, false).
		Channel("approvals", engine.MergeMap, map[string]Decision{}).
		// New channels with a default: a thread stored before them reads
		// them as empty, so no schema bump.
		Channel("sourceVersions", engine.TurnMap, map[string]int{}).
		Channel("verificationResults", engine.MergeMap, map[string]Verification{}).
		Channel("scenario", engine.LastValue, "").
		Channel("summaryRefusals", engine.LastValue, 0).
		Channel("facts", appendFacts, []string{}).
		// The conversation is stored once, message by message, apart from
		// the checkpoints (the raw transcript a summary never overwrites).
		Transcript("messages", "index").
		Keyed("subtasks", "id").
		Keyed("attachments", "id").
		Object("summary")
	declareChecks(g)
}

// Turn is one new user turn.
type Turn struct {
	Text   string
	Attach []string
	// Draft asks for the reply to be created as an outgoing draft: a side
	// effect behind an approval gate.
	Draft bool
	// Authorization is the grant the draft is written under; a new write
	// checks it (none, or an expired one, blocks the write). A draft turn
	// always records its own grant, so it never inherits an older turn's.
	Authorization *Authorization
	// Scenario, when set, is what the thread is about from this turn on
	// (ScenarioTicket, ScenarioSiteLog); a turn without it keeps the
	// thread's.
	Scenario string
}

// Validate refuses, before anything is stored, a turn that cannot do what
// it asks: a draft turn needs a grant that is valid now.
func (t Turn) Validate(now time.Time) error {
	if !t.Draft {
		return nil
	}
	if reason := GrantProblem(t.Authorization, now); reason != "" {
		return wantErr(WantGrantTTL, fmt.Errorf("%w: %s; a draft turn needs a valid grant", ErrBadGrant, reason))
	}
	return nil
}

// Writes is the turn as input writes: the user's message, attachment
// references, the turn's fresh tool budget and what it asks for. Empty text
// gives no writes (the engine refuses an empty turn).
func (t Turn) Writes() []engine.Write {
	if strings.TrimSpace(t.Text) == "" {
		return nil
	}
	ws := []engine.Write{
		engine.Put("messages", []Message{{Role: RoleUser, Speaker: "user", Content: t.Text}}),
		engine.Put("budgetRemaining", map[string]int{"set": TurnToolBudget}),
		engine.Put("reviewRounds", map[string]int{"set": 0}),
		engine.Put("degraded", false),
		engine.Put("draftRequested", t.Draft),
		engine.Put("sourceVersions", map[string]any{"$reset": map[string]int{}}),
	}
	if t.Scenario != "" {
		ws = append(ws, engine.Put("scenario", t.Scenario))
	}
	if len(t.Attach) > 0 {
		atts := make([]Attachment, len(t.Attach))
		for i, ref := range t.Attach {
			atts[i] = NewAttachment(ref)
		}
		ws = append(ws, engine.Put("attachments", atts))
	}
	if t.Draft || t.Authorization != nil {
		ws = append(ws, engine.Put("authorization", t.Authorization))
	}
	return ws
}

// Input is the common turn: text and attachment references.
func Input(text string, attachRefs ...string) []engine.Write {
	return Turn{Text: text, Attach: attachRefs}.Writes()
}

// Approve records a person's answer for the operation awaiting approval.
func Approve(operation string, d Decision) []engine.Write {
	return []engine.Write{engine.Put("approvals", map[string]Decision{operation: d})}
}

// NewAttachment builds a reference with an id and kind derived from ref.
func NewAttachment(ref string) Attachment {
	base := path.Base(ref)
	kind := "file"
	switch strings.ToLower(path.Ext(base)) {
	case ".png", ".jpg", ".jpeg", ".gif", ".webp":
		kind = "image"
	case ".pdf", ".txt", ".md", ".doc", ".docx":
		kind = "document"
	}
	id := "att-" + strings.TrimSuffix(base, path.Ext(base))
	if base == "." || base == "/" || id == "att-" {
		id = "att-ref"
	}
	return Attachment{ID: id, Kind: kind, Ref: ref}
}

// migrateV1 upgrades a v1 document: it only renames and fills defaults.
// v1 called the attachment reference `url`, counted tool calls in `calls`,
// said WAITING for AWAITING_APPROVAL, and had no budget, history version,
// operations or message indices.
//
// A v1 subtask WAITING for approval was a side effect waiting at the gate;
// v2 keeps that in operations, so it becomes a create_draft operation
// awaiting approval (MigratedOperationID), whose payload is the subtask's
// result, or its goal when it has none. A checkpoint with nothing else due
// waits at the gate as a v2 one does: the approval node is its pending
// task and its interrupt names the operation, so the thread reads
// awaiting-approval and can be approved or rejected at once (it read done,
// and only the next turn reached the gate). The write then checks the grant
// the v1 document carried (authorization, the same name in v2), as any
// draft's: none, or an expired one, blocks it. Branches forked from the
// thread share the operation, as they share anything recorded before the
// fork: it is one side effect, performed once.
func migrateV1(doc map[string]any) error {
	values, _ := doc["values"].(map[string]any)
	if values == nil {
		values = map[string]any{}
		doc["values"] = values
	}
	for _, a := range list(values["attachments"]) {
		if _, has := a["ref"]; !has {
			a["ref"] = a["url"]
		}
		delete(a, "url")
	}
	used, gate := 0, ""
	for _, s := range list(values["subtasks"]) {
		if _, has := s["toolCalls"]; !has {
			s["toolCalls"] = num(s["calls"])
		}
		delete(s, "calls")
		used += num(s["toolCalls"])
		if s["status"] == "WAITING" {
			s["status"] = StatusAwaitingApproval
			ops, _ := values["operations"].(map[string]any)
			if ops == nil {
				ops = map[string]any{}
				values["operations"] = ops
			}
			payload, _ := s["result"].(string)
			if strings.TrimSpace(payload) == "" {
				payload, _ = s["goal"].(string)
			}
			id := MigratedOperationID(fmt.Sprint(s["id"]))
			if _, has := ops[id]; !has {
				ops[id] = map[string]any{"id": id, "kind": KindCreateDraft, "status": OpAwaitingApproval, "payload": payload}
			}
			if gate == "" || id < gate {
				gate = id // the one PendingDraft finds: the first by id
			}
		}
	}
	if tasks, _ := doc["tasks"].([]any); gate != "" && len(tasks) == 0 {
		doc["tasks"] = []any{map[string]any{"id": "v1-approval", "node": NodeApproval}}
		md, _ := doc["metadata"].(map[string]any)
		if md == nil {
			md = map[string]any{}
			doc["metadata"] = md
		}
		md["interrupt"] = map[string]any{"when": "approval", "node": NodeApproval, "operation": gate, "question": ApprovalQuestion}
	}
	for i, m := range list(values["messages"]) {
		if _, has := m["index"]; !has {
			m["index"] = i + 1
		}
		if _, has := m["speaker"]; !has {
			m["speaker"] = m["role"]
		}
	}
	if _, has := values["budgetRemaining"]; !has {
		values["budgetRemaining"] = max(TurnToolBudget-used, 0)
	}
	for k, def := range map[string]any{"historyVersion": 0, "reviewRounds": 0, "degraded": false, "operations": map[string]any{}, "approvals": map[string]any{}, "draftRequested": false} {
		if _, has := values[k]; !has {
			values[k] = def
		}
	}
	if doc["tasks"] == nil {
		doc["tasks"] = []any{}
	}
	return nil
}

// ApprovalQuestion is what the approval gate asks.
const ApprovalQuestion = "create the reply as an outgoing draft?"

// MigratedOperationID names the operation a v1 subtask that was WAITING
// for approval becomes.
func MigratedOperationID(subtask string) string { return "op-draft-v1-" + subtask }

func list(v any) []map[string]any {
	items, _ := v.([]any)
	out := make([]map[string]any, 0, len(items))
	for _, it := range items {
		if m, ok := it.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

func num(v any) int {
	switch n := v.(type) {
	case json.Number:
		i, _ := n.Int64()
		return int(i)
	case float64:
		return int(n)
	case int:
		return n
	}
	return 0
}
