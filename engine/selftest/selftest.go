// Package selftest runs the seed lab's five acceptance checks against the
// real engine, the ticket graph and the mock model on a chosen store. It is
// what `rewind selftest` prints and what CI asserts on every backend.
package selftest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"rewind/engine"
	"rewind/engine/ticket"
	"rewind/store"
)

// Opener opens a fresh handle on the store under test. Calling it twice
// must give two handles on the same data (check 2 rebuilds the handle).
type Opener func(ctx context.Context) (store.Store, error)

// Check is one acceptance check's outcome.
type Check struct {
	N       int            `json:"n"`
	Name    string         `json:"name"`
	Passed  bool           `json:"passed"`
	Figures map[string]any `json:"figures"`
	// Failures lists what did not hold; empty when passed.
	Failures []string `json:"failures,omitempty"`
}

// The threads selftest writes; it clears them first and leaves them after,
// so they can be inspected with `rewind log`.
const (
	ThreadCount  = "selftest:check1-count"
	ThreadTokens = "selftest:check1-tokens"
	ThreadMain   = "selftest:check2-main"
	ThreadWrong  = "selftest:check2-wrong-way"
	ThreadV1     = "selftest:check5-v1"
	// ThreadLock is the writer lock a run holds from start to end (no
	// thread of that id is written): one selftest at a time on a store.
	ThreadLock = "selftest:running"
)

// ErrRunning refuses a selftest while another one runs on the same store.
var ErrRunning = errors.New("selftest refused")

// The two sentences of checks 2 and 4.
const (
	SentenceMain = "My order SO20260901 hasn't arrived yet: what is the order status, where is the parcel now, and can I get a refund if it is lost?"
	SentenceFork = "Please change the address on SO20260901 and send me the invoice."
	AttachmentA  = "blob://tickets/2026/att-1.png"
)

type checker struct {
	c *Check
}

func (k checker) expect(ok bool, format string, a ...any) bool {
	if !ok {
		k.c.Failures = append(k.c.Failures, fmt.Sprintf(format, a...))
	}
	return ok
}

// Run runs the five checks. It returns an error only when the store itself
// fails (cannot open, cannot write); a check that does not hold is reported
// in its Check.
func Run(ctx context.Context, open Opener) ([]Check, error) {
	st, err := open(ctx)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	// The checks clear and write threads of fixed names: a second run on
	// the same store meanwhile would delete the first's threads under it.
	release, err := st.Lock(ctx, ThreadLock)
	if errors.Is(err, store.ErrLocked) {
		who := "another process"
		if lh, ok := st.(store.LockHolders); ok {
			if h, herr := lh.LockHolder(ctx, ThreadLock); herr == nil && h != "" {
				who = h
			}
		}
		return nil, fmt.Errorf("%w: another selftest (%s) is running on this store and uses the same threads; wait for it to end, or give this one a store of its own", ErrRunning, who)
	}
	if err != nil {
		return nil, fmt.Errorf("selftest: %w", err)
	}
	defer release()
	for _, t := range []string{ThreadCount, ThreadTokens, ThreadMain, ThreadWrong, ThreadV1} {
		if err := st.DeleteThread(ctx, t); err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, fmt.Errorf("clear selftest thread %q: %w", t, err)
		}
	}
	checks := make([]Check, 5)
	var interruptCP int64
	steps := []func() error{
		func() error { return check1(ctx, st, &checks[0]) },
		func() (err error) { interruptCP, err = check2(ctx, st, open, &checks[1]); return err },
		func() error { return check3(ctx, st, interruptCP, &checks[2]) },
		func() error { return check4(ctx, st, interruptCP, &checks[3]) },
		func() error { return check5(ctx, st, &checks[4]) },
	}
	names := []string{
		"summary: last 6 verbatim plus an indexed summary; attachments intact",
		"resume after rebuild: same state, one copy of the input, calls = pending subtasks",
		"interruption checkpoint holds 3 fully serialized pending tasks",
		"fork with a different sentence plans different subtasks",
		"v1 checkpoint: wrong without migration, right through the registry",
	}
	for i, step := range steps {
		checks[i] = Check{N: i + 1, Name: names[i], Figures: map[string]any{}}
		if err := step(); err != nil {
			if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
				return checks[:i+1], err
			}
			checks[i].Failures = append(checks[i].Failures, err.Error())
		}
		checks[i].Passed = len(checks[i].Failures) == 0
	}
	return checks, nil
}

func newEngine(st store.Store) (*engine.Engine, error) {
	return ticket.NewEngine(st, ticket.NewMock())
}

// History builds n messages of realistic history: rounds of a user question,
// an executor's tool call and result, and its finding. contentLen pads each
// message's content to about that many characters (0: natural length).
func History(n, contentLen int) []ticket.Message {
	var out []ticket.Message
	pad := func(s string) string {
		for len([]rune(s)) < contentLen {
			s += " Detail noted for the record: carrier scans, warehouse stages and refund windows."
		}
		return s
	}
	for i := 0; len(out) < n; i++ {
		round := []ticket.Message{
			{Role: ticket.RoleUser, Speaker: "user", Content: pad(fmt.Sprintf("Question %d: where is parcel %d of order SO2026090%d?", i+1, i+1, i%10))},
			{Role: ticket.RoleAssistant, Speaker: "executor[t-1-shipping]", Content: pad(fmt.Sprintf("calling shipping_events({\"order\":\"SO2026090%d\"})", i%10)), ToolCall: &ticket.ToolCall{ID: fmt.Sprintf("call-%d", i), Name: "shipping_events", Args: json.RawMessage(fmt.Sprintf(`{"order":"SO2026090%d"}`, i%10))}},
			{Role: ticket.RoleTool, Speaker: "tool[shipping_events]", Content: pad(fmt.Sprintf(`{"lastScan":"2026-09-0%d 14:20 Utrecht","eta":"2026-09-1%d"}`, i%9+1, i%9)), ToolCallID: fmt.Sprintf("call-%d", i)},
			{Role: ticket.RoleAssistant, Speaker: "critic", Content: pad(fmt.Sprintf("review %d: approved t-1-shipping", i+1))},
		}
		for _, m := range round {
			if len(out) < n {
				m.Index = len(out) + 1
				out = append(out, m)
			}
		}
	}
	return out
}

// Attachments are the references checks 1 carries through compaction.
func Attachments() []ticket.Attachment {
	return []ticket.Attachment{
		{ID: "att-1", Kind: "image", Ref: "blob://tickets/2026/att-1.png", Caption: "photo of the damage"},
		{ID: "att-2", Kind: "document", Ref: "blob://tickets/2026/att-2.pdf"},
	}
}

func check1(ctx context.Context, st store.Store, c *Check) error {
	k := checker{c}
	cases := []struct {
		key, thread string
		msgs        []ticket.Message
	}{
		{"byCount", ThreadCount, History(23, 0)},
		{"byTokens", ThreadTokens, History(17, 520)},
	}
	for _, tc := range cases {
		fig, err := compactOnce(ctx, st, tc.thread, tc.msgs, k)
		if err != nil {
			return err
		}
		c.Figures[tc.key] = fig
	}
	return nil
}

// compactOnce seeds a thread with history as if the critic had just
// approved everything, resumes it through the real graph, and inspects the
// checkpoint the summarizer wrote.
func compactOnce(ctx context.Context, st store.Store, thread string, msgs []ticket.Message, k checker) (map[string]any, error) {
	eng, err := newEngine(st)
	if err != nil {
		return nil, err
	}
	atts := Attachments()
	if _, err := eng.UpdateState(ctx, thread, 0, []engine.Write{
		engine.Put("messages", msgs), engine.Put("attachments", atts),
	}, ticket.NodeCritic); err != nil {
		return nil, err
	}
	res, err := eng.Resume(ctx, thread, engine.RunConfig{})
	if err != nil {
		return nil, err
	}
	var sumCP int64
	for _, s := range res.Steps {
		for _, t := range s.Ran {
			if t.Node == ticket.NodeSummarizer {
				sumCP = s.Checkpoint
			}
		}
	}
	if !k.expect(sumCP != 0, "%s: the summarizer did not run", thread) {
		return nil, nil
	}
	cp, err := eng.Get(ctx, thread, sumCP)
	if err != nil {
		return nil, err
	}
	s, err := ticket.Decode(cp.Values)
	if err != nil {
		return nil, err
	}
	cut := ticket.Cut(msgs)
	want := msgs[cut:]
	k.expect(len(s.Messages) >= ticket.KeepRecent, "%s: %d messages kept verbatim, want at least %d", thread, len(s.Messages), ticket.KeepRecent)
	k.expect(reflect.DeepEqual(s.Messages, want), "%s: the tail is not the last messages verbatim", thread)
	k.expect(s.Summary != nil, "%s: no summary field", thread)
	fig := map[string]any{
		"messagesIn":   len(msgs),
		"tokensIn":     ticket.EstimateTokens(msgs),
		"trigger":      ticket.NeedsSummary(msgs),
		"tail":         indexRange(s.Messages),
		"tailVerbatim": reflect.DeepEqual(s.Messages, want),
		"summaryCalls": res.Steps[0].ModelCalls["summarizer"],
	}
	if s.Summary != nil {
		fig["summaryCovers"] = fmt.Sprintf("#%d–#%d", s.Summary.From, s.Summary.To)
		fig["historyVersion"] = s.Summary.HistoryVersion
		missing := 0
		for _, m := range msgs[:cut] {
			if !strings.Contains(s.Summary.Text, fmt.Sprintf("#%d %s:", m.Index, m.Speaker)) {
				missing++
			}
		}
		fig["summaryLinesMissingIndexOrSpeaker"] = missing
		k.expect(missing == 0, "%s: %d compacted messages lost their index or speaker in the summary", thread, missing)
		k.expect(s.Summary.From == 1 && s.Summary.To == msgs[cut-1].Index, "%s: summary covers #%d–#%d, want #1–#%d", thread, s.Summary.From, s.Summary.To, msgs[cut-1].Index)
		k.expect(s.HistoryVersion == 1, "%s: history version %d after one compaction, want 1", thread, s.HistoryVersion)
	}
	intact := reflect.DeepEqual(s.Attachments, Attachments())
	fig["attachmentsIntact"] = intact
	k.expect(intact, "%s: attachments changed by compaction: %+v", thread, s.Attachments)
	// The same must hold at the end of the turn.
	last, err := eng.Latest(ctx, thread)
	if err != nil {
		return nil, err
	}
	ls, err := ticket.Decode(last.Values)
	if err != nil {
		return nil, err
	}
	k.expect(reflect.DeepEqual(ls.Attachments, Attachments()), "%s: attachments changed by the end of the turn", thread)
	return fig, nil
}

func indexRange(ms []ticket.Message) string {
	if len(ms) == 0 {
		return "none"
	}
	return fmt.Sprintf("#%d–#%d", ms[0].Index, ms[len(ms)-1].Index)
}

// nodeOfSpeaker maps a message's speaker to the node that writes it.
func nodeOfSpeaker(sp string) string {
	switch {
	case strings.HasPrefix(sp, "executor["), strings.HasPrefix(sp, "tool["):
		return ticket.NodeExecutor
	case sp == "user":
		return "input"
	}
	return sp
}

func countSentence(ms []ticket.Message, sentence string) int {
	n := 0
	for _, m := range ms {
		if m.Role == ticket.RoleUser && m.Content == sentence {
			n++
		}
	}
	return n
}

func snapshot(cp engine.Checkpoint) ([]byte, error) {
	return json.Marshal(map[string]any{"id": cp.ID, "parent": cp.ParentID, "step": cp.Step, "source": cp.Source, "values": cp.Values, "tasks": cp.Tasks, "metadata": cp.Metadata})
}

func check2(ctx context.Context, st store.Store, open Opener, c *Check) (int64, error) {
	k := checker{c}
	eng1, err := newEngine(st)
	if err != nil {
		return 0, err
	}
	cfg := engine.RunConfig{InterruptBefore: []string{ticket.NodeExecutor}}
	res1, err := eng1.Run(ctx, ThreadMain, ticket.Input(SentenceMain, AttachmentA), cfg)
	if err != nil {
		return 0, err
	}
	if !k.expect(res1.Status == "interrupted" && res1.Interrupt != nil && res1.Interrupt.Node == ticket.NodeExecutor, "the run did not stop before the executor (status %s)", res1.Status) {
		return 0, nil
	}
	at, err := eng1.Latest(ctx, ThreadMain)
	if err != nil {
		return 0, err
	}
	before, err := snapshot(at)
	if err != nil {
		return 0, err
	}
	// Rebuild the store handle and the graph object.
	st2, err := open(ctx)
	if err != nil {
		return 0, err
	}
	defer st2.Close()
	eng2, err := newEngine(st2)
	if err != nil {
		return 0, err
	}
	reread, err := eng2.Latest(ctx, ThreadMain)
	if err != nil {
		return 0, err
	}
	after, err := snapshot(reread)
	if err != nil {
		return 0, err
	}
	same := bytes.Equal(before, after)
	k.expect(same, "state read back after rebuilding differs from the moment of interruption")
	sAt, err := ticket.Decode(at.Values)
	if err != nil {
		return 0, err
	}
	pending := 0
	for _, t := range at.Tasks {
		if t.Node == ticket.NodeExecutor {
			pending++
		}
	}
	res2, err := eng2.Resume(ctx, ThreadMain, engine.RunConfig{})
	if err != nil {
		return 0, err
	}
	final, err := eng2.Latest(ctx, ThreadMain)
	if err != nil {
		return 0, err
	}
	sFinal, err := ticket.Decode(final.Values)
	if err != nil {
		return 0, err
	}
	first := res2.Steps[0]
	ranNodes, later := resumedSteps(res2.Steps)
	added, foreign := addedSince(sAt, sFinal, ranNodes)
	copies := countSentence(sFinal.Messages, SentenceMain)
	firstCalls := first.ModelCalls["executor"]
	totalFirst := 0
	for _, n := range first.ModelCalls {
		totalFirst += n
	}
	k.expect(pending == 3, "%d pending executor tasks at the interruption, want 3", pending)
	// Each pending subtask is worked once, as in an uninterrupted run: the
	// mock executor's tool round and its finding.
	want := pending * ticket.MockCallsPerSubtask
	k.expect(len(first.Ran) == pending && totalFirst == want && firstCalls == want, "the resumed superstep ran %d task(s) with %d model calls (%v), want exactly the %d pending subtasks with %d calls each", len(first.Ran), totalFirst, first.ModelCalls, pending, ticket.MockCallsPerSubtask)
	k.expect(res2.ModelCalls["planner"] == 0, "the planner ran again on resume (%d calls)", res2.ModelCalls["planner"])
	k.expect(copies == 1, "the user's sentence appears %d times after resume, want 1", copies)
	k.expect(len(foreign) == 0, "messages added after resume not written by a node of the resumed phase: %v", foreign)

	wrong, err := wrongWay(ctx, st)
	if err != nil {
		return 0, err
	}
	k.expect(wrong == 2, "the wrong way (input fed again) should show the sentence twice, saw %d", wrong)
	c.Figures["interruptedAt"] = at.ID
	c.Figures["stateEqualAfterRebuild"] = same
	c.Figures["pendingSubtasks"] = pending
	c.Figures["resumeStepModelCalls"] = first.ModelCalls
	c.Figures["plannerCallsOnResume"] = res2.ModelCalls["planner"]
	c.Figures["laterStepModelCalls"] = later
	c.Figures["messagesAtInterrupt"] = len(sAt.Messages)
	c.Figures["messagesAdded"] = added
	c.Figures["sentenceCopies"] = copies
	c.Figures["wrongWaySentenceCopies"] = wrong
	return at.ID, nil
}

// resumedSteps are the nodes a resume's supersteps ran, and the model
// calls of those after its first, by role.
func resumedSteps(steps []engine.StepReport) (ran map[string]bool, later map[string]int) {
	ran, later = map[string]bool{}, map[string]int{}
	for i, s := range steps {
		for _, t := range s.Ran {
			ran[t.Node] = true
		}
		if i > 0 {
			for role, n := range s.ModelCalls {
				later[role] += n
			}
		}
	}
	return ran, later
}

// addedSince counts the messages final holds past the newest of at, and
// names those no node that ran wrote.
func addedSince(at, final ticket.State, ran map[string]bool) (added int, foreign []string) {
	newest := 0
	for _, m := range at.Messages {
		newest = max(newest, m.Index)
	}
	for _, m := range final.Messages {
		if m.Index > newest {
			added++
			if !ran[nodeOfSpeaker(m.Speaker)] {
				foreign = append(foreign, fmt.Sprintf("#%d %s", m.Index, m.Speaker))
			}
		}
	}
	return added, foreign
}

// wrongWay shows the seed's trap: feeding the input again at the interrupt
// (only possible through the low-level UpdateState) duplicates it.
func wrongWay(ctx context.Context, st store.Store) (int, error) {
	eng, err := newEngine(st)
	if err != nil {
		return 0, err
	}
	if _, err := eng.Run(ctx, ThreadWrong, ticket.Input(SentenceMain, AttachmentA), engine.RunConfig{InterruptBefore: []string{ticket.NodeExecutor}}); err != nil {
		return 0, err
	}
	at, err := eng.Latest(ctx, ThreadWrong)
	if err != nil {
		return 0, err
	}
	if _, err := eng.UpdateState(ctx, ThreadWrong, at.ID, ticket.Input(SentenceMain)[:1], ""); err != nil {
		return 0, err
	}
	if _, err := eng.Resume(ctx, ThreadWrong, engine.RunConfig{}); err != nil {
		return 0, err
	}
	final, err := eng.Latest(ctx, ThreadWrong)
	if err != nil {
		return 0, err
	}
	s, err := ticket.Decode(final.Values)
	if err != nil {
		return 0, err
	}
	return countSentence(s.Messages, SentenceMain), nil
}

func check3(ctx context.Context, st store.Store, cpID int64, c *Check) error {
	k := checker{c}
	if !k.expect(cpID != 0, "no interruption checkpoint (check 2 failed)") {
		return nil
	}
	row, err := st.Get(ctx, ThreadMain, cpID)
	if err != nil {
		return err
	}
	// Read the raw stored document: "fully serialized" means plain JSON.
	var doc struct {
		Tasks []struct {
			ID   string `json:"id"`
			Node string `json:"node"`
			Args struct {
				Task map[string]any `json:"task"`
			} `json:"args"`
		} `json:"tasks"`
	}
	if err := json.Unmarshal(row.State, &doc); err != nil {
		return fmt.Errorf("interruption checkpoint does not decode: %w", err)
	}
	k.expect(len(doc.Tasks) == 3, "%d pending tasks stored, want 3", len(doc.Tasks))
	var listed []string
	for _, t := range doc.Tasks {
		k.expect(t.Node == ticket.NodeExecutor, "task %s is for node %q, want executor", t.ID, t.Node)
		for _, f := range []string{"id", "goal", "toolCalls", "status"} {
			k.expect(t.Args.Task[f] != nil, "task %s lacks argument task.%s", t.ID, f)
		}
		listed = append(listed, fmt.Sprintf("%s(%v: %v)", t.Node, t.Args.Task["id"], t.Args.Task["goal"]))
	}
	c.Figures["checkpoint"] = cpID
	c.Figures["pendingTasks"] = len(doc.Tasks)
	c.Figures["tasks"] = listed
	return nil
}

func subtaskTopics(ss []ticket.Subtask) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.Topic
	}
	return out
}

func check4(ctx context.Context, st store.Store, cpID int64, c *Check) error {
	k := checker{c}
	if !k.expect(cpID != 0, "no interruption checkpoint (check 2 failed)") {
		return nil
	}
	eng, err := newEngine(st)
	if err != nil {
		return err
	}
	base, err := eng.Get(ctx, ThreadMain, cpID)
	if err != nil {
		return err
	}
	mainState, err := ticket.Decode(base.Values)
	if err != nil {
		return err
	}
	res, err := eng.Fork(ctx, ThreadMain, cpID, ticket.Input(SentenceFork), engine.RunConfig{})
	if err != nil {
		return err
	}
	// The fork's plan is in the checkpoint its planner wrote.
	var planCP int64
	for _, s := range res.Steps {
		for _, t := range s.Ran {
			if t.Node == ticket.NodePlanner {
				planCP = s.Checkpoint
			}
		}
	}
	planned, err := eng.Get(ctx, ThreadMain, planCP)
	if err != nil {
		return err
	}
	forkState, err := ticket.Decode(planned.Values)
	if err != nil {
		return err
	}
	ancestors, err := eng.Ancestors(ctx, ThreadMain, res.Checkpoint)
	if err != nil {
		return err
	}
	forkRoot := ancestors[0].ID
	var branchedAt int64
	for i, a := range ancestors {
		if a.Source == engine.SourceFork && i > 0 {
			branchedAt = ancestors[i-1].ID
		}
	}
	mainItems, forkItems := subtaskTopics(mainState.Subtasks), subtaskTopics(forkState.Subtasks)
	differ := !reflect.DeepEqual(mainItems, forkItems)
	mainItem := mainItems[0]
	excludes := true
	for _, t := range forkItems {
		if t == mainItem {
			excludes = false
		}
	}
	still, err := eng.Get(ctx, ThreadMain, cpID)
	if err != nil {
		return err
	}
	k.expect(differ, "fork subtasks %v equal the main thread's", forkItems)
	k.expect(excludes, "fork subtasks %v include the main thread's item %q", forkItems, mainItem)
	k.expect(branchedAt == cpID, "the fork's parent is checkpoint %d, want %d", branchedAt, cpID)
	k.expect(len(still.Tasks) == 3, "the main branch's interruption checkpoint changed (%d pending tasks)", len(still.Tasks))
	sort.Strings(mainItems)
	c.Figures["forkedFrom"] = cpID
	c.Figures["rootOfChain"] = forkRoot
	c.Figures["mainSubtasks"] = subtaskTopics(mainState.Subtasks)
	c.Figures["forkSubtasks"] = forkItems
	c.Figures["mainItemExcluded"] = mainItem
	c.Figures["forkModelCalls"] = res.ModelCalls
	return nil
}

func check5(ctx context.Context, st store.Store, c *Check) error {
	k := checker{c}
	if err := st.PutCheckpoint(ctx, store.Checkpoint{ThreadID: ThreadV1, ID: 1, State: ticket.V1Checkpoint}, nil); err != nil {
		return fmt.Errorf("store the v1 fixture: %w", err)
	}
	row, err := st.Get(ctx, ThreadV1, 1)
	if err != nil {
		return err
	}
	// Without migration: the v1 document read straight into today's shape.
	var raw struct {
		Values ticket.State `json:"values"`
	}
	if err := json.Unmarshal(row.State, &raw); err != nil {
		return err
	}
	naiveRef := raw.Values.Attachments[0].Ref
	naiveBudget := "unlimited (missing field reads as no ceiling)"
	if raw.Values.BudgetRemaining != nil {
		naiveBudget = fmt.Sprint(*raw.Values.BudgetRemaining)
	}
	eng, err := newEngine(st)
	if err != nil {
		return err
	}
	cp, err := eng.Get(ctx, ThreadV1, 1)
	if err != nil {
		return err
	}
	s, err := ticket.Decode(cp.Values)
	if err != nil {
		return err
	}
	budget := -1
	if s.BudgetRemaining != nil {
		budget = *s.BudgetRemaining
	}
	k.expect(naiveRef == "" && raw.Values.BudgetRemaining == nil, "the unmigrated read should show the silent damage (ref %q, budget %s)", naiveRef, naiveBudget)
	k.expect(s.Attachments[0].Ref == "blob://tickets/2025/att-old.png", "migrated reference is %q", s.Attachments[0].Ref)
	k.expect(budget == 1, "migrated budget is %d, want 1", budget)
	k.expect(s.Subtasks[1].Status == ticket.StatusAwaitingApproval, "migrated status is %q", s.Subtasks[1].Status)
	c.Figures["without"] = map[string]any{"ref": naiveRef, "budget": naiveBudget, "status": raw.Values.Subtasks[1].Status, "toolCalls": raw.Values.Subtasks[0].ToolCalls}
	c.Figures["with"] = map[string]any{"ref": s.Attachments[0].Ref, "budget": budget, "status": s.Subtasks[1].Status, "toolCalls": s.Subtasks[0].ToolCalls}
	c.Figures["migratedFrom"] = cp.MigratedFrom
	return nil
}
