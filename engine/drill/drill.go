// Package drill runs crash-recovery drills: for each kill point it starts a
// real worker process that kills itself (SIGKILL) at that moment, resumes
// the thread in new processes, and checks what must hold afterwards: the
// run completes, only the pending tasks are redispatched, nothing that
// finished runs twice, no side effect is duplicated, the budget is not
// reset, and the final state equals an uninterrupted run's. At the points
// where it matters, a record the run read is then changed (a source bump
// by another process), and the verdict is checked: re-read, write
// blocked, or draft failing its verification.
package drill

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"rewind/engine"
	"rewind/engine/seal"
	"rewind/engine/selftest"
	"rewind/engine/ticket"
	"rewind/engine/worker"
	"rewind/store"
)

// Config says where and how to drill.
type Config struct {
	// Exe is the rewind binary the workers run.
	Exe string
	// Store is the spec the workers open (sqlite:… or postgres://…).
	Store string
	// Env is the workers' environment.
	Env []string
	// Open opens the same store in this process, to seed and inspect.
	Open func(ctx context.Context) (store.Store, error)
	// Sources is the file of source versions the workers and this process
	// share (passed to the workers as $REWIND_SOURCES).
	Sources string
	// Points to drill; empty means all.
	Points []worker.Point
	// MockLatency is passed to the workers.
	MockLatency time.Duration
	// Observe sees progress lines; may be nil.
	Observe func(line string)
	// Keys open what the workers sealed ($REWIND_KEY_FILE in Env): this
	// process inspects the same threads. Nil when none is given.
	Keys *seal.Keys
}

// Check is one thing that must hold after a drill.
type Check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail,omitempty"`
}

// Outcome is one kill point's drill.
type Outcome struct {
	Point   string         `json:"point"`
	Passed  bool           `json:"passed"`
	Checks  []Check        `json:"checks"`
	Figures map[string]any `json:"figures"`
}

// Scenario is the turn every drill runs: seeded history long enough that
// the turn compacts, three subtasks, a critic bounce, and a reply drafted
// behind the approval gate.
const Sentence = "My order SO20260901 hasn't arrived yet: what is the order status, where is the parcel now, and can I get a refund if it is lost?"

// seedMessages makes the turn cross the 20-message line, so it compacts.
const seedMessages = 12

// Result is the whole matrix.
type Result struct {
	Baseline map[string]any `json:"baseline"`
	Outcomes []Outcome      `json:"outcomes"`
	Passed   bool           `json:"passed"`
}

// Run drills every configured point.
func Run(ctx context.Context, cfg Config) (Result, error) { return run(ctx, cfg, grantTTLs) }

// run is Run with the grant lives the expired-grant drills try (grantTTLs).
func run(ctx context.Context, cfg Config, ttls []time.Duration) (Result, error) {
	if cfg.Exe == "" || cfg.Store == "" || cfg.Open == nil || cfg.Sources == "" {
		return Result{}, errors.New("drill needs the rewind binary, a store spec, an opener and a source versions file")
	}
	cfg.Env = append(append([]string(nil), cfg.Env...), "REWIND_SOURCES="+cfg.Sources)
	points := cfg.Points
	if len(points) == 0 {
		points = worker.Points
	}
	st, err := cfg.Open(ctx)
	if err != nil {
		return Result{}, err
	}
	defer st.Close()
	d := &driller{cfg: cfg, st: st, ttls: ttls}
	grants := d.grantDrills(ctx)
	defer grants.stop()
	base, err := d.baseline(ctx)
	if err != nil {
		return Result{}, fmt.Errorf("baseline run: %w", err)
	}
	res := Result{Baseline: base.figures(), Passed: true}
	for _, p := range points {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		out, err := d.drill(ctx, p, base)
		if err != nil {
			out = Outcome{Point: string(p.Name), Checks: []Check{{Name: "drill ran", OK: false, Detail: err.Error()}}, Figures: map[string]any{}}
		}
		res.Passed = res.Passed && out.Passed
		res.Outcomes = append(res.Outcomes, out)
	}
	for _, out := range grants.wait(d) {
		res.Passed = res.Passed && out.Passed
		res.Outcomes = append(res.Outcomes, out)
	}
	// Last: each bumps a record, which every later run would read anew.
	for _, p := range points {
		if _, ok := SourceVerdicts[p.Name]; !ok {
			continue
		}
		if err := ctx.Err(); err != nil {
			return res, err
		}
		out, err := d.sourceChanged(ctx, p, base)
		if err != nil {
			out = Outcome{Point: SourcePoint(p.Name), Checks: []Check{{Name: "drill ran", OK: false, Detail: err.Error()}}, Figures: map[string]any{}}
		}
		res.Passed = res.Passed && out.Passed
		res.Outcomes = append(res.Outcomes, out)
	}
	return res, nil
}

type driller struct {
	cfg  Config
	st   store.Store
	ttls []time.Duration // grantTTLs
}

// aside are drills run beside the others: each has its own progress
// lines, told (wait) after the kill points', where they ran before.
type aside struct {
	cancel context.CancelFunc
	done   chan struct{}
	outs   []Outcome
	lines  [][]string
}

// grantDrills starts the two expired-grant drills, which spend most of
// their time waiting on the real clock for a grant to expire (3 s each,
// grantTTLs):
// beside the kill points, on threads of their own, that wait costs no
// wall time. They bump no record, so they end before the source drills.
func (d *driller) grantDrills(ctx context.Context) *aside {
	drills := []struct {
		point, heading string
		run            func(*driller, context.Context, time.Duration) (Outcome, error)
	}{
		{"expired-authorization", "expired authorization: the grant expires while the run waits for approval", (*driller).expiredAuthorization},
		{"expired-after-side-effect", "expired after the side effect: the draft is written, the worker dies, the grant expires, a new worker resumes", (*driller).expiredAfterSideEffect},
	}
	ctx, cancel := context.WithCancel(ctx)
	a := &aside{cancel: cancel, done: make(chan struct{}), outs: make([]Outcome, len(drills)), lines: make([][]string, len(drills))}
	var wg sync.WaitGroup
	for i, dr := range drills {
		own := *d
		own.cfg.Observe = func(l string) { a.lines[i] = append(a.lines[i], l) }
		wg.Add(1)
		go func() {
			defer wg.Done()
			own.say("%s", dr.heading)
			out, err := dr.run(&own, ctx, d.ttls[0])
			for _, ttl := range d.ttls[1:] {
				if err != nil || out.Figures["hint"] == nil {
					break
				}
				own.say("  the grant expired too soon (%s): again, with a grant of %s", out.Figures["hint"], ttl)
				out, err = dr.run(&own, ctx, ttl)
			}
			if err != nil {
				out = Outcome{Point: dr.point, Checks: []Check{{Name: "drill ran", OK: false, Detail: err.Error()}}, Figures: map[string]any{}}
			}
			a.outs[i] = out
		}()
	}
	go func() {
		wg.Wait()
		close(a.done)
	}()
	return a
}

// wait waits for the drills aside to end, tells their progress lines and
// returns their outcomes, in the order they were started.
func (a *aside) wait(d *driller) []Outcome {
	<-a.done
	for _, lines := range a.lines {
		for _, l := range lines {
			d.say("%s", l)
		}
	}
	return a.outs
}

// stop ends the drills aside (Run returning early) and waits for them:
// the store they use is closed next.
func (a *aside) stop() {
	a.cancel()
	<-a.done
}

func (d *driller) say(format string, a ...any) {
	if d.cfg.Observe != nil {
		d.cfg.Observe(fmt.Sprintf(format, a...))
	}
}

func (d *driller) engine() (*engine.Engine, error) {
	return ticket.NewEngine(d.st, ticket.NewMock(), ticket.WithSources(ticket.FileSources{Path: d.cfg.Sources}), ticket.WithKeys(d.cfg.Keys))
}

// seed gives a fresh thread its earlier history.
func (d *driller) seed(ctx context.Context, thread string) error {
	if err := d.st.DeleteThread(ctx, thread); err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	e, err := d.engine()
	if err != nil {
		return err
	}
	_, err = e.UpdateState(ctx, thread, 0, []engine.Write{engine.Put("messages", selftest.History(seedMessages, 0))}, ticket.NodeReply)
	return err
}

// finalRun is what a completed thread looks like.
type finalRun struct {
	values     engine.Values
	state      ticket.State
	modelCalls int
	drafts     int
}

func (f finalRun) figures() map[string]any {
	b := -1
	if f.state.BudgetRemaining != nil {
		b = *f.state.BudgetRemaining
	}
	return map[string]any{"modelCalls": f.modelCalls, "drafts": f.drafts, "budgetRemaining": b, "historyVersion": f.state.HistoryVersion, "messages": len(f.state.Messages)}
}

// step is one worker process's run.
type step struct {
	op      string
	killed  bool
	killAt  worker.KillPoint
	result  *engine.Result
	errText string
	code    int
	// calls counts model.called events, so a killed worker's calls count too.
	calls int
	// started are the tasks it began (node.started), reused the stored
	// ones it took instead (task.reused): what the graph drill checks.
	started, reused []string
}

// collect reads a worker's messages until it exits, then waits for it.
func collect(p *worker.Proc, op string) step {
	s := step{op: op}
	for m := range p.Messages() {
		switch {
		case m.Event != nil && m.Event.Type == engine.EventModelCalled:
			s.calls++
		case m.Event != nil && m.Event.Type == engine.EventNodeStarted:
			s.started = append(s.started, m.Event.Task)
		case m.Event != nil && m.Event.Type == engine.EventTaskReused:
			s.reused = append(s.reused, m.Event.Task)
		case m.Kill != "":
			s.killAt = m.Kill
		case m.Result != nil:
			s.result = m.Result
		case m.Error != "":
			s.errText = m.Error
		}
	}
	killed, code, stderr := p.Wait()
	s.killed, s.code = killed, code
	if !killed && code != 0 && s.errText == "" {
		s.errText = fmt.Sprintf("worker %s exited %d: %s", op, code, strings.TrimSpace(stderr))
	}
	return s
}

func (d *driller) spawn(ctx context.Context, op, thread, killAt string) (step, error) {
	args := []string{"worker", op, thread, "--store", d.cfg.Store}
	if op == worker.OpRun {
		args = []string{"worker", op, "--thread", thread, "--input", Sentence, "--draft", "--auth-ttl", "1h", "--store", d.cfg.Store}
	}
	if killAt != "" {
		args = append(args, "--kill-at", killAt)
	}
	if d.cfg.MockLatency > 0 {
		args = append(args, "--mock-latency", d.cfg.MockLatency.String())
	}
	p, err := worker.Start(ctx, d.cfg.Exe, args, d.cfg.Env)
	if err != nil {
		return step{}, err
	}
	s := collect(p, op)
	d.say("  worker %-7s pid %-7d %s", op, p.Pid(), describe(s))
	return s, nil
}

func describe(s step) string {
	switch {
	case s.killed:
		return "killed (SIGKILL) at " + string(s.killAt)
	case s.errText != "":
		return "failed: " + s.errText
	case s.result != nil:
		return fmt.Sprintf("%s at checkpoint %d", s.result.Status, s.result.Checkpoint)
	}
	return "exited"
}

// complete drives the thread to the end with fresh workers: resume what is
// pending, answer the approval gate (approve).
func (d *driller) complete(ctx context.Context, thread string, last step, killAt string, steps *[]step) error {
	for i := 0; i < 8; i++ {
		e, err := d.engine()
		if err != nil {
			return err
		}
		cp, err := e.Latest(ctx, thread)
		if err != nil {
			return err
		}
		if len(cp.Tasks) == 0 {
			return nil
		}
		op := worker.OpResume
		s, err := ticket.Decode(cp.Values)
		if err != nil {
			return err
		}
		if _, waiting := ticket.WaitingDraft(cp, s, time.Now()); waiting && onlyGate(cp) && last.result != nil && last.result.Status == engine.RunAwaitingApproval {
			op = worker.OpApprove
		}
		next, err := d.spawn(ctx, op, thread, killAt)
		if err != nil {
			return err
		}
		*steps = append(*steps, next)
		if next.killed {
			killAt = ""
		}
		if next.errText != "" && !next.killed {
			return errors.New(next.errText)
		}
		last = next
	}
	return errors.New("thread did not complete after 8 workers")
}

// checkRunsChain checks what `rewind runs` tells from the listings alone:
// the first worker after the kill ran from the kill's checkpoint and its
// run names the run it carries on (the killed one, or the one that wrote
// that checkpoint when the killed run stored nothing).
func checkRunsChain(ctx context.Context, d *driller, thread string, at int64, check func(string, bool, string, ...any)) error {
	e, err := d.engine()
	if err != nil {
		return err
	}
	runs, err := e.Runs(ctx, thread)
	if err != nil {
		return err
	}
	var lines []string
	for _, r := range runs.List {
		if r.From == at && r.Continues != "" && r.Continues != r.ID {
			check("runs chain the resume to the killed run", true, "%s", r.Text())
			return nil
		}
		lines = append(lines, r.Text())
	}
	check("runs chain the resume to the killed run", false, "no run from @%d names the run it continues: %s", at, strings.Join(lines, "; "))
	return nil
}

func onlyGate(cp engine.Checkpoint) bool {
	for _, t := range cp.Tasks {
		if t.Node != ticket.NodeApproval {
			return false
		}
	}
	return len(cp.Tasks) > 0
}

func (d *driller) final(ctx context.Context, thread string, steps []step) (finalRun, error) {
	e, err := d.engine()
	if err != nil {
		return finalRun{}, err
	}
	cp, err := e.Latest(ctx, thread)
	if err != nil {
		return finalRun{}, err
	}
	s, err := ticket.Decode(cp.Values)
	if err != nil {
		return finalRun{}, err
	}
	f := finalRun{values: cp.Values, state: s}
	for _, st := range steps {
		f.modelCalls += st.calls
	}
	if ds, ok := d.st.(store.Drafts); ok {
		list, err := ds.ListDrafts(ctx, thread)
		if err != nil {
			return finalRun{}, err
		}
		f.drafts = len(list)
	}
	return f, nil
}

func (d *driller) baseline(ctx context.Context) (finalRun, error) {
	thread := "drill:baseline"
	d.say("baseline: an uninterrupted run")
	if err := d.seed(ctx, thread); err != nil {
		return finalRun{}, err
	}
	first, err := d.spawn(ctx, worker.OpRun, thread, "")
	if err != nil {
		return finalRun{}, err
	}
	if first.errText != "" {
		return finalRun{}, errors.New(first.errText)
	}
	steps := []step{first}
	if err := d.complete(ctx, thread, first, "", &steps); err != nil {
		return finalRun{}, err
	}
	return d.final(ctx, thread, steps)
}

// drill kills a worker at p, resumes the thread in new workers and checks.
func (d *driller) drill(ctx context.Context, p worker.Point, base finalRun) (Outcome, error) {
	name := string(p.Name)
	if p.Kind != "" {
		name = p.DrillSpec() // a generic point says which occurrence
	}
	thread := "drill:" + name
	d.say("kill point %s: %s", name, p.Desc)
	out := Outcome{Point: name, Figures: map[string]any{}}
	check := func(name string, ok bool, format string, a ...any) {
		out.Checks = append(out.Checks, Check{Name: name, OK: ok, Detail: fmt.Sprintf(format, a...)})
	}
	steps, cur, err := d.runToKill(ctx, thread, p)
	if err != nil {
		return out, err
	}
	check("killed", cur.killed && cur.killAt == p.Name, "worker died by SIGKILL at %q (killed %v)", cur.killAt, cur.killed)
	if !cur.killed {
		out.Passed = false
		return out, nil
	}
	// What the thread holds at the moment of the kill.
	e, err := d.engine()
	if err != nil {
		return out, err
	}
	at, err := e.Latest(ctx, thread)
	if err != nil {
		return out, err
	}
	plan, err := e.PlanResume(ctx, thread, at.ID)
	if err != nil {
		return out, err
	}
	redispatch := plan.Redispatched()
	expected := expectedCalls(at, redispatch)
	out.Figures["killedAtCheckpoint"] = at.ID
	out.Figures["pendingTasks"] = engine.DescribeTasks(at.Tasks)
	out.Figures["storedWrites"] = len(plan.Reused())
	out.Figures["redispatched"] = len(redispatch)

	recovery := len(steps)
	if err := d.complete(ctx, thread, cur, "", &steps); err != nil {
		check("resumed to completion", false, "%v", err)
		out.Passed = false
		return out, nil
	}
	fin, err := d.final(ctx, thread, steps)
	if err != nil {
		return out, err
	}
	if len(steps) == recovery {
		// The kill came after the last commit: nothing was left to redispatch.
		check("resume-phase calls = pending tasks", expected == 0, "nothing pending after the kill; pending tasks need %d calls", expected)
		check("no completed task ran again", true, "no worker was needed")
		out.Figures["resumePhaseCalls"] = 0
	} else if first := steps[recovery]; first.result == nil || len(first.result.Steps) == 0 {
		// The resume stopped at the gate before any superstep ran (0 calls).
		calls := 0
		if first.result != nil {
			calls = sum(first.result.ModelCalls)
		}
		check("resume-phase calls = pending tasks", calls == expected, "resume made %d model calls, pending tasks need %d", calls, expected)
		check("no completed task ran again", true, "nothing ran before the gate")
		out.Figures["resumePhaseCalls"] = calls
	} else {
		o := plan.Outcome(*steps[recovery].result)
		calls := o.ModelCalls
		check("resume-phase calls = pending tasks", o.Complete && calls == expected, "resumed superstep (from @%d: %v) made %d model calls (%v) for %d redispatched task(s); want %d", steps[recovery].result.Steps[0].From, o.Complete, calls, steps[recovery].result.Steps[0].ModelCalls, len(redispatch), expected)
		check("no completed task ran again", len(o.RanAgain) == 0 && len(o.Reused) == len(plan.Reused()), "re-ran %s; reused %d of %d stored", engine.DescribeTasks(o.RanAgain), len(o.Reused), len(plan.Reused()))
		out.Figures["resumePhaseCalls"] = calls
	}
	out.Figures["resumePhaseExpected"] = expected
	status := "?"
	if last := steps[len(steps)-1]; last.result != nil {
		status = last.result.Status
	} else if len(steps) == recovery && len(fin.state.Messages) > 0 {
		if latest, err := e.Latest(ctx, thread); err == nil && len(latest.Tasks) == 0 {
			status = "done"
		}
	}
	check("resumed to completion", status == "done", "final status %s after %d worker(s)", status, len(steps))
	if len(steps) > recovery {
		if err := checkRunsChain(ctx, d, thread, at.ID, check); err != nil {
			return out, err
		}
	}
	check("no duplicate draft", fin.drafts == 1, "%d draft row(s) for the thread, want 1", fin.drafts)
	bBase, bFin := budget(base.state), budget(fin.state)
	check("budget not reset", bFin == bBase, "budget left %d, uninterrupted run %d", bFin, bBase)
	same, diff := sameState(base.values, fin.values)
	check("final state = uninterrupted run's", same, "%s", diff)
	out.Figures["modelCalls"] = fin.modelCalls
	out.Figures["baselineModelCalls"] = base.modelCalls
	out.Figures["workers"] = len(steps)
	out.Passed = true
	for _, c := range out.Checks {
		out.Passed = out.Passed && c.OK
	}
	return out, nil
}

// runToKill seeds thread and runs its turn in workers until the one that
// dies at p: the workers, the last of them the killed one (if any was).
func (d *driller) runToKill(ctx context.Context, thread string, p worker.Point) ([]step, step, error) {
	if err := d.seed(ctx, thread); err != nil {
		return nil, step{}, err
	}
	killAt := p.DrillSpec()
	cur, err := d.spawn(ctx, worker.OpRun, thread, killAt)
	if err != nil {
		return nil, step{}, err
	}
	steps := []step{cur}
	// Points after the gate are reached by the worker that answers it.
	for !cur.killed && cur.errText == "" && cur.result != nil && cur.result.Status == engine.RunAwaitingApproval && p.Name != worker.AwaitingApproval {
		if cur, err = d.spawn(ctx, worker.OpApprove, thread, killAt); err != nil {
			return nil, step{}, err
		}
		steps = append(steps, cur)
		if cur.result != nil && cur.result.Status == "done" {
			break
		}
	}
	return steps, cur, nil
}

// grantTTLs are how long the grant of an expired-grant drill lasts, tried
// in turn: long enough for the turn to reach the gate (expired
// authorization: a turn in this process) or for a worker to start and
// reach the side effect (expired after it), short enough to wait out.
// Where the grant expired too soon, a busy machine's, the drill starts
// again on a longer one: that is its set-up failing, not a check; the
// checks are the same.
var grantTTLs = []time.Duration{3 * time.Second, 10 * time.Second, 30 * time.Second}

// expiredAuthorization runs a draft turn under a grant that is valid when
// the run pauses at the gate with the draft proposed, and expires while
// it waits there for approval: approving (a worker process, on the real
// clock) must then block the write step with a reason and store nothing.
func (d *driller) expiredAuthorization(ctx context.Context, ttl time.Duration) (Outcome, error) {
	thread := "drill:expired-authorization"
	out := Outcome{Point: "expired-authorization", Figures: map[string]any{}}
	check := func(name string, ok bool, format string, a ...any) {
		out.Checks = append(out.Checks, Check{Name: name, OK: ok, Detail: fmt.Sprintf(format, a...)})
	}
	if err := d.seed(ctx, thread); err != nil {
		return out, err
	}
	e, err := d.engine()
	if err != nil {
		return out, err
	}
	grant, err := ticket.NewGrant("auth:"+thread, ttl, e.Now())
	if err != nil {
		return out, err
	}
	expires, err := time.Parse(time.RFC3339, grant.ExpiresAt)
	if err != nil {
		return out, err
	}
	turn := ticket.Turn{Text: Sentence, Draft: true, Authorization: grant}
	if err := turn.Validate(e.Now()); err != nil {
		return out, fmt.Errorf("the grant was refused before the turn: %w", err)
	}
	res, err := e.Run(ctx, thread, turn.Writes(), engine.RunConfig{})
	if err != nil {
		return out, err
	}
	if res.Status != engine.RunAwaitingApproval {
		return out, fmt.Errorf("run ended %s, want awaiting-approval", res.Status)
	}
	paused, err := e.Get(ctx, thread, res.Checkpoint)
	if err != nil {
		return out, err
	}
	// The engine's clock stamped the checkpoint that proposes the draft.
	valid := ticket.GrantProblem(grant, paused.CreatedAt)
	detail := fmt.Sprintf("@%d stored at %s, the grant expires at %s", paused.ID, paused.CreatedAt.Format(time.RFC3339Nano), grant.ExpiresAt)
	if valid != "" {
		detail += ": " + valid
	}
	check("grant valid when the draft was proposed", valid == "", "%s", detail)
	if valid != "" {
		out.Figures["hint"] = fmt.Sprintf("the turn must reach the gate within the grant's %s", ttl)
		return out, nil
	}
	if err := waitUntil(ctx, expires.Add(50*time.Millisecond)); err != nil {
		return out, err
	}
	s, err := d.spawn(ctx, worker.OpApprove, thread, "")
	if err != nil {
		return out, err
	}
	fin, err := d.final(ctx, thread, []step{s})
	if err != nil {
		return out, err
	}
	var op ticket.Operation
	for _, o := range fin.state.Operations {
		op = o
	}
	reported := s.result != nil && len(s.result.Blocked) == 1 && s.result.Blocked[0].Operation == op.ID
	check("write step blocked", op.Status == ticket.OpBlocked && strings.Contains(op.Result, "expired at "+grant.ExpiresAt), "operation %s is %s: %s", op.ID, op.Status, op.Result)
	check("nothing stored", fin.drafts == 0, "%d draft row(s)", fin.drafts)
	check("run finished", s.result != nil && s.result.Status == "done", "%s", describe(s))
	check("result reports the blocked write", reported, "worker result lists %s", blockedOf(s))
	out.Passed = true
	for _, c := range out.Checks {
		out.Passed = out.Passed && c.OK
	}
	out.Figures["reason"] = op.Result
	out.Figures["grantedAt"] = grant.GrantedAt
	out.Figures["grantExpiresAt"] = grant.ExpiresAt
	out.Figures["proposedAt"] = paused.CreatedAt.Format(time.RFC3339Nano)
	return out, nil
}

// waitUntil waits until t (at once when it is past), or ctx's end.
func waitUntil(ctx context.Context, t time.Time) error {
	wait := time.Until(t)
	if wait <= 0 {
		return nil
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(wait):
		return nil
	}
}

func blockedOf(s step) string {
	if s.result == nil || len(s.result.Blocked) == 0 {
		return "no blocked operation"
	}
	parts := make([]string, len(s.result.Blocked))
	for i, b := range s.result.Blocked {
		parts[i] = b.Operation + " (" + b.Reason + ")"
	}
	return strings.Join(parts, ", ")
}

// expiredAfterSideEffect kills the approving worker right after the draft
// was written, lets the grant expire, and resumes: the operation is looked
// up by id first, so the draft is reused, not blocked and not made again.
func (d *driller) expiredAfterSideEffect(ctx context.Context, ttl time.Duration) (Outcome, error) {
	thread := "drill:expired-after-side-effect"
	out := Outcome{Point: "expired-after-side-effect", Figures: map[string]any{}}
	check := func(name string, ok bool, format string, a ...any) {
		out.Checks = append(out.Checks, Check{Name: name, OK: ok, Detail: fmt.Sprintf(format, a...)})
	}
	if err := d.seed(ctx, thread); err != nil {
		return out, err
	}
	e, err := d.engine()
	if err != nil {
		return out, err
	}
	grant, err := ticket.NewGrant("auth:"+thread, ttl, time.Now())
	if err != nil {
		return out, err
	}
	turn := ticket.Turn{Text: Sentence, Draft: true, Authorization: grant}
	res, err := e.Run(ctx, thread, turn.Writes(), engine.RunConfig{})
	if err != nil {
		return out, err
	}
	if res.Status != engine.RunAwaitingApproval {
		return out, fmt.Errorf("run ended %s, want awaiting-approval", res.Status)
	}
	op := res.Interrupt.Operation
	approve, err := d.spawn(ctx, worker.OpApprove, thread, string(worker.AfterSideEffect))
	if err != nil {
		return out, err
	}
	check("killed", approve.killed && approve.killAt == worker.AfterSideEffect, "approving worker: %s", describe(approve))
	if !approve.killed {
		out.Figures["hint"] = fmt.Sprintf("the approving worker must reach the side effect within the grant's %s", ttl)
		return out, nil
	}
	at, err := d.final(ctx, thread, nil)
	if err != nil {
		return out, err
	}
	check("draft written before the kill", at.drafts == 1 && at.state.Operations[op].Status == ticket.OpApproved,
		"%d draft row(s); operation %s recorded as %s", at.drafts, op, at.state.Operations[op].Status)
	expires, err := time.Parse(time.RFC3339, grant.ExpiresAt)
	if err != nil {
		return out, err
	}
	if err := waitUntil(ctx, expires.Add(100*time.Millisecond)); err != nil {
		return out, err
	}
	check("grant expired before the resume", !time.Now().Before(expires), "grant expired at %s", grant.ExpiresAt)
	resume, err := d.spawn(ctx, worker.OpResume, thread, "")
	if err != nil {
		return out, err
	}
	fin, err := d.final(ctx, thread, nil)
	if err != nil {
		return out, err
	}
	got := fin.state.Operations[op]
	check("resumed to completion", resume.result != nil && resume.result.Status == "done" && resume.errText == "", "%s", describe(resume))
	check("draft reused, not blocked", got.Status == ticket.OpDone && got.Reused, "operation %s is %s (reused %v): %s", op, got.Status, got.Reused, got.Result)
	check("nothing reported blocked", resume.result != nil && len(resume.result.Blocked) == 0, "worker result lists %s", blockedOf(resume))
	check("no duplicate draft", fin.drafts == 1, "%d draft row(s) for the thread, want 1", fin.drafts)
	out.Figures["operation"] = op
	out.Figures["grantExpiresAt"] = grant.ExpiresAt
	out.Passed = true
	for _, c := range out.Checks {
		out.Passed = out.Passed && c.OK
	}
	return out, nil
}

// expectedCalls is how many model calls redispatching tasks at cp costs.
func expectedCalls(cp engine.Checkpoint, tasks []engine.Task) int {
	s, err := ticket.Decode(cp.Values)
	if err != nil {
		return -1
	}
	n := 0
	for _, t := range tasks {
		switch t.Node {
		case ticket.NodeExecutor:
			n += ticket.MockCallsPerSubtask // a tool round, then the finding
		case ticket.NodePlanner, ticket.NodeCritic, ticket.NodeReply:
			n++
		case ticket.NodeSummarizer:
			if ticket.NeedsSummary(s.Messages, s.Summary) != "" && ticket.Cut(s.Messages) > 0 {
				n++
			}
		}
	}
	return n
}

func budget(s ticket.State) int {
	if s.BudgetRemaining == nil {
		return -1
	}
	return *s.BudgetRemaining
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// sameState compares two final states with the parts that legitimately
// differ masked: decision times and whether a side effect was reused.
func sameState(a, b engine.Values) (bool, string) {
	na, nb := normalise(a), normalise(b)
	if reflect.DeepEqual(na, nb) {
		return true, "equal (decision and grant times, reuse flags aside)"
	}
	keys := slices.Sorted(maps.Keys(na))
	for _, k := range keys {
		if !reflect.DeepEqual(na[k], nb[k]) {
			x, _ := json.Marshal(na[k])
			y, _ := json.Marshal(nb[k])
			return false, fmt.Sprintf("channel %s differs: %s vs %s", k, clip(string(x)), clip(string(y)))
		}
	}
	return false, "channel sets differ"
}

func normalise(v engine.Values) map[string]any {
	out := map[string]any{}
	for k, raw := range v {
		var x any
		_ = json.Unmarshal(raw, &x)
		out[k] = x
	}
	if ap, ok := out["approvals"].(map[string]any); ok {
		for _, d := range ap {
			if m, ok := d.(map[string]any); ok {
				delete(m, "at")
			}
		}
	}
	if a, ok := out["authorization"].(map[string]any); ok {
		delete(a, "expiresAt") // times of the grant differ from run to run
		delete(a, "grantedAt")
	}
	if ops, ok := out["operations"].(map[string]any); ok {
		for _, o := range ops {
			if m, ok := o.(map[string]any); ok {
				delete(m, "reused")
			}
		}
	}
	// Operation ids name a task of the thread (ticket.OperationID), so
	// every drill thread has its own: compare them by position.
	if ops, ok := out["operations"].(map[string]any); ok {
		ids := slices.Sorted(maps.Keys(ops))
		rename := map[string]string{}
		for i, id := range ids {
			rename[id] = fmt.Sprintf("op#%d", i+1)
		}
		out["operations"] = renameOps(ops, rename)
		for _, ch := range []string{"approvals", "verificationResults"} {
			if m, ok := out[ch].(map[string]any); ok {
				out[ch] = renameOps(m, rename)
			}
		}
	}
	return out
}

// renameOps rekeys m by rename and replaces the old ids in its string values.
func renameOps(m map[string]any, rename map[string]string) map[string]any {
	var fix func(v any) any
	fix = func(v any) any {
		switch x := v.(type) {
		case string:
			for from, to := range rename {
				x = strings.ReplaceAll(x, from, to)
			}
			return x
		case map[string]any:
			for k, e := range x {
				x[k] = fix(e)
			}
		}
		return v
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		if to, ok := rename[k]; ok {
			k = to
		}
		out[k] = fix(v)
	}
	return out
}

// clip is s cut past 160 bytes, between characters.
func clip(s string) string {
	if n := 160; len(s) > n {
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		return s[:n] + "…(" + strconv.Itoa(len(s)) + " bytes)"
	}
	return s
}
