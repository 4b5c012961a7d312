package cli

// What run, resume, fork, approve and reject share: their flags, one
// invocation in this process (itself a process a drill or a person can
// kill), and its report. Their `rewind worker` twins run the same
// invocation but stream it as JSON lines to the parent process.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"rewind/engine/event"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"rewind/cli/app"
	"rewind/engine"
	"rewind/engine/model"
	"rewind/engine/telemetry"
	"rewind/engine/ticket"
	"rewind/engine/worker"
	"rewind/tui/termtext"
)

// execFlags are the flags of a command that runs the graph.
type execFlags struct {
	store         string
	json          bool
	model         app.ModelFlags
	before, after []string
	killAt        string
	takeOver      bool
	// session and sessionExpires: the session the run acts in.
	session, sessionExpires string
	// worker streams JSON lines for a parent process (`rewind worker …`)
	// instead of a report; a worker has no --json.
	worker bool
	// cmd is the command the flags are on: its stderr takes the signals'
	// warning.
	cmd *cobra.Command
	// graph is --graph: the registry's graph the command runs (default
	// the ticket's).
	graph string
}

func (f *execFlags) add(c *cobra.Command) {
	f.cmd = c
	addStore(c, &f.store)
	if !f.worker {
		addJSON(c, &f.json)
	}
	addModel(c, &f.model)
	addInterrupts(c, &f.before, &f.after)
	c.Flags().StringVar(&f.killAt, "kill-at", "", killAtUsage("SIGKILL this process"))
	c.Flags().BoolVar(&f.takeOver, "take-over", false, "run a thread another live process holds; that process is fenced out")
	c.Flags().StringVar(&f.session, "session", "", "the session `ID` the run acts in, checked valid before any task runs (default: the session of the run it carries on from, if any)")
	c.Flags().StringVar(&f.graph, "graph", defaultGraph, "run the graph `NAME`: "+graphNames()+" (another graph than the ticket takes --input alone)")
	c.Flags().StringVar(&f.sessionExpires, "session-expires", "", "when --session expires: `T`, an RFC 3339 time (2026-12-05T18:00:00Z) or a duration from now (30m)")
}

// runSession reads --session and --session-expires: nil when neither is
// given.
func (f *execFlags) runSession(now time.Time) (*engine.Session, error) {
	id, exp := strings.TrimSpace(f.session), strings.TrimSpace(f.sessionExpires)
	switch {
	case id == "" && exp == "":
		return nil, nil
	case id == "":
		return nil, usagef("--session-expires needs --session ID: the session it is the expiry of")
	case exp == "":
		return nil, usagef("--session %s needs --session-expires T (an RFC 3339 time or a duration from now, e.g. 30m)", named(id))
	}
	if t, err := time.Parse(time.RFC3339, exp); err == nil {
		return &engine.Session{ID: id, Expires: t}, nil
	}
	if d, err := time.ParseDuration(exp); err == nil {
		return &engine.Session{ID: id, Expires: now.Add(d)}, nil
	}
	return nil, usagef("--session-expires %q: give an RFC 3339 time (2026-12-05T18:00:00Z) or a duration from now (30m)", named(exp))
}

// do performs req and reports it.
func (f *execFlags) do(ctx context.Context, out io.Writer, req worker.Request) error {
	req.KillAt = f.killAt
	given := givenGraph(f.cmd, f.graph)
	ctx, err := forThread(ctx, req.Thread, given)
	if err != nil {
		return err
	}
	if err := wrongGraphFirst(ctx, f.store, given, f.model.MockFail); err != nil {
		return err
	}
	// What the graph refuses is refused before the store opens when
	// --graph names it; the graph a thread records, once it is read.
	if err := anyGraph(given, func(g graphEntry) error { return cmp.Or(g.killPoint(req.KillAt), g.takes(req)) }); err != nil {
		return err
	}
	session, err := f.runSession(time.Now())
	if err != nil {
		return err
	}
	a, err := openApp(ctx, f.store, &f.model)
	if err != nil {
		return err
	}
	defer a.Close()
	g := entryOf(a.Graph)
	if err := g.killPoint(req.KillAt); err != nil {
		return err
	}
	if err := g.takes(req); err != nil {
		return err
	}
	if err := checkInterrupts(a.Engine.Graph(), f.before, f.after); err != nil {
		return err
	}
	if g.app != nil && (req.Op == worker.OpRun || req.Op == worker.OpFork) {
		if req.Input, err = graphInput(a.Engine.Graph(), turnOf(req).Text); err != nil {
			return err
		}
	}
	req.Config = engine.RunConfig{InterruptBefore: f.before, InterruptAfter: f.after, TakeOver: f.takeOver, Session: session}
	if !f.json && !f.worker {
		req.Config.Observe = observe(out)
	}
	// OpenTelemetry, when OTEL_* asks for it: the run's trace and counters,
	// exported before the command returns (nothing is built otherwise).
	sig := telemetry.FromEnv(ctx, version(), f.warn)
	defer sig.Shutdown(context.WithoutCancel(ctx))
	run := sig.Start(ctx, a.Engine, telemetry.RunInfo{Op: req.Op, Thread: req.Thread}, &req.Config)
	if f.worker {
		res, err := worker.Serve(ctx, a.Engine, req, jsonLines{out})
		run.End(ctx, res, err)
		return err
	}
	// A resume's report says which pending tasks it reused and which it
	// redispatched: the plan is read before it runs.
	var plan *engine.ResumePlan
	if req.Op == worker.OpResume {
		if p, err := a.Engine.PlanResume(ctx, req.Thread, req.Checkpoint); err == nil && len(p.Tasks) > 0 {
			plan = &p
		}
	}
	req.Unreached = true // a person drilling by hand is told the kill never came
	res, err := worker.Execute(ctx, a.Engine, req, func(m worker.Message) {
		if m.Kill != "" && !f.json {
			fmt.Fprintf(out, "  ✝ kill point %s reached: SIGKILL\n", m.Kill)
		}
	})
	if err == nil {
		// A side effect the run did not perform (a grant that expired, say)
		// is not success: the command says why and exits 1.
		err = res.BlockedErr()
	}
	run.End(ctx, res, err)
	if err == nil && res.Status == engine.RunAwaitingApproval && !f.json && g.app == nil {
		defer fmt.Fprintf(out, "  answer with: rewind approve %s  or  rewind reject %s --reason …\n", idText(res.Thread), idText(res.Thread))
	} else if err == nil && res.Status == engine.RunAwaitingApproval && !f.json {
		defer fmt.Fprintf(out, "  answer in the TUI: rewind tui %s --graph %s (e edits the state its gate waits on, r resumes)\n", idText(res.Thread), g.app.Name)
	}
	return reportRun(out, f.json, res, plan, err)
}

// reportRun is report, but a kill point never reached is said after the
// run's own report: the run itself went well.
func reportRun(out io.Writer, asJSON bool, res engine.Result, plan *engine.ResumePlan, err error) error {
	if _, ok := errors.AsType[*worker.UnreachedError](err); ok {
		if rerr := report(out, asJSON, res, plan, nil); rerr != nil {
			return rerr
		}
		return err
	}
	return report(out, asJSON, res, plan, err)
}

// warn prints the signals' one warning line: a collector that cannot be
// reached never fails the command.
func (f *execFlags) warn(msg string) {
	w := io.Writer(io.Discard)
	if f.cmd != nil {
		w = f.cmd.ErrOrStderr()
	}
	fmt.Fprintf(w, "rewind: warning: %s\n", termtext.Error(msg))
}

// jsonLines escapes a worker's JSON lines as writeJSON does --json, so
// they are harmless on a terminal too and decode to the same values.
// Serve writes each line in one Write, so no character is ever split.
type jsonLines struct{ w io.Writer }

func (j jsonLines) Write(p []byte) (int, error) {
	if _, err := j.w.Write(termtext.JSON(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Sync passes Serve's flush after each line on to a file.
func (j jsonLines) Sync() error {
	if f, ok := j.w.(interface{ Sync() error }); ok {
		return f.Sync()
	}
	return nil
}

// openApp opens the app on the graph ctx's choice says (forThread); model
// is nil for a command that runs none.
func openApp(ctx context.Context, store string, model *app.ModelFlags) (*app.App, error) {
	cfg := app.Config{Store: store, Model: model}
	graphConfig(ctx, &cfg)
	return openConfig(ctx, cfg)
}

// openGraph opens the app on graph g (nil: the ticket's), whatever a
// thread records: what a demo writes.
func openGraph(ctx context.Context, store string, model *app.ModelFlags, g *app.Graph) (*app.App, error) {
	return openConfig(ctx, app.Config{Store: store, Model: model, Graph: g})
}

// openConfig opens the app cfg says; its refusals of usage exit 2.
func openConfig(ctx context.Context, cfg app.Config) (*app.App, error) {
	a, err := app.Open(ctx, cfg)
	if errors.Is(err, app.ErrUsage) {
		return nil, usageOf(err)
	}
	return a, err
}

// observe prints a run's progress as it happens.
func observe(out io.Writer) func(engine.Event) {
	var mu sync.Mutex // parallel tasks report at once
	return func(ev engine.Event) {
		mu.Lock()
		defer mu.Unlock()
		// An event whose data does not decode is said, not read as zeros.
		bad := func(err error) { fmt.Fprintf(out, "    ! %s\n", termtext.Error(err.Error())) }
		switch ev.Type {
		case engine.EventCheckpointSaved:
			d, err := event.Decode[event.CheckpointSaved](ev.Type, ev.Data)
			if err != nil {
				bad(err)
				return
			}
			fmt.Fprintf(out, "  checkpoint %-4d %-6s step %-3d pending %d\n", ev.Checkpoint, d.Source, d.Step, d.Pending)
		case engine.EventNodeStarted:
			fmt.Fprintf(out, "    ▸ %s %s\n", termtext.Line(ev.Node), idText(ev.Task))
		case engine.EventTaskReused:
			fmt.Fprintf(out, "    ↺ %s %s: writes already stored, not run again\n", termtext.Line(ev.Node), idText(ev.Task))
		case ticket.EventContextCompacted:
			fmt.Fprintf(out, "    ⇣ context compacted: %s\n", termtext.Line(string(ev.Data)))
		case ticket.EventCompactionFailed:
			fmt.Fprintf(out, "    ! compaction skipped: %s\n", termtext.Line(string(ev.Data)))
		case ticket.EventCompactionRejected:
			d, err := event.Decode[event.CompactionRejected](ev.Type, ev.Data)
			if err != nil {
				bad(err)
				return
			}
			fmt.Fprintf(out, "    ! summary refused: %s\n", termtext.Line(ticket.RefusalLine(d)))
		case ticket.EventGrantAttached:
			d, err := event.Decode[event.GrantAttached](ev.Type, ev.Data)
			if err != nil {
				bad(err)
				return
			}
			fmt.Fprintf(out, "    + grant %s given to draft %s by %s with the approval, expires %s\n", idText(d.Ref), idText(d.Operation), termtext.Line(d.By), termtext.Line(d.ExpiresAt))
		case engine.EventRechecked:
			d, err := event.Decode[event.Rechecked](ev.Type, ev.Data)
			if err != nil {
				bad(err)
				return
			}
			line := d.Reason
			if d.Next != nil && *d.Next != "" {
				line += ": redispatched " + *d.Next
			}
			fmt.Fprintf(out, "    ↻ %s\n", termtext.Line(line))
		}
	}
}

// runReport is the --json shape of run, resume, fork, approve and reject.
type runReport struct {
	Thread         string              `json:"thread"`
	Start          int64               `json:"start"`
	Checkpoint     int64               `json:"checkpoint"`
	Status         string              `json:"status"`
	Interrupt      *engine.Interrupt   `json:"interrupt,omitempty"`
	Pending        []engine.Task       `json:"pending"`
	ModelCalls     map[string]int      `json:"modelCalls"`
	ModelCallTotal int                 `json:"modelCallTotal"`
	Usage          model.Usage         `json:"usage"`
	MessagesBefore int                 `json:"messagesBefore"`
	MessagesAfter  int                 `json:"messagesAfter"`
	Steps          []engine.StepReport `json:"steps"`
	// Blocked are side effects the run did not perform, with why.
	Blocked []engine.Blocked `json:"blocked,omitempty"`
	// Rechecked is what a resume redid because a record it built on changed.
	Rechecked *engine.Rechecked `json:"rechecked,omitempty"`
	// Resume is, for a resume, what it found and did with the pending tasks.
	Resume *resumeReport `json:"resume,omitempty"`
	Error  string        `json:"error,omitempty"`
}

// resumeReport is a resume's plan (read before it ran) and its outcome.
type resumeReport struct {
	Plan    engine.ResumePlan    `json:"plan"`
	Outcome engine.ResumeOutcome `json:"outcome"`
}

// report prints a run's result; plan, for a resume, is what it was to
// reuse and redispatch.
func report(out io.Writer, asJSON bool, res engine.Result, plan *engine.ResumePlan, runErr error) error {
	if runErr != nil && res.Thread == "" {
		return runErr
	}
	calls := model.Counts(res.ModelCalls)
	var resumed *resumeReport
	if plan != nil {
		resumed = &resumeReport{Plan: *plan, Outcome: plan.Outcome(res)}
	}
	if asJSON {
		r := runReport{Thread: res.Thread, Start: res.Start, Checkpoint: res.Checkpoint, Status: res.Status, Interrupt: res.Interrupt,
			Pending: res.Pending, ModelCalls: res.ModelCalls, ModelCallTotal: calls.Sum(), Usage: res.Usage, MessagesBefore: res.MessagesBefore,
			MessagesAfter: res.MessagesAfter, Steps: res.Steps, Blocked: res.Blocked, Rechecked: res.Rechecked, Resume: resumed}
		if r.Pending == nil {
			r.Pending = []engine.Task{}
		}
		var be *engine.BlockedError
		switch {
		case errors.As(runErr, &be):
			r.Status, r.Error = "blocked", withFixes(runErr.Error(), runErr)
		case runErr != nil:
			r.Status, r.Error = "failed", withFixes(runErr.Error(), runErr)
		}
		if err := writeJSON(out, r); err != nil {
			return err
		}
		return runErr
	}
	var be *engine.BlockedError
	if runErr != nil && !errors.As(runErr, &be) {
		fmt.Fprintf(out, "stopped at checkpoint %d after %s (%s)\n", res.Checkpoint, count(calls.Sum(), "model call"), calls)
		return runErr
	}
	switch res.Status {
	case engine.RunAwaitingApproval:
		fmt.Fprintf(out, "awaiting approval at checkpoint %d: %s (operation %s)\n", res.Checkpoint, termtext.Line(res.Interrupt.Question), idText(res.Interrupt.Operation))
	case "interrupted":
		fmt.Fprintf(out, "interrupted %s %s at checkpoint %d: %s: %s\n", termtext.Line(res.Interrupt.When), termtext.Line(res.Interrupt.Node), res.Checkpoint, count(len(res.Pending), "pending task"), termtext.Line(engine.DescribeTasks(res.Pending)))
		fmt.Fprintf(out, "  resume with: rewind resume %s\n", idText(res.Thread))
	default:
		fmt.Fprintf(out, "done at checkpoint %d\n", res.Checkpoint)
	}
	fmt.Fprintf(out, "  model calls: %d (%s) · tokens %s in / %s out · messages %d → %d\n", calls.Sum(), calls, termtext.Count(res.Usage.PromptTokens), termtext.Count(res.Usage.CompletionTokens), res.MessagesBefore, res.MessagesAfter)
	if resumed != nil && (resumed.Outcome.Complete || resumed.Outcome.Differs != "") {
		fmt.Fprintf(out, "  %s\n", resumed.Outcome)
	}
	for _, b := range res.Blocked {
		fmt.Fprintf(out, "  ✗ blocked: %s did not perform %s (recorded at @%d): %s\n", termtext.Line(b.Node), idText(b.Operation), b.Checkpoint, termtext.Line(reasonWithFixes(b.Reason, b.Fix)))
	}
	return runErr
}

// withEngine opens the app of a command that runs no model and calls fn
// with its engine.
func withEngine(ctx context.Context, store string, fn func(*engine.Engine) error) error {
	a, err := openApp(ctx, store, nil)
	if err != nil {
		return err
	}
	defer a.Close()
	return fn(a.Engine)
}

// withReader is withEngine for a command that only reads: the store opens
// without creating or migrating anything (app.Store.OpenRead).
func withReader(ctx context.Context, store string, fn func(*engine.Engine) error) error {
	a, err := openReader(ctx, store)
	if err != nil {
		return err
	}
	defer a.Close()
	return fn(a.Engine)
}

// wrongGraphFirst refuses a --graph that is not the thread's before a
// --mock-fail role that graph lacks is blamed: the role may be the
// thread's graph's, and the graph is the mistake (read only: a store not
// there is left to the usual checks, and is not made).
func wrongGraphFirst(ctx context.Context, store, given string, roles []string) error {
	if given == "" || !slices.ContainsFunc(roles, func(r string) bool { return !slices.Contains(graphs[given].app.MockRoles(), r) }) {
		return nil
	}
	err := withReader(ctx, store, func(*engine.Engine) error { return nil })
	if _, ok := errors.AsType[usageError](err); ok {
		return err
	}
	return nil
}

// openReader opens the app of a command that only reads.
func openReader(ctx context.Context, store string) (*app.App, error) {
	cfg := app.Config{Store: store, ReadOnly: true}
	graphConfig(ctx, &cfg)
	return openConfig(ctx, cfg)
}

// count is "1 model call", "2 model calls": n and the noun, plural but
// for one.
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
