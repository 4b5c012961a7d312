package ticket

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"rewind/engine"
	"rewind/engine/model"
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
)

// Points inside create_draft where a crash drill may kill the process.
const (
	PointBeforeSideEffect = "before-side-effect"
	PointAfterSideEffect  = "after-side-effect"
)

// ExecutorArgs is what a Send to the executor carries.
type ExecutorArgs struct {
	Task     Subtask `json:"task"`
	Feedback string  `json:"feedback,omitempty"`
}

// Option configures the graph's outside world.
type Option func(*deps)

type deps struct {
	drafts store.Drafts
	now    func() time.Time
}

// WithDrafts gives create_draft the table it writes to.
func WithDrafts(d store.Drafts) Option { return func(x *deps) { x.drafts = d } }

// WithClock replaces the clock authorization expiry is checked against.
func WithClock(now func() time.Time) Option { return func(x *deps) { x.now = now } }

// NewGraph wires the ticket graph:
// planner → executor ×N (Send) → critic ⟲ executor (redo) → summarizer →
// reply, and when the turn asks for a draft: → approval gate → create_draft.
func NewGraph(opts ...Option) *engine.Graph {
	d := &deps{now: time.Now}
	for _, o := range opts {
		o(d)
	}
	g := engine.NewGraph("ticket", SchemaVersion)
	g.Migrations[1] = migrateV1
	declareChannels(g)
	g.Node(NodePlanner, planner).
		Node(NodeExecutor, executor).
		Node(NodeCritic, critic).
		Node(NodeSummarizer, summarizer).
		Node(NodeReply, reply).
		Node(NodeApproval, approval).
		Node(NodeDraft, d.createDraft).
		Entry(NodePlanner).
		Route(NodePlanner, dispatch).
		Edge(NodeExecutor, NodeCritic).
		Route(NodeCritic, dispatch).
		Edge(NodeSummarizer, NodeReply).
		Route(NodeReply, afterReply).
		Route(NodeApproval, afterApproval).
		Edge(NodeDraft, engine.End)
	return g
}

// NewEngine runs the ticket graph on st with m, giving create_draft the
// store's drafts table when it has one.
func NewEngine(st store.Store, m model.Model, opts ...Option) (*engine.Engine, error) {
	if d, ok := st.(store.Drafts); ok {
		opts = append([]Option{WithDrafts(d)}, opts...)
	}
	return engine.New(st, NewGraph(opts...), m)
}

// PendingDraft is the draft operation the thread waits on, if any.
func PendingDraft(s State) (Operation, bool) {
	ids := make([]string, 0, len(s.Operations))
	for id := range s.Operations {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if op := s.Operations[id]; op.Kind == KindCreateDraft && op.Status == OpAwaitingApproval {
			return op, true
		}
	}
	return Operation{}, false
}

// KindCreateDraft is the side-effecting tool of this graph.
const KindCreateDraft = "create_draft"

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
	s, err := Decode(v, "operations")
	if err != nil {
		return nil, err
	}
	for _, op := range s.Operations {
		if op.Kind == KindCreateDraft && op.Status == OpApproved {
			return []engine.Target{engine.Goto(NodeDraft)}, nil
		}
	}
	return nil, nil
}

// approval is the gate: without a recorded decision the run pauses; the
// decision is applied to the operation, never added to the conversation.
func approval(_ context.Context, nc *engine.NodeContext) ([]engine.Write, error) {
	s, err := Decode(nc.Values, "operations", "approvals")
	if err != nil {
		return nil, err
	}
	op, ok := PendingDraft(s)
	if !ok {
		return nil, nil
	}
	d, answered := s.Approvals[op.ID]
	if !answered {
		return nil, engine.AwaitApproval(op.ID, "create the reply as an outgoing draft?")
	}
	if d.Approved {
		op.Status = OpApproved
	} else {
		op.Status, op.Result = OpRejected, "rejected: "+d.Reason
	}
	return []engine.Write{engine.Put("operations", map[string]Operation{op.ID: op})}, nil
}

// createDraft performs the side effect exactly once: the operation id was
// recorded before; the draft table is looked up by it, so a retry after a
// crash reuses the draft instead of making another.
func (d *deps) createDraft(ctx context.Context, nc *engine.NodeContext) ([]engine.Write, error) {
	s, err := Decode(nc.Values, "operations", "authorization")
	if err != nil {
		return nil, err
	}
	var op Operation
	for _, o := range s.Operations {
		if o.Kind == KindCreateDraft && o.Status == OpApproved {
			op = o
		}
	}
	if op.ID == "" {
		return nil, nil
	}
	if a := s.Authorization; a != nil {
		exp, err := time.Parse(time.RFC3339, a.ExpiresAt)
		if err != nil || !d.now().Before(exp) {
			op.Status = OpBlocked
			op.Result = fmt.Sprintf("authorization %s expired at %s; ask the customer to re-authorise, then fork this thread with a fresh grant", a.Ref, a.ExpiresAt)
			return []engine.Write{engine.Put("operations", map[string]Operation{op.ID: op}), engine.Put("degraded", true)}, nil
		}
	}
	if d.drafts == nil {
		return nil, errors.New("create_draft has no drafts table: this store does not support side effects")
	}
	existing, err := d.drafts.Draft(ctx, nc.Thread, op.ID)
	switch {
	case err == nil:
		op.Status, op.Reused = OpDone, true
		op.Result = "draft " + existing.OperationID
	case errors.Is(err, store.ErrNotFound):
		nc.Point(PointBeforeSideEffect)
		body, _ := json.Marshal(map[string]string{"to": "customer", "body": op.Payload})
		made, created, err := d.drafts.CreateDraft(ctx, store.Draft{ThreadID: nc.Thread, OperationID: op.ID, Body: body})
		if err != nil {
			return nil, fmt.Errorf("create_draft %s: %w", op.ID, err)
		}
		nc.Point(PointAfterSideEffect)
		op.Status, op.Reused = OpDone, !created
		op.Result = "draft " + made.OperationID
	default:
		return nil, fmt.Errorf("look up draft %s: %w", op.ID, err)
	}
	nc.Emit("side_effect.recorded", map[string]any{"operation": op.ID, "reused": op.Reused})
	return []engine.Write{engine.Put("operations", map[string]Operation{op.ID: op})}, nil
}

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
		var m Message
		if json.Unmarshal(items[i], &m) != nil || m.Role != RoleUser {
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

func planner(ctx context.Context, nc *engine.NodeContext) ([]engine.Write, error) {
	s, err := Decode(nc.Values, "request")
	if err != nil {
		return nil, err
	}
	req, ok := lastUser(nc.Values, s.Request)
	if !ok {
		return nil, errors.New("no user message to plan from")
	}
	resp, err := nc.Model.Complete(ctx, model.Request{Role: model.RolePlanner, System: plannerSystem, Prompt: "REQUEST: " + req.Content})
	if err != nil {
		return nil, err
	}
	var out struct {
		Subtasks []Subtask `json:"subtasks"`
	}
	if err := json.Unmarshal([]byte(extractJSON(resp.Text)), &out); err != nil || len(out.Subtasks) == 0 {
		return nil, fmt.Errorf("planner answer is not a subtask list (%q): check the planner model", clip(resp.Text, 200))
	}
	if len(out.Subtasks) > MaxSubtasks {
		out.Subtasks = out.Subtasks[:MaxSubtasks]
	}
	for i := range out.Subtasks {
		st := &out.Subtasks[i]
		if st.ID == "" {
			st.ID = fmt.Sprintf("t-%d", i+1)
		}
		st.Status, st.ToolCalls, st.Result, st.Feedback = StatusPending, 0, "", ""
	}
	return []engine.Write{engine.Replace("subtasks", out.Subtasks), engine.Put("request", Request{Index: req.Index, Text: req.Content})}, nil
}

const executorSystem = `You are an executor of a customer-support team. You get one subtask and the result of the tool you called for it. Write the finding in one or two sentences, citing the tool's figures. If the critic gave feedback, address it.`

func executor(ctx context.Context, nc *engine.NodeContext) ([]engine.Write, error) {
	var args ExecutorArgs
	if err := json.Unmarshal(nc.Task.Args, &args); err != nil {
		return nil, fmt.Errorf("executor arguments: %w", err)
	}
	s, err := Decode(nc.Values, "budgetRemaining", "reviewRounds")
	if err != nil {
		return nil, err
	}
	st := args.Task
	speaker := "executor[" + st.ID + "]"
	if s.BudgetRemaining != nil && *s.BudgetRemaining <= 0 {
		st.Status = StatusBlocked
		st.Result = fmt.Sprintf("not checked: the turn's tool budget of %d calls is used up", TurnToolBudget)
		return []engine.Write{
			engine.Put("messages", []Message{{Role: RoleAssistant, Speaker: speaker, Content: st.Result}}),
			engine.Put("subtasks", []Subtask{st}),
			engine.Put("degraded", true),
		}, nil
	}
	t := topicOf(st.Topic)
	ref := refOf(st.Goal)
	round := s.ReviewRounds
	callArgs, _ := json.Marshal(map[string]any{"order": ref})
	callID := fmt.Sprintf("call-%s-%d", st.ID, st.ToolCalls+1)
	result := runTool(t.tool, ref, round)
	prompt := fmt.Sprintf("SUBTASK %s: %s\nTOOL %s(%s) RESULT: %s", st.ID, st.Goal, t.tool, callArgs, result)
	if args.Feedback != "" {
		prompt += "\nFEEDBACK: " + args.Feedback
	}
	resp, err := nc.Model.Complete(ctx, model.Request{Role: model.RoleExecutor, System: executorSystem, Prompt: prompt})
	if err != nil {
		return nil, err
	}
	finding := strings.TrimSpace(resp.Text)
	st.ToolCalls++
	st.Status = StatusDone
	st.Result = finding
	st.Feedback = ""
	return []engine.Write{
		engine.Put("messages", []Message{
			{Role: RoleAssistant, Speaker: speaker, Content: fmt.Sprintf("calling %s(%s)", t.tool, callArgs), ToolCall: &ToolCall{ID: callID, Name: t.tool, Args: callArgs}},
			{Role: RoleTool, Speaker: "tool[" + t.tool + "]", Content: string(result), ToolCallID: callID},
			{Role: RoleAssistant, Speaker: speaker, Content: finding},
		}),
		engine.Put("subtasks", []Subtask{st}),
		engine.Put("budgetRemaining", -1),
	}, nil
}

const criticSystem = `You are the critic of a customer-support team. Check each executor output against the customer's requirement. Answer only JSON: {"approve":["<id>"],"redo":[{"id":"<id>","reason":"<what is missing>"}]}`

func critic(ctx context.Context, nc *engine.NodeContext) ([]engine.Write, error) {
	s, err := Decode(nc.Values, "request", "subtasks", "reviewRounds")
	if err != nil {
		return nil, err
	}
	round := s.ReviewRounds + 1
	var b strings.Builder
	fmt.Fprintf(&b, "REVIEW ROUND %d\n", round)
	if req, ok := lastUser(nc.Values, s.Request); ok {
		fmt.Fprintf(&b, "REQUIREMENT #%d %s: %s\n", req.Index, req.Speaker, req.Content)
	}
	var reviewed []Subtask
	for _, st := range s.Subtasks {
		if st.Status == StatusDone {
			fmt.Fprintf(&b, "OUTPUT %s [%s]: %s\n", st.ID, st.Topic, st.Result)
			reviewed = append(reviewed, st)
		}
	}
	if len(reviewed) == 0 {
		return []engine.Write{engine.Put("reviewRounds", 1)}, nil
	}
	resp, err := nc.Model.Complete(ctx, model.Request{Role: model.RoleCritic, System: criticSystem, Prompt: b.String()})
	if err != nil {
		return nil, err
	}
	var verdict struct {
		Redo []struct {
			ID     string `json:"id"`
			Reason string `json:"reason"`
		} `json:"redo"`
	}
	if err := json.Unmarshal([]byte(extractJSON(resp.Text)), &verdict); err != nil {
		return nil, fmt.Errorf("critic answer is not a verdict (%q): check the critic model", clip(resp.Text, 200))
	}
	redo := map[string]string{}
	for _, r := range verdict.Redo {
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

func reply(ctx context.Context, nc *engine.NodeContext) ([]engine.Write, error) {
	s, err := Decode(nc.Values, "request", "subtasks", "degraded", "draftRequested", "operations")
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	if req, ok := lastUser(nc.Values, s.Request); ok {
		fmt.Fprintf(&b, "REQUEST: %s\n", req.Content)
	}
	for _, st := range s.Subtasks {
		fmt.Fprintf(&b, "FINDING %s [%s]: %s\n", st.ID, st.Status, st.Result)
	}
	if s.Degraded {
		b.WriteString("NOTE: some findings are unverified or blocked; say so.\n")
	}
	resp, err := nc.Model.Complete(ctx, model.Request{Role: model.RoleReply, System: replySystem, Prompt: b.String()})
	if err != nil {
		return nil, err
	}
	text := strings.TrimSpace(resp.Text)
	ws := []engine.Write{engine.Put("messages", []Message{{Role: RoleAssistant, Speaker: "reply", Content: text}})}
	if s.DraftRequested {
		// The operation id is recorded in this checkpoint, before the side
		// effect can happen: one id per user turn.
		req, _ := lastUser(nc.Values, s.Request)
		id := fmt.Sprintf("op-draft-m%d", req.Index)
		if _, exists := s.Operations[id]; !exists {
			ws = append(ws, engine.Put("operations", map[string]Operation{id: {ID: id, Kind: KindCreateDraft, Status: OpAwaitingApproval, Payload: text}}))
		}
	}
	return ws, nil
}

// extractJSON takes the outermost {...} so a model's prose around it is ignored.
func extractJSON(s string) string {
	i, j := strings.Index(s, "{"), strings.LastIndex(s, "}")
	if i < 0 || j < i {
		return s
	}
	return s[i : j+1]
}

func orNone(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	return strings.Join(xs, ", ")
}
