package drill

// The graph drill's workers and checks (graph.go has its entry points).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"rewind/engine"
	"rewind/engine/worker"
	"rewind/store"
)

type graphDriller struct {
	cfg GraphConfig
	e   *engine.Engine
}

func (d *graphDriller) say(format string, a ...any) {
	if d.cfg.Observe != nil {
		d.cfg.Observe(fmt.Sprintf(format, a...))
	}
}

// graphRun is a completed thread.
type graphRun struct {
	values engine.Values
	chain  []engine.Checkpoint // oldest first
}

func (r graphRun) figures() map[string]any {
	return map[string]any{"checkpoints": len(r.chain), "nodes": stepNodes(r.chain)}
}

func (d *graphDriller) spawn(ctx context.Context, op, thread, killAt string) (step, error) {
	req, err := json.Marshal(graphRequest{Op: op, Thread: thread, Store: d.cfg.Store, Input: d.cfg.Input, KillAt: killAt})
	if err != nil {
		return step{}, err
	}
	env := append(append([]string(nil), d.cfg.Env...), WorkerEnv+"="+string(req))
	p, err := worker.Start(ctx, d.cfg.Exe, nil, env)
	if err != nil {
		return step{}, err
	}
	s := collect(p, op)
	d.say("  %s: worker %-6s pid %-7d %s", store.Name(thread), op, p.Pid(), describe(s))
	return s, nil
}

// drive runs workers on thread until it is done: the first op given, then
// resumes (killAt is passed on until a worker dies at it).
func (d *graphDriller) drive(ctx context.Context, thread, op, killAt string) ([]step, error) {
	var steps []step
	for len(steps) < maxWorkers {
		before := d.headID(ctx, thread)
		s, err := d.spawn(ctx, op, thread, killAt)
		if err != nil {
			return steps, err
		}
		steps = append(steps, s)
		killAt = carried(killAt, int(d.headID(ctx, thread)-before))
		switch {
		case s.killed:
			return steps, nil
		case s.errText != "":
			return steps, errors.New(s.errText)
		case s.result != nil && s.result.Status == "done":
			return steps, nil
		case s.result != nil && s.result.Status == engine.RunAwaitingApproval && d.cfg.Answer != nil:
			if err := d.answer(ctx, thread); err != nil {
				return steps, err
			}
		}
		op = worker.OpResume
	}
	return steps, fmt.Errorf("thread %s not done after %d workers (a run that waits for a person needs GraphConfig.Answer)", store.Name(thread), maxWorkers)
}

// headID is thread's newest checkpoint id (0: none yet).
func (d *graphDriller) headID(ctx context.Context, thread string) int64 {
	st, err := d.e.Status(ctx, thread) // the newest listing, not its whole state
	if err != nil {
		return 0
	}
	return st.Checkpoint
}

// answer records the person's answer (GraphConfig.Answer) on thread's
// head, keeping its pending tasks for the next worker to resume.
func (d *graphDriller) answer(ctx context.Context, thread string) error {
	head, err := d.e.Latest(ctx, thread)
	if err != nil {
		return err
	}
	ws, err := d.cfg.Answer(head)
	if err != nil {
		return fmt.Errorf("answer thread %s at @%d: %w", store.Name(thread), head.ID, err)
	}
	if _, err := d.e.UpdateState(ctx, thread, head.ID, ws, ""); err != nil {
		return fmt.Errorf("answer thread %s at @%d: %w", store.Name(thread), head.ID, err)
	}
	return nil
}

func (d *graphDriller) fresh(ctx context.Context, thread string) error {
	if err := d.e.Store().DeleteThread(ctx, thread); err != nil && !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("clear thread %s: %w", store.Name(thread), err)
	}
	return nil
}

// read is the thread as stored: its head's values and its chain.
func (d *graphDriller) read(ctx context.Context, thread string) (graphRun, error) {
	head, err := d.e.Latest(ctx, thread)
	if err != nil {
		return graphRun{}, err
	}
	var chain []engine.Checkpoint
	for before := int64(0); ; {
		page, err := d.e.History(ctx, thread, before, 500)
		if err != nil {
			return graphRun{}, err
		}
		chain = append(chain, page...)
		if len(page) < 500 {
			break
		}
		before = page[len(page)-1].ID
	}
	slices.Reverse(chain)
	return graphRun{values: head.Values, chain: chain}, nil
}

func (d *graphDriller) baseline(ctx context.Context) (graphRun, error) {
	thread := d.cfg.Threads + "baseline"
	d.say("baseline: an uninterrupted run of %q", d.cfg.Input)
	if err := d.fresh(ctx, thread); err != nil {
		return graphRun{}, err
	}
	steps, err := d.drive(ctx, thread, worker.OpRun, "")
	if err != nil {
		return graphRun{}, err
	}
	if len(steps) != 1 {
		d.say("  the uninterrupted run took %d workers (it stopped on its way)", len(steps))
	}
	return d.read(ctx, thread)
}

// drill kills a worker at spec, resumes the thread and checks.
func (d *graphDriller) drill(ctx context.Context, spec string, base graphRun) (Outcome, error) {
	thread := d.cfg.Threads + spec
	out := Outcome{Point: spec, Figures: map[string]any{}}
	check := func(name string, ok bool, format string, a ...any) {
		out.Checks = append(out.Checks, Check{Name: name, OK: ok, Detail: fmt.Sprintf(format, a...)})
	}
	if err := d.fresh(ctx, thread); err != nil {
		return out, err
	}
	steps, err := d.drive(ctx, thread, worker.OpRun, spec)
	if err != nil {
		return out, err
	}
	cur := steps[len(steps)-1]
	check("killed", cur.killed, "worker died by SIGKILL at %q (%s)", cur.killAt, describe(cur))
	if !cur.killed {
		return out, nil
	}
	at, err := d.read(ctx, thread)
	restart := worker.OpResume
	if errors.Is(err, store.ErrNotFound) {
		restart = worker.OpRun // nothing committed: the turn starts again from its input
	} else if err != nil {
		return out, err
	}
	var stored []string
	if n := len(at.chain); n > 0 {
		head := at.chain[n-1]
		pw, err := d.e.PendingWrites(ctx, thread, head.ID)
		if err != nil {
			return out, err
		}
		for _, tw := range pw {
			stored = append(stored, tw.Task)
		}
		out.Figures["killedAtCheckpoint"] = head.ID
		out.Figures["pendingTasks"] = engine.DescribeTasks(head.Tasks)
	}
	out.Figures["storedWrites"] = len(stored)
	var after []step
	if n := len(at.chain); n > 0 && len(at.chain[n-1].Tasks) == 0 {
		check("resumed to completion", true, "the kill came after the last commit: nothing was left to run")
	} else {
		if after, err = d.drive(ctx, thread, restart, ""); err != nil {
			check("resumed to completion", false, "%v", err)
			return out, nil
		}
		last := after[len(after)-1]
		check("resumed to completion", last.result != nil && last.result.Status == "done", "%s after %d new worker(s), from %s", describe(last), len(after), restart)
	}
	fin, err := d.read(ctx, thread)
	if err != nil {
		return out, err
	}
	var again, reused []string
	for _, s := range after {
		again = append(again, common(s.started, stored)...)
		reused = append(reused, common(s.reused, stored)...)
	}
	check("no stored task ran again", len(again) == 0 && len(reused) == len(stored), "%d task(s) had stored writes at the kill: %d reused, %d run again %v", len(stored), len(reused), len(again), again)
	lost := lostCheckpoints(at.chain, fin.chain)
	check("no committed checkpoint lost", lost == "", "%d checkpoint(s) at the kill, %d after; %s", len(at.chain), len(fin.chain), orNone(lost))
	broken := brokenParents(fin.chain)
	check("chain's parents intact", broken == "", "%s", orNone(broken))
	same := slices.Equal(stepNodes(fin.chain), stepNodes(base.chain))
	check("same checkpoints as the uninterrupted run", same, "nodes by checkpoint %v, uninterrupted %v", stepNodes(fin.chain), stepNodes(base.chain))
	eq, diff := sameValues(base.values, fin.values, d.cfg.Exclude)
	check("final values = uninterrupted run's", eq, "%s", diff)
	out.Figures["workers"] = len(steps) + len(after)
	out.Passed = true
	for _, c := range out.Checks {
		out.Passed = out.Passed && c.OK
	}
	return out, nil
}

func common(xs, set []string) []string {
	var out []string
	for _, x := range xs {
		if slices.Contains(set, x) {
			out = append(out, x)
		}
	}
	return out
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// lostCheckpoints names the checkpoints of before missing from after, or
// there with another parent.
func lostCheckpoints(before, after []engine.Checkpoint) string {
	parent := map[int64]int64{}
	for _, cp := range after {
		parent[cp.ID] = cp.ParentID
	}
	var lost []string
	for _, cp := range before {
		if p, ok := parent[cp.ID]; !ok || p != cp.ParentID {
			lost = append(lost, fmt.Sprintf("@%d (parent @%d)", cp.ID, cp.ParentID))
		}
	}
	return strings.Join(lost, ", ")
}

// brokenParents says where chain (oldest first) is not one line: the
// first has no parent, each other's is the one before it.
func brokenParents(chain []engine.Checkpoint) string {
	var bad []string
	for i, cp := range chain {
		want := int64(0)
		if i > 0 {
			want = chain[i-1].ID
		}
		if cp.ParentID != want {
			bad = append(bad, fmt.Sprintf("@%d has parent @%d, want @%d", cp.ID, cp.ParentID, want))
		}
	}
	return strings.Join(bad, "; ")
}

// stepNodes is what each checkpoint of chain records its superstep ran.
func stepNodes(chain []engine.Checkpoint) []string {
	out := make([]string, len(chain))
	for i, cp := range chain {
		out[i] = strings.Join(cp.Metadata.Nodes, "+")
	}
	return out
}

// sameValues compares two heads' channels, those in exclude aside.
func sameValues(a, b engine.Values, exclude []string) (bool, string) {
	keys := slices.Sorted(maps.Keys(a))
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		if slices.Contains(exclude, k) {
			continue
		}
		var x, y any
		_ = json.Unmarshal(a[k], &x)
		_ = json.Unmarshal(b[k], &y)
		if !reflect.DeepEqual(x, y) {
			return false, fmt.Sprintf("channel %s differs: %s vs %s", k, clip(string(a[k])), clip(string(b[k])))
		}
	}
	if len(exclude) > 0 {
		return true, fmt.Sprintf("every channel equal (%s left out)", strings.Join(exclude, ", "))
	}
	return true, "every channel equal"
}
