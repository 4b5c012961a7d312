package demo

// The spec's two failure modes of compaction, each shown the wrong way on
// a sandbox thread of its own beside rewind's way: a cut between a tool
// call and its result (the vendor's 400), and a summary flattened into a
// narrative (the critic has no requirement left to check against).

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"rewind/engine"
	"rewind/engine/model"
	"rewind/engine/model/openai"
	"rewind/engine/model/openai/openaitest"
	"rewind/engine/ticket"
	"rewind/store"
)

// The failure-mode lessons' threads: rewind's way, and the wrong way on a
// sandbox thread of its own.
const (
	ThreadDanglingCut      = "lesson:dangling-cut"
	ThreadDanglingCutWrong = "lesson:dangling-cut-wrong-way"
	ThreadNarrative        = "lesson:narrative-summary"
	ThreadNarrativeWrong   = "lesson:narrative-summary-wrong-way"
)

// danglingTurns are the dangling-cut lesson's turns: the second one's
// summarizer compacts the first.
var danglingTurns = summaryTurns[:2]

// standIn is the OpenAI stand-in (openaitest, on loopback: nothing leaves
// the machine) and a provider talking to it, as a real server would be
// talked to: one attempt a call, so its 400 is the answer.
func standIn() (*openaitest.Server, model.Model, error) {
	srv := openaitest.NewServer(openaitest.TicketBrain)
	cfg := openai.Config{BaseURL: srv.BaseURL(), Models: map[string]string{}, MaxAttempts: 1, HTTPClient: srv.Client()}
	for _, r := range openai.Roles {
		cfg.Models[r] = "stand-in"
	}
	p, err := openai.New(cfg)
	if err != nil {
		srv.Close()
		return nil, nil, err
	}
	return srv, mockSummarizer{Model: p, mock: ticket.NewMock()}, nil
}

// mockSummarizer is the stand-in with the mock as its summarizer: the
// lesson's printed `rewind resume` runs on the mock, and a resume holds a
// thread's summaries to its own summarizer model (the compaction check).
type mockSummarizer struct {
	model.Model
	mock model.Model
}

func (m mockSummarizer) pick(role string) model.Model {
	if role == model.RoleSummarizer {
		return m.mock
	}
	return m.Model
}

func (m mockSummarizer) Complete(ctx context.Context, req model.Request) (model.Response, error) {
	return m.pick(req.Role).Complete(ctx, req)
}

// ModelName names each role's model as the one it goes to does.
func (m mockSummarizer) ModelName(role string) string {
	if role == model.RoleSummarizer {
		return "mock"
	}
	return "stand-in"
}

// ContextWindow is the window of the role's model.
func (m mockSummarizer) ContextWindow(role string) int { return model.WindowOf(m.pick(role), role) }

func runDanglingCut(ctx context.Context, env Env) (Verdict, error) {
	srv, p, err := standIn()
	if err != nil {
		return Verdict{}, err
	}
	defer srv.Close()
	fig := map[string]any{}
	var fails []string
	err = withEngine(ctx, env, p, func(e *engine.Engine, st store.Store) error {
		if err := fresh(ctx, st, ThreadDanglingCut, ThreadDanglingCutWrong); err != nil {
			return err
		}
		// Both threads: the same turns, stopped right after the second
		// turn's compaction, before the reply's call.
		for _, th := range []string{ThreadDanglingCut, ThreadDanglingCutWrong} {
			for i, turn := range danglingTurns {
				cfg := engine.RunConfig{}
				if i == len(danglingTurns)-1 {
					cfg.InterruptAfter = []string{ticket.NodeSummarizer}
				}
				if _, err := e.Run(ctx, th, ticket.Input(turn), cfg); err != nil {
					return fmt.Errorf("%s, turn %d: %w", th, i+1, err)
				}
			}
		}
		at, err := e.Latest(ctx, ThreadDanglingCutWrong)
		if err != nil {
			return err
		}
		s, err := ticket.Decode(at.Values)
		if err != nil {
			return err
		}
		if s.Summary == nil || len(s.Messages) == 0 {
			fails = append(fails, "the second turn did not compact the first")
			return nil
		}
		// rewind's cut: the tail as the summarizer kept it.
		tail := s.Messages
		fig["summary"] = fmt.Sprintf("#%d–#%d", s.Summary.From, s.Summary.To)
		fig["tail"] = fmt.Sprintf("#%d–#%d", tail[0].Index, tail[len(tail)-1].Index)
		if tail[0].Role == ticket.RoleTool {
			fails = append(fails, fmt.Sprintf("rewind's cut left tool result #%d without its call", tail[0].Index))
		}
		// The wrong way, on purpose: the same compaction with the cut
		// moved to the first tool result of the tail, so its call goes
		// into the summary and the result stays verbatim.
		w := 0
		for i, m := range tail {
			if i > 0 && m.Role == ticket.RoleTool {
				w = i
				break
			}
		}
		if w == 0 {
			fails = append(fails, "the tail holds no tool call and result to cut between")
			return nil
		}
		call, result := tail[w-1], tail[w]
		fig["call"], fig["result"] = call.Index, result.Index
		moved := tail[:w]
		ans, err := ticket.Respond(model.Simple(model.RoleSummarizer, "", ticket.Transcript(moved)))
		if err != nil {
			return err
		}
		sum, _, err := ticket.Compact(s.Summary, moved, ans.Text)
		if err != nil {
			return fmt.Errorf("the wrong way's summary: %w", err)
		}
		sum.HistoryVersion, sum.Trigger = s.Summary.HistoryVersion, s.Summary.Trigger // the same compaction
		wrongWrites := []engine.Write{engine.Replace("messages", tail[w:]), engine.Put("summary", sum)}
		if _, err := e.UpdateState(ctx, ThreadDanglingCutWrong, at.ID, wrongWrites, ""); err != nil {
			return fmt.Errorf("the wrong way's cut: %w", err)
		}
		// Both go on to the reply, whose request carries the tail.
		right, err := e.Resume(ctx, ThreadDanglingCut, engine.RunConfig{})
		if err != nil {
			fails = append(fails, "rewind's cut: the reply's request was refused: "+err.Error())
		} else if right.Status != engine.RunDone {
			fails = append(fails, "rewind's cut: the turn ended "+right.Status)
		}
		_, werr := e.Resume(ctx, ThreadDanglingCutWrong, engine.RunConfig{})
		switch {
		case werr == nil:
			fails = append(fails, "the wrong way's request was answered: the stand-in did not hold it to the vendor's rules")
		case !errors.Is(werr, model.ErrRequestInvalid) || !strings.Contains(werr.Error(), "400"):
			fails = append(fails, "the wrong way failed otherwise than with a 400: "+werr.Error())
		default:
			fig["wrongWayError"] = refusal(werr.Error())
		}
		return nil
	})
	if err != nil {
		return Verdict{}, err
	}
	good := fmt.Sprintf("rewind's cut keeps %v verbatim (tool call #%v with its result #%v): the stand-in answered the reply's request; the wrong way, the same compaction cut between #%v and #%v (%s): the stand-in answered %s",
		fig["tail"], fig["call"], fig["result"], fig["call"], fig["result"], ThreadDanglingCutWrong, fig["wrongWayError"])
	return verdict(fig, good, fails), nil
}

// refusal is the server's answer a provider's error quotes: from "(400 "
// to the "): " that ends it (the rest of the error when there is none).
func refusal(err string) string {
	i := strings.Index(err, "(400 ")
	if i < 0 {
		return err
	}
	quoted := err[i+1:]
	if j := strings.Index(quoted, "): "); j >= 0 {
		quoted = quoted[:j]
	}
	return quoted
}

// narrativeRequest is the customer's requirement the narrative-summary
// lesson's critic must find: two questions, a refund and the invoice.
const narrativeRequest = "Can I get a refund for SO20260901? Please also send me the invoice."

// Flattened is the spec's narrative summary: it reads smoothly and keeps
// no "#index speaker:", so the requirement cannot be told from the output.
const Flattened = "the user asked about orders and refunds, and the assistant proposed a plan"

// carelessExecutor is a model that, on a refund subtask's first try, calls
// the shipping tool: its finding answers where the parcel is, another
// question than the one asked. Given the critic's feedback it calls the
// right one.
type carelessExecutor struct{ model.Model }

// Unwrap is the mock it changes the executor's answers of: the model
// that summarizes, so the lesson's threads take new turns on the mock.
func (c carelessExecutor) Unwrap() model.Model { return c.Model }

func (c carelessExecutor) Complete(ctx context.Context, req model.Request) (model.Response, error) {
	resp, err := c.Model.Complete(ctx, req)
	task := ticket.Instructions(req)
	if err != nil || req.Role != model.RoleExecutor || !strings.Contains(task, "TOPIC: refund") || strings.Contains(task, "FEEDBACK: ") {
		return resp, err
	}
	for i, call := range resp.ToolCalls {
		if call.Name == "refund_policy" {
			resp.ToolCalls[i].Name = "shipping_events"
		}
	}
	return resp, err
}

func runNarrative(ctx context.Context, env Env) (Verdict, error) {
	fig := map[string]any{}
	var fails []string
	err := withEngine(ctx, env, carelessExecutor{ticket.NewMock()}, func(e *engine.Engine, st store.Store) error {
		if err := fresh(ctx, st, ThreadNarrative, ThreadNarrativeWrong); err != nil {
			return err
		}
		for _, th := range []string{ThreadNarrative, ThreadNarrativeWrong} {
			// The turn, stopped before the critic reviews the findings.
			if _, err := e.Run(ctx, th, ticket.Input(narrativeRequest), engine.RunConfig{InterruptBefore: []string{ticket.NodeCritic}}); err != nil {
				return fmt.Errorf("%s: %w", th, err)
			}
			at, err := e.Latest(ctx, th)
			if err != nil {
				return err
			}
			s, err := ticket.Decode(at.Values)
			if err != nil {
				return err
			}
			// The customer's message goes into the summary, and the
			// critic's task does not repeat it (no recorded request): the
			// summary is the only place the critic can find the
			// requirement. The tail keeps the executors' work verbatim.
			cut := 1
			if len(s.Messages) <= cut || s.Messages[0].Role != ticket.RoleUser || s.Messages[cut].Role == ticket.RoleTool {
				return fmt.Errorf("%s: the turn's messages are not the request then the executors' work", th)
			}
			head := s.Messages[:cut]
			sum := ticket.Summary{Text: Flattened, From: head[0].Index, To: head[len(head)-1].Index, Count: len(head), Speakers: []string{"user"}}
			if th == ThreadNarrative {
				ans, err := ticket.Respond(model.Simple(model.RoleSummarizer, "", ticket.Transcript(head)))
				if err != nil {
					return err
				}
				if sum, _, err = ticket.Compact(nil, head, ans.Text); err != nil {
					return fmt.Errorf("the indexed summary: %w", err)
				}
			}
			// No compaction is recorded (history v0), so a resume's check
			// of the thread's compactions has nothing to refuse.
			sum.HistoryVersion, sum.Trigger = 0, "the lesson: the requirement only in the summary"
			ws := []engine.Write{engine.Replace("messages", s.Messages[cut:]), engine.Put("summary", sum), engine.Put("request", nil)}
			if _, err := e.UpdateState(ctx, th, at.ID, ws, ""); err != nil {
				return fmt.Errorf("%s: %w", th, err)
			}
			res, err := e.Resume(ctx, th, engine.RunConfig{})
			if err != nil {
				return fmt.Errorf("%s: %w", th, err)
			}
			if res.Status != engine.RunDone {
				fails = append(fails, fmt.Sprintf("%s ended %s", th, res.Status))
			}
			review, refund, err := firstReview(ctx, e, th)
			if err != nil {
				return err
			}
			key := "indexed"
			if th == ThreadNarrativeWrong {
				key = "flattened"
			}
			fig[key+"Review"], fig[key+"Refund"] = review, refund
		}
		return nil
	})
	if err != nil {
		return Verdict{}, err
	}
	indexed, _ := fig["indexedReview"].(string)
	flattened, _ := fig["flattenedReview"].(string)
	if !strings.Contains(indexed, "sent back t-1-refund (it answers another question (shipping)") {
		fails = append(fails, fmt.Sprintf("with the indexed summary the critic did not catch the off-question output: %q", indexed))
	}
	if r, _ := fig["indexedRefund"].(string); !strings.Contains(r, "eligible") {
		fails = append(fails, fmt.Sprintf("with the indexed summary the approved refund finding does not answer the refund: %q", r))
	}
	if !strings.Contains(flattened, "approved t-1-refund") {
		fails = append(fails, fmt.Sprintf("with the flattened summary the critic did not approve the off-question output: %q", flattened))
	}
	if r, _ := fig["flattenedRefund"].(string); !strings.Contains(r, "carrier") {
		fails = append(fails, fmt.Sprintf("the wrong way's refund finding is not the shipping answer: %q", r))
	}
	good := fmt.Sprintf("indexed summary (#1 user: …): %s, then approved its redo; flattened summary (%s, the wrong way): %s, a refund finding that says where the parcel is",
		strings.TrimPrefix(indexed, "review 1: "), ThreadNarrativeWrong, strings.TrimPrefix(flattened, "review 1: "))
	return verdict(fig, good, fails), nil
}

// firstReview is the critic's first remark on thread and the refund
// subtask's final finding, as stored.
func firstReview(ctx context.Context, e *engine.Engine, thread string) (review, refund string, err error) {
	head, err := e.Latest(ctx, thread)
	if err != nil {
		return "", "", err
	}
	s, err := ticket.Decode(head.Values)
	if err != nil {
		return "", "", err
	}
	for _, m := range s.Messages {
		if m.Speaker == "critic" && strings.HasPrefix(m.Content, "review 1:") {
			review = m.Content
		}
	}
	for _, st := range s.Subtasks {
		if st.Topic == "refund" {
			refund = st.Result
		}
	}
	return review, refund, nil
}
