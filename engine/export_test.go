package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"

	"rewind/engine/chainformat"
	"rewind/engine/internal/costs"
	"rewind/engine/model"
	"rewind/store"
	"rewind/store/browse"
)

// CostsFromStates is Costs as it was before listings held tokens: every
// checkpoint's state read, and one writes query per checkpoint with tasks.
// Tests compare the two. Branch is head's chain, read the same way.
func (e *Engine) CostsFromStates(ctx context.Context, thread string, head int64) (Costs, error) {
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
					c := chainformat.CallOf(ev)
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
	if out.Branch, err = e.branchFromStates(ctx, thread, head); err != nil {
		return Costs{}, err
	}
	return out, nil
}

// branchFromStates is CostsFromStates's Branch: head's chain, every
// checkpoint's state and writes read.
func (e *Engine) branchFromStates(ctx context.Context, thread string, head int64) (BranchUsage, error) {
	chain, err := e.Ancestors(ctx, thread, head)
	if err != nil {
		return BranchUsage{}, err
	}
	out := BranchUsage{Head: head, Roles: map[string]RoleUsage{}}
	for _, cp := range chain {
		calls, err := e.storedCalls(ctx, thread, cp.ID)
		if err != nil {
			return BranchUsage{}, err
		}
		for _, c := range calls {
			u := model.Usage{PromptTokens: c.Prompt, CompletionTokens: c.Completion}
			addRole(out.Roles, c.Role, RoleUsage{Calls: 1, Usage: u})
			out.Total.Add(u)
		}
		writes, err := e.PendingWrites(ctx, thread, cp.ID)
		if err != nil {
			return BranchUsage{}, err
		}
		for _, tw := range writes {
			for _, ev := range tw.Events {
				if ev.Type == EventModelCalled {
					c := chainformat.CallOf(ev)
					u := model.Usage{PromptTokens: c.Prompt, CompletionTokens: c.Completion}
					addRole(out.Roles, c.Role, RoleUsage{Calls: 1, Usage: u})
					out.Total.Add(u)
				}
			}
		}
	}
	return out, nil
}

// CostsByScan is CostsAt from every listing, as a thread whose turns
// hold no running totals reads: the reference of the totals' path.
func (e *Engine) CostsByScan(ctx context.Context, thread string, head int64) (Costs, error) {
	return costs.ByScan(ctx, costSource{e}, thread, head)
}

// Tune sets the base interval (0: the process's) of e's graph alone,
// and whether its rebuilds replay every stored write, also those a newer
// write replaces whole (see chainformat's dropReplaced).
func Tune(e *Engine, baseEvery int, replayAll bool) {
	chainformat.Hooks.Tune(e.graph.schema, baseEvery, replayAll)
}

// SetBaseEvery makes every nth checkpoint of a branch a base, for tests
// that want short and long delta chains; it returns the undo.
func SetBaseEvery(n int) func() { return chainformat.Hooks.SetBaseEvery(n) }

// ListingWithoutTokens rewrites a stored listing as the release before
// tokens wrote it: an object with source, status, nodes and calls spelled
// out, and no tokens.
func ListingWithoutTokens(meta []byte) ([]byte, error) {
	return chainformat.Hooks.ListingWithoutTokens(meta)
}

// ReadersAgree decodes a stored row's listing and state document with the
// hand readers (storedoc.go) and with encoding/json, whole and as a
// replay reads them, and says how they differ ("" when they agree). fast
// says whether the hand readers read both documents (rather than giving
// up on them, which leaves them to encoding/json).
// A nil meta checks the state document alone (a rebased one).
func ReadersAgree(meta, state []byte) (diff string, fast bool) {
	return chainformat.Hooks.ReadersAgree(meta, state)
}

// ListingReadersAgree is ReadersAgree on a listing alone.
func ListingReadersAgree(meta []byte) (diff string, fast bool) {
	return chainformat.Hooks.ListingReadersAgree(meta)
}

// ReadAnyAgrees decodes b with the hand reader and with a json.Decoder
// (UseNumber), and says how they differ ("" when they agree); fast says
// whether the hand reader read it.
func ReadAnyAgrees(b []byte) (diff string, fast bool) { return chainformat.Hooks.ReadAnyAgrees(b) }

// FastValuesAgree runs the fast form and the encoding/json form of the
// replay's value functions (fastvalues.go) on the same input and says how
// they differ ("" when they agree); fast says whether the fast form took
// it. what names the function: "merge", "unpatch", "replace", "members",
// "unzip", "unblob" (JSON values compared; bytes too when b is as
// json.Marshal writes it), "counter", "compact".
func FastValuesAgree(what string, a, b []byte, blobs map[string]json.RawMessage) (diff string, fast bool) {
	return chainformat.Hooks.FastValuesAgree(what, a, b, blobs)
}

// ZipBlob is the body a blob is stored with.
func ZipBlob(body []byte) []byte { return chainformat.Hooks.ZipBlob(body) }

// KeyedApplyAgrees replays a stored write to a keyed channel (key "id")
// holding current, by the fast form and by encoding/json, and says how the
// lists and the writes they give back differ ("" when they agree); fast
// says whether the fast form took it.
func KeyedApplyAgrees(current, stored []byte) (diff string, fast bool) {
	return chainformat.Hooks.KeyedApplyAgrees(current, stored)
}

// PatchWrite is the stored form of an upsert write to a keyed channel
// (key "id") holding current.
func PatchWrite(current, write []byte) []byte { return chainformat.Hooks.PatchWrite(current, write) }

// SkipString reads the JSON string at the start of b: where it ends, and
// whether it is one.
func SkipString(b []byte) (int, bool) { return chainformat.Hooks.SkipString(b) }

// ListingWithoutSums is a stored listing without running totals, as the
// release before them wrote it.
func ListingWithoutSums(meta []byte) ([]byte, error) {
	return chainformat.Hooks.ListingWithoutSums(meta)
}

// Every state document the tests write is checked against json.Marshal.
func init() { chainformat.Hooks.CheckStateJSON() }

func addRole(m map[string]RoleUsage, role string, r RoleUsage) {
	cur := m[role]
	cur.Calls += r.Calls
	cur.Usage.Add(r.Usage)
	m[role] = cur
}

// BrowseListingAgrees says how row as browse.Source lists it (read with
// Schema.Brief) differs from Engine.History's checkpoint of it through
// browseListing, as it was listed before ("" when they agree); brief says
// whether Schema.Brief read it (else both are History's).
func (e *Engine) BrowseListingAgrees(row store.Checkpoint) (diff string, brief bool) {
	c := browse.Chain{Thread: row.ThreadID}
	_, err := e.graph.schema.Brief(row)
	got, want := e.graph.browseListed(c, row), browseListing(c, e.graph.listing(row.ThreadID, row))
	if !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got) // %v would print the embedded Chain's String
		w, _ := json.Marshal(want)
		return fmt.Sprintf("listed %s, History's %s", g, w), err == nil
	}
	return "", err == nil
}
