package drill

// The drill of any graph: the user's own binary is the worker (MainIfWorker
// at the top of its main, or of a test's TestMain), started again by the
// drill with $REWIND_GRAPH_WORKER saying what to do; RunGraph kills it at
// each generic kill point (worker.GraphPoints), resumes the thread in new
// processes and checks what must hold on any graph.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"rewind/engine"
	"rewind/engine/worker"
	"rewind/store"
)

// WorkerEnv is the variable that makes a binary calling MainIfWorker a
// drill's worker: it holds the request, as JSON.
const WorkerEnv = "REWIND_GRAPH_WORKER"

// Build makes the engine of the graph to drill on the store spec given
// (sqlite:PATH or postgres://…; store/backend.Open opens either). The
// workers and the drill's own process call it.
type Build func(ctx context.Context, store string) (*engine.Engine, error)

// graphRequest is what one worker process does.
type graphRequest struct {
	Op     string `json:"op"` // worker.OpRun or worker.OpResume
	Thread string `json:"thread"`
	Store  string `json:"store"`
	Input  string `json:"input,omitempty"`
	KillAt string `json:"killAt,omitempty"`
}

// MainIfWorker returns at once unless $REWIND_GRAPH_WORKER is set; then
// this process is a drill's worker: it builds the engine, performs the
// request (killing itself at the kill point it names), writes its messages
// on stdout and exits. Call it first in main, before anything reads flags
// or writes to stdout, or first in TestMain for a test binary.
func MainIfWorker(build Build) {
	spec := os.Getenv(WorkerEnv)
	if spec == "" {
		return
	}
	os.Exit(serveGraph(context.Background(), build, spec))
}

func serveGraph(ctx context.Context, build Build, spec string) int {
	fail := func(err error) int {
		_ = json.NewEncoder(os.Stdout).Encode(worker.Message{Error: err.Error()})
		return 1
	}
	var req graphRequest
	if err := json.Unmarshal([]byte(spec), &req); err != nil {
		return fail(fmt.Errorf("$%s does not hold a drill's request: %w", WorkerEnv, err))
	}
	e, err := build(ctx, req.Store)
	if err != nil {
		return fail(fmt.Errorf("drill worker: build the engine on %s: %w", store.Name(req.Store), err))
	}
	defer e.Store().Close()
	wreq := worker.Request{Op: req.Op, Thread: req.Thread, KillAt: req.KillAt}
	if req.Op == worker.OpRun {
		if wreq.Input, err = turnInput(e, req.Input); err != nil {
			return fail(err)
		}
	}
	if _, err := worker.Serve(ctx, e, wreq, os.Stdout); err != nil {
		return 1
	}
	return 0
}

// turnInput is text through the graph's declared Input.
func turnInput(e *engine.Engine, text string) ([]engine.Write, error) {
	in := e.Graph().TurnInput()
	if in == nil {
		return nil, fmt.Errorf("graph %s declares no Input, so a drill cannot start its turn: declare one (Graph.Input)", e.Graph().Name)
	}
	ws, err := in(engine.Input{Text: text}, e.Now())
	if err != nil {
		return nil, fmt.Errorf("graph %s refused the drill's input %q: %w", e.Graph().Name, text, err)
	}
	return ws, nil
}

// GraphConfig says what graph to drill, where and how.
type GraphConfig struct {
	// Exe is the binary whose main (or TestMain) calls MainIfWorker with
	// Build first: os.Executable() for the program itself.
	Exe string
	// Store is the spec the workers and this process open: a store
	// processes share (sqlite:PATH or postgres://…).
	Store string
	// Build makes the engine, here and in the workers.
	Build Build
	// Env is the workers' environment (WorkerEnv is added).
	Env []string
	// Input is the turn's text, given to the graph's Input.
	Input string
	// Points are kill-at specs (worker.ParseFor: before:NODE, mid-fanout,
	// before-commit@2, …); empty: every point the uninterrupted run
	// reached (MatrixPoints).
	Points []string
	// Exclude names channels left out of the final comparison (what the
	// graph computes from the clock or at random).
	Exclude []string
	// Parallel is how many points are drilled at once (default 1): the
	// drill mostly waits on its workers.
	Parallel int
	// Threads prefixes the drill's thread names (default "drill:").
	Threads string
	// Observe sees progress lines; it may be called from several
	// goroutines at once when Parallel > 1. May be nil.
	Observe func(line string)
	// Answer is the person's answer where a run stops to wait for one (a
	// Graph.Gate, awaiting approval): given the head, the writes that
	// record it (as Engine.Answer's callback). The drill writes them in an
	// update checkpoint that keeps the pending tasks, and a new worker
	// resumes. Nil: a run that waits for a person is not carried past.
	Answer func(head engine.Checkpoint) ([]engine.Write, error)
}

// maxWorkers bounds the processes one thread is driven with.
const maxWorkers = 8

// RunGraph runs the generic matrix: an uninterrupted run of Input, then per
// point a worker killed (SIGKILL) at it and the thread resumed in new
// workers, each checked (Outcome.Checks): killed at the point, resumed to
// completion, no task whose writes were stored before the kill ran again
// (every one reused), no committed checkpoint lost, the chain one line of
// parents, the same checkpoints (nodes per superstep) and the same final
// values (Exclude aside) as the uninterrupted run.
func RunGraph(ctx context.Context, cfg GraphConfig) (Result, error) {
	if cfg.Exe == "" || cfg.Store == "" || cfg.Build == nil {
		return Result{}, errors.New("a graph drill needs the worker binary (Exe), a store spec processes share (Store) and the engine's Build")
	}
	if strings.HasPrefix(cfg.Store, "memory:") {
		return Result{}, fmt.Errorf("drill: store %s: a drill kills real processes, which cannot share a memory store; give a sqlite:PATH or postgres:// spec", store.Name(cfg.Store))
	}
	if cfg.Threads == "" {
		cfg.Threads = "drill:"
	}
	e, err := cfg.Build(ctx, cfg.Store)
	if err != nil {
		return Result{}, fmt.Errorf("drill: build the engine on %s: %w", store.Name(cfg.Store), err)
	}
	defer e.Store().Close()
	if _, err := turnInput(e, cfg.Input); err != nil {
		return Result{}, err
	}
	specs := cfg.Points
	for _, s := range specs {
		if _, _, err := worker.ParseFor(e.Graph(), s); err != nil {
			return Result{}, err // before anything runs
		}
	}
	gd := &graphDriller{cfg: cfg, e: e}
	base, err := gd.baseline(ctx)
	if err != nil {
		return Result{}, fmt.Errorf("baseline run: %w", err)
	}
	if len(specs) == 0 {
		_, hooked := e.Store().(worker.TxHooker)
		specs = MatrixPoints(e.Graph(), base.chain, hooked)
	}
	res := Result{Baseline: base.figures(), Passed: true, Outcomes: make([]Outcome, len(specs))}
	sem := make(chan struct{}, max(cfg.Parallel, 1))
	var wg sync.WaitGroup
	for i, spec := range specs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			out, err := gd.drill(ctx, spec, base)
			if err != nil {
				out.Passed = false
				out.Checks = append(out.Checks, Check{Name: "drill ran", Detail: err.Error()})
			}
			res.Outcomes[i] = out
		}()
	}
	wg.Wait()
	for _, o := range res.Outcomes {
		res.Passed = res.Passed && o.Passed
	}
	return res, ctx.Err()
}

// MatrixPoints are the kill-at specs that drill every moment an
// uninterrupted run (its chain, oldest first) reached: before and after
// each node that ran (its first task), after-writes of a node the first
// time it ran beside other tasks, mid-fanout at the first superstep of two
// tasks or more, and before and after each commit (and inside it, when the
// store can stop there).
func MatrixPoints(g *engine.Graph, chain []engine.Checkpoint, midTransaction bool) []string {
	var out []string
	ran := map[string]int{}
	fanned, writes := false, map[string]bool{}
	for _, n := range g.Nodes() {
		for _, cp := range chain {
			if hasTask(cp, n) {
				out = append(out, string(worker.BeforeNode)+":"+n, string(worker.AfterNode)+":"+n)
				break
			}
		}
	}
	for _, cp := range chain {
		for _, t := range cp.Tasks {
			if len(cp.Tasks) >= 2 && !writes[t.Node] {
				writes[t.Node] = true
				out = append(out, fmt.Sprintf("%s:%s@%d", worker.AfterWrites, t.Node, ran[t.Node]+1))
			}
		}
		for _, t := range cp.Tasks {
			ran[t.Node]++
		}
		if len(cp.Tasks) >= 2 && !fanned {
			fanned = true
			out = append(out, string(worker.MidFanout))
		}
	}
	// A commit point's @N counts a worker's commits: an update checkpoint
	// (the person's answer, GraphConfig.Answer) is the drill's, not a
	// worker's, and the count goes on in the next worker (carried).
	n := 0
	for _, cp := range chain {
		if cp.Source == engine.SourceUpdate {
			continue
		}
		n++
		out = append(out, fmt.Sprintf("%s@%d", worker.BeforeCommit, n), fmt.Sprintf("%s@%d", worker.AfterCommit, n))
		if midTransaction {
			out = append(out, fmt.Sprintf("%s@%d", worker.MidTransaction, n))
		}
	}
	return out
}

// carried is a commit point's spec for the next worker after one that
// committed n checkpoints without reaching it: the worker counts from one
// (before-commit@5 after four commits is before-commit@1). Other specs
// carry over as they are.
func carried(spec string, n int) string {
	name, nth, ok := strings.Cut(spec, "@")
	switch worker.KillPoint(name) {
	case worker.BeforeCommit, worker.AfterCommit, worker.MidTransaction:
	default:
		return spec
	}
	k, err := strconv.Atoi(nth)
	if !ok || err != nil || k-n < 1 {
		return spec
	}
	return fmt.Sprintf("%s@%d", name, k-n)
}

func hasTask(cp engine.Checkpoint, node string) bool {
	for _, t := range cp.Tasks {
		if t.Node == node {
			return true
		}
	}
	return false
}
