package worker_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"rewind/engine"
	"rewind/engine/ticket"
	"rewind/engine/worker"
	"rewind/store"
	"rewind/store/backend/backendtest"
)

// raceRounds is how many times each pair of answers races on a store:
// REWIND_ANSWER_RACES, else 80 on SQLite and 200 on PostgreSQL (about 4 s
// and 20 s here without -race). On d1679bd's answer, 40 rounds branched
// every pair on SQLite (80 is twice that) but only approve racing approve
// on PostgreSQL, whose two goroutines seldom interleave; 200 branched
// every pair on both.
func raceRounds(t *testing.T, storeName string) int {
	if s := os.Getenv("REWIND_ANSWER_RACES"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("REWIND_ANSWER_RACES=%q: want a count", s)
		}
		return n
	}
	if storeName == "sqlite" {
		return 80
	}
	return 200
}

// answerer is one side of a race: an answer given on its own engine (its
// own store handle, as another process has), as the CLI gives it.
type answerer struct {
	name string
	// do answers on thread; looked is the gate as the person saw it
	// (an edited draft is edited from it).
	do func(ctx context.Context, e *engine.Engine, thread string, looked ticket.Seen) error
}

func answerReq(op string, mod func(*worker.Request, ticket.Seen)) func(ctx context.Context, e *engine.Engine, thread string, looked ticket.Seen) error {
	return func(ctx context.Context, e *engine.Engine, thread string, looked ticket.Seen) error {
		req := worker.Request{Op: op, Thread: thread}
		if mod != nil {
			mod(&req, looked)
		}
		_, err := worker.Execute(ctx, e, req, func(worker.Message) {})
		return err
	}
}

var (
	approve = answerer{"approve", answerReq(worker.OpApprove, nil)}
	reject  = answerer{"reject", answerReq(worker.OpReject, func(r *worker.Request, _ ticket.Seen) { r.Reason = "the refund line is wrong" })}
	redraft = answerer{"reject --redraft", answerReq(worker.OpReject, func(r *worker.Request, _ ticket.Seen) {
		r.Reason, r.Redraft = "say the refund takes 5 days", true
	})}
	// As `approve --edit` (or --payload-file with --op): the text was
	// written from the draft the person looked at.
	approveEdited = answerer{"approve --payload", answerReq(worker.OpApprove, func(r *worker.Request, looked ticket.Seen) {
		r.Payload, r.Seen = "Your parcel arrives on Friday.", worker.Seen(looked)
	})}
	cancel = answerer{"cancel", func(ctx context.Context, e *engine.Engine, thread string, _ ticket.Seen) error {
		// As `rewind cancel` does: what it finds when it begins is what it
		// cancels.
		cp, err := e.Latest(ctx, thread)
		if err != nil {
			return err
		}
		_, err = e.CancelIf(ctx, thread, "the customer withdrew it", ticket.StillWaiting(ticket.Waiting(cp)))
		return err
	}}
)

// Issue 32, item 1: two answers to one draft, given at once from two
// store handles (two processes), never branch the thread: each takes the
// thread's lock and reads the head under it, and the one that comes
// second finds the head moved and is refused. A cancel that wins leaves
// no draft made. On d1679bd the answer read the head without the lock and
// wrote its decision on it, so racing answers forked the thread and
// approve racing cancel made the cancelled run's draft; every pair
// branched within 40 rounds on SQLite and 200 on PostgreSQL (raceRounds).
func TestRacingAnswersNeverBranch(t *testing.T) {
	t.Parallel()
	pairs := [][2]answerer{{approve, cancel}, {approve, approve}, {approve, reject}, {redraft, approveEdited}}
	backendtest.EachSharedAtOnce(t, func(t *testing.T, b backendtest.Backend) {
		rounds := raceRounds(t, b.Name)
		open := b.Reopener(t, "answers")
		var es [2]*engine.Engine
		for i := range es {
			e, err := ticket.NewEngine(open(), ticket.NewMock())
			if err != nil {
				t.Fatal(err)
			}
			es[i] = e
		}
		ctx := t.Context()
		for _, pair := range pairs {
			branches, cancelledDrafts, bothWon, won := 0, 0, 0, [2]int{}
			for round := range rounds {
				thread := fmt.Sprintf("%s-%s-%d", pair[0].name, pair[1].name, round)
				res, err := es[0].Run(ctx, thread, ticket.Turn{Text: sentence, Draft: true, Authorization: mustGrant(t)}.Writes(), engine.RunConfig{})
				if err != nil || res.Status != engine.RunAwaitingApproval {
					t.Fatalf("draft turn: %v %s", err, res.Status)
				}
				gate := res.Checkpoint
				looked, ok := ticket.Look(mustGet(t, es[0], thread, gate))
				if !ok {
					t.Fatalf("@%d waits on no draft", gate)
				}
				var errs [2]error
				var wg sync.WaitGroup
				start := make(chan struct{})
				for i := range pair {
					wg.Add(1)
					go func() {
						defer wg.Done()
						<-start
						errs[i] = pair[i].do(ctx, es[i], thread, looked)
					}()
				}
				close(start)
				wg.Wait()
				for i, err := range errs {
					switch {
					case err == nil:
						won[i]++
					case errors.Is(err, ticket.ErrAnswerStale), errors.Is(err, ticket.ErrNoApprovalPending), errors.Is(err, engine.ErrNothingToResume),
						errors.Is(err, store.ErrFenced), errors.Is(err, store.ErrLocked):
					default:
						t.Fatalf("%s racing %s: %s: unexpected error: %v", pair[0].name, pair[1].name, pair[i].name, err)
					}
				}
				if errs[0] == nil && errs[1] == nil {
					bothWon++
				}
				n, cancelled := branchesOf(t, es[0], thread)
				branches += n
				if cancelled != 0 && undone(t, es[0], thread, cancelled) > 0 {
					cancelledDrafts++
				}
			}
			t.Logf("%s racing %s, %d rounds: %d and %d won, %d both, %d branch(es), %d draft(s) after a winning cancel",
				pair[0].name, pair[1].name, rounds, won[0], won[1], bothWon, branches, cancelledDrafts)
			if branches != 0 || cancelledDrafts != 0 || bothWon != 0 {
				t.Errorf("%s racing %s: %d branch(es), %d draft(s) after a winning cancel, %d round(s) both answered: want 0, 0, 0",
					pair[0].name, pair[1].name, branches, cancelledDrafts, bothWon)
			}
		}
	})
}

// branchesOf counts the checkpoints of thread continued twice (two
// children that are not forks), and names the checkpoint where a cancel
// ended its run (0: none).
func branchesOf(t *testing.T, e *engine.Engine, thread string) (int, int64) {
	t.Helper()
	cps, err := e.History(context.Background(), thread, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	children := map[int64]int{}
	cancelled := int64(0)
	for _, cp := range cps {
		if cp.Source != engine.SourceFork {
			children[cp.ParentID]++
		}
		if cp.Metadata.Status == engine.RunCancelled {
			cancelled = cp.ID
		}
	}
	n := 0
	for _, c := range children {
		if c > 1 {
			n++
		}
	}
	return n, cancelled
}

// undone counts the drafts of thread whose operation the checkpoint
// that cancelled the run does not record done: made after the cancel, or
// by the run it cancelled behind its back. (A draft an approval that
// came first made is recorded done, by create_draft or by the cancel.)
func undone(t *testing.T, e *engine.Engine, thread string, cancelled int64) int {
	t.Helper()
	ds, err := e.Store().(store.Drafts).ListDrafts(context.Background(), thread)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ticket.Decode(mustGet(t, e, thread, cancelled).Values, "operations")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range ds {
		if s.Operations[d.OperationID].Status != ticket.OpDone {
			n++
		}
	}
	return n
}

func mustGrant(t *testing.T) *ticket.Authorization {
	t.Helper()
	a, err := ticket.NewGrant("grant:race", time.Hour, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func mustGet(t *testing.T, e *engine.Engine, thread string, id int64) engine.Checkpoint {
	t.Helper()
	cp, err := e.Get(context.Background(), thread, id)
	if err != nil {
		t.Fatal(err)
	}
	return cp
}
