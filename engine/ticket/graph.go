package ticket

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"rewind/engine/event"
	"slices"
	"sort"
	"strings"
	"time"

	"rewind/engine"
	"rewind/engine/model"
	"rewind/engine/seal"
	"rewind/store"
)

// Node names.
const (
	NodePlanner    = "planner"
	NodeExecutor   = "executor"
	NodeCritic     = "critic"
	NodeSummarizer = "summarizer"
	NodeReply      = "reply"
	NodeApproval   = "approval"
	NodeDraft      = "create_draft"
	NodeVerify     = "verify"
)

// Nodes are the graph's nodes in the order a draft turn reaches them
// (what --interrupt-before and --interrupt-after list).
// GraphName is the ticket graph's name (engine.Graph.Name): what tells
// its threads and kill points from another graph's.
const GraphName = "ticket"

var Nodes = []string{NodePlanner, NodeExecutor, NodeCritic, NodeSummarizer, NodeReply, NodeApproval, NodeDraft, NodeVerify}

// Hook points inside create_draft where a crash drill may kill the process.
const (
	PointBeforeSideEffect engine.HookPoint = "before-side-effect"
	PointAfterSideEffect  engine.HookPoint = "after-side-effect"
)

// ExecutorArgs is what a Send to the executor carries.
type ExecutorArgs struct {
	Task     Subtask `json:"task"`
	Feedback string  `json:"feedback,omitempty"`
}

// Option configures the graph's outside world.
type Option func(*deps)

type deps struct {
	drafts  store.Drafts
	now     func() time.Time
	sources Sources
	// keys seal the sensitive channels (WithKeys); sensitive are those
	// channels, DefaultSensitive when nil (WithSensitive).
	keys      *seal.Keys
	sensitive []string
	// stored is told the rows runs store (WithStored).
	stored engine.Stored
}

// DefaultSensitive are the channels the ticket graph encrypts at rest
// when given a key: the conversation and its summary, the text a user
// and the model wrote.
var DefaultSensitive = []string{"messages", "summary"}

// WithKeys gives the engine the keys that seal the sensitive channels
// and open what they sealed (engine.WithKeys).
func WithKeys(k *seal.Keys) Option { return func(x *deps) { x.keys = k } }

// WithSensitive replaces DefaultSensitive: the channels encrypted at rest
// when a key is given (none: nothing is).
func WithSensitive(channels ...string) Option {
	return func(x *deps) { x.sensitive = append([]string{}, channels...) }
}

// WithDrafts gives create_draft the table it writes to.
func WithDrafts(d store.Drafts) Option { return func(x *deps) { x.drafts = d } }

// WithStored has the engine tell s every row its runs store
// (engine.WithStored).
func WithStored(s engine.Stored) Option { return func(x *deps) { x.stored = s } }

// WithSources gives the tools the versioned records they read (default:
// this process's MemorySources, every record at BaseVersion).
func WithSources(s Sources) Option { return func(x *deps) { x.sources = s } }

// WithClock replaces the clock authorization expiry is checked against.
func WithClock(now func() time.Time) Option { return func(x *deps) { x.now = now } }

// NewGraph wires the ticket graph:
// planner → executor ×N (Send) → critic ⟲ executor (redo) → summarizer →
// reply, and when the turn asks for a draft: → approval gate →
// create_draft → verify. The seed's three steps are read (the executors),
// draft (create_draft) and verify.
func NewGraph(opts ...Option) *engine.Graph { return newGraph(collect(opts)) }

func collect(opts []Option) *deps {
	d := &deps{now: time.Now}
	for _, o := range opts {
		o(d)
	}
	return d
}

func newGraph(d *deps) *engine.Graph {
	if d.sources == nil {
		d.sources = NewMemorySources()
	}
	g := engine.NewGraph(GraphName, SchemaVersion)
	g.Migrations[1] = migrateV1
	declareChannels(g)
	if d.sensitive == nil {
		d.sensitive = DefaultSensitive
	}
	g.Sensitive(d.sensitive...)
	g.Node(NodePlanner, planner).
		Node(NodeExecutor, d.executor).
		Node(NodeCritic, critic).
		Node(NodeSummarizer, summarizer).
		Node(NodeReply, reply).
		Node(NodeApproval, approval).
		Gate(NodeApproval).
		Node(NodeDraft, d.createDraft).
		Node(NodeVerify, d.verify).
		Entry(NodePlanner).
		Input(turnInput).
		Route(NodePlanner, dispatch, dispatchTo...).
		Edge(NodeExecutor, NodeCritic).
		Route(NodeCritic, dispatch, dispatchTo...).
		Edge(NodeSummarizer, NodeReply).
		Route(NodeReply, afterReply, engine.Goto(NodeApproval), engine.Goto(engine.End)).
		Route(NodeApproval, afterApproval, engine.Goto(NodeDraft), engine.Send(NodeReply, nil), engine.Goto(engine.End)).
		Route(NodeDraft, afterDraft, engine.Goto(NodeVerify), engine.Goto(engine.End)).
		Edge(NodeVerify, engine.End).
		OnResume(d.recheck).
		OnAccess(d.checkAccess).
		OnBuild(func(_ context.Context, in engine.ResumeInfo) error { return CheckCompactions(in) }).
		OnCancel(d.cancelOperations).
		CheckState(func(v engine.Values) error { _, err := Decode(v); return err })
	return g
}

// NewEngine runs the ticket graph on st with m, giving create_draft the
// store's drafts table when it has one (sealed like the channels).
func NewEngine(st store.Store, m model.Model, opts ...Option) (*engine.Engine, error) {
	d := collect(opts)
	g := newGraph(d)
	sealed := engine.SealStore(st, g, d.keys)
	if ds, ok := sealed.(store.Drafts); ok && d.drafts == nil {
		d.drafts = ds
	}
	return engine.New(sealed, g, m, engine.WithKeys(d.keys), engine.WithStored(d.stored))
}

// OperationID names the side effect a task records: the checkpoint the
// task ran from and the task's id. It is unique per operation on every
// branch of a thread, because a fork runs its own tasks from its own
// checkpoints; it is never derived from message indices, which a fork
// shares with the branch it left. A retry of the same task (after a crash
// before its checkpoint) gets the same id, so it names the same operation.
func OperationID(checkpoint int64, task string) string {
	if len(task) > 8 {
		task = task[:8]
	}
	return fmt.Sprintf("op-draft-c%d-%s", checkpoint, task)
}

// PayloadHash is the SHA-256 of a draft's payload, in hex: stored in the
// draft's body, so a reuse can tell that the draft found under an
// operation id is the payload that was approved.
func PayloadHash(payload string) string {
	sum := sha256.Sum256([]byte(payload))
	return hex.EncodeToString(sum[:])
}

// ErrDraftMismatch is matched by errors.Is for a *DraftMismatchError.
var ErrDraftMismatch = errors.New("the stored draft is not the approved payload")

// DraftMismatchError: a draft exists under the operation's id but holds
// another payload than the one approved. Nothing is written and the
// operation is not reported as reused.
type DraftMismatchError struct {
	Operation string
	// StoredHash and Stored are the draft found (its payload's hash and a
	// clip of its text); ApprovedHash and Approved the approved payload's.
	StoredHash, Stored     string
	ApprovedHash, Approved string
}

func (e *DraftMismatchError) Error() string {
	return fmt.Sprintf("create_draft %s: the draft stored under this operation id (payload sha256 %s: %q) is not the approved payload (sha256 %s: %q); nothing was written: compare the thread's drafts and operations, then fork from before the reply to draft again",
		e.Operation, short(e.StoredHash), e.Stored, short(e.ApprovedHash), e.Approved)
}

// Is makes errors.Is(err, ErrDraftMismatch) work.
func (e *DraftMismatchError) Is(target error) bool { return target == ErrDraftMismatch }

func short(hash string) string {
	if len(hash) > 12 {
		return hash[:12]
	}
	return hash
}

// draftBody is what create_draft stores for op.
func draftBody(op Operation) []byte {
	body, _ := json.Marshal(map[string]string{"to": "customer", "body": op.Payload, "payloadSha256": PayloadHash(op.Payload)})
	return body
}

// checkDraft compares a stored draft with the approved operation: by the
// payload hash it records, or, for a draft stored before hashes were, by
// its text.
func checkDraft(op Operation, d store.Draft) error {
	var body struct {
		Body string `json:"body"`
		Hash string `json:"payloadSha256"`
	}
	_ = json.Unmarshal(d.Body, &body)
	want := PayloadHash(op.Payload)
	got := body.Hash
	if got == "" {
		got = PayloadHash(body.Body)
	}
	if got == want {
		return nil
	}
	return &DraftMismatchError{Operation: op.ID, StoredHash: got, Stored: clip(body.Body, 60), ApprovedHash: want, Approved: clip(op.Payload, 60)}
}

// PendingDraft is the draft operation the thread waits on, if any.
func PendingDraft(s State) (Operation, bool) {
	ids := slices.Sorted(maps.Keys(s.Operations))
	for _, id := range ids {
		if op := s.Operations[id]; op.Kind == KindCreateDraft && op.Status == OpAwaitingApproval {
			return op, true
		}
	}
	return Operation{}, false
}

// KindCreateDraft is the side-effecting tool of this graph.
const KindCreateDraft = "create_draft"

// cancelOperations ends, in the checkpoint that cancels a run, every draft
// it had not performed (waiting for an answer, or approved and not yet
// written): cancelled, with the reason. A later turn, fork or answer
// finds none of them waiting. An approved draft whose row the drafts
// table holds was made before the cancel fenced its writer out: it is
// recorded done, as create_draft would have.
func (d *deps) cancelOperations(ctx context.Context, thread string, v engine.Values, reason string) ([]engine.Write, error) {
	s, err := Decode(v, "operations")
	if err != nil {
		return nil, err
	}
	ended := map[string]Operation{}
	for id, op := range s.Operations {
		if op.Kind != KindCreateDraft || op.Status != OpAwaitingApproval && op.Status != OpApproved {
			continue
		}
		if op.Status == OpApproved && d.drafts != nil {
			made, err := d.drafts.Draft(ctx, thread, op.ID)
			switch {
			case err == nil:
				op.Status, op.Reused = OpDone, true
				op.Result = "draft " + made.OperationID + ", made before the run was cancelled (" + reason + ")"
				ended[id] = op
				continue
			case !errors.Is(err, store.ErrNotFound):
				return nil, fmt.Errorf("look up draft %s: %w", op.ID, err)
			}
		}
		op.Status, op.Result = OpCancelled, "cancelled before it was performed: "+reason
		ended[id] = op
	}
	if len(ended) == 0 {
		return nil, nil
	}
	return []engine.Write{engine.Put("operations", ended)}, nil
}

// ownRun says whether op was drafted by the run of nc's task, on its
// branch: its reply ran at or after the run's start. What an earlier run
// left behind (a replay of its gate, say) is not this run's to ask about
// or perform. An id that names no checkpoint (a migrated v1 operation)
// counts as its own.
func ownRun(nc *engine.NodeContext, op Operation) bool {
	at, ok := draftedAt(op)
	return !ok || nc.RunStart == 0 || at >= nc.RunStart
}

// draftedAt is the checkpoint whose reply task drafted op, as its id
// (OperationID) names it; ok is false for an id that names none.
func draftedAt(op Operation) (int64, bool) {
	var at int64
	_, err := fmt.Sscanf(op.ID, "op-draft-c%d-", &at)
	return at, err == nil
}

// notOwnRun marks op, which nc's run did not draft, as superseded.
func notOwnRun(nc *engine.NodeContext, op Operation) Operation {
	op.Status = OpSuperseded
	op.Result = fmt.Sprintf("not performed: drafted by an earlier run than this one (which began at @%d); a run performs only its own drafts: draft again from a checkpoint before the reply", nc.RunStart)
	return op
}

func afterReply(v engine.Values) ([]engine.Target, error) {
	s, err := Decode(v, "operations")
	if err != nil {
		return nil, err
	}
	if _, ok := PendingDraft(s); ok {
		return []engine.Target{engine.Goto(NodeApproval)}, nil
	}
	return nil, nil
}

func afterApproval(v engine.Values) ([]engine.Target, error) {
	s, err := Decode(v, "operations", "approvals")
	if err != nil {
		return nil, err
	}
	for _, op := range s.Operations {
		if op.Kind == KindCreateDraft && op.Status == OpApproved {
			return []engine.Target{engine.Goto(NodeDraft)}, nil
		}
	}
	ids := slices.Sorted(maps.Keys(s.Operations))
	for _, id := range ids {
		op := s.Operations[id]
		if d := s.Approvals[id]; op.Kind == KindCreateDraft && op.Status == OpRejected && d.Redraft && op.RedraftedBy == "" {
			return []engine.Target{engine.Send(NodeReply, ReplyArgs{Revise: id, Reason: d.Reason})}, nil
		}
	}
	return nil, nil
}

// ReplyArgs send the reply node back to write a rejected draft again.
type ReplyArgs struct {
	// Revise is the rejected operation; Reason is the operator's.
	Revise string `json:"revise"`
	Reason string `json:"reason"`
}

// approval is the gate: without a recorded decision the run pauses; the
// decision is applied to the operation, never added to the conversation.
func approval(_ context.Context, nc *engine.NodeContext) ([]engine.Write, error) {
	s, err := Decode(nc.Values, "operations", "approvals", "messages")
	if err != nil {
		return nil, err
	}
	op, ok := PendingDraft(s)
	if !ok {
		return nil, nil
	}
	if !ownRun(nc, op) {
		return []engine.Write{engine.Put("operations", map[string]Operation{op.ID: notOwnRun(nc, op)})}, nil
	}
	d, answered := s.Approvals[op.ID]
	if !answered {
		return nil, engine.AwaitApproval(op.ID, ApprovalQuestion)
	}
	if d.Approved {
		op.Status = OpApproved
		ws := []engine.Write{}
		if d.Grant != (Authorization{}) {
			nc.Emit(event.GrantAttached{Operation: op.ID, Ref: d.Grant.Ref, ExpiresAt: d.Grant.ExpiresAt, By: orOperator(d.By)})
		}
		if d.Payload != "" && d.Payload != op.Payload {
			// The reply stays as written; the note says what goes out.
			op.Original, op.Payload, op.EditedBy = op.Payload, d.Payload, orOperator(d.By)
			note := fmt.Sprintf("approved with edits by %s: the draft of %s goes out as edited (%d → %d characters; see operation %s)",
				op.EditedBy, replyRef(s.Messages, op.Original), len([]rune(op.Original)), len([]rune(op.Payload)), op.ID)
			ws = append(ws, engine.Put("messages", []Message{{Role: RoleAssistant, Speaker: NodeApproval, Content: note}}))
		}
		return append([]engine.Write{engine.Put("operations", map[string]Operation{op.ID: op})}, ws...), nil
	}
	op.Status, op.Result = OpRejected, "rejected: "+d.Reason
	// The reply stays in the conversation as written; a note after it says
	// the customer never got it, so neither a reader nor the summary takes
	// it for an answer that went out.
	note := fmt.Sprintf("not sent: the draft of %s was rejected by %s (%s)", replyRef(s.Messages, op.Payload), orOperator(d.By), d.Reason)
	if d.Redraft {
		note += "; the reply is written again with the reason"
	}
	return []engine.Write{
		engine.Put("operations", map[string]Operation{op.ID: op}),
		engine.Put("messages", []Message{{Role: RoleAssistant, Speaker: NodeApproval, Content: note}}),
	}, nil
}

// replyRef names the reply message a draft was made from ("reply #29").
func replyRef(msgs []Message, payload string) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Speaker == NodeReply && msgs[i].Content == payload {
			return fmt.Sprintf("reply #%d", msgs[i].Index)
		}
	}
	return "the reply"
}

func orOperator(by string) string {
	if by == "" {
		return "the operator"
	}
	return by
}

// createDraft performs each approved draft exactly once. Its operation id
// was recorded in a checkpoint before; the drafts table is looked up by it
// first, so a retry after a crash reuses the draft, whatever the grant says
// now (it was valid when the draft was made). Only a new write checks the
// grant: none, one with a zero or negative lifetime, or an expired one
// blocks it with a reason (recorded in the operation and reported in the
// run's Result.Blocked). The write carries the run's fencing epoch, so a
// writer that was taken over cannot make a draft.
func (d *deps) createDraft(ctx context.Context, nc *engine.NodeContext) ([]engine.Write, error) {
	s, err := Decode(nc.Values, "operations", "authorization")
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(s.Operations))
	done := map[string]Operation{}
	for id, o := range s.Operations {
		switch {
		case o.Kind != KindCreateDraft || o.Status != OpApproved:
		case !ownRun(nc, o):
			done[id] = notOwnRun(nc, o)
		default:
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		if len(done) > 0 {
			return []engine.Write{engine.Put("operations", done)}, nil
		}
		return nil, nil
	}
	if d.drafts == nil {
		return nil, errors.New("create_draft has no drafts table: this store does not support side effects")
	}
	sort.Strings(ids)
	degraded := false
	for _, id := range ids {
		op, err := d.perform(ctx, nc, s.Operations[id], s.Authorization)
		if errors.Is(err, ErrDraftMismatch) {
			return nil, engine.Fail(err) // a retry would find the same draft
		}
		if err != nil {
			return nil, err
		}
		done[id] = op
		degraded = degraded || op.Status == OpBlocked
	}
	ws := []engine.Write{engine.Put("operations", done)}
	if degraded {
		ws = append(ws, engine.Put("degraded", true))
	}
	return ws, nil
}

// perform reconciles, then authorizes, then writes one approved draft.
func (d *deps) perform(ctx context.Context, nc *engine.NodeContext, op Operation, grant *Authorization) (Operation, error) {
	existing, err := d.drafts.Draft(ctx, nc.Thread, op.ID)
	switch {
	case err == nil:
		if err := checkDraft(op, existing); err != nil {
			return Operation{}, err
		}
		op.Status, op.Reused = OpDone, true
		op.Result = "draft " + existing.OperationID
		nc.Emit(event.SideEffectRecorded{Operation: op.ID, Reused: true, PayloadSha256: PayloadHash(op.Payload)})
		return op, nil
	case !errors.Is(err, store.ErrNotFound):
		return Operation{}, fmt.Errorf("look up draft %s: %w", op.ID, err)
	}
	if reason := GrantProblem(grant, d.now()); reason != "" {
		op.Status = OpBlocked
		// What to run is data (the fix), worded by each front end; a
		// result stored before names the command itself.
		op.Result = reason + ": a new draft needs a valid grant; ask the customer to re-authorise, then fork this thread with a fresh grant"
		nc.Block(op.ID, op.Result, engine.FixFreshGrant)
		return op, nil
	}
	// The proposal was written from what the tools read then: a record
	// that changed since makes it stale, so the write is not let through.
	current, err := d.sources.Versions(ctx)
	if err != nil {
		return Operation{}, fmt.Errorf("create_draft %s: check its sources: %w", op.ID, err)
	}
	if cs := changed(op.Sources, current); len(cs) > 0 {
		op.Status = OpBlocked
		op.Result = fmt.Sprintf("source changed since the reply was written: %s; the draft would state what is no longer true: ask again in a new turn so the executors re-read it",
			describeChanges(cs))
		nc.Block(op.ID, op.Result, engine.FixNewTurn)
		return op, nil
	}
	nc.Point(PointBeforeSideEffect)
	made, created, err := d.drafts.CreateDraft(ctx, store.Draft{ThreadID: nc.Thread, OperationID: op.ID, Body: draftBody(op), Epoch: nc.Epoch})
	if err != nil {
		return Operation{}, fmt.Errorf("create_draft %s: %w", op.ID, err)
	}
	if !created {
		// Another writer made it between the look-up and now.
		if err := checkDraft(op, made); err != nil {
			return Operation{}, err
		}
	}
	nc.Point(PointAfterSideEffect)
	op.Status, op.Reused = OpDone, !created
	op.Result = "draft " + made.OperationID
	nc.Emit(event.SideEffectRecorded{Operation: op.ID, Reused: op.Reused, PayloadSha256: PayloadHash(op.Payload)})
	return op, nil
}

// EventGrantAttached is a grant a person gave with an approval, for a
// draft written under none (Decision.Grant).
const EventGrantAttached = event.TypeGrantAttached

// EventSideEffectRecorded is a side effect done (or found done) by id.
const EventSideEffectRecorded = event.TypeSideEffectRecorded

// ErrBadGrant is matched by errors.Is when a draft turn has no usable
// authorization grant (see Turn.Validate and NewGrant).
var ErrBadGrant = errors.New("no valid authorization grant")

// NewGrant is the grant a draft is written under: ref, valid for ttl from
// now. A zero or negative ttl is refused.
func NewGrant(ref string, ttl time.Duration, now time.Time) (*Authorization, error) {
	if ttl <= 0 {
		return nil, wantErr(WantGrantTTL, fmt.Errorf("%w: a grant must last longer than 0, not %s", ErrBadGrant, ttl))
	}
	now = now.UTC()
	return &Authorization{Ref: ref, GrantedAt: now.Format(time.RFC3339Nano), ExpiresAt: now.Add(ttl).Format(time.RFC3339Nano)}, nil
}

// GrantProblem says why a new write may not happen under grant a at now,
// or "" when it may.
func GrantProblem(a *Authorization, now time.Time) string {
	if a == nil || *a == (Authorization{}) {
		return "no authorization grant was given for this draft"
	}
	exp, err := time.Parse(time.RFC3339, a.ExpiresAt)
	if err != nil {
		return fmt.Sprintf("authorization %s has no readable expiry (%q)", a.Ref, a.ExpiresAt)
	}
	if a.GrantedAt != "" {
		if at, err := time.Parse(time.RFC3339, a.GrantedAt); err == nil && !exp.After(at) {
			return fmt.Sprintf("authorization %s has a zero or negative lifetime (granted %s, expires %s)", a.Ref, a.GrantedAt, a.ExpiresAt)
		}
	}
	if !now.Before(exp) {
		return fmt.Sprintf("authorization %s expired at %s", a.Ref, a.ExpiresAt)
	}
	return ""
}

// dispatchTo are dispatch's targets: an executor per subtask, or the
// summarizer when none is left.
var dispatchTo = []engine.Target{engine.Send(NodeExecutor, nil), engine.Goto(NodeSummarizer)}

// dispatch sends every pending or bounced subtask to an executor; when none
// is left, the turn moves on to the summarizer.
func dispatch(v engine.Values) ([]engine.Target, error) {
	s, err := Decode(v, "subtasks")
	if err != nil {
		return nil, err
	}
	var out []engine.Target
	for _, st := range s.Subtasks {
		if st.Status == StatusPending || st.Status == StatusRedo {
			// The packet carries what the executor needs: the critic's
			// feedback once, not the result it is to redo.
			fb := st.Feedback
			st.Result, st.Feedback = "", ""
			out = append(out, engine.Send(NodeExecutor, ExecutorArgs{Task: st, Feedback: fb}))
		}
	}
	if len(out) == 0 {
		out = []engine.Target{engine.Goto(NodeSummarizer)}
	}
	return out, nil
}

// lastUser is the turn's request: the newest user message in the tail, or
// the recorded request when compaction moved the message into the summary.
// It reads the tail from its end, decoding only what it must.
func lastUser(v engine.Values, req *Request) (Message, bool) {
	items, _ := v.Items("messages")
	for i := len(items) - 1; i >= 0; i-- {
		if !bytes.Contains(items[i], []byte(`"user"`)) {
			continue // not the user's: its role would say so
		}
		m, err := decodeMessage(items[i])
		if err != nil || m.Role != RoleUser {
			continue
		}
		if req == nil || m.Index >= req.Index {
			return m, true
		}
		break
	}
	if req != nil {
		return Message{Index: req.Index, Role: RoleUser, Speaker: "user", Content: req.Text}, true
	}
	return Message{}, false
}

const plannerSystem = `You are the planner of a customer-support team. Split the customer's request into at most 4 independent subtasks, one per question asked. Answer only JSON: {"subtasks":[{"id":"t-1-<topic>","goal":"<what to find out, with the order number>","topic":"<topic>"}]}`

const sitePlannerSystem = `You are the planner of a construction site's records team. Split the day's log entry into at most 4 independent checks, one per matter logged (excavation, concrete, change, inspection, weather, safety). Answer only JSON: {"subtasks":[{"id":"t-1-<topic>","goal":"<what to check, with the log id>","topic":"<topic>"}]}`

// plannerSchema is the answer plannerSystem describes, for servers that
// hold answers to a schema. Strict mode wants every property required and
// no others.
var plannerSchema = &model.Schema{Name: "plan", Schema: json.RawMessage(`{"type":"object","properties":{"subtasks":{"type":"array","items":{"type":"object","properties":{"id":{"type":"string"},"goal":{"type":"string"},"topic":{"type":"string"}},"required":["id","goal","topic"],"additionalProperties":false}}},"required":["subtasks"],"additionalProperties":false}`)}

// Events of a model answer that could not be used as asked.
const (
	// EventPlannerRetried: the plan did not parse; the planner was asked
	// once more with the reason.
	EventPlannerRetried = event.TypePlannerRetried
	// EventPlannerDegraded: the retry did not parse either; the whole
	// request became one subtask.
	EventPlannerDegraded = event.TypePlannerDegraded
	// EventCriticDegraded: the verdict did not parse; nothing was approved
	// and nothing sent back, and the findings go out marked unverified.
	EventCriticDegraded = event.TypeCriticDegraded
)

// planner asks for the plan, once more with the reason when the answer is
// not one, and then makes the whole request one subtask: a model that
// cannot plan still gets the request looked at and answered.
func planner(ctx context.Context, nc *engine.NodeContext) ([]engine.Write, error) {
	s, err := Decode(nc.Values, "request", "scenario")
	if err != nil {
		return nil, err
	}
	call, req, err := plannerRequest(nc.Values, s)
	if err != nil {
		return nil, err
	}
	resp, err := nc.Model.Complete(ctx, call)
	if err != nil {
		return nil, err
	}
	subtasks, perr := parsePlanIn(s.Scenario, resp.Text)
	if perr != nil {
		nc.Emit(event.PlannerRetried{Error: perr.Error(), Answer: clip(resp.Text, 200)})
		if resp, err = nc.Model.Complete(ctx, plannerRetry(call, resp.Text, perr)); err != nil {
			return nil, err
		}
		if subtasks, perr = parsePlanIn(s.Scenario, resp.Text); perr != nil {
			subtasks = []Subtask{{ID: "t-1-request", Goal: req.Content, Topic: guessTopicIn(s.Scenario, req.Content)}}
			nc.Emit(event.PlannerDegraded{Error: perr.Error(), Answer: clip(resp.Text, 200), Subtasks: 1,
				What: "the planner's answer was not a plan twice: the whole request is one subtask"})
		}
	}
	for i := range subtasks {
		subtasks[i].Status = StatusPending
	}
	return []engine.Write{engine.Replace("subtasks", subtasks), engine.Put("request", Request{Index: req.Index, Text: req.Content})}, nil
}

// planItem is a subtask as a model writes it.
type planItem struct {
	ID    string `json:"id"`
	Goal  string `json:"goal"`
	Topic string `json:"topic"`
}

// parsePlan reads the planner's answer: the first JSON candidate that is a
// {"subtasks": [...]} object (or a bare list of subtasks) with a goal in
// at least one item. Loose answers are mended: missing ids numbered,
// repeated ids made unique, an unknown topic guessed from the goal, more
// than MaxSubtasks cut. The error says what was wrong, for the retry.
func parsePlan(text string) ([]Subtask, error) { return parsePlanIn(ScenarioTicket, text) }

// parsePlanIn is parsePlan for a scenario's topics.
func parsePlanIn(scenario, text string) ([]Subtask, error) {
	why := "the answer holds no JSON object"
	for _, c := range model.Candidates(text) {
		var items []planItem
		var obj struct {
			Subtasks *[]planItem `json:"subtasks"`
		}
		switch {
		case json.Unmarshal([]byte(c), &obj) == nil && obj.Subtasks != nil:
			items = *obj.Subtasks
		case json.Unmarshal([]byte(c), &items) == nil:
		case json.Valid([]byte(c)):
			why = `the JSON is not {"subtasks": [{"id", "goal", "topic"}, …]}`
			continue
		default:
			continue
		}
		var out []Subtask
		seen := map[string]bool{}
		for _, it := range items {
			goal := strings.TrimSpace(it.Goal)
			if goal == "" {
				continue
			}
			id := strings.TrimSpace(it.ID)
			if id == "" || seen[id] {
				id = fmt.Sprintf("t-%d", len(out)+1)
				for seen[id] {
					id += "x"
				}
			}
			seen[id] = true
			topic := strings.ToLower(strings.TrimSpace(it.Topic))
			if topicOf(topic).name != topic {
				topic = guessTopicIn(scenario, goal)
			}
			out = append(out, Subtask{ID: id, Goal: goal, Topic: topic})
		}
		if len(out) == 0 {
			why = `the "subtasks" list is empty or no subtask has a goal`
			continue
		}
		return out[:min(len(out), MaxSubtasks)], nil
	}
	return nil, errors.New(why)
}

// guessTopic is the topic of a goal by the mock planner's keywords, so a
// subtask without a known topic still gets the right tool.
func guessTopicIn(scenario, goal string) string { return planIn(scenario, goal)[0].Topic }

const executorSystem = `You are an executor of a customer-support team. You get one subtask. Call the tool that answers it (look up the record, never guess), then write the finding in one or two sentences, citing the tool's figures exactly. If the critic gave feedback, address it.`

const siteExecutorSystem = `You are an executor of a construction site's records team. You get one check of a day's log. Call the tool that reads the record, then write the finding in one or two sentences, copying every depth, batch number, change order, date and name exactly as the tool gives it. If the critic gave feedback, address it.`

// executor works one subtask with the model: the model calls the
// scenario's tools (the runtime runs each and answers with its result),
// for at most MaxToolRounds rounds and the turn's tool budget, then
// writes the finding. Every call and result goes into the conversation,
// joined, as the model made them.
func (d *deps) executor(ctx context.Context, nc *engine.NodeContext) ([]engine.Write, error) {
	var args ExecutorArgs
	if err := json.Unmarshal(nc.Task.Args, &args); err != nil {
		return nil, fmt.Errorf("executor arguments: %w", err)
	}
	s, err := Decode(nc.Values, "budgetRemaining", "reviewRounds", "scenario")
	if err != nil {
		return nil, err
	}
	st := args.Task
	speaker := "executor[" + st.ID + "]"
	if s.BudgetRemaining != nil && *s.BudgetRemaining <= 0 {
		st.Status = StatusBlocked
		st.Result = budgetSpent(nc.Values)
		return []engine.Write{
			engine.Put("messages", []Message{{Role: RoleAssistant, Speaker: speaker, Content: st.Result}}),
			engine.Put("subtasks", []Subtask{st}),
			engine.Put("degraded", true),
		}, nil
	}
	allowance := MaxToolRounds
	if s.BudgetRemaining != nil {
		allowance = min(allowance, *s.BudgetRemaining)
	}
	call, err := executorRequest(nc.Values, s, args)
	if err != nil {
		return nil, err
	}
	w := toolWork{d: d, nc: nc, scenario: s.Scenario, round: s.ReviewRounds, allowance: allowance, speaker: speaker}
	finding, degraded, err := w.run(ctx, call)
	if err != nil {
		return nil, err
	}
	st.ToolCalls += w.made
	st.Status = StatusDone
	st.Result = finding
	st.Feedback = ""
	if w.last != nil {
		st.Source, st.SourceVersion = w.last.ID, w.last.Version
	}
	msgs := append(w.written, Message{Role: RoleAssistant, Speaker: speaker, Content: finding})
	ws := []engine.Write{
		engine.Put("messages", msgs),
		engine.Put("subtasks", []Subtask{st}),
	}
	if w.made > 0 {
		ws = append(ws, engine.Put("budgetRemaining", -w.made), engine.Put("sourceVersions", w.reads))
	}
	if degraded {
		ws = append(ws, engine.Put("degraded", true))
	}
	return ws, nil
}

// toolWork is one executor task's rounds of tool calls.
type toolWork struct {
	d         *deps
	nc        *engine.NodeContext
	scenario  string
	round     int // review round: the knowledge base answers by it
	allowance int // tool calls this task may run
	speaker   string

	made    int            // tool calls run
	bad     int            // calls answered with an error
	written []Message      // the calls and results, for the conversation
	reads   map[string]int // records read, at the version read
	last    *SourceRead
}

// run asks the model until it answers without a tool call. A model that
// keeps calling past its allowance and MaxToolRounds more is stopped: the
// task is degraded and says why.
func (w *toolWork) run(ctx context.Context, call model.Request) (finding string, degraded bool, err error) {
	for rounds := 1; ; rounds++ {
		resp, err := w.nc.Model.Complete(ctx, call)
		if err != nil {
			return "", false, err
		}
		if len(resp.ToolCalls) == 0 {
			text := stripCoordinates(resp.Text)
			if text == "" {
				w.nc.Emit(event.ToolError{Error: "the model answered with nothing", Round: rounds})
				return "not checked: the model gave no finding", true, nil
			}
			return text, false, nil
		}
		if rounds > MaxToolRounds+1 {
			w.nc.Emit(event.ToolLoop{Rounds: rounds - 1, Calls: w.made, Refused: w.bad})
			return fmt.Sprintf("not checked: the model kept calling tools after %d rounds and was stopped", rounds-1), true, nil
		}
		asst := Message{Role: RoleAssistant, Speaker: w.speaker, Content: strings.TrimSpace(resp.Text)}
		if asst.Content == "" {
			asst.Content = describeToolCalls(resp.ToolCalls)
		}
		for i, c := range resp.ToolCalls {
			tc := callOf(c)
			if i == 0 {
				asst.ToolCall = &tc
			} else {
				asst.ToolCalls = append(asst.ToolCalls, tc)
			}
		}
		results, err := w.answer(ctx, resp.ToolCalls, rounds)
		if err != nil {
			return "", false, err
		}
		w.written = append(w.written, asst)
		w.written = append(w.written, results...)
		call.Messages = append(call.Messages, roundMessage(asst))
		for _, r := range results {
			call.Messages = append(call.Messages, roundMessage(r))
		}
	}
}

// answer runs (or refuses) one round's calls, a tool message each.
func (w *toolWork) answer(ctx context.Context, calls []model.ToolCall, rounds int) ([]Message, error) {
	out := make([]Message, 0, len(calls))
	for _, c := range calls {
		m := Message{Role: RoleTool, Speaker: "tool[" + clip(cleanSpeaker(c.Name), 40) + "]", ToolCallID: c.ID}
		spec, ref, aerr := toolArgs(w.scenario, c)
		switch {
		case aerr != nil:
			w.bad++
			m.Content = toolError(aerr.Error())
			w.nc.Emit(event.ToolError{Tool: new(clip(c.Name, 64)), Error: aerr.Error(), Round: rounds})
		case w.made >= w.allowance || rounds > MaxToolRounds:
			w.bad++
			why := fmt.Sprintf("not run: this task may make %d tool calls (the turn's budget and %d rounds) and made %d; answer from the results you have", w.allowance, MaxToolRounds, w.made)
			m.Content = toolError(why)
			w.nc.Emit(event.ToolRefused{Tool: spec.name, Why: why, Round: rounds})
		default:
			began := time.Now()
			source := SourceOf(spec.name, ref)
			why, err := w.d.withdrawnRead(ctx, source)
			if err != nil {
				return nil, err
			}
			if why != "" {
				w.bad++
				m.Content = toolError(why)
				w.nc.Emit(event.ToolRefused{Tool: spec.name, Why: why, Round: rounds})
				break
			}
			versions, err := w.d.sources.Versions(ctx)
			if err != nil {
				return nil, fmt.Errorf("executor: read %s: %w", source, err)
			}
			read := SourceRead{ID: source, Version: versionOf(versions, source)}
			said, err := saidAbout(w.nc.Values, ref)
			if err != nil {
				return nil, fmt.Errorf("executor: read what the conversation says about %s: %w", source, err)
			}
			m.Content = string(runTool(spec.name, ref, said, w.round, read.Version))
			m.Speaker = "tool[" + spec.name + "]"
			m.Source = &read
			w.made++
			if w.reads == nil {
				w.reads = map[string]int{}
			}
			w.reads[read.ID] = read.Version
			w.last = &read
			w.nc.Emit(event.ToolCalled{Tool: spec.name, Round: rounds, Source: source, DurationMs: time.Since(began).Milliseconds()})
		}
		out = append(out, m)
	}
	return out, nil
}

// describeToolCalls is "calling order_status({…})", the text of a call
// message whose model wrote none.
func describeToolCalls(cs []model.ToolCall) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = fmt.Sprintf("%s(%s)", clip(c.Name, 40), clip(c.Arguments, 200))
	}
	return "calling " + strings.Join(parts, ", ")
}

// roundMessage is a message of the task's own rounds as the next round's
// request carries it: as the model wrote it, without coordinates (its
// index is given when the task's writes are applied).
func roundMessage(m Message) model.Message {
	cm := chatMessage(m)
	if m.Role != RoleTool {
		cm.Content = m.Content
	}
	cm.Part = model.PartRounds
	return cm
}

// readBy is the versions of the records subtasks' results were read
// from; of a record two of them read, the older version, so a change
// since either read shows.
func readBy(sts []Subtask) map[string]int {
	var out map[string]int
	for _, st := range sts {
		if st.Source == "" {
			continue
		}
		if out == nil {
			out = map[string]int{}
		}
		if v, ok := out[st.Source]; !ok || st.SourceVersion < v {
			out[st.Source] = st.SourceVersion
		}
	}
	return out
}

const criticSystem = `You are the critic of a customer-support team. Check each executor output against the customer's requirement. Answer only JSON: {"approve":["<id>"],"redo":[{"id":"<id>","reason":"<what is missing>"}]}`

// criticSchema is the verdict criticSystem describes.
var criticSchema = &model.Schema{Name: "verdict", Schema: json.RawMessage(`{"type":"object","properties":{"approve":{"type":"array","items":{"type":"string"}},"redo":{"type":"array","items":{"type":"object","properties":{"id":{"type":"string"},"reason":{"type":"string"}},"required":["id","reason"],"additionalProperties":false}}},"required":["approve","redo"],"additionalProperties":false}`)}

// verdict is the critic's answer: what to send back, and why.
type verdict struct {
	Redo []struct {
		ID     string `json:"id"`
		Reason string `json:"reason"`
	} `json:"redo"`
}

// parseVerdict reads the first JSON candidate that has "approve" or
// "redo"; anything else is no verdict.
func parseVerdict(text string) (verdict, error) {
	for _, c := range model.Candidates(text) {
		var keys map[string]json.RawMessage
		if json.Unmarshal([]byte(c), &keys) != nil {
			continue
		}
		_, a := keys["approve"]
		_, r := keys["redo"]
		var v verdict
		if (a || r) && json.Unmarshal([]byte(c), &v) == nil {
			return v, nil
		}
	}
	return verdict{}, errors.New(`the answer holds no {"approve": […], "redo": […]} object`)
}

func critic(ctx context.Context, nc *engine.NodeContext) ([]engine.Write, error) {
	s, err := Decode(nc.Values, "request", "subtasks", "reviewRounds")
	if err != nil {
		return nil, err
	}
	round := s.ReviewRounds + 1
	call, reviewed, err := criticRequest(nc.Values, s)
	if err != nil {
		return nil, err
	}
	if len(reviewed) == 0 {
		return []engine.Write{engine.Put("reviewRounds", 1)}, nil
	}
	resp, err := nc.Model.Complete(ctx, call)
	if err != nil {
		return nil, err
	}
	v, perr := parseVerdict(resp.Text)
	if perr != nil {
		// No verdict approves nothing and sends nothing back: the findings
		// go to the reply as they are, which says they are unverified.
		ids := make([]string, len(reviewed))
		for i, st := range reviewed {
			ids[i] = st.ID
		}
		nc.Emit(event.CriticDegraded{Error: perr.Error(), Answer: clip(resp.Text, 200), Unreviewed: ids})
		remark := fmt.Sprintf("review %d: the critic's answer could not be read (%s); approved none, sent none back", round, perr)
		return []engine.Write{
			engine.Put("messages", []Message{{Role: RoleAssistant, Speaker: "critic", Content: remark}}),
			engine.Put("reviewRounds", 1),
			engine.Put("degraded", true),
		}, nil
	}
	redo := map[string]string{}
	for _, r := range v.Redo {
		redo[r.ID] = r.Reason
	}
	degraded := false
	var approved, bounced []string
	for i := range reviewed {
		st := &reviewed[i]
		if reason, ok := redo[st.ID]; ok {
			if round >= MaxReviewRounds {
				degraded = true
				st.Status = StatusApproved
				st.Result += " (unverified: review rounds exhausted)"
				approved = append(approved, st.ID)
				continue
			}
			st.Status, st.Feedback = StatusRedo, reason
			bounced = append(bounced, fmt.Sprintf("%s (%s)", st.ID, reason))
			continue
		}
		st.Status = StatusApproved
		approved = append(approved, st.ID)
	}
	remark := fmt.Sprintf("review %d: approved %s", round, orNone(approved))
	if len(bounced) > 0 {
		remark += "; sent back " + strings.Join(bounced, ", ")
	}
	ws := []engine.Write{
		engine.Put("messages", []Message{{Role: RoleAssistant, Speaker: "critic", Content: remark}}),
		engine.Put("subtasks", reviewed),
		engine.Put("reviewRounds", 1),
	}
	if degraded {
		ws = append(ws, engine.Put("degraded", true))
	}
	return ws, nil
}

const replySystem = `You write the final reply to the customer from the approved findings. Be brief and concrete.`

const siteReplySystem = `You write the final reply of the day: the site manager's daily report from the approved findings. Copy every depth, batch number, change order, date and name exactly as found.`

func reply(ctx context.Context, nc *engine.NodeContext) ([]engine.Write, error) {
	s, err := Decode(nc.Values, "request", "subtasks", "degraded", "draftRequested", "operations", "scenario")
	if err != nil {
		return nil, err
	}
	call, revise, err := replyRequest(nc.Values, s, nc.Task.Args)
	if err != nil {
		return nil, err
	}
	resp, err := nc.Model.Complete(ctx, call)
	if err != nil {
		return nil, err
	}
	text := stripCoordinates(resp.Text)
	ws := []engine.Write{engine.Put("messages", []Message{{Role: RoleAssistant, Speaker: "reply", Content: text}})}
	// The operation id is recorded with this task's checkpoint, before
	// the side effect can happen, and names this task on this branch.
	id := OperationID(nc.Checkpoint, nc.Task.ID)
	ops := map[string]Operation{}
	if _, exists := s.Operations[id]; s.DraftRequested && !exists {
		ops[id] = Operation{ID: id, Kind: KindCreateDraft, Status: OpAwaitingApproval, Payload: text, Sources: readBy(s.Subtasks)}
		if o, ok := s.Operations[revise.Revise]; ok {
			o.RedraftedBy = id
			ops[revise.Revise] = o
		}
	}
	// A draft still waiting for an answer is replaced by this reply, with
	// a draft or without: the gate only ever asks about the newest reply's
	// draft. (An approved one stays: its side effect may have happened. A
	// migrated v1 draft, which names no reply, stays for a turn without
	// one.)
	_, drafted := ops[id]
	for oid, o := range s.Operations {
		if _, replied := draftedAt(o); oid == id || o.Kind != KindCreateDraft || o.Status != OpAwaitingApproval || !drafted && !replied {
			continue
		}
		o.Status, o.Result = OpSuperseded, "superseded by a newer reply, written without a draft"
		if drafted {
			o.Result = "superseded by " + id + ", the draft of a newer reply"
		}
		ops[oid] = o
	}
	if len(ops) > 0 {
		ws = append(ws, engine.Put("operations", ops))
	}
	return ws, nil
}

func orNone(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	return strings.Join(xs, ", ")
}
