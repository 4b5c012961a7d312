package engine

// Runs: every invocation that writes to a thread (a turn, a resume, a
// fork, a replay, an answer, an edit, a cancel) is a run with an id of its
// own. The first checkpoint it writes stores the run's mark in its
// listing (Metadata.Run: the id, the kind, the run it continues); its
// later checkpoints leave it out and belong to their parent's run, so a
// turn stores the mark once. Every event it emits carries the id
// (Event.Run). Runs reads a thread's runs from its listings alone.

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/base32"
	"fmt"
	"slices"
	"strings"
	"time"

	"rewind/store"
)

// Run kinds (RunMark.Kind).
const (
	KindTurn    = "turn"
	KindFork    = "fork"
	KindReplay  = "replay"
	KindResume  = "resume"
	KindAnswer  = "answer"
	KindEdit    = "edit"
	KindCancel  = "cancel"
	KindDiscard = "discard"
)

// WithRunIDs gives the engine the source of its run ids (default: 10
// random base32 letters and digits): a test gives a counting one so
// what is shown does not depend on chance.
func WithRunIDs(next func() string) Option {
	return func(e *Engine) {
		if next != nil {
			e.runIDs = next
		}
	}
}

var runIDText = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// randomRunID is a new run's id: 50 random bits, 10 characters.
func randomRunID() string {
	var b [7]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return runIDText.EncodeToString(b[:])[:10]
}

// newRun is a new run of kind (cfg.RunKind when set) that continues
// the run named continues ("" for none).
func (e *Engine) newRun(kind string, cfg RunConfig, continues string) *RunMark {
	if cfg.RunKind != "" {
		kind = cfg.RunKind
	}
	m := &RunMark{ID: e.runIDs(), Kind: kind, Continues: continues}
	markSession(m, cfg.Session)
	return m
}

func (r *runner) runID() string {
	if r.run == nil {
		return ""
	}
	return r.run.ID
}

// runAt is the id of the run that wrote checkpoint cp of thread: its
// mark's, else its nearest marked ancestor's ("" when none is: stored
// before runs were).
func (e *Engine) runAt(ctx context.Context, thread string, cp Checkpoint) (string, error) {
	m, err := e.markAt(ctx, thread, cp)
	if err != nil || m == nil {
		return "", err
	}
	return m.ID, nil
}

// markAt is the mark of the run that wrote cp: its own, else its nearest
// marked ancestor's; nil when none is (stored before runs were, or the
// marked checkpoint was pruned). A run's mark is on its first
// checkpoint, so the walk is short: a page of listings, usually.
func (e *Engine) markAt(ctx context.Context, thread string, cp Checkpoint) (*RunMark, error) {
	if cp.Metadata.Run != nil || cp.ID == 0 {
		return cp.Metadata.Run, nil
	}
	var mark *RunMark
	_, err := e.ancestors(ctx, thread, cp.ParentID, func(row store.Checkpoint) (bool, error) {
		l, err := e.graph.listed(row)
		if err != nil {
			return true, err
		}
		mark = l.Metadata.Run
		return mark != nil, nil
	})
	return mark, err
}

// resumedRun is the run a resume from cp continues: the run that stored
// the newest of cp's pending task writes when another than cp's (a run
// killed before it wrote a checkpoint: the resume reuses its results),
// else the run that wrote cp.
func (e *Engine) resumedRun(ctx context.Context, thread string, cp Checkpoint) (string, error) {
	at, err := e.runAt(ctx, thread, cp)
	if err != nil {
		return "", err
	}
	stored, err := e.PendingWrites(ctx, thread, cp.ID)
	if err != nil {
		return "", err
	}
	killed, newest := "", time.Time{}
	for _, tw := range stored {
		for _, ev := range tw.Events {
			if ev.Run != "" && ev.Run != at && !ev.At.Before(newest) {
				killed, newest = ev.Run, ev.At
			}
		}
	}
	if killed != "" {
		return killed, nil
	}
	return at, nil
}

// RunSummary is one run of a thread as its listings tell it (Runs).
type RunSummary struct {
	// ID, Kind and Continues are the run's mark; ID is "" for the
	// checkpoints stored before runs were recorded.
	ID        string `json:"id"`
	Kind      string `json:"kind,omitempty"`
	Continues string `json:"continues,omitempty"`
	// ContinuedBy are the runs that carried this one on.
	ContinuedBy []string `json:"continuedBy,omitempty"`
	// From is the checkpoint its first one was written on (0: none).
	From int64 `json:"from,omitempty"`
	// First and Last are the first and the newest checkpoint it wrote,
	// Checkpoints how many.
	First       int64 `json:"first"`
	Last        int64 `json:"last"`
	Checkpoints int   `json:"checkpoints"`
	// Reused are the task results stored before it that it used (a
	// resume's), Redispatched the tasks pending at From it ran again.
	Reused       int `json:"reused,omitempty"`
	Redispatched int `json:"redispatched,omitempty"`
	// Status is where the run stands at Last: the listing's, but stopped
	// for one left running that nobody runs (LiveStatus), and Reason why.
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
}

// Text is the run on one line, as `rewind runs` and the TUI show it.
func (s RunSummary) Text() string {
	var b strings.Builder
	switch {
	case s.ID == "":
		b.WriteString("run — (stored before runs were recorded)")
	case s.Kind == "":
		fmt.Fprintf(&b, "run %s", s.ID)
	default:
		fmt.Fprintf(&b, "run %s (%s)", s.ID, s.Kind)
	}
	if s.From != 0 {
		fmt.Fprintf(&b, " from @%d", s.From)
	}
	if s.Continues != "" {
		fmt.Fprintf(&b, ", continues %s", s.Continues)
	}
	switch {
	case s.Checkpoints == 0:
		b.WriteString(", stopped before it stored a checkpoint (its process ended)")
	case s.First == s.Last:
		fmt.Fprintf(&b, ", wrote @%d", s.First)
	default:
		fmt.Fprintf(&b, ", wrote @%d–@%d", s.First, s.Last)
	}
	if s.Reused > 0 || s.Redispatched > 0 {
		fmt.Fprintf(&b, ", reused %s and redispatched %d", plural(s.Reused, "task result"), s.Redispatched)
	}
	if s.Checkpoints > 0 {
		fmt.Fprintf(&b, ", %s at @%d", s.Status, s.Last)
		if s.Status == RunStopped {
			b.WriteString(" (its process ended)")
		}
	}
	if len(s.ContinuedBy) > 0 {
		fmt.Fprintf(&b, ", continued by %s", strings.Join(s.ContinuedBy, ", "))
	}
	return b.String()
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// Runs is a thread's runs, oldest first, and which run wrote each
// checkpoint.
type Runs struct {
	List []RunSummary `json:"runs"`
	// ByCheckpoint is the id of the run that wrote each checkpoint (""
	// for one stored before runs were).
	ByCheckpoint map[int64]string `json:"-"`
}

// Of is the run that wrote checkpoint id.
func (rs Runs) Of(id int64) (RunSummary, bool) {
	run, ok := rs.ByCheckpoint[id]
	if !ok {
		return RunSummary{}, false
	}
	for _, s := range rs.List {
		if s.ID == run {
			return s, true
		}
	}
	return RunSummary{}, false
}

// Runs reads thread's runs from its listings (History; no state is
// read): each checkpoint belongs to the run its listing marks, else to
// its parent's. A run left running whose thread nobody holds reads
// stopped, as LiveStatus says.
func (e *Engine) Runs(ctx context.Context, thread string) (Runs, error) {
	cps, err := e.History(ctx, thread, 0, 0)
	if err != nil {
		return Runs{}, err
	}
	if len(cps) == 0 {
		return Runs{}, threadNotFound(thread)
	}
	out := Runs{ByCheckpoint: make(map[int64]string, len(cps))}
	byID := make(map[int64]Checkpoint, len(cps))
	at := map[string]int{} // a run's place in out.List
	last := map[string]Checkpoint{}
	for i := len(cps) - 1; i >= 0; i-- { // oldest first: a parent before its children
		cp := cps[i]
		byID[cp.ID] = cp
		id := out.ByCheckpoint[cp.ParentID] // "" for none, or a parent unknown
		if m := cp.Metadata.Run; m != nil {
			id = m.ID
		}
		out.ByCheckpoint[cp.ID] = id
		k, ok := at[id]
		if !ok {
			k, at[id] = len(out.List), len(out.List)
			s := RunSummary{ID: id, First: cp.ID}
			if m := cp.Metadata.Run; m != nil {
				s.Kind, s.Continues, s.From = m.Kind, m.Continues, cp.ParentID
			}
			out.List = append(out.List, s)
		}
		s := &out.List[k]
		s.Checkpoints++
		s.Last = max(s.Last, cp.ID)
		s.Reused += len(cp.Metadata.Reused)
		last[id] = cp
	}
	for i := range out.List {
		s := &out.List[i]
		if s.Continues == "" {
			continue
		}
		k, ok := at[s.Continues]
		if !ok {
			// A run killed before its first commit: known only by the
			// task results it left, which s reused.
			k, at[s.Continues] = len(out.List), len(out.List)
			out.List = append(out.List, RunSummary{ID: s.Continues, From: s.From, Status: RunStopped,
				Reason: "it was stopped before it stored a checkpoint; " + s.ID + " carried it on"})
			s = &out.List[i]
		}
		out.List[k].ContinuedBy = append(out.List[k].ContinuedBy, s.ID)
	}
	for i := range out.List {
		s := &out.List[i]
		if from, ok := byID[s.From]; ok && s.Kind == KindResume {
			s.Redispatched = max(len(from.Tasks)-s.Reused, 0)
		}
	}
	slices.SortStableFunc(out.List, func(a, b RunSummary) int { return cmp.Compare(a.sortAt(), b.sortAt()) })
	for i := range out.List {
		s := &out.List[i]
		if s.Checkpoints == 0 {
			continue // stopped before it stored one
		}
		if err := e.runStatus(ctx, thread, s, last[s.ID], cps[0].ID); err != nil {
			return Runs{}, err
		}
	}
	return out, nil
}

// sortAt places a run among the others: at its first checkpoint, or
// for one that stored none, just after the checkpoint it started from.
func (s RunSummary) sortAt() float64 {
	if s.Checkpoints == 0 {
		return float64(s.From) + 0.5
	}
	return float64(s.First)
}

// runStatus sets where run s stands at its last checkpoint cp (head:
// the thread's newest).
func (e *Engine) runStatus(ctx context.Context, thread string, s *RunSummary, cp Checkpoint, head int64) error {
	st := e.graph.StatusOf(cp)
	if cp.Unreadable != "" {
		st = RunStatus{Status: SourceUnreadable, Checkpoint: cp.ID}
	}
	s.Status, s.Reason = st.Status, st.Reason
	if st.Status != RunRunning {
		return nil
	}
	switch {
	case len(s.ContinuedBy) > 0:
		s.Status, s.Reason = RunStopped, "no process ran it on; "+strings.Join(s.ContinuedBy, ", ")+" carried it on"
	case cp.ID != head:
		s.Status, s.Reason = RunStopped, "no process ran it on, and no run carried it on"
	default:
		live, err := e.LiveStatus(ctx, thread)
		if err != nil {
			return err
		}
		if live.Checkpoint == cp.ID {
			s.Status, s.Reason = live.Status, live.Reason
		}
	}
	return nil
}
