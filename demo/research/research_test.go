package research_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"rewind/demo/research"
	"rewind/engine"
	"rewind/engine/model"
	"rewind/store/sqlite"
)

func newEngine(t *testing.T, m model.Model) *engine.Engine {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "research.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	e, err := research.NewEngine(st, m)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func stateAt(t *testing.T, e *engine.Engine, thread string, id int64) research.State {
	t.Helper()
	cp, err := e.Get(context.Background(), thread, id)
	if err != nil {
		t.Fatal(err)
	}
	s, err := research.Decode(cp.Values)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func run(t *testing.T, e *engine.Engine, thread, question string) engine.Result {
	t.Helper()
	in, err := research.Input(question)
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Run(context.Background(), thread, in, engine.RunConfig{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// The graph answers a question on a real SQLite file: the planner's three
// sub-questions fan out to three search tasks whose notes the keyed
// reducer merges into one channel, the writer's tool loop cites each note
// and ends, and the run stops before publish with nothing published. A
// revise answer sends the draft back to the writer, which looks the note
// up and asks again; approve publishes.
func TestResearchAnswersRevisesAndPublishes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := research.NewMock()
	e := newEngine(t, m)
	res := run(t, e, "r", research.Question)
	if res.Status != engine.RunAwaitingApproval || engine.DescribeTasks(res.Pending) != research.NodePublish {
		t.Fatalf("first pass: %s pending %q, want awaiting-approval before publish", res.Status, engine.DescribeTasks(res.Pending))
	}
	s := stateAt(t, e, "r", res.Checkpoint)
	if len(s.Subquestions) != 3 || len(s.Notes) != 3 {
		t.Fatalf("%d sub-questions, %d notes; want 3 of each (wal, fsync, locking)", len(s.Subquestions), len(s.Notes))
	}
	for i, n := range s.Notes {
		if n.ID != s.Subquestions[i].ID || !strings.Contains(n.Text, "[") || len(n.Sources) == 0 {
			t.Errorf("note %d: %+v, want sub-question %s's note with its sources", i, n, s.Subquestions[i].ID)
		}
	}
	// The fan-out ran in one superstep: three search tasks of one checkpoint.
	if n := mostPending(t, e, research.NodeSearch); n != 3 {
		t.Errorf("at most %d search tasks pending at once, want 3 in parallel", n)
	}
	// The tool loop: one round of three cite calls, their results, the answer.
	calls, results := toolMessages(s)
	if calls != 3 || results != 3 || m.Calls()[research.RoleWrite] != 2 {
		t.Errorf("%d tool calls, %d results, %d writer calls; want 3, 3 and 2", calls, results, m.Calls()[research.RoleWrite])
	}
	if s.Published != "" || !strings.Contains(s.Draft, "[q1]") || !strings.Contains(s.Draft, "[q3]") {
		t.Errorf("published %q, draft %q; want nothing published and a draft citing q1…q3", s.Published, s.Draft)
	}

	// revise: back to the writer, which looks the note up, and the gate again.
	res, err := e.Answer(ctx, "r", research.Answer(research.Review{Decision: research.Revise, Note: research.ReviseNote}), engine.RunConfig{})
	if err != nil {
		t.Fatal(err)
	}
	s = stateAt(t, e, "r", res.Checkpoint)
	if res.Status != engine.RunAwaitingApproval || s.Revisions != 1 || s.Review != (research.Review{}) || !strings.Contains(s.Draft, "(revised: "+research.ReviseNote+")") || !strings.Contains(s.Draft, "[lock-1]") {
		t.Fatalf("after revise: %s, revisions %d, review %+v, draft %q", res.Status, s.Revisions, s.Review, s.Draft)
	}
	// A malformed answer is refused with nothing written.
	if _, err := e.Answer(ctx, "r", research.Answer(research.Review{Decision: research.Revise}), engine.RunConfig{}); err == nil || !strings.Contains(err.Error(), "revise needs a note") {
		t.Fatalf("revise without a note: %v", err)
	}
	res, err = e.Answer(ctx, "r", research.Answer(research.Review{Decision: research.Approve}), engine.RunConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if s2 := stateAt(t, e, "r", res.Checkpoint); res.Status != engine.RunDone || s2.Published != s.Draft {
		t.Fatalf("after approve: %s, published %q, want done with the draft", res.Status, s2.Published)
	}
	if _, err := e.Answer(ctx, "r", research.Answer(research.Review{Decision: research.Approve}), engine.RunConfig{}); err == nil {
		t.Fatal("an answer on a finished run was taken")
	}
}

// The TUI's way to answer: edit review on the waiting checkpoint (the
// graph's check refuses a value publish could not read), then resume.
// Fork and replay make new branches and leave the first alone.
func TestResearchEditForkReplay(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEngine(t, research.NewMock())
	res := run(t, e, "r", research.Question)
	wait := res.Checkpoint
	if _, err := e.EditState(ctx, "r", wait, research.ChanReview, json.RawMessage(`{"decision":"maybe"}`), engine.UpdateOptions{}); !errors.Is(err, engine.ErrBadEdit) || !strings.Contains(err.Error(), `give "approve" or "revise"`) {
		t.Fatalf("edit review to maybe: %v, want refused naming the answers", err)
	}
	ed, err := e.EditState(ctx, "r", wait, research.ChanReview, json.RawMessage(`{"decision":"approve","note":""}`), engine.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	res, err = e.ResumeAt(ctx, "r", ed.ID, engine.RunConfig{})
	if err != nil {
		t.Fatal(err)
	}
	first := stateAt(t, e, "r", res.Checkpoint)
	if res.Status != engine.RunDone || first.Published == "" {
		t.Fatalf("edit + resume: %s, published %q", res.Status, first.Published)
	}

	// Fork the turn's input with another question: its own plan.
	in, err := research.Input("Why does the log keep growing?")
	if err != nil {
		t.Fatal(err)
	}
	fork, err := e.Fork(ctx, "r", 1, in, engine.RunConfig{})
	if err != nil {
		t.Fatal(err)
	}
	fs := stateAt(t, e, "r", fork.Checkpoint)
	if fork.Status != engine.RunAwaitingApproval || fs.Question != "Why does the log keep growing?" || len(fs.Notes) != 2 {
		t.Fatalf("fork: %s, question %q, %d notes; want awaiting review with two notes", fork.Status, fs.Question, len(fs.Notes))
	}
	if again := stateAt(t, e, "r", res.Checkpoint); again.Published != first.Published {
		t.Fatal("the fork changed the first branch")
	}
	// Replay the checkpoint where write was due: the writer runs again.
	var writeDue int64
	for _, cp := range mustHistory(t, e) {
		if engine.DescribeTasks(cp.Tasks) == research.NodeWrite && cp.ID < wait {
			writeDue = cp.ID
		}
	}
	rep, err := e.Replay(ctx, "r", writeDue, engine.RunConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if rs := stateAt(t, e, "r", rep.Checkpoint); rep.Status != engine.RunAwaitingApproval || rs.Draft != stateAt(t, e, "r", wait).Draft {
		t.Fatalf("replay of @%d: %s, draft %q", writeDue, rep.Status, rs.Draft)
	}
}

func mustHistory(t *testing.T, e *engine.Engine) []engine.Checkpoint {
	t.Helper()
	h, err := e.History(context.Background(), "r", 0, 200)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// mostPending is the most tasks of node one checkpoint of thread "r" held.
func mostPending(t *testing.T, e *engine.Engine, node string) int {
	most := 0
	for _, cp := range mustHistory(t, e) {
		n := 0
		for _, task := range cp.Tasks {
			if task.Node == node {
				n++
			}
		}
		most = max(most, n)
	}
	return most
}

// toolMessages counts the tool calls and the tool results of s's messages.
func toolMessages(s research.State) (calls, results int) {
	for _, msg := range s.Messages {
		calls += len(msg.ToolCalls)
		if msg.Role == model.ChatTool {
			results++
		}
	}
	return calls, results
}

// The graph's input is a question alone: an empty one makes no turn, and
// options of another graph's (the ticket's draft) are refused, not
// dropped in silence.
func TestResearchInputIsAQuestionAlone(t *testing.T) {
	in := research.Graph().TurnInput()
	now := time.Now()
	if ws, err := in(engine.Input{Text: "  "}, now); err != nil || len(ws) != 0 {
		t.Fatalf("an empty question: %d writes, %v", len(ws), err)
	}
	if _, err := in(engine.Input{Text: "why?", Extra: struct{ Draft bool }{true}}, now); err == nil || !strings.Contains(err.Error(), "takes a question alone") {
		t.Fatalf("a question with options: %v", err)
	}
	ws, err := in(engine.Input{Text: "why?"}, now)
	if err != nil || len(ws) == 0 {
		t.Fatalf("a question: %d writes, %v", len(ws), err)
	}
}

// A planner's answer that is not a plan is quoted, cut short, in the
// run's error: cut between characters, never inside one (half an "é"
// quotes as \xc3, which no one wrote).
func TestAPlanErrorCutsBetweenCharacters(t *testing.T) {
	t.Parallel()
	answer := "a" + strings.Repeat("é", 150) // byte 200 falls inside an é
	e := newEngine(t, model.NewMock(func(model.Request) (model.Response, error) {
		return model.Response{Text: answer}, nil
	}))
	in, err := research.Input("How does WAL mode commit?")
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.Run(context.Background(), "cut", in, engine.RunConfig{})
	if err == nil {
		t.Fatal("a planner's answer with no sub-questions was taken")
	}
	msg := err.Error()
	if strings.Contains(msg, `\x`) || !strings.Contains(msg, "éé…") {
		t.Errorf("the answer quoted in the error is cut inside a character (or not cut): %s", msg)
	}
}
