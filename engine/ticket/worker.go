package ticket

import (
	"context"
	"time"

	"rewind/engine"
	"rewind/engine/worker"
)

// The ticket registers its own kill points' nodes and its approval
// answers with the worker, which names no graph: a program that links
// the worker without the ticket (a graph author's TUI) builds none of it.
func init() {
	worker.Register(worker.Named{Graph: func() *engine.Graph { return NewGraph() }, Fanout: NodeExecutor, Summarizer: NodeSummarizer, Draft: NodeDraft, Verify: NodeVerify, Answer: answerRequest})
}

// answerRequest performs a worker's approve or reject request: the
// decision, with a grant from now when AuthTTL is set, then AnswerWith.
func answerRequest(ctx context.Context, e *engine.Engine, req worker.Request, cfg engine.RunConfig) (engine.Result, error) {
	// The decision is written under --take-over too: it is the first
	// write of the invocation, so it is the one that must fence.
	d := Decision{Approved: req.Op == worker.OpApprove, Reason: req.Reason, By: req.By, Redraft: req.Redraft && req.Op == worker.OpReject}
	if req.Op == worker.OpApprove {
		d.Payload = req.Payload
	}
	if req.AuthTTL != 0 {
		// From now, as a turn's (NewTurn): create_draft checks a grant
		// against the time, not the engine's clock.
		g, err := NewGrant(GrantRef, req.AuthTTL, time.Now())
		if err != nil {
			return engine.Result{}, err
		}
		d.Grant = *g
	}
	return AnswerWith(ctx, e, req.Thread, d, Seen(req.Seen), cfg)
}

// AnswerWith records decision d (its At is set here) for the draft the
// thread waits on and carries the run on, under one hold of the thread's
// lock (engine.Engine.Answer): a rejection with Redraft sends the reply
// node back to write the reply again with the reason. It is refused,
// with nothing written, when the thread moved on or its draft changed
// since seen (zero: since AnswerWith began).
func AnswerWith(ctx context.Context, e *engine.Engine, thread string, d Decision, seen Seen, cfg engine.RunConfig) (engine.Result, error) {
	if seen.Head == 0 {
		// Nothing seen, or only the operation pinned: the head and the
		// draft are those found now (a pinned operation must be the one).
		if cp, err := e.Latest(ctx, thread); err == nil {
			if now, _ := Look(cp); seen.Operation == "" || seen.Operation == now.Operation {
				seen = now
			}
		}
	}
	d.At = e.Now().UTC().Format(time.RFC3339)
	return e.Answer(ctx, thread, func(head engine.Checkpoint) ([]engine.Write, error) {
		return Answer(head, d, seen)
	}, cfg)
}
