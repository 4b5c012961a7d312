package ticket

// The ticket graph's recovery checks (engine.Graph.OnResume), run before a
// resume carries a run on:
//   - seed 003: the checkpoint's history version follows on from the
//     compactions its branch recorded, and each of them was made with a
//     strategy and model this version accepts;
//   - seed 002: the records the pending work builds on are still at the
//     versions read; if not, the work that read them is done again.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"rewind/engine"
	"rewind/engine/model"
)

// CompactionStrategies are the summary strategies this version reads: the
// current one (the summarizer's) and those of summaries already stored by
// earlier releases, whose text it still folds.
var CompactionStrategies = []string{"indexed-transcript@v1", "indexed-fold@v2", ExtractiveStrategy}

// ErrCompaction is matched by errors.Is when a resume is refused over a
// thread's compactions.
var ErrCompaction = errors.New("the thread's compactions do not check out")

// compaction is what a context.compacted event records.
type compaction struct {
	Before   *int    `json:"historyVersionBefore"`
	After    *int    `json:"historyVersionAfter"`
	Strategy string  `json:"strategy"`
	Model    *string `json:"model"`
}

// CheckCompactions checks the compactions of a checkpoint's branch (the
// context.compacted events of in.Events) against its historyVersion: each
// one publishes the version after the previous one, the last one the
// checkpoint's, with a strategy of CompactionStrategies, made by the
// run's configured summarizer (in.ModelName, when set) or by rewind
// itself (ExtractiveModel). (Events stored before the model was recorded
// have none; that is accepted.) A branch whose oldest checkpoints were
// pruned may start past version 0.
func CheckCompactions(in engine.ResumeInfo) error {
	cp := in.Checkpoint
	s, err := Decode(cp.Values, "historyVersion", "summary")
	if err != nil {
		return err
	}
	// A compaction that cannot be built on is undone by a branch from
	// before it, which compacts the history again.
	forkFrom := func(at int64, err error) error {
		return engine.Fixable(cp.Thread, cp.ID, err, forkBefore(cp.Thread, at))
	}
	version, seen, last := 0, false, int64(0)
	for _, ev := range in.Events {
		if ev.Type != EventContextCompacted {
			continue
		}
		var c compaction
		if err := json.Unmarshal(ev.Data, &c); err != nil {
			return forkFrom(ev.Checkpoint, fmt.Errorf("%w: the compaction at @%d is unreadable (%v)", ErrCompaction, ev.Checkpoint, err))
		}
		if !slices.Contains(CompactionStrategies, c.Strategy) {
			return forkFrom(ev.Checkpoint, fmt.Errorf("%w: the summary published at @%d was made with strategy %q, which this rewind does not accept (it reads %s; the rewind that made it reads it too)",
				ErrCompaction, ev.Checkpoint, c.Strategy, strings.Join(CompactionStrategies, ", ")))
		}
		if err := checkSummarizer(in, c, ev.Checkpoint, forkFrom); err != nil {
			return err
		}
		if c.Before == nil || c.After == nil {
			continue // an event from before versions were recorded
		}
		start := version
		if !seen && in.Rerooted {
			start = *c.Before // its predecessors were pruned
		}
		if *c.Before != start || *c.After != *c.Before+1 {
			return forkFrom(ev.Checkpoint, fmt.Errorf("%w: the compaction at @%d goes from history v%d to v%d, but the branch was at v%d: a compaction is missing or was applied twice",
				ErrCompaction, ev.Checkpoint, *c.Before, *c.After, start))
		}
		version, seen, last = *c.After, true, ev.Checkpoint
	}
	if !seen && in.Rerooted {
		return nil // the compactions, if any, were pruned with their checkpoints
	}
	if s.HistoryVersion != version {
		where := "no compaction is recorded on its branch"
		if seen {
			where = fmt.Sprintf("the last compaction on its branch (@%d) published v%d", last, version)
		}
		return engine.Fixable(cp.Thread, cp.ID, fmt.Errorf("%w: @%d is at history v%d, but %s: the checkpoint and the stored events disagree",
			ErrCompaction, cp.ID, s.HistoryVersion, where), engine.ForkFix(cp.Thread, 0), engine.RemoveFix(cp.Thread))
	}
	if s.Summary != nil && s.Summary.HistoryVersion != s.HistoryVersion {
		return engine.Fixable(cp.Thread, cp.ID, fmt.Errorf("%w: @%d is at history v%d, but its summary says v%d",
			ErrCompaction, cp.ID, s.HistoryVersion, s.Summary.HistoryVersion), engine.ForkFix(cp.Thread, 0), engine.RemoveFix(cp.Thread))
	}
	return nil
}

// checkSummarizer refuses compaction c (published at @at) when its
// model is not the run's configured summarizer (nor rewind's own).
func checkSummarizer(in engine.ResumeInfo, c compaction, at int64, forkFrom func(int64, error) error) error {
	if c.Model == nil {
		return nil // recorded before compactions named their model
	}
	made := strings.TrimSpace(*c.Model)
	if made == "" {
		return forkFrom(at, fmt.Errorf("%w: the summary published at @%d names no model, so it cannot be told apart from one made by a model this rewind does not accept",
			ErrCompaction, at))
	}
	if in.ModelName == nil || made == ExtractiveModel {
		return nil
	}
	if want := in.ModelName(model.RoleSummarizer); made != want {
		return forkFrom(at, fmt.Errorf("%w: the summary published at @%d was made by model %q, but this run's summarizer is %q (a run with %q as the summarizer's model builds on it)",
			ErrCompaction, at, made, want, made))
	}
	return nil
}

// recheck is the graph's OnResume check.
func (d *deps) recheck(ctx context.Context, in engine.ResumeInfo) (engine.Recheck, error) {
	if err := CheckCompactions(in); err != nil {
		return engine.Recheck{}, err
	}
	return d.recheckSources(ctx, in)
}

// recheckSources finds the work a resume would build on that read a record
// which has changed since, and has it read again: an executor whose
// writes are stored but not committed runs again (Rerun); a finding
// already committed goes back to its executor (its subtask is sent back
// for a re-read, and the pending tasks become those executors; the critic
// reviews the new findings, and the reply is written from them).
//
// Before the planner has run nothing was read this turn. Once the reply
// is written, its proposal is what a person approves: the gate and verify
// check its sources instead, and block or fail rather than rewrite it.
func (d *deps) recheckSources(ctx context.Context, in engine.ResumeInfo) (engine.Recheck, error) {
	cp := in.Checkpoint
	for _, t := range cp.Tasks {
		switch t.Node {
		case NodePlanner, NodeApproval, NodeDraft, NodeVerify:
			return engine.Recheck{}, nil
		}
	}
	current, err := d.sources.Versions(ctx)
	if err != nil {
		return engine.Recheck{}, fmt.Errorf("check the sources of the pending work: %w", err)
	}
	var changes []SourceChange
	rerun := map[string]string{}
	for _, tw := range in.Stored {
		if tw.Node != NodeExecutor {
			continue
		}
		for _, w := range tw.Writes {
			var sts []Subtask
			if w.Channel != "subtasks" || json.Unmarshal(w.Value, &sts) != nil {
				continue
			}
			for _, st := range sts {
				if c, ok := staleRead(st, current); ok {
					changes = append(changes, c)
					rerun[tw.Task] = c.String()
				}
			}
		}
	}
	s, err := Decode(cp.Values, "subtasks")
	if err != nil {
		return engine.Recheck{}, err
	}
	var redo []Subtask
	for _, st := range s.Subtasks {
		if st.Status != StatusDone && st.Status != StatusApproved {
			continue // pending, sent back or blocked: it reads afresh, or not at all
		}
		if c, ok := staleRead(st, current); ok {
			changes = append(changes, c)
			st.Status = StatusRedo
			st.Feedback = fmt.Sprintf("re-read: %s changed from v%d to v%d since this finding was made", c.ID, c.From, c.To)
			redo = append(redo, st)
		}
	}
	if len(changes) == 0 {
		return engine.Recheck{}, nil
	}
	reason := "sources changed since they were read: " + describeChanges(changes) + "; re-read"
	if len(redo) == 0 {
		return engine.Recheck{Reason: reason, Rerun: rerun}, nil
	}
	// The stored writes of the pending tasks go with the tasks: they run
	// again if still needed (dispatch sends every pending subtask).
	merged := append([]Subtask(nil), s.Subtasks...)
	for i := range merged {
		for _, r := range redo {
			if merged[i].ID == r.ID {
				merged[i] = r
			}
		}
	}
	list, err := json.Marshal(merged)
	if err != nil {
		return engine.Recheck{}, err
	}
	next, err := dispatch(engine.Values{"subtasks": list})
	if err != nil {
		return engine.Recheck{}, err
	}
	return engine.Recheck{Reason: reason, Writes: []engine.Write{engine.Put("subtasks", redo)}, Next: next}, nil
}

// staleRead is the change to the record st's result was read from, if it
// changed since.
func staleRead(st Subtask, current map[string]int) (SourceChange, bool) {
	if st.Source == "" {
		return SourceChange{}, false
	}
	if now := versionOf(current, st.Source); now != st.SourceVersion {
		return SourceChange{ID: st.Source, From: st.SourceVersion, To: now, By: st.ID}, true
	}
	return SourceChange{}, false
}
