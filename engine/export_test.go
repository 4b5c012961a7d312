package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"rewind/engine/model"
	"rewind/store"
)

// SetBaseEvery makes every nth checkpoint of a branch a base, for tests
// that want short and long delta chains; it returns the undo.
func SetBaseEvery(n int) func() {
	old := baseEvery
	baseEvery = n
	return func() { baseEvery = old }
}

// CostsFromStates is Costs as it was before listings held tokens: every
// checkpoint's state read, and one writes query per checkpoint with tasks.
// Tests compare the two. Branch is head's chain, read the same way.
func (e *Engine) CostsFromStates(ctx context.Context, thread string, head int64) (Costs, error) {
	listed, err := e.History(ctx, thread, 0, 0)
	if err != nil {
		return Costs{}, err
	}
	if len(listed) == 0 {
		return Costs{}, fmt.Errorf("thread %q not found: list threads with `rewind threads`: %w", threadName(thread), store.ErrNotFound)
	}
	byID := make(map[int64]Checkpoint, len(listed))
	for _, cp := range listed {
		byID[cp.ID] = cp
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
	out := Costs{Roles: map[string]RoleUsage{}}
	turns := map[int64]*TurnUsage{}
	add := func(id int64, role string, u model.Usage) {
		r := out.Roles[role]
		r.Calls++
		r.Usage.Add(u)
		out.Roles[role] = r
		out.Total.Add(u)
		start := startOf(id)
		if start == 0 {
			return
		}
		t := turns[start]
		if t == nil {
			t = &TurnUsage{Start: start, Roles: map[string]RoleUsage{}}
			turns[start] = t
		}
		tr := t.Roles[role]
		tr.Calls++
		tr.Usage.Add(u)
		t.Roles[role] = tr
		t.Total.Add(u)
	}
	for _, cp := range listed {
		start := startOf(cp.ID)
		if start != 0 && turns[start] == nil {
			turns[start] = &TurnUsage{Start: start, Roles: map[string]RoleUsage{}}
		}
		calls, err := e.storedCalls(ctx, thread, cp.ID)
		if err != nil {
			return Costs{}, err
		}
		for _, c := range calls {
			add(cp.ID, c.Role, model.Usage{PromptTokens: c.Prompt, CompletionTokens: c.Completion})
		}
		if len(cp.Tasks) == 0 {
			continue
		}
		// Tasks that finished before a crash or a stop: their calls were
		// made, though no checkpoint holds them yet.
		writes, err := e.PendingWrites(ctx, thread, cp.ID)
		if err != nil {
			return Costs{}, err
		}
		for _, tw := range writes {
			for _, ev := range tw.Events {
				if ev.Type == EventModelCalled {
					c := callOf(ev)
					add(cp.ID, c.Role, model.Usage{PromptTokens: c.Prompt, CompletionTokens: c.Completion})
				}
			}
		}
	}
	for _, t := range turns {
		out.Turns = append(out.Turns, *t)
	}
	sort.Slice(out.Turns, func(i, j int) bool { return out.Turns[i].Start < out.Turns[j].Start })
	if head == 0 {
		head = listed[0].ID
	}
	chain, err := e.Ancestors(ctx, thread, head)
	if err != nil {
		return Costs{}, err
	}
	out.Branch = BranchUsage{Head: head, Roles: map[string]RoleUsage{}}
	for _, cp := range chain {
		calls, err := e.storedCalls(ctx, thread, cp.ID)
		if err != nil {
			return Costs{}, err
		}
		for _, c := range calls {
			u := model.Usage{PromptTokens: c.Prompt, CompletionTokens: c.Completion}
			addRole(out.Branch.Roles, c.Role, RoleUsage{Calls: 1, Usage: u})
			out.Branch.Total.Add(u)
		}
		writes, err := e.PendingWrites(ctx, thread, cp.ID)
		if err != nil {
			return Costs{}, err
		}
		for _, tw := range writes {
			for _, ev := range tw.Events {
				if ev.Type == EventModelCalled {
					c := callOf(ev)
					u := model.Usage{PromptTokens: c.Prompt, CompletionTokens: c.Completion}
					addRole(out.Branch.Roles, c.Role, RoleUsage{Calls: 1, Usage: u})
					out.Branch.Total.Add(u)
				}
			}
		}
	}
	return out, nil
}

// ListingWithoutTokens rewrites a stored listing as the release before
// tokens wrote it: an object with source, status, nodes and calls spelled
// out, and no tokens.
func ListingWithoutTokens(meta []byte) ([]byte, error) {
	var l listing
	if err := json.Unmarshal(meta, &l); err != nil {
		return nil, err
	}
	l = l.fill()
	l.Tokens, l.OldTokens = nil, nil
	return json.Marshal(listingObject(l))
}

// Every state document the tests write is checked against json.Marshal.
func init() { checkStateJSON = true }
