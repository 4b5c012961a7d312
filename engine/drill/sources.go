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
		return 0, 0, fmt.Errorf("rewind source bump %s: %w: %s", id, err, strings.TrimSpace(errb.String()))
	}
	var res struct {
		Sources []ticket.SourceRead `json:"sources"`
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil || len(res.Sources) != 1 {
		return 0, 0, fmt.Errorf("rewind source bump %s answered %q", id, out.String())
	}
	d.say("  source   bump    %s: v%d → v%d", id, res.Sources[0].Version-1, res.Sources[0].Version)
	return res.Sources[0].Version - 1, res.Sources[0].Version, nil
}

// sourceChanged kills a worker at p, bumps drillSource, carries the thread
// on and checks the verdict p must give.
func (d *driller) sourceChanged(ctx context.Context, p worker.Point, base finalRun) (Outcome, error) {
	verdict := SourceVerdicts[p.Name]
	name := SourcePoint(p.Name)
	thread := "drill:" + name
	d.say("%s: killed at %s, then %s changes (verdict: %s)", name, p.Name, drillSource, verdict)
	out := Outcome{Point: name, Figures: map[string]any{"verdict": verdict, "source": drillSource}}
	check := func(name string, ok bool, format string, a ...any) {
		out.Checks = append(out.Checks, Check{Name: name, OK: ok, Detail: fmt.Sprintf(format, a...)})
	}
	steps, cur, err := d.runToKill(ctx, thread, p)
	if err != nil {
		return out, err
	}
	check("killed", cur.killed && cur.killAt == p.Name, "worker died by SIGKILL at %q (killed %v)", cur.killAt, cur.killed)
	if !cur.killed {
		return out, nil
	}
	e, err := d.engine()
	if err != nil {
		return out, err
	}
	at, err := e.Latest(ctx, thread)
	if err != nil {
		return out, err
	}
	stored, err := e.PendingWrites(ctx, thread, at.ID)
	if err != nil {
		return out, err
	}
	from, to, err := d.bump(ctx, drillSource)
	if err != nil {
		return out, err
	}
	change := fmt.Sprintf("%s v%d → v%d", drillSource, from, to)
	out.Figures["from"], out.Figures["to"], out.Figures["killedAt"] = from, to, at.ID

	switch verdict {
	case VerdictReRead:
		// The resume analysis, read after the change, says what the
		// resume then does: the same check, the same tasks.
		plan, perr := e.PlanResume(ctx, thread, at.ID)
		if perr != nil {
			return out, perr
		}
		recovery := len(steps)
		err := d.complete(ctx, thread, cur, "", &steps)
		if len(steps) > recovery && steps[recovery].result != nil {
			o := plan.Outcome(*steps[recovery].result)
			check("plan said what the resume did", o.Complete && o.Differs == "", "plan %s; resume: %s", plan, o)
		} else {
			check("plan said what the resume did", false, "the resume left no result (plan %s)", plan)
		}
		check("resumed to completion", err == nil && len(steps) > recovery && steps[len(steps)-1].result != nil && steps[len(steps)-1].result.Status == "done", "%v after %d worker(s)", orOK(err), len(steps))
		fin, ferr := d.final(ctx, thread, steps)
		if ferr != nil {
			return out, ferr
		}
		var rc *engine.Rechecked
		for _, s := range steps[recovery:] {
			if s.result != nil && s.result.Rechecked != nil && rc == nil {
				rc = s.result.Rechecked
			}
		}
		// Whether the old version was read before the kill: a mid-fan-out
		// kill may come before the shipping executor ran at all.
		readOld := readAt(at, stored, drillSource, from)
		reported := rc != nil && strings.Contains(rc.Reason, change)
		check("re-read reported", reported == readOld, "old version read before the kill: %v; resume reported: %s", readOld, describeRecheck(rc))
		fresh, where := true, ""
		for _, st := range fin.state.Subtasks {
			if st.Source == drillSource && st.SourceVersion != to {
				fresh, where = false, fmt.Sprintf("%s read v%d", st.ID, st.SourceVersion)
			}
		}
		check("findings from the new version", fresh && fin.state.SourceVersions[drillSource] == to, "sourceVersions %v %s", fin.state.SourceVersions, where)
		op, v := doneDraft(fin.state)
		check("draft built from the new version, verified", op.Status == ticket.OpDone && op.Sources[drillSource] == to && v.OK, "operation %s %s from %v; verification ok %v %v", op.ID, op.Status, op.Sources, v.OK, v.Problems)
		check("no duplicate draft", fin.drafts == 1, "%d draft row(s) for the thread, want 1", fin.drafts)
		bBase, bFin := budget(base.state), budget(fin.state)
		check("budget not reset", bFin >= 0 && bFin <= bBase, "budget left %d, uninterrupted run %d: a re-read spends it", bFin, bBase)
		out.Figures["workers"] = len(steps)
	case VerdictBlocked:
		recovery := len(steps)
		err := d.complete(ctx, thread, cur, "", &steps)
		var blocked []engine.Blocked
		status := "?"
		for _, s := range steps[recovery:] {
			if s.result != nil {
				blocked = append(blocked, s.result.Blocked...)
				status = s.result.Status
			}
		}
		fin, ferr := d.final(ctx, thread, steps)
		if ferr != nil {
			return out, ferr
		}
		op := onlyDraft(fin.state)
		named := len(blocked) == 1 && blocked[0].Operation == op.ID && strings.Contains(blocked[0].Reason, change)
		check("write blocked naming the change", named && op.Status == ticket.OpBlocked, "blocked %v; operation %s is %s", blocked, op.ID, op.Status)
		check("nothing stored", fin.drafts == 0, "%d draft row(s)", fin.drafts)
		check("run finished", err == nil && status == "done", "%v, status %s", orOK(err), status)
		check("nothing verified", len(fin.state.VerificationResults) == 0, "%d verification(s)", len(fin.state.VerificationResults))
		if len(blocked) > 0 {
			out.Figures["reason"] = blocked[0].Reason
		}
	case VerdictStale:
		s1, err := d.spawn(ctx, worker.OpResume, thread, "")
		if err != nil {
			return out, err
		}
		failed := s1.code == 1 && strings.Contains(s1.errText, "verification failed") && strings.Contains(s1.errText, fmt.Sprintf("%s changed from v%d to v%d", drillSource, from, to))
		check("resume fails the run naming the change", failed, "%s", describe(s1))
		fin, ferr := d.final(ctx, thread, nil)
		if ferr != nil {
			return out, ferr
		}
		op, v := doneDraft(fin.state)
		check("draft kept, once", fin.drafts == 1 && op.Status == ticket.OpDone, "%d draft row(s); operation %s is %s", fin.drafts, op.ID, op.Status)
		check("verification recorded as failed", !v.OK && len(v.Problems) == 1 && strings.Contains(v.Problems[0], drillSource), "ok %v, problems %v", v.OK, v.Problems)
		st, serr := e.Status(ctx, thread)
		s2, err := d.spawn(ctx, worker.OpResume, thread, "")
		if err != nil {
			return out, err
		}
		check("run failed, not revived", serr == nil && st.Status == engine.RunFailed && s2.code == 1 && strings.Contains(s2.errText, "the run failed"), "status %s; a second resume: %s", st.Status, describe(s2))
		out.Figures["reason"] = st.Reason
	}
	out.Passed = true
	for _, c := range out.Checks {
		out.Passed = out.Passed && c.OK
	}
	return out, nil
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
