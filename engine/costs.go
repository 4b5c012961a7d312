package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"rewind/engine/model"
	"rewind/store"
)

// RoleUsage is the model calls of one role and their tokens.
type RoleUsage struct {
	Calls int `json:"calls"`
	model.Usage
}

// TurnUsage is what one turn cost: the checkpoints from an input or fork
// checkpoint up to (not including) the next one on the same branch.
type TurnUsage struct {
	// Start is the turn's input or fork checkpoint.
	Start int64                `json:"start"`
	Roles map[string]RoleUsage `json:"roles"`
	Total model.Usage          `json:"total"`
}

// BranchUsage is what one branch cost: the checkpoints from the root to
// Head, the ancestors it shares with other branches included.
type BranchUsage struct {
	Head  int64                `json:"head"`
	Roles map[string]RoleUsage `json:"roles"`
	Total model.Usage          `json:"total"`
}

// Costs is a thread's model tokens, from the calls stored with its
// checkpoints (read from their listings) and with a half-finished
// superstep's stored writes.
//
// With forks: Roles, Total and Turns count every checkpoint of every
// branch once (a fork's checkpoints are its own, its shared ancestors are
// counted where they were made), so the thread's total never counts a call
// twice. Branch is one branch's own view: what its chain from the root
// cost, shared ancestors included, so two branches' figures overlap by
// design. LastTurn is the turn Branch.Head belongs to.
type Costs struct {
	Roles map[string]RoleUsage `json:"roles"`
	// Turns, oldest first. Checkpoints before the first input (an update
	// that created the thread) count in Roles and Total only.
	Turns    []TurnUsage `json:"turns"`
	Total    model.Usage `json:"total"`
	Branch   BranchUsage `json:"branch"`
	LastTurn *TurnUsage  `json:"lastTurn,omitempty"`
}

// Costs sums the thread's stored model calls by role and by turn, with
// its latest checkpoint's branch.
func (e *Engine) Costs(ctx context.Context, thread string) (Costs, error) {
	return e.CostsAt(ctx, thread, 0)
}

// CostsAt is Costs with checkpoint head's branch (0: the latest). It reads
// the thread's listings and its unsettled writes, never a state (but the
// state of a checkpoint stored before listings held tokens).
func (e *Engine) CostsAt(ctx context.Context, thread string, head int64) (Costs, error) {
	listed, err := e.History(ctx, thread, 0, 0)
	if err != nil {
		return Costs{}, err
	}
	if len(listed) == 0 {
		return Costs{}, threadNotFound(thread)
	}
	byID := make(map[int64]Checkpoint, len(listed))
	for _, cp := range listed {
		byID[cp.ID] = cp
	}
	if head == 0 {
		head = listed[0].ID
	}
	if _, ok := byID[head]; !ok {
		return Costs{}, checkpointNotFound(thread, head)
	}
	onBranch := map[int64]bool{}
	for id := head; id != 0 && !onBranch[id]; {
		onBranch[id] = true
		cp, ok := byID[id]
		if !ok || cp.ParentID >= id {
			break
		}
		id = cp.ParentID
	}
	// turnOf is the turn's start for a checkpoint: itself when it is an
	// input or fork, else its parent's (0: before any input).
	turnOf := map[int64]int64{}
	var startOf func(id int64) int64
	startOf = func(id int64) int64 {
		if t, ok := turnOf[id]; ok {
			return t
		}
		cp, ok := byID[id]
		t := int64(0)
		switch {
		case !ok:
		case cp.Source == SourceInput || cp.Source == SourceFork:
			t = id
		case cp.ParentID > 0 && cp.ParentID < id:
			t = startOf(cp.ParentID)
		}
		turnOf[id] = t
		return t
	}
	out := Costs{Roles: map[string]RoleUsage{}, Branch: BranchUsage{Head: head, Roles: map[string]RoleUsage{}}}
	turns := map[int64]*TurnUsage{}
	add := func(id int64, role string, r RoleUsage) {
		addRole(out.Roles, role, r)
		out.Total.Add(r.Usage)
		if onBranch[id] {
			addRole(out.Branch.Roles, role, r)
			out.Branch.Total.Add(r.Usage)
		}
		start := startOf(id)
		if start == 0 {
			return
		}
		t := turns[start]
		addRole(t.Roles, role, r)
		t.Total.Add(r.Usage)
	}
	// Tasks that finished before a crash or a stop: their calls were made,
	// though no checkpoint holds them yet. One query for the thread.
	pending, err := e.store.Writes(ctx, thread, 0)
	if err != nil {
		return Costs{}, fmt.Errorf("read pending writes of thread %q: %w", threadName(thread), err)
	}
	pendingOf := map[int64][]store.TaskWrites{}
	for _, w := range pending {
		pendingOf[w.CheckpointID] = append(pendingOf[w.CheckpointID], w)
	}
	for _, cp := range listed {
		start := startOf(cp.ID)
		if start != 0 && turns[start] == nil {
			turns[start] = &TurnUsage{Start: start, Roles: map[string]RoleUsage{}}
		}
		if cp.tokensUnlisted {
			calls, err := e.storedCalls(ctx, thread, cp.ID)
			if err != nil {
				return Costs{}, err
			}
			for _, c := range calls {
				add(cp.ID, c.Role, RoleUsage{Calls: 1, Usage: model.Usage{PromptTokens: c.Prompt, CompletionTokens: c.Completion}})
			}
		}
		for role, r := range cp.Metadata.Tokens {
			add(cp.ID, role, r)
		}
		if len(cp.Tasks) == 0 {
			continue
		}
		writes, err := decodeWrites(thread, cp.ID, pendingOf[cp.ID])
		if err != nil {
			return Costs{}, err
		}
		for _, tw := range writes {
			for _, ev := range tw.Events {
				if ev.Type == EventModelCalled {
					c := callOf(ev)
					add(cp.ID, c.Role, RoleUsage{Calls: 1, Usage: model.Usage{PromptTokens: c.Prompt, CompletionTokens: c.Completion}})
				}
			}
		}
	}
	for _, t := range turns {
		out.Turns = append(out.Turns, *t)
	}
	sort.Slice(out.Turns, func(i, j int) bool { return out.Turns[i].Start < out.Turns[j].Start })
	if t := turns[startOf(head)]; t != nil {
		last := *t
		out.LastTurn = &last
	}
	return out, nil
}

func addRole(m map[string]RoleUsage, role string, r RoleUsage) {
	cur := m[role]
	cur.Calls += r.Calls
	cur.Usage.Add(r.Usage)
	m[role] = cur
}

// callTokens are the groups' model calls by role, as a listing keeps them.
func callTokens(calls [][]storedCall) map[string]RoleUsage {
	var out map[string]RoleUsage
	for _, cs := range calls {
		for _, c := range cs {
			if out == nil {
				out = map[string]RoleUsage{}
			}
			addRole(out, c.Role, RoleUsage{Calls: 1, Usage: model.Usage{PromptTokens: c.Prompt, CompletionTokens: c.Completion}})
		}
	}
	return out
}

// storedCalls are the model calls stored with checkpoint id's writes.
func (e *Engine) storedCalls(ctx context.Context, thread string, id int64) ([]storedCall, error) {
	row, err := e.store.Get(ctx, thread, id)
	if errors.Is(err, store.ErrNotFound) || err == nil && len(row.Meta) == 0 {
		return nil, nil // no such checkpoint, or stored before calls moved
	}
	if err != nil {
		return nil, fmt.Errorf("read checkpoint %d of thread %q: %w", id, threadName(thread), err)
	}
	var doc struct {
		Groups []writeGroup `json:"writes"`
	}
	if err := json.Unmarshal(row.State, &doc); err != nil {
		return nil, fmt.Errorf("checkpoint %d of thread %q: %w (%v)", id, threadName(thread), ErrCorrupt, err)
	}
	(&stateDoc{Groups: doc.Groups}).fillRoles()
	var out []storedCall
	for _, g := range doc.Groups {
		out = append(out, g.Calls...)
	}
	return out, nil
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
	return fmt.Sprintf("thread %q: the turn used %d tokens, at or over its budget of %d (--max-tokens-per-turn): stopped at checkpoint %d before %s, all of it stored; `rewind resume %s` carries on (with a larger --max-tokens-per-turn, or without it)",
		threadName(e.Thread), e.Used, e.Budget, e.Checkpoint, describeTasks(e.Pending), threadName(e.Thread))
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
		if chain[i].tokensUnlisted {
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
