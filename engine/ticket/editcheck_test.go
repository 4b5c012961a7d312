package ticket_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"rewind/engine"
	"rewind/engine/ticket"
	"rewind/store"
	"rewind/store/memory"
)

// refused edits channel at checkpoint at to each value and wants every
// one refused (ErrBadEdit, one line holding want) with nothing stored.
func refused(t *testing.T, e *engine.Engine, thread string, at int64, channel, want string, values ...string) {
	t.Helper()
	ctx := context.Background()
	before, err := e.History(ctx, thread, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range values {
		_, err := e.EditState(ctx, thread, at, channel, json.RawMessage(v), engine.UpdateOptions{})
		if !errors.Is(err, engine.ErrBadEdit) || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("edit %s = %.80s: %v\nwant ErrBadEdit, one line with %q", channel, v, err, want)
		}
	}
	if after, _ := e.History(ctx, thread, 0, 0); len(after) != len(before) {
		t.Fatalf("refused edits of %s stored %d checkpoints", channel, len(after)-len(before))
	}
}

// Issue 32, item 4: the tool budget is a required whole number: an edit to
// null, a negative, a fraction or a string is refused, and nothing stored.
func TestToolBudgetIsRequired(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, st store.Store, _ func() store.Store) {
		ctx := t.Context()
		e := draftEngine(t, st)
		res, err := e.Run(ctx, "b", ticket.Input(sentence), engine.RunConfig{InterruptBefore: []string{ticket.NodeExecutor}})
		if err != nil || len(res.Pending) == 0 || res.Pending[0].Node != ticket.NodeExecutor {
			t.Fatalf("run to the executors: %v %+v", err, res)
		}
		at := res.Checkpoint
		refused(t, e, "b", at, "budgetRemaining", "budgetRemaining", `null`, `-1`, `2.5`, `"3"`, `{"calls": 3}`)
		for _, ok := range []string{`0`, `3`} {
			if _, err := e.EditState(ctx, "b", at, "budgetRemaining", json.RawMessage(ok), engine.UpdateOptions{}); err != nil {
				t.Errorf("edit budgetRemaining = %s: %v", ok, err)
			}
		}
	})
}

// Issue 32, item 3: an edit may not make more subtasks due than one
// superstep fans out to (before: 10,000 subtasks were stored and the
// resume started 10,000 executors).
func TestEditedSubtasksStayUnderTheFanOutCap(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	e := draftEngine(t, memory.New())
	res, err := e.Run(ctx, "f", ticket.Input(sentence), engine.RunConfig{InterruptBefore: []string{ticket.NodeExecutor}})
	if err != nil {
		t.Fatal(err)
	}
	list := func(n int) string {
		sts := make([]ticket.Subtask, n)
		for i := range sts {
			sts[i] = ticket.Subtask{ID: fmt.Sprintf("t-%d", i), Goal: "order status SO20260901", Topic: "order", Status: ticket.StatusPending}
		}
		b, _ := json.Marshal(sts)
		return string(b)
	}
	cap := ticket.NewGraph().SendCap()
	refused(t, e, "f", res.Checkpoint, "subtasks", fmt.Sprintf("%d subtasks are pending or redo", cap+1), list(cap+1))
	if _, err := e.EditState(ctx, "f", res.Checkpoint, "subtasks", json.RawMessage(list(cap)), engine.UpdateOptions{}); err != nil {
		t.Fatalf("%d subtasks: %v", cap, err)
	}
}

// Issue 32, item 8: an edited summary passes the summarizer's checks and
// the fidelity check against the stored transcript. Before, a summary with
// a rewritten id was stored, and `rewind check fidelity` then failed.
func TestEditedSummaryIsChecked(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, st store.Store, _ func() store.Store) {
		ctx := t.Context()
		e := draftEngine(t, st)
		var cp engine.Checkpoint
		var s ticket.State
		for turn := 1; s.Summary == nil; turn++ {
			if turn > 6 {
				t.Fatal("no summary after 6 turns")
			}
			res, err := e.Run(ctx, "s", ticket.Input(fmt.Sprintf("turn %d: %s", turn, sentence)), engine.RunConfig{})
			if err != nil {
				t.Fatal(err)
			}
			cp = mustGet(t, e, "s", res.Checkpoint)
			s = state(t, cp)
		}
		sum := *s.Summary
		stored, err := e.Transcript(ctx, "s", cp.ID, int64(sum.From), int64(sum.To))
		if err != nil {
			t.Fatal(err)
		}
		var originals []ticket.Message
		for _, m := range stored {
			var msg ticket.Message
			if err := json.Unmarshal(m.Body, &msg); err != nil {
				t.Fatal(err)
			}
			originals = append(originals, msg)
		}
		r := ticket.CheckFidelity(&sum, s.Facts, originals)
		fact := ""
		for _, f := range r.Facts {
			if f.Status == ticket.FactKept && strings.Contains(f.Fact, "SO2026") {
				fact = f.Fact
				break
			}
		}
		if !r.OK() || fact == "" {
			t.Fatalf("the summarizer's summary: %s; no order id kept (%+v)", r.Verdict(), r.Facts)
		}
		edit := func(change func(*ticket.Summary)) string {
			x := sum
			change(&x)
			b, _ := json.Marshal(x)
			return string(b)
		}
		rewritten := edit(func(x *ticket.Summary) { x.Text = strings.ReplaceAll(x.Text, fact, fact[:len(fact)-1]+"7") })
		refused(t, e, "s", cp.ID, "summary", "altered", rewritten)
		refused(t, e, "s", cp.ID, "summary", "summary ends at", edit(func(x *ticket.Summary) { x.To-- }))
		refused(t, e, "s", cp.ID, "summary", "history v", edit(func(x *ticket.Summary) { x.HistoryVersion++ }))
		refused(t, e, "s", cp.ID, "summary", "in neither the summary nor the messages", `null`)
		refused(t, e, "s", cp.ID, "summary", "no #index speaker", edit(func(x *ticket.Summary) { x.Text = "the customer asked about an order" }))
		// A change that keeps every fact goes through.
		if _, err := e.EditState(ctx, "s", cp.ID, "summary", json.RawMessage(edit(func(x *ticket.Summary) { x.Trigger = "edited" })), engine.UpdateOptions{}); err != nil {
			t.Fatalf("a faithful summary edit: %v", err)
		}
	})
}

// Issue 38: an edit took `scenario "x"`, which a turn's --scenario refuses;
// every later turn ran as the ticket under a name nothing else takes. An
// edited scenario is one the graph knows, as a turn's: anything else is
// refused in one line and nothing stored.
func TestEditedScenarioIsOneTheGraphKnows(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, st store.Store, _ func() store.Store) {
		ctx := t.Context()
		e := draftEngine(t, st)
		res, err := e.Run(ctx, "s", ticket.Input(sentence), engine.RunConfig{})
		if err != nil {
			t.Fatal(err)
		}
		at := res.Checkpoint
		refused(t, e, "s", at, "scenario", "scenario", `"x"`, `"Ticket"`, `"site-log "`, `3`, `null`, `["site-log"]`)
		for _, ok := range []string{`"site-log"`, `"ticket"`, `""`} {
			if _, err := e.EditState(ctx, "s", at, "scenario", json.RawMessage(ok), engine.UpdateOptions{}); err != nil {
				t.Errorf("edit scenario = %s: %v", ok, err)
			}
		}
	})
}
