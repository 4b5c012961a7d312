package ticket_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"rewind/engine"
	"rewind/engine/model"
	"rewind/engine/ticket"
	"rewind/store"
)

// compacted is a context.compacted event at checkpoint at.
func compacted(at int64, before, after int, strategy string, model any) engine.Event {
	data := map[string]any{"historyVersionBefore": before, "historyVersionAfter": after, "strategy": strategy}
	if model != nil {
		data["model"] = model
	}
	b, _ := json.Marshal(data)
	return engine.Event{Checkpoint: at, Type: ticket.EventContextCompacted, Data: b}
}

func atVersion(t *testing.T, version, summaryVersion int) engine.Checkpoint {
	t.Helper()
	hv, _ := json.Marshal(version)
	sum := []byte("null")
	if summaryVersion >= 0 {
		sum, _ = json.Marshal(ticket.Summary{Text: "#1 user: hi", From: 1, To: 1, HistoryVersion: summaryVersion})
	}
	return engine.Checkpoint{Thread: "h", ID: 40, Values: engine.Values{"historyVersion": hv, "summary": sum}}
}

// Issue 10, item 5 (seed 003): a resume checks that the checkpoint's
// history version follows on from the compactions its branch recorded, and
// that each was made with a strategy and a model this version accepts.
func TestCheckCompactions(t *testing.T) {
	t.Parallel()
	const v1, v2 = "indexed-transcript@v1", "indexed-fold@v2"
	for _, tc := range []struct {
		name     string
		cp       engine.Checkpoint
		events   []engine.Event
		rerooted bool
		want     string // "" accepts
	}{
		{"two compactions in a row", atVersion(t, 2, 2), []engine.Event{compacted(5, 0, 1, v1, nil), compacted(9, 1, 2, v2, "mock")}, false, ""},
		{"never compacted", atVersion(t, 0, -1), nil, false, ""},
		{"a strategy from a newer rewind", atVersion(t, 1, 1), []engine.Event{compacted(5, 0, 1, "structured-summary@v3", "gpt-x")},
			false, `strategy "structured-summary@v3", which this rewind does not accept (it reads indexed-transcript@v1, indexed-fold@v2, extractive@v1`},
		{"a model left unnamed", atVersion(t, 1, 1), []engine.Event{compacted(5, 0, 1, v2, "")}, false, "names no model"},
		{"a compaction missing", atVersion(t, 3, 3), []engine.Event{compacted(5, 0, 1, v2, "mock"), compacted(9, 2, 3, v2, "mock")},
			false, "the compaction at @9 goes from history v2 to v3, but the branch was at v1"},
		{"a compaction applied twice", atVersion(t, 1, 1), []engine.Event{compacted(5, 0, 1, v2, "mock"), compacted(9, 0, 1, v2, "mock")},
			false, "the compaction at @9 goes from history v0 to v1, but the branch was at v1"},
		{"the checkpoint ahead of its events", atVersion(t, 2, 2), []engine.Event{compacted(5, 0, 1, v2, "mock")},
			false, "@40 is at history v2, but the last compaction on its branch (@5) published v1"},
		{"a version with no compaction", atVersion(t, 1, 1), nil, false, "no compaction is recorded on its branch"},
		{"a summary of another version", atVersion(t, 1, 2), []engine.Event{compacted(5, 0, 1, v2, "mock")}, false, "its summary says v2"},
		{"pruned: the first kept compaction starts later", atVersion(t, 4, 4), []engine.Event{compacted(30, 3, 4, v2, "mock")}, true, ""},
		{"pruned: every compaction gone", atVersion(t, 5, 5), nil, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := ticket.CheckCompactions(engine.ResumeInfo{Checkpoint: tc.cp, Events: tc.events, Rerooted: tc.rerooted})
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if !errors.Is(err, ticket.ErrCompaction) || !strings.Contains(err.Error(), tc.want) || !hasFix(err, engine.FixFork) || strings.Contains(err.Error(), "`rewind") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("got %v\nwant %q, one line, with a fork as its fix (data, not a command)", err, tc.want)
			}
		})
	}
}

// newerStrategy shows a thread's compactions as a newer rewind would have
// stored them.
type newerStrategy struct{ store.Store }

func (s newerStrategy) Events(ctx context.Context, thread string, id int64) ([]store.Event, error) {
	evs, err := s.Store.Events(ctx, thread, id)
	for i := range evs {
		evs[i].Payload = []byte(strings.ReplaceAll(string(evs[i].Payload), "indexed-fold@v2", "structured-summary@v3"))
	}
	return evs, err
}

// The summarizer records its strategy (one this version accepts) and its
// model; a resume of a thread compacted by a strategy it does not accept is
// refused before anything runs; the same thread as stored resumes.
func TestResumeChecksTheCompactionsStrategyAndModel(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, st store.Store, reopen func() store.Store) {
		ctx := t.Context()
		e := draftEngine(t, st)
		if _, err := e.Run(ctx, "c", ticket.Input(sentence), engine.RunConfig{}); err != nil {
			t.Fatal(err)
		}
		res, err := e.Run(ctx, "c", ticket.Input("And where is the parcel for SO20260901 now?"), engine.RunConfig{InterruptBefore: []string{ticket.NodeReply}})
		if err != nil || res.Status != "interrupted" {
			t.Fatalf("second turn: %v %s", err, res.Status)
		}
		evs, err := e.Events(ctx, "c", 0)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, ev := range evs {
			if ev.Type == ticket.EventContextCompacted {
				var d struct{ Strategy, Model string }
				_ = json.Unmarshal(ev.Data, &d)
				got = append(got, d.Strategy+" by "+d.Model)
			}
		}
		if fmt.Sprint(got) != "[indexed-fold@v2 by mock]" {
			t.Fatalf("compactions recorded: %v", got)
		}
		if _, err := draftEngine(t, newerStrategy{reopen()}).Resume(ctx, "c", engine.RunConfig{}); !errors.Is(err, ticket.ErrCompaction) || !strings.Contains(err.Error(), "structured-summary@v3") {
			t.Fatalf("resume a thread compacted by a newer strategy: %v", err)
		}
		if l := mustLatest(t, e, "c"); l.ID != res.Checkpoint {
			t.Fatalf("a refused resume wrote @%d", l.ID)
		}
		if res, err := draftEngine(t, reopen()).Resume(ctx, "c", engine.RunConfig{}); err != nil || res.Status != "done" {
			t.Fatalf("resume as stored: %v %s", err, res.Status)
		}
	})
}

// otherSummarizer is the mock under another model's name: a run whose
// configured summarizer is not the one that compacted the thread.
type otherSummarizer struct{ model.Model }

func (otherSummarizer) ModelName(string) string { return "gpt-other" }

// Issue 36, item 3: the compaction check runs before a fork or a new turn
// builds on a checkpoint too, as before a resume, and it holds each
// summary to the run's configured summarizer model (not any name): a run
// whose summarizer is another model, or a store whose summary was made by
// a strategy this rewind does not accept, is refused on one line with
// the fix, and nothing is written.
func TestForkAndNewTurnCheckTheSummarizerAndStrategy(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, st store.Store, reopen func() store.Store) {
		ctx := t.Context()
		e := draftEngine(t, st)
		if _, err := e.Run(ctx, "m", ticket.Input(sentence), engine.RunConfig{}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.Run(ctx, "m", ticket.Input("And where is the parcel for SO20260901 now?"), engine.RunConfig{}); err != nil {
			t.Fatal(err)
		}
		head := mustLatest(t, e, "m")
		other, err := ticket.NewEngine(reopen(), otherSummarizer{ticket.NewMock()})
		if err != nil {
			t.Fatal(err)
		}
		newer := draftEngine(t, newerStrategy{reopen()})
		for _, tc := range []struct {
			name string
			e    *engine.Engine
			want string
		}{
			{"another summarizer", other, `was made by model "mock", but this run's summarizer is "gpt-other" (a run with "mock" as the summarizer's model builds on it)`},
			{"a newer strategy", newer, `strategy "structured-summary@v3", which this rewind does not accept`},
		} {
			for what, err := range map[string]error{
				"new turn": func() error {
					_, err := tc.e.Run(ctx, "m", ticket.Input("Thanks. Anything else?"), engine.RunConfig{})
					return err
				}(),
				"fork": func() error {
					_, err := tc.e.Fork(ctx, "m", head.ID, ticket.Input("Thanks. Anything else?"), engine.RunConfig{})
					return err
				}(),
			} {
				if !errors.Is(err, ticket.ErrCompaction) || !strings.Contains(err.Error(), tc.want) || !hasFix(err, engine.FixFork) || strings.Contains(err.Error(), "\n") {
					t.Errorf("%s, %s: %v\nwant %q", tc.name, what, err, tc.want)
				}
			}
			if l := mustLatest(t, e, "m"); l.ID != head.ID {
				t.Fatalf("%s: a refused run wrote @%d", tc.name, l.ID)
			}
		}
		if _, err := other.Resume(ctx, "m", engine.RunConfig{}); !errors.Is(err, engine.ErrNothingToResume) {
			t.Fatalf("resume of a done thread: %v", err)
		}
		// The summarizer that made it builds on it, in a new engine.
		if res, err := draftEngine(t, reopen()).Run(ctx, "m", ticket.Input("Thanks. Anything else?"), engine.RunConfig{}); err != nil || res.Status != "done" {
			t.Fatalf("a new turn with the summarizer that compacted: %v %s", err, res.Status)
		}
	})
}

// hasFix is whether err offers action among its fixes (engine.Fixer).
func hasFix(err error, action engine.Action) bool {
	var f engine.Fixer
	return errors.As(err, &f) && slices.ContainsFunc(f.Fixes(), func(fx engine.Fix) bool { return fx.Action == action })
}
