package drill

// Source drills (seed 002): a worker dies at a kill point, another process
// changes a record the run read (`rewind source bump`), and new workers
// carry the thread on. What must hold depends on where the run was.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"

	"rewind/engine"
	"rewind/engine/ticket"
	"rewind/engine/worker"
)

// The verdicts a changed record gets.
const (
	// VerdictReRead: the work that read the record is done again before
	// the reply is written; the draft is built from the new version.
	VerdictReRead = "re-read"
	// VerdictBlocked: the reply was written from the old version, so the
	// gate blocks its draft, naming the record and both versions.
	VerdictBlocked = "write blocked"
	// VerdictStale: the draft was already written; it is kept (once), and
	// its verification fails the run, naming the change.
	VerdictStale = "verification failed"
)

// SourceVerdicts are the kill points with a source drill, and the verdict
// each must give.
var SourceVerdicts = map[worker.KillPoint]string{
	worker.MidFanout:               VerdictReRead,
	worker.BeforeSummary:           VerdictReRead,
	worker.AfterCompactionCommit:   VerdictReRead,
	worker.MidTransaction:          VerdictReRead,
	worker.AwaitingApproval:        VerdictBlocked,
	worker.BeforeSideEffect:        VerdictBlocked,
	worker.AfterSideEffect:         VerdictStale,
	worker.AfterSideEffectRecorded: VerdictStale,
}

// SourcePoint names the source drill at kill point p.
func SourcePoint(p worker.KillPoint) string { return "source-changed-at-" + string(p) }

// drillSource is the record the drill changes: what the shipping subtask
// reads.
const drillSource = "shipments/SO20260901"

// bump changes a record in another process, as `rewind source bump` does.
func (d *driller) bump(ctx context.Context, id string) (from, to int, err error) {
	cmd := exec.CommandContext(ctx, d.cfg.Exe, "source", "bump", id, "--store", d.cfg.Store, "--json")
	cmd.Env = d.cfg.Env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return 0, 0, fmt.Errorf("bump source %s in another process: %w: %s", id, err, strings.TrimSpace(errb.String()))
	}
	var res struct {
		Sources []ticket.SourceRead `json:"sources"`
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil || len(res.Sources) != 1 {
		return 0, 0, fmt.Errorf("bump source %s in another process: it answered %q, not the one source", id, out.String())
	}
	d.say("  source   bump    %s: v%d → v%d", id, res.Sources[0].Version-1, res.Sources[0].Version)
	return res.Sources[0].Version - 1, res.Sources[0].Version, nil
}

// sourceChanged kills a worker at p, bumps drillSource, carries the thread
// on and checks the verdict p must give.
func (d *driller) sourceChanged(ctx context.Context, p worker.Point, base finalRun) (Outcome, error) {
	verdict := SourceVerdicts[p.Name]
	name := SourcePoint(p.Name)
	c := &sourceCase{thread: "drill:" + name, base: base}
	d.say("%s: killed at %s, then %s changes (verdict: %s)", name, p.Name, drillSource, verdict)
	c.out = Outcome{Point: name, Figures: map[string]any{"verdict": verdict, "source": drillSource}}
	var err error
	c.steps, c.cur, err = d.runToKill(ctx, c.thread, p)
	if err != nil {
		return c.out, err
	}
	c.check("killed", c.cur.killed && c.cur.killAt == p.Name, "worker died by SIGKILL at %q (killed %v)", c.cur.killAt, c.cur.killed)
	if !c.cur.killed {
		return c.out, nil
	}
	if c.e, err = d.engine(); err != nil {
		return c.out, err
	}
	if c.at, err = c.e.Latest(ctx, c.thread); err != nil {
		return c.out, err
	}
	if c.stored, err = c.e.PendingWrites(ctx, c.thread, c.at.ID); err != nil {
		return c.out, err
	}
	if c.from, c.to, err = d.bump(ctx, drillSource); err != nil {
		return c.out, err
	}
	c.change = fmt.Sprintf("%s v%d → v%d", drillSource, c.from, c.to)
	c.out.Figures["from"], c.out.Figures["to"], c.out.Figures["killedAt"] = c.from, c.to, c.at.ID
	switch verdict {
	case VerdictReRead:
		err = d.reRead(ctx, c)
	case VerdictBlocked:
		err = d.blocked(ctx, c)
	case VerdictStale:
		err = d.stale(ctx, c)
	}
	if err != nil {
		return c.out, err
	}
	c.out.Passed = true
	for _, ch := range c.out.Checks {
		c.out.Passed = c.out.Passed && ch.OK
	}
	return c.out, nil
}

// sourceCase is a source-changed case under way (sourceChanged): the
// thread killed at its point, and the source's change since.
type sourceCase struct {
	thread   string
	base     finalRun // the uninterrupted run
	out      Outcome
	steps    []step
	cur      step // the killed worker
	e        *engine.Engine
	at       engine.Checkpoint // the newest when killed
	stored   []engine.TaskWrites
	from, to int // drillSource's versions before and after the bump
	change   string
}

func (c *sourceCase) check(name string, ok bool, format string, a ...any) {
	c.out.Checks = append(c.out.Checks, Check{Name: name, OK: ok, Detail: fmt.Sprintf(format, a...)})
}

// reRead: the resume reads the source again, as its plan said, reports
// the change when the old version was read, and drafts from the new one.
func (d *driller) reRead(ctx context.Context, c *sourceCase) error {
	// The resume analysis, read after the change, says what the
	// resume then does: the same check, the same tasks.
	plan, perr := c.e.PlanResume(ctx, c.thread, c.at.ID)
	if perr != nil {
		return perr
	}
	recovery := len(c.steps)
	err := d.complete(ctx, c.thread, c.cur, "", &c.steps)
	if len(c.steps) > recovery && c.steps[recovery].result != nil {
		o := plan.Outcome(*c.steps[recovery].result)
		c.check("plan said what the resume did", o.Complete && o.Differs == "", "plan %s; resume: %s", plan, o)
	} else {
		c.check("plan said what the resume did", false, "the resume left no result (plan %s)", plan)
	}
	c.check("resumed to completion", err == nil && len(c.steps) > recovery && c.steps[len(c.steps)-1].result != nil && c.steps[len(c.steps)-1].result.Status == "done", "%v after %d worker(s)", orOK(err), len(c.steps))
	fin, ferr := d.final(ctx, c.thread, c.steps)
	if ferr != nil {
		return ferr
	}
	var rc *engine.Rechecked
	for _, s := range c.steps[recovery:] {
		if s.result != nil && s.result.Rechecked != nil && rc == nil {
			rc = s.result.Rechecked
		}
	}
	// Whether the old version was read before the kill: a mid-fan-out
	// kill may come before the shipping executor ran at all.
	readOld := readAt(c.at, c.stored, drillSource, c.from)
	reported := rc != nil && strings.Contains(rc.Reason, c.change)
	c.check("re-read reported", reported == readOld, "old version read before the kill: %v; resume reported: %s", readOld, describeRecheck(rc))
	fresh, where := true, ""
	for _, st := range fin.state.Subtasks {
		if st.Source == drillSource && st.SourceVersion != c.to {
			fresh, where = false, fmt.Sprintf("%s read v%d", st.ID, st.SourceVersion)
		}
	}
	c.check("findings from the new version", fresh && fin.state.SourceVersions[drillSource] == c.to, "sourceVersions %v %s", fin.state.SourceVersions, where)
	op, v := doneDraft(fin.state)
	c.check("draft built from the new version, verified", op.Status == ticket.OpDone && op.Sources[drillSource] == c.to && v.OK, "operation %s %s from %v; verification ok %v %v", op.ID, op.Status, op.Sources, v.OK, v.Problems)
	c.check("no duplicate draft", fin.drafts == 1, "%d draft row(s) for the thread, want 1", fin.drafts)
	bBase, bFin := budget(c.base.state), budget(fin.state)
	c.check("budget not reset", bFin >= 0 && bFin <= bBase, "budget left %d, uninterrupted run %d: a re-read spends it", bFin, bBase)
	c.out.Figures["workers"] = len(c.steps)
	return nil
}

// blocked: the resume blocks the write, naming the change, and stores
// and verifies nothing.
func (d *driller) blocked(ctx context.Context, c *sourceCase) error {
	recovery := len(c.steps)
	err := d.complete(ctx, c.thread, c.cur, "", &c.steps)
	var blocked []engine.Blocked
	status := "?"
	for _, s := range c.steps[recovery:] {
		if s.result != nil {
			blocked = append(blocked, s.result.Blocked...)
			status = s.result.Status
		}
	}
	fin, ferr := d.final(ctx, c.thread, c.steps)
	if ferr != nil {
		return ferr
	}
	op := onlyDraft(fin.state)
	named := len(blocked) == 1 && blocked[0].Operation == op.ID && strings.Contains(blocked[0].Reason, c.change)
	c.check("write blocked naming the change", named && op.Status == ticket.OpBlocked, "blocked %v; operation %s is %s", blocked, op.ID, op.Status)
	c.check("nothing stored", fin.drafts == 0, "%d draft row(s)", fin.drafts)
	c.check("run finished", err == nil && status == "done", "%v, status %s", orOK(err), status)
	c.check("nothing verified", len(fin.state.VerificationResults) == 0, "%d verification(s)", len(fin.state.VerificationResults))
	if len(blocked) > 0 {
		c.out.Figures["reason"] = blocked[0].Reason
	}
	return nil
}

// stale: the draft was stored before the change, so the resume fails the
// run naming it, and a second resume does not revive it.
func (d *driller) stale(ctx context.Context, c *sourceCase) error {
	s1, err := d.spawn(ctx, worker.OpResume, c.thread, "")
	if err != nil {
		return err
	}
	failed := s1.code == 1 && strings.Contains(s1.errText, "verification failed") && strings.Contains(s1.errText, fmt.Sprintf("%s changed from v%d to v%d", drillSource, c.from, c.to))
	c.check("resume fails the run naming the change", failed, "%s", describe(s1))
	fin, ferr := d.final(ctx, c.thread, nil)
	if ferr != nil {
		return ferr
	}
	op, v := doneDraft(fin.state)
	c.check("draft kept, once", fin.drafts == 1 && op.Status == ticket.OpDone, "%d draft row(s); operation %s is %s", fin.drafts, op.ID, op.Status)
	c.check("verification recorded as failed", !v.OK && len(v.Problems) == 1 && strings.Contains(v.Problems[0], drillSource), "ok %v, problems %v", v.OK, v.Problems)
	st, serr := c.e.Status(ctx, c.thread)
	s2, err := d.spawn(ctx, worker.OpResume, c.thread, "")
	if err != nil {
		return err
	}
	c.check("run failed, not revived", serr == nil && st.Status == engine.RunFailed && s2.code == 1 && strings.Contains(s2.errText, "the run failed"), "status %s; a second resume: %s", st.Status, describe(s2))
	c.out.Figures["reason"] = st.Reason
	return nil
}

// readAt says whether record id was read at version v by a finding of cp
// or by a stored executor write of its pending superstep.
func readAt(cp engine.Checkpoint, stored []engine.TaskWrites, id string, v int) bool {
	s, err := ticket.Decode(cp.Values, "subtasks")
	if err == nil {
		for _, st := range s.Subtasks {
			if st.Source == id && st.SourceVersion == v && (st.Status == ticket.StatusDone || st.Status == ticket.StatusApproved) {
				return true
			}
		}
	}
	for _, tw := range stored {
		for _, w := range tw.Writes {
			var sts []ticket.Subtask
			if w.Channel != "subtasks" || json.Unmarshal(w.Value, &sts) != nil {
				continue
			}
			for _, st := range sts {
				if st.Source == id && st.SourceVersion == v {
					return true
				}
			}
		}
	}
	return false
}

func describeRecheck(rc *engine.Rechecked) string {
	if rc == nil {
		return "nothing"
	}
	return fmt.Sprintf("%s (rerun %d task(s), next %q)", rc.Reason, len(rc.Rerun), rc.Next)
}

// doneDraft is the thread's draft operation and its verification.
func doneDraft(s ticket.State) (ticket.Operation, ticket.Verification) {
	op := onlyDraft(s)
	return op, s.VerificationResults[op.ID]
}

// onlyDraft is the thread's one draft operation (a drill thread has one).
func onlyDraft(s ticket.State) ticket.Operation {
	for _, op := range s.Operations {
		if op.Kind == ticket.KindCreateDraft {
			return op
		}
	}
	return ticket.Operation{}
}

func orOK(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}
