package engine

import (
	"context"
	"errors"
	"fmt"

	"rewind/engine/chainformat"
	"rewind/engine/internal/costs"
	"rewind/store"
)

// A thread's token accounting is engine/internal/costs's; its types keep their
// names here.
type (
	// TurnUsage is what one turn cost.
	TurnUsage = costs.TurnUsage
	// BranchUsage is what one branch cost, from the root to its head.
	BranchUsage = costs.BranchUsage
	// Costs is a thread's model tokens by role, by turn and on a branch.
	Costs = costs.Costs
)

// CostTurns is how many of the newest turns Costs lists one by one.
const CostTurns = costs.Turns

// Costs sums the thread's stored model calls by role and by turn, with
// its latest checkpoint's branch.
func (e *Engine) Costs(ctx context.Context, thread string) (Costs, error) {
	return e.CostsAt(ctx, thread, 0)
}

// CostsAt is Costs with checkpoint head's branch (0: the latest): it
// reads listings and the thread's unsettled writes (costs.At).
func (e *Engine) CostsAt(ctx context.Context, thread string, head int64) (Costs, error) {
	return costs.At(ctx, costSource{e}, thread, head)
}

// costSource is the engine as costs reads it.
type costSource struct{ e *Engine }

func (s costSource) History(ctx context.Context, thread string, before int64, limit int) ([]Checkpoint, error) {
	return s.e.History(ctx, thread, before, limit)
}

func (s costSource) StoredCalls(ctx context.Context, thread string, id int64) ([]chainformat.Call, error) {
	return s.e.storedCalls(ctx, thread, id)
}

func (s costSource) PendingWrites(ctx context.Context, thread string) ([]store.TaskWrites, error) {
	rows, err := s.e.store.Writes(ctx, thread, 0)
	if err != nil {
		return nil, fmt.Errorf("read pending writes of thread %q: %w", threadName(thread), err)
	}
	return rows, nil
}

// WriteCalls are the model.called events of the decoded writes, in order.
func (costSource) WriteCalls(thread string, id int64, rows []store.TaskWrites) ([]chainformat.Call, error) {
	writes, err := decodeWrites(thread, id, rows)
	if err != nil {
		return nil, err
	}
	var out []chainformat.Call
	for _, tw := range writes {
		for _, ev := range tw.Events {
			if ev.Type == EventModelCalled {
				out = append(out, chainformat.CallOf(ev))
			}
		}
	}
	return out, nil
}

func (costSource) NotFound(thread string, id int64) error {
	if id == 0 {
		return threadNotFound(thread)
	}
	return checkpointNotFound(thread, id)
}

// storedCalls are the model calls stored with checkpoint id's writes.
func (e *Engine) storedCalls(ctx context.Context, thread string, id int64) ([]chainformat.Call, error) {
	row, err := e.store.Get(ctx, thread, id)
	if errors.Is(err, store.ErrNotFound) || err == nil && len(row.Meta) == 0 {
		return nil, nil // no such checkpoint, or stored before calls moved
	}
	if err != nil {
		return nil, fmt.Errorf("read checkpoint %d of thread %q: %w", id, threadName(thread), err)
	}
	calls, err := chainformat.Calls(row.State)
	if err != nil {
		return nil, fmt.Errorf("checkpoint %d of thread %q: %w (%v)", id, threadName(thread), ErrCorrupt, err)
	}
	return calls, nil
}

// ErrTokenBudget is matched by errors.Is for a *BudgetError.
var ErrTokenBudget = errors.New("the turn's token budget is used up")

// BudgetError stops a run whose turn has used its token budget
// (RunConfig.MaxTokensPerTurn). It is raised between supersteps, so every
// finished superstep is stored and a resume carries on from the checkpoint.
type BudgetError struct {
	Thread     string
	Checkpoint int64
	// Used is the turn's tokens (prompt and completion) so far; Budget
	// the limit.
	Used, Budget int
	Pending      []Task
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("thread %q: the turn used %d tokens, at or over its token budget of %d: stopped at checkpoint %d before %s, all of it stored",
		threadName(e.Thread), e.Used, e.Budget, e.Checkpoint, describeTasks(e.Pending))
}

// Fixes: resume the thread, with a larger budget or none.
func (e *BudgetError) Fixes() []Fix {
	return []Fix{ResumeFix(e.Thread), {Action: FixBudget, Thread: e.Thread}}
}

// Is makes errors.Is(err, ErrTokenBudget) work.
func (e *BudgetError) Is(target error) bool { return target == ErrTokenBudget }

// SetMaxTokensPerTurn is the token budget of every turn this engine runs
// whose RunConfig names none (0: no budget). The app sets it from its flag,
// so a TUI's runs obey it too.
func (e *Engine) SetMaxTokensPerTurn(n int) { e.maxTurnTokens = n }

// tokenBudget is the run's budget: its own, else the engine's.
func (r *runner) tokenBudget() int {
	if r.cfg.MaxTokensPerTurn > 0 {
		return r.cfg.MaxTokensPerTurn
	}
	return r.e.maxTurnTokens
}

// turnUsed is what the turn cp belongs to has used up to cp: the tokens of
// the checkpoints after its input or fork checkpoint. A resumed turn
// counts what it used before.
func (r *runner) turnUsed(ctx context.Context, cp Checkpoint) (int, error) {
	if cp.ID == 0 || cp.Source == SourceInput || cp.Source == SourceFork {
		return 0, nil
	}
	chain, err := r.e.Ancestors(ctx, r.thread, cp.ID)
	if err != nil {
		return 0, err
	}
	used := 0
	for i := len(chain) - 1; i >= 0 && chain[i].Source != SourceInput && chain[i].Source != SourceFork; i-- {
		if chain[i].TokensUnlisted() {
			calls, err := r.e.storedCalls(ctx, r.thread, chain[i].ID)
			if err != nil {
				return 0, err
			}
			for _, c := range calls {
				used += c.Prompt + c.Completion
			}
		}
		for _, u := range chain[i].Metadata.Tokens {
			used += u.PromptTokens + u.CompletionTokens
		}
	}
	return used, nil
}
