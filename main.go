// Command rewind is a time-travel client for a checkpointed multi-agent
// conversation: run a support ticket through a planner → executors → critic
// → summarizer graph, scrub its checkpoint chain, fork it, and resume it
// after a crash. Every command takes --store and --json.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"rewind/cli/app"
	"rewind/engine"
	"rewind/engine/bench"
	"rewind/engine/drill"
	"rewind/engine/model"
	"rewind/engine/selftest"
	"rewind/engine/ticket"
	"rewind/engine/worker"
	"rewind/store"
	"rewind/store/backend"
	"rewind/tui"
)

const usage = `rewind: time travel for a checkpointed multi-agent conversation

Usage:
  rewind [tui [THREAD]]                   the terminal UI (the default; --theme dark|light|high-contrast|no-color)
  rewind selftest                         run the seed lab's five checks
  rewind run --thread T --input TEXT [--attach REF]... [--draft] [--auth-ttl D] [--interrupt-before NODE]... [--interrupt-after NODE]...
  rewind resume T [CHECKPOINT]            carry on from T's latest checkpoint, or a paused branch head (no input)
  rewind fork T CHECKPOINT --input TEXT   branch from a checkpoint with new input
  rewind approve T                        approve the draft the thread waits on, and carry on
  rewind reject T --reason TEXT           reject it (no draft is created), and carry on
  rewind discard T                        drop T's pending tasks explicitly
  rewind log T                            the checkpoint chain of T
  rewind show T [CHECKPOINT]              state, pending tasks and writes at a checkpoint
  rewind show T [CHECKPOINT] --message N  original message #N, even after compaction folded it into the summary
  rewind events T [CHECKPOINT]            events committed with a checkpoint (or all)
  rewind threads                          every thread in the store
  rewind rm T                             delete every row of thread T
  rewind drill [--kill-at POINT]          kill real worker processes at every kill point, resume, check
  rewind worker run|resume|fork|approve|reject …   one invocation in its own process (JSON lines)
  rewind bench [--turns N] [--inline-bytes B]
                                          a long conversation on a new thread (mock, zero latency): time and
                                          bytes per turn, then listing and loading times
  rewind prune T|--all [--keep-last N] [--older-than D] [--dry-run]
                                          delete old checkpoints, keeping the newest N and/or those
                                          younger than D (e.g. 720h), the head and paused branch tips

Flags (any command):
  --store SPEC        memory:, sqlite:PATH or postgres://USER@HOST:PORT/DB
                      (default $REWIND_STORE, $DATABASE_URL, or sqlite under $XDG_STATE_HOME/rewind)
  --json              machine-readable output
  --mock-latency D    wait D (e.g. 300ms) per mock model call
  --mock-fail ROLE    make every call of a model role fail (planner, executor, critic, summarizer, reply)
  --provider P        mock (default, offline) or openai (an OpenAI-compatible server set up by
                      environment; see README "Real models"); default $REWIND_PROVIDER
  --record FILE       save every model exchange of the run to FILE (added to if it is a recording)
  --replay FILE       answer model calls from a recording, offline; refuses calls it does not hold
  --kill-at POINT     (run, resume, fork, approve, worker) SIGKILL this process at a kill point:
                      before-model-call, after-model-call, mid-fanout, before-summary, after-summary,
                      after-compaction-commit, awaiting-approval, before-side-effect, after-side-effect,
                      after-side-effect-recorded, mid-transaction (POINT@N: the Nth time)
  --take-over         (resume) run a thread another live process holds; that process is fenced out
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// exit codes
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
)

type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return usageError{fmt.Sprintf(format, a...)} }

// options are the flags every command shares.
type options struct {
	store       string
	json        bool
	mockLatency time.Duration
	mockFail    multi
	provider    string
	record      string
	replay      string
	thread      string
	input       string
	attach      multi
	before      multi
	after       multi
	theme       string
	killAt      string
	draft       bool
	authTTL     time.Duration
	reason      string
	points      multi
	takeOver    bool
	keepLast    string
	message     string
	turns       int
	inlineBytes int
	olderThan   string
	all         bool
	dryRun      bool
}

type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

func (o *options) flags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.store, "store", "", "")
	fs.BoolVar(&o.json, "json", false, "")
	fs.DurationVar(&o.mockLatency, "mock-latency", 0, "")
	fs.Var(&o.mockFail, "mock-fail", "")
	fs.StringVar(&o.provider, "provider", "", "")
	fs.StringVar(&o.record, "record", "", "")
	fs.StringVar(&o.replay, "replay", "", "")
	fs.StringVar(&o.thread, "thread", "", "")
	fs.StringVar(&o.input, "input", "", "")
	fs.Var(&o.attach, "attach", "")
	fs.Var(&o.before, "interrupt-before", "")
	fs.Var(&o.after, "interrupt-after", "")
	fs.StringVar(&o.theme, "theme", "", "")
	fs.StringVar(&o.killAt, "kill-at", "", "")
	fs.BoolVar(&o.draft, "draft", false, "")
	fs.DurationVar(&o.authTTL, "auth-ttl", 0, "")
	fs.StringVar(&o.reason, "reason", "", "")
	fs.Var(&o.points, "point", "")
	fs.BoolVar(&o.takeOver, "take-over", false, "")
	fs.StringVar(&o.keepLast, "keep-last", "", "")
	fs.StringVar(&o.message, "message", "", "")
	fs.IntVar(&o.turns, "turns", 100, "")
	fs.IntVar(&o.inlineBytes, "inline-bytes", 0, "")
	fs.StringVar(&o.olderThan, "older-than", "", "")
	fs.BoolVar(&o.all, "all", false, "")
	fs.BoolVar(&o.dryRun, "dry-run", false, "")
	return fs
}

// parse accepts flags before, between and after positional arguments.
func (o *options) parse(name string, args []string) ([]string, error) {
	fs := o.flags(name)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, usagef("%s: %v (see `rewind help`)", name, err)
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || (strings.HasPrefix(args[0], "-") && args[0] != "-h" && args[0] != "--help") {
		args = append([]string{"tui"}, args...) // `rewind` alone opens the TUI
	}
	if args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	cmd, rest := args[0], args[1:]
	var o options
	pos, err := o.parse(cmd, rest)
	if err == nil {
		err = dispatch(ctx, cmd, pos, &o, stdout)
	}
	if err == nil {
		return exitOK
	}
	var ue usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(stderr, "rewind: %s\n", ue.msg)
		return exitUsage
	}
	var fe failedChecks
	if errors.As(err, &fe) {
		fmt.Fprintf(stderr, "rewind: %s\n", fe)
		return exitFail
	}
	fmt.Fprintf(stderr, "rewind: %s\n", clean(err.Error()))
	return exitFail
}

func dispatch(ctx context.Context, cmd string, pos []string, o *options, out io.Writer) error {
	want := func(min, max int, form string) error {
		if len(pos) < min || len(pos) > max {
			return usagef("usage: rewind %s", form)
		}
		return nil
	}
	switch cmd {
	case "tui":
		if err := want(0, 1, "tui [THREAD] [--store SPEC] [--theme NAME] [--mock-latency D]"); err != nil {
			return err
		}
		thread := o.thread
		if len(pos) == 1 {
			thread = pos[0]
		}
		a, err := o.open(ctx)
		if err != nil {
			return err
		}
		defer a.Close()
		opts := tui.Options{Engine: a.Engine, StoreLabel: a.Store.Label(), Thread: thread, Theme: o.theme,
			InterruptBefore: o.before, InterruptAfter: o.after, WorkerFlags: o.modelFlags().Args(), AuthTTL: o.authTTL}
		if a.Store.Shared() {
			opts.WorkerStore = a.Store.Spec
			opts.Exe, _ = os.Executable() // workers are this binary; without it runs stay in-process
		}
		return tui.Run(ctx, opts)
	case "selftest":
		if err := want(0, 0, "selftest [--store SPEC] [--json]"); err != nil {
			return err
		}
		return cmdSelftest(ctx, o, out)
	case "run":
		if err := want(0, 0, "run --thread T --input TEXT [--attach REF]"); err != nil {
			return err
		}
		if strings.TrimSpace(o.thread) == "" {
			return usagef("run needs --thread T: name the thread, e.g. --thread ticket-1")
		}
		if strings.TrimSpace(o.input) == "" {
			return usagef("run needs --input TEXT: the customer's message (it is empty)")
		}
		return o.execute(ctx, out, worker.Request{Op: worker.OpRun, Thread: o.thread, Turn: o.turn()})
	case "resume":
		if err := want(1, 2, "resume T [CHECKPOINT] (resume takes no input; to start over with new input use fork)"); err != nil {
			return err
		}
		if o.input != "" {
			return usagef("resume takes no input: the state is in the checkpoint. To branch with new input use `rewind fork %s CHECKPOINT --input …`", pos[0])
		}
		req := worker.Request{Op: worker.OpResume, Thread: pos[0]}
		if len(pos) == 2 {
			id, err := checkpointArg(pos[1])
			if err != nil {
				return err
			}
			req.Checkpoint = id
		}
		return o.execute(ctx, out, req)
	case "fork":
		if err := want(2, 2, "fork T CHECKPOINT --input TEXT"); err != nil {
			return err
		}
		id, err := checkpointArg(pos[1])
		if err != nil {
			return err
		}
		if strings.TrimSpace(o.input) == "" {
			return usagef("fork needs --input TEXT: the new message for the branch (it is empty)")
		}
		return o.execute(ctx, out, worker.Request{Op: worker.OpFork, Thread: pos[0], Checkpoint: id, Turn: o.turn()})
	case "approve", "reject":
		if err := want(1, 1, cmd+" T"+map[bool]string{true: "", false: " --reason TEXT"}[cmd == "approve"]); err != nil {
			return err
		}
		if cmd == "reject" && strings.TrimSpace(o.reason) == "" {
			return usagef("reject needs --reason TEXT: say why the draft must not be created")
		}
		return o.execute(ctx, out, worker.Request{Op: cmd, Thread: pos[0], Reason: o.reason})
	case "worker":
		return cmdWorker(ctx, pos, o, out)
	case "drill":
		if err := want(0, 0, "drill [--kill-at POINT] [--store sqlite:PATH|postgres://…] [--json]"); err != nil {
			return err
		}
		return cmdDrill(ctx, o, out)
	case "discard":
		if err := want(1, 1, "discard T"); err != nil {
			return err
		}
		return withEngine(ctx, o, func(e *engine.Engine) error {
			cp, err := e.DiscardPending(ctx, pos[0])
			if err != nil {
				return err
			}
			if o.json {
				return writeJSON(out, map[string]any{"thread": pos[0], "checkpoint": cp.ID, "discarded": cp.Metadata.Discarded})
			}
			fmt.Fprintf(out, "discarded %d pending task(s) (%s) of thread %s at checkpoint %d\n", len(cp.Metadata.Discarded), engine.DescribeTasks(cp.Metadata.Discarded), clean(pos[0]), cp.ID)
			return nil
		})
	case "log":
		if err := want(1, 1, "log T"); err != nil {
			return err
		}
		return withEngine(ctx, o, func(e *engine.Engine) error { return cmdLog(ctx, e, pos[0], o, out) })
	case "show":
		if err := want(1, 2, "show T [CHECKPOINT] [--message N]"); err != nil {
			return err
		}
		id, err := optCheckpoint(pos)
		if err != nil {
			return err
		}
		if o.message != "" {
			n, err := strconv.ParseInt(strings.TrimPrefix(o.message, "#"), 10, 64)
			if err != nil || n < 0 {
				return usagef("show: --message %q is not a message index (e.g. --message 12 for #12)", o.message)
			}
			return withEngine(ctx, o, func(e *engine.Engine) error { return cmdMessage(ctx, e, pos[0], id, n, o, out) })
		}
		return withEngine(ctx, o, func(e *engine.Engine) error { return cmdShow(ctx, e, pos[0], id, o, out) })
	case "events":
		if err := want(1, 2, "events T [CHECKPOINT]"); err != nil {
			return err
		}
		id, err := optCheckpoint(pos)
		if err != nil {
			return err
		}
		return withEngine(ctx, o, func(e *engine.Engine) error { return cmdEvents(ctx, e, pos[0], id, o, out) })
	case "threads":
		if err := want(0, 0, "threads"); err != nil {
			return err
		}
		return withEngine(ctx, o, func(e *engine.Engine) error { return cmdThreads(ctx, e, o, out) })
	case "rm":
		if err := want(1, 1, "rm T"); err != nil {
			return err
		}
		return withEngine(ctx, o, func(e *engine.Engine) error {
			if err := e.Store().DeleteThread(ctx, pos[0]); err != nil {
				if errors.Is(err, store.ErrNotFound) {
					return fmt.Errorf("thread %q not found: list threads with `rewind threads`", pos[0])
				}
				return fmt.Errorf("delete thread %q: %w", pos[0], err)
			}
			if o.json {
				return writeJSON(out, map[string]any{"thread": pos[0], "deleted": true})
			}
			fmt.Fprintf(out, "deleted thread %s\n", clean(pos[0]))
			return nil
		})
	case "prune":
		return cmdPrune(ctx, pos, o, out)
	case "bench":
		if err := want(0, 0, "bench [--store SPEC] [--turns N] [--inline-bytes B] [--json]"); err != nil {
			return err
		}
		return cmdBench(ctx, o, out)
	}
	return usagef("unknown command %q: see `rewind help`", cmd)
}

// parentLabel names a checkpoint's parent: its id (after prefix), "pruned
// (was #N)" when prune deleted it, or none for a root.
func parentLabel(cp engine.Checkpoint, none, prefix string) string {
	switch {
	case cp.ParentID != 0:
		return prefix + strconv.FormatInt(cp.ParentID, 10)
	case cp.RerootedFrom != 0:
		return fmt.Sprintf("pruned (was #%d)", cp.RerootedFrom)
	}
	return none
}

// optCheckpoint reads the optional CHECKPOINT after THREAD (0 when absent).
func optCheckpoint(pos []string) (int64, error) {
	if len(pos) < 2 {
		return 0, nil
	}
	return checkpointArg(pos[1])
}

func checkpointArg(s string) (int64, error) {
	id, err := strconv.ParseInt(strings.TrimPrefix(s, "#"), 10, 64)
	if err != nil || id <= 0 {
		return 0, usagef("checkpoint %q is not a checkpoint id: use the number from `rewind log THREAD`", s)
	}
	return id, nil
}

// modelFlags are the flags that choose the model.
func (o *options) modelFlags() app.ModelFlags {
	return app.ModelFlags{Provider: o.provider, Record: o.record, Replay: o.replay, MockLatency: o.mockLatency, MockFail: o.mockFail}
}

// open opens the app the flags describe; a bad model flag is a usage error.
func (o *options) open(ctx context.Context) (*app.App, error) {
	a, err := app.Open(ctx, app.Config{Store: o.store, Model: o.modelFlags()})
	if errors.Is(err, app.ErrUsage) {
		return nil, usagef("%v", err)
	}
	return a, err
}

func withEngine(ctx context.Context, o *options, fn func(*engine.Engine) error) error {
	a, err := o.open(ctx)
	if err != nil {
		return err
	}
	defer a.Close()
	return fn(a.Engine)
}

// turn is the new turn the flags describe (a draft gets its grant).
func (o *options) turn() ticket.Turn {
	return ticket.NewTurn(o.input, o.attach, o.draft, o.authTTL, time.Now())
}

// execute runs one invocation in this process (itself a process a drill or
// a person can kill) and reports it.
func (o *options) execute(ctx context.Context, out io.Writer, req worker.Request) error {
	if req.KillAt == "" {
		req.KillAt = o.killAt
	}
	if req.KillAt != "" {
		if _, _, err := worker.Parse(req.KillAt); err != nil {
			return usagef("%v", err)
		}
	}
	return withEngine(ctx, o, func(e *engine.Engine) error {
		req.Config = o.runConfig(out)
		res, err := worker.Execute(ctx, e, req, func(m worker.Message) {
			if m.Kill != "" && !o.json {
				fmt.Fprintf(out, "  ✝ kill point %s reached: SIGKILL\n", m.Kill)
			}
		})
		if err == nil && res.Status == "awaiting-approval" && !o.json {
			defer fmt.Fprintf(out, "  answer with: rewind approve %s  or  rewind reject %s --reason …\n", clean(res.Thread), clean(res.Thread))
		}
		return report(out, o, res, err)
	})
}

func (o *options) runConfig(out io.Writer) engine.RunConfig {
	cfg := engine.RunConfig{InterruptBefore: o.before, InterruptAfter: o.after, TakeOver: o.takeOver}
	if !o.json {
		cfg.Observe = func(ev engine.Event) {
			switch ev.Type {
			case engine.EventCheckpointSaved:
				var d struct {
					Source  string `json:"source"`
					Step    int    `json:"step"`
					Pending int    `json:"pending"`
				}
				_ = json.Unmarshal(ev.Data, &d)
				fmt.Fprintf(out, "  checkpoint %-4d %-6s step %-3d pending %d\n", ev.Checkpoint, d.Source, d.Step, d.Pending)
			case engine.EventNodeStarted:
				fmt.Fprintf(out, "    ▸ %s %s\n", ev.Node, ev.Task)
			case engine.EventTaskReused:
				fmt.Fprintf(out, "    ↺ %s %s: writes already stored, not run again\n", ev.Node, ev.Task)
			case ticket.EventContextCompacted:
				fmt.Fprintf(out, "    ⇣ context compacted: %s\n", clean(string(ev.Data)))
			case ticket.EventCompactionFailed:
				fmt.Fprintf(out, "    ! compaction skipped: %s\n", clean(string(ev.Data)))
			}
		}
	}
	return cfg
}

// runReport is the --json shape of run, resume and fork.
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
	Error          string              `json:"error,omitempty"`
}

func report(out io.Writer, o *options, res engine.Result, runErr error) error {
	if runErr != nil && res.Thread == "" {
		return runErr
	}
	calls := model.Counts(res.ModelCalls)
	if o.json {
		r := runReport{Thread: res.Thread, Start: res.Start, Checkpoint: res.Checkpoint, Status: res.Status, Interrupt: res.Interrupt,
			Pending: res.Pending, ModelCalls: res.ModelCalls, ModelCallTotal: calls.Sum(), Usage: res.Usage, MessagesBefore: res.MessagesBefore,
			MessagesAfter: res.MessagesAfter, Steps: res.Steps}
		if r.Pending == nil {
			r.Pending = []engine.Task{}
		}
		if runErr != nil {
			r.Status, r.Error = "failed", runErr.Error()
		}
		if err := writeJSON(out, r); err != nil {
			return err
		}
		return runErr
	}
	if runErr != nil {
		fmt.Fprintf(out, "stopped at checkpoint %d after %d model call(s) (%s)\n", res.Checkpoint, calls.Sum(), calls)
		return runErr
	}
	switch res.Status {
	case "awaiting-approval":
		fmt.Fprintf(out, "awaiting approval at checkpoint %d: %s (operation %s)\n", res.Checkpoint, res.Interrupt.Question, res.Interrupt.Operation)
	case "interrupted":
		fmt.Fprintf(out, "interrupted %s %s at checkpoint %d: %d pending task(s): %s\n", res.Interrupt.When, res.Interrupt.Node, res.Checkpoint, len(res.Pending), engine.DescribeTasks(res.Pending))
		fmt.Fprintf(out, "  resume with: rewind resume %s\n", clean(res.Thread))
	default:
		fmt.Fprintf(out, "done at checkpoint %d\n", res.Checkpoint)
	}
	fmt.Fprintf(out, "  model calls: %d (%s) · tokens %d in / %d out · messages %d → %d\n", calls.Sum(), calls, res.Usage.PromptTokens, res.Usage.CompletionTokens, res.MessagesBefore, res.MessagesAfter)
	return nil
}

func writeJSON(out io.Writer, v any) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

type failedChecks struct{ failed, total int }

func (f failedChecks) Error() string {
	return fmt.Sprintf("selftest: %d of %d checks failed", f.failed, f.total)
}

func cmdSelftest(ctx context.Context, o *options, out io.Writer) error {
	spec := backend.Resolve(o.store)
	open, cleanup := backend.Opener(spec)
	defer cleanup()
	checks, err := selftest.Run(ctx, open)
	if err != nil {
		return err
	}
	failed := 0
	for _, c := range checks {
		if !c.Passed {
			failed++
		}
	}
	if o.json {
		if err := writeJSON(out, map[string]any{"passed": failed == 0, "checks": checks}); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(out, "selftest on %s\n", backend.Describe(spec))
		for _, c := range checks {
			mark := "PASS"
			if !c.Passed {
				mark = "FAIL"
			}
			fmt.Fprintf(out, "%s check %d: %s\n", mark, c.N, c.Name)
			keys := make([]string, 0, len(c.Figures))
			for k := range c.Figures {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				b, _ := json.Marshal(c.Figures[k])
				fmt.Fprintf(out, "       %s: %s\n", k, clean(string(b)))
			}
			for _, f := range c.Failures {
				fmt.Fprintf(out, "     ✗ %s\n", clean(f))
			}
		}
		fmt.Fprintf(out, "%d passed, %d failed\n", len(checks)-failed, failed)
	}
	if failed > 0 {
		return failedChecks{failed, len(checks)}
	}
	return nil
}

// nextTask is a pending task in `log --json`: a listing names the node;
// `show` has the task's id and arguments.
type nextTask struct {
	Node string `json:"node"`
}

// cmdLog lists listings only: no state is read, so a 1,000-turn thread
// lists in milliseconds.
func cmdLog(ctx context.Context, e *engine.Engine, thread string, o *options, out io.Writer) error {
	cps, err := e.History(ctx, thread, 0, 0)
	if err != nil {
		return err
	}
	if len(cps) == 0 {
		_, err := e.Latest(ctx, thread) // says the thread is not found
		return err
	}
	sort.Slice(cps, func(i, j int) bool { return cps[i].ID < cps[j].ID })
	if o.json {
		type row struct {
			ID       int64          `json:"id"`
			Parent   int64          `json:"parent"`
			Step     int            `json:"step"`
			Source   string         `json:"source"`
			Nodes    []string       `json:"nodes"`
			Next     []nextTask     `json:"next"`
			Calls    map[string]int `json:"modelCalls,omitempty"`
			Messages int            `json:"messages"`
			// Bytes is what the checkpoint added to the store.
			Bytes int `json:"bytes,omitempty"`
			// RerootedFrom is the parent a checkpoint had before prune deleted it.
			RerootedFrom int64 `json:"rerootedFrom,omitempty"`
		}
		rows := make([]row, len(cps))
		for i, cp := range cps {
			next := make([]nextTask, len(cp.Tasks))
			for j, t := range cp.Tasks {
				next[j] = nextTask{t.Node}
			}
			rows[i] = row{cp.ID, cp.ParentID, cp.Step, cp.Source, cp.Metadata.Nodes, next, cp.Metadata.ModelCalls, cp.Messages, cp.Bytes, cp.RerootedFrom}
			if rows[i].Nodes == nil {
				rows[i].Nodes = []string{}
			}
		}
		return writeJSON(out, map[string]any{"thread": thread, "checkpoints": rows})
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tPARENT\tSTEP\tSOURCE\tWRITTEN BY\tCALLS\tMSGS\tNEXT")
	for _, cp := range cps {
		parent := parentLabel(cp, "-", "")
		by := strings.Join(cp.Metadata.Nodes, ",")
		if by == "" {
			by = "(" + cp.Source + ")"
		}
		next := engine.DescribeTasks(cp.Tasks)
		if next == "" {
			next = "—"
		}
		if cp.Metadata.Interrupt != nil {
			next += fmt.Sprintf("  [interrupted %s %s]", cp.Metadata.Interrupt.When, cp.Metadata.Interrupt.Node)
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%s\t%d\t%d\t%s\n", cp.ID, parent, cp.Step, cp.Source, by, model.Counts(cp.Metadata.ModelCalls).Sum(), cp.Messages, next)
	}
	return tw.Flush()
}

func cmdShow(ctx context.Context, e *engine.Engine, thread string, id int64, o *options, out io.Writer) error {
	var cp engine.Checkpoint
	var err error
	if id == 0 {
		cp, err = e.Latest(ctx, thread)
	} else {
		cp, err = e.Get(ctx, thread, id)
	}
	if err != nil {
		return err
	}
	s, err := ticket.Decode(cp.Values)
	if err != nil {
		return fmt.Errorf("checkpoint %d of thread %q: %w", cp.ID, thread, err)
	}
	writes, err := e.PendingWrites(ctx, thread, cp.ID)
	if err != nil {
		return err
	}
	if o.json {
		return writeJSON(out, map[string]any{"checkpoint": cp, "state": s, "pendingWrites": writes})
	}
	fmt.Fprintf(out, "thread %s · checkpoint %d (parent %s, step %d, source %s, schema v%d", clean(thread), cp.ID, parentLabel(cp, "none", "#"), cp.Step, cp.Source, cp.SchemaVersion)
	if cp.MigratedFrom != 0 {
		fmt.Fprintf(out, ", migrated from v%d", cp.MigratedFrom)
	}
	fmt.Fprintln(out, ")")
	if s.Summary != nil {
		fmt.Fprintf(out, "\nSUMMARY of #%d–#%d (history v%d, %s)\n", s.Summary.From, s.Summary.To, s.Summary.HistoryVersion, clean(s.Summary.Trigger))
		for _, line := range strings.Split(s.Summary.Text, "\n") {
			fmt.Fprintf(out, "  %s\n", clean(line))
		}
	}
	fmt.Fprintf(out, "\nMESSAGES (%d verbatim)\n", len(s.Messages))
	for _, m := range s.Messages {
		fmt.Fprintf(out, "  #%-3d %s: %s\n", m.Index, clean(m.Speaker), clean(m.Content))
	}
	if len(s.Attachments) > 0 {
		fmt.Fprintln(out, "\nATTACHMENTS")
		for _, a := range s.Attachments {
			fmt.Fprintf(out, "  %s %s %s %s\n", clean(a.ID), clean(a.Kind), clean(a.Ref), clean(a.Caption))
		}
	}
	if len(s.Subtasks) > 0 {
		fmt.Fprintln(out, "\nSUBTASKS")
		for _, st := range s.Subtasks {
			fmt.Fprintf(out, "  %-16s %-18s tools %d  %s\n", clean(st.ID), st.Status, st.ToolCalls, clean(st.Goal))
		}
	}
	budget := "none"
	if s.BudgetRemaining != nil {
		budget = strconv.Itoa(*s.BudgetRemaining)
	}
	fmt.Fprintf(out, "\nreview rounds %d · tool budget left %s · degraded %t · history v%d\n", s.ReviewRounds, budget, s.Degraded, s.HistoryVersion)
	if len(cp.Tasks) > 0 {
		fmt.Fprintf(out, "\nPENDING TASKS (%d)\n", len(cp.Tasks))
		for _, t := range cp.Tasks {
			fmt.Fprintf(out, "  %s %s %s\n", t.ID, t.Node, clean(string(t.Args)))
		}
	}
	if len(cp.Applied) > 0 {
		fmt.Fprintf(out, "\nWRITES that made this checkpoint (%s stored)\n", byteSize(cp.Bytes))
		for _, g := range cp.Applied {
			chs := make([]string, len(g.Writes))
			for i, x := range g.Writes {
				chs[i] = x.Channel
			}
			who := g.Node
			if g.Task != "" {
				who = g.Task + " " + g.Node
			}
			fmt.Fprintf(out, "  %s → %s\n", clean(who), strings.Join(chs, ", "))
		}
	}
	if len(writes) > 0 {
		fmt.Fprintf(out, "\nSTORED WRITES of the pending superstep (%d task(s) done, reused on resume)\n", len(writes))
		for _, w := range writes {
			chs := make([]string, len(w.Writes))
			for i, x := range w.Writes {
				chs[i] = x.Channel
			}
			fmt.Fprintf(out, "  %s %s → %s\n", w.Task, w.Node, strings.Join(chs, ", "))
		}
	}
	return nil
}

// byteSize prints a size the way people read it.
func byteSize(n int) string {
	switch {
	case n == 0:
		return "size not recorded"
	case n < 10_000:
		return fmt.Sprintf("%d bytes", n)
	case n < 10_000_000:
		return fmt.Sprintf("%.1f KB", float64(n)/1000)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/1e6)
}

// cmdMessage prints an original message, even one compaction folded into
// the summary long ago.
func cmdMessage(ctx context.Context, e *engine.Engine, thread string, at, index int64, o *options, out io.Writer) error {
	m, err := e.Message(ctx, thread, at, index)
	if err != nil {
		return err
	}
	if o.json {
		return writeJSON(out, m)
	}
	var msg ticket.Message
	if err := json.Unmarshal(m.Body, &msg); err != nil {
		return fmt.Errorf("message #%d of thread %q: %w", index, thread, err)
	}
	fmt.Fprintf(out, "#%d %s (%s, first stored at @%d, %s)\n", m.Index, clean(msg.Speaker), clean(msg.Role), m.Checkpoint, m.CreatedAt.Local().Format("2006-01-02 15:04:05"))
	if msg.ToolCall != nil {
		fmt.Fprintf(out, "tool call %s %s(%s)\n", clean(msg.ToolCall.ID), clean(msg.ToolCall.Name), clean(string(msg.ToolCall.Args)))
	}
	if msg.ToolCallID != "" {
		fmt.Fprintf(out, "result of %s\n", clean(msg.ToolCallID))
	}
	fmt.Fprintln(out, clean(msg.Content))
	return nil
}

func cmdEvents(ctx context.Context, e *engine.Engine, thread string, id int64, o *options, out io.Writer) error {
	if _, err := e.Latest(ctx, thread); err != nil {
		return err
	}
	if id != 0 {
		if _, err := e.Get(ctx, thread, id); err != nil {
			return err
		}
	}
	evs, err := e.Events(ctx, thread, id)
	if err != nil {
		return err
	}
	if o.json {
		return writeJSON(out, evs)
	}
	for _, ev := range evs {
		fmt.Fprintf(out, "%4d.%-3d %-28s %-10s %s\n", ev.Checkpoint, ev.Seq, ev.Type, ev.Node, clean(string(ev.Data)))
	}
	return nil
}

func cmdThreads(ctx context.Context, e *engine.Engine, o *options, out io.Writer) error {
	ts, err := e.Threads(ctx)
	if err != nil {
		return err
	}
	if o.json {
		type row struct {
			ID          string    `json:"id"`
			Checkpoints int       `json:"checkpoints"`
			Latest      int64     `json:"latest"`
			UpdatedAt   time.Time `json:"updatedAt"`
		}
		rows := make([]row, len(ts))
		for i, t := range ts {
			rows[i] = row{t.ID, t.Checkpoints, t.LatestID, t.UpdatedAt}
		}
		return writeJSON(out, rows)
	}
	if len(ts) == 0 {
		fmt.Fprintln(out, "no threads yet: start one with `rewind run --thread T --input TEXT`")
		return nil
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "THREAD\tCHECKPOINTS\tLATEST\tUPDATED")
	for _, t := range ts {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\n", clean(t.ID), t.Checkpoints, t.LatestID, t.UpdatedAt.Local().Format("2006-01-02 15:04:05"))
	}
	return tw.Flush()
}

// cmdPrune trims old checkpoints of one thread or of every thread.
func cmdPrune(ctx context.Context, pos []string, o *options, out io.Writer) error {
	const form = "prune THREAD|--all [--keep-last N] [--older-than DURATION] [--dry-run]"
	switch {
	case o.all && len(pos) > 0:
		return usagef("prune takes a THREAD or --all, not both: usage: rewind %s", form)
	case !o.all && len(pos) != 1:
		return usagef("usage: rewind %s (name the thread, or --all for every thread)", form)
	case o.keepLast == "" && o.olderThan == "":
		return usagef("prune needs --keep-last N (keep the newest N checkpoints) or --older-than DURATION (keep those younger, e.g. 720h for 30 days), or both")
	}
	policy := engine.PrunePolicy{DryRun: o.dryRun}
	if o.keepLast != "" {
		n, err := strconv.Atoi(o.keepLast)
		if err != nil || n < 1 {
			return usagef("--keep-last %q: give the number of newest checkpoints to keep, at least 1", o.keepLast)
		}
		policy.KeepLast = n
	}
	if o.olderThan != "" {
		d, err := time.ParseDuration(o.olderThan)
		if err != nil || d <= 0 {
			return usagef("--older-than %q: give a positive duration in h, m or s, e.g. 720h for 30 days", o.olderThan)
		}
		policy.OlderThan = d
	}
	return withEngine(ctx, o, func(e *engine.Engine) error {
		threads := pos
		if o.all {
			ts, err := e.Threads(ctx)
			if err != nil {
				return err
			}
			for _, t := range ts {
				threads = append(threads, t.ID)
			}
		}
		if len(threads) == 0 && !o.json {
			fmt.Fprintln(out, "no threads to prune")
		}
		results := []engine.PruneResult{}
		var failed error
		for _, thread := range threads {
			res, err := e.Prune(ctx, thread, policy)
			if err != nil {
				if failed == nil {
					failed = err
				} else {
					failed = fmt.Errorf("%w; %w", failed, err)
				}
				continue
			}
			results = append(results, res)
			if !o.json {
				fmt.Fprintln(out, pruneSummary(res))
			}
		}
		if o.json && o.all {
			if err := writeJSON(out, map[string]any{"dryRun": o.dryRun, "threads": results}); err != nil {
				return err
			}
		} else if o.json && len(results) == 1 {
			if err := writeJSON(out, results[0]); err != nil {
				return err
			}
		}
		return failed
	})
}

// pruneSummary is one line: what was pruned, what now starts a chain.
func pruneSummary(r engine.PruneResult) string {
	if len(r.Pruned) == 0 {
		return fmt.Sprintf("nothing to prune on thread %s: all %d checkpoint(s) kept", clean(r.Thread), r.Kept)
	}
	verb, reroot, tail := "pruned", "re-rooted", ""
	if r.DryRun {
		verb, reroot, tail = "would prune", "would re-root", " (dry run: nothing changed)"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %d checkpoint(s) of thread %s", verb, len(r.Pruned), clean(r.Thread))
	for i, rr := range r.Rerooted {
		if i == 5 {
			fmt.Fprintf(&b, ", and %d more", len(r.Rerooted)-i)
			break
		}
		sep := ", "
		if i == 0 {
			sep = "; " + reroot + " "
		}
		fmt.Fprintf(&b, "%s#%d (was child of #%d)", sep, rr.ID, rr.From)
	}
	fmt.Fprintf(&b, "; %d kept", r.Kept)
	if len(r.KeptTips) > 0 {
		tips := make([]string, len(r.KeptTips))
		for i, id := range r.KeptTips {
			tips[i] = fmt.Sprintf("#%d", id)
		}
		fmt.Fprintf(&b, " (with paused branch tip(s) %s)", strings.Join(tips, ", "))
	}
	return b.String() + tail
}

// clean makes untrusted text safe to print on a terminal: control
// characters (ESC, C1, CR, …) and bidi overrides become visible escapes.
func clean(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f):
			fmt.Fprintf(&b, "\\x%02x", r)
		case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
			fmt.Fprintf(&b, "\\u%04x", r)
		case r == 0xfffd:
			b.WriteString("\\ufffd")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// cmdWorker is the process side of a worker: one invocation, its events
// streamed as JSON lines on stdout (see engine/worker).
func cmdWorker(ctx context.Context, pos []string, o *options, out io.Writer) error {
	form := "worker run --thread T --input TEXT | worker resume T | worker fork T CHECKPOINT --input TEXT | worker approve T | worker reject T --reason TEXT  [--kill-at POINT]"
	if len(pos) == 0 {
		return usagef("usage: rewind %s", form)
	}
	req := worker.Request{Op: pos[0], KillAt: o.killAt, Reason: o.reason, Config: engine.RunConfig{InterruptBefore: o.before, InterruptAfter: o.after, TakeOver: o.takeOver}}
	switch {
	case req.Op == worker.OpRun && len(pos) == 1 && o.thread != "" && strings.TrimSpace(o.input) != "":
		req.Thread, req.Turn = o.thread, o.turn()
	case (req.Op == worker.OpResume || req.Op == worker.OpApprove) && len(pos) == 2:
		req.Thread = pos[1]
	case req.Op == worker.OpResume && len(pos) == 3:
		id, err := checkpointArg(pos[2])
		if err != nil {
			return err
		}
		req.Thread, req.Checkpoint = pos[1], id
	case req.Op == worker.OpReject && len(pos) == 2 && strings.TrimSpace(o.reason) != "":
		req.Thread = pos[1]
	case req.Op == worker.OpFork && len(pos) == 3 && strings.TrimSpace(o.input) != "":
		id, err := checkpointArg(pos[2])
		if err != nil {
			return err
		}
		req.Thread, req.Checkpoint, req.Turn = pos[1], id, o.turn()
	default:
		return usagef("usage: rewind %s", form)
	}
	if req.KillAt != "" {
		if _, _, err := worker.Parse(req.KillAt); err != nil {
			return usagef("%v", err)
		}
	}
	return withEngine(ctx, o, func(e *engine.Engine) error { return worker.Serve(ctx, e, req, out) })
}

// cmdDrill runs the crash-drill matrix with real worker processes.
func cmdDrill(ctx context.Context, o *options, out io.Writer) error {
	spec := backend.Resolve(o.store)
	if spec == "memory:" || spec == "memory" {
		return usagef("drill kills real processes, which cannot share a memory: store; use --store sqlite:PATH or postgres://…")
	}
	names := append([]string{}, o.points...)
	if o.killAt != "" {
		names = append(names, o.killAt)
	}
	var points []worker.Point
	for _, n := range names {
		p, ok := worker.Lookup(n)
		if !ok {
			return usagef("unknown kill point %q: choose one of %s", n, worker.Names())
		}
		points = append(points, p)
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("drill: find the rewind binary to start workers: %w", err)
	}
	cfg := drill.Config{Exe: exe, Store: spec, Env: os.Environ(), Points: points, MockLatency: o.mockLatency,
		Open: func(ctx context.Context) (store.Store, error) { return backend.Open(ctx, spec) }}
	if !o.json {
		cfg.Observe = func(line string) { fmt.Fprintln(out, clean(line)) }
		fmt.Fprintf(out, "drill on %s\n", backend.Describe(spec))
	}
	res, err := drill.Run(ctx, cfg)
	if err != nil {
		return err
	}
	failed := 0
	for _, oc := range res.Outcomes {
		if !oc.Passed {
			failed++
		}
	}
	if o.json {
		if err := writeJSON(out, res); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(out)
		for _, oc := range res.Outcomes {
			mark := "PASS"
			if !oc.Passed {
				mark = "FAIL"
			}
			fmt.Fprintf(out, "%s %s\n", mark, oc.Point)
			if f := oc.Figures; f["killedAtCheckpoint"] != nil {
				fmt.Fprintf(out, "     at checkpoint %v: pending %v · stored writes %v · redispatched %v · resume-phase calls %v (expected %v) · total calls %v (uninterrupted %v)\n",
					f["killedAtCheckpoint"], orDash(f["pendingTasks"]), f["storedWrites"], f["redispatched"], f["resumePhaseCalls"], f["resumePhaseExpected"], f["modelCalls"], f["baselineModelCalls"])
			}
			for _, c := range oc.Checks {
				tick := "✓"
				if !c.OK {
					tick = "✗"
				}
				fmt.Fprintf(out, "     %s %-34s %s\n", tick, c.Name, clean(c.Detail))
			}
		}
		fmt.Fprintf(out, "%d passed, %d failed\n", len(res.Outcomes)-failed, failed)
	}
	if failed > 0 {
		return fmt.Errorf("drill: %d of %d kill points failed", failed, len(res.Outcomes))
	}
	return nil
}

func orDash(v any) any {
	if s, ok := v.(string); ok && s == "" {
		return "—"
	}
	return v
}

// cmdBench runs `rewind bench`: a long conversation measured turn by turn.
func cmdBench(ctx context.Context, o *options, out io.Writer) error {
	if o.turns < 1 {
		return usagef("bench: --turns %d: give at least 1", o.turns)
	}
	if o.inlineBytes < 0 {
		return usagef("bench: --inline-bytes %d is negative", o.inlineBytes)
	}
	spec := backend.Resolve(o.store)
	st, err := backend.Open(ctx, spec)
	if err != nil {
		return err
	}
	defer st.Close()
	var progress func(bench.Turn)
	if !o.json {
		fmt.Fprintf(out, "bench on %s: %d turns of the ticket conversation, mock model at zero latency\n", backend.Describe(spec), o.turns)
		progress = func(t bench.Turn) {
			if t.Turn == 1 || t.Turn%max(o.turns/10, 1) == 0 {
				fmt.Fprintf(out, "  turn %5d: %7.2f ms, %2d checkpoints, %6.1f KB\n", t.Turn, t.Ms, t.Checkpoints, float64(t.Bytes)/1024)
			}
		}
	}
	rep, err := bench.Run(ctx, st, backend.Describe(spec), bench.Options{Turns: o.turns, InlineBytes: o.inlineBytes}, progress)
	if err != nil {
		return err
	}
	if o.json {
		return writeJSON(out, rep)
	}
	early, earlyKB := rep.Medians(11, 20)
	late, lateKB := rep.Medians(len(rep.Turns)-9, len(rep.Turns))
	fmt.Fprintf(out, "turns 11-20: median %.2f ms, %.1f KB a turn; last 10: median %.2f ms, %.1f KB a turn\n", early, earlyKB/1024, late, lateKB/1024)
	fmt.Fprintf(out, "thread %s: %d checkpoints, %.1f MB; list %.2f ms; load latest %.3f ms, middle %.3f ms (%.3f ms cached); peak RSS %.0f MB\n",
		rep.Thread, rep.Checkpoints, float64(rep.TotalBytes)/1e6, rep.HistoryMs, rep.GetLatestMs, rep.GetMiddleMs, rep.GetLatestWarmMs, float64(rep.RSSBytes)/1e6)
	return nil
}
