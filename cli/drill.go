package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"rewind/cli/app"
	"rewind/engine"
	"rewind/engine/drill"
	"rewind/engine/worker"
	"rewind/tui/termtext"
)

func newDrillCmd() *cobra.Command {
	var store string
	var asJSON bool
	var killAt []string
	var mockLatency time.Duration
	var graph string
	c := &cobra.Command{
		Use:   "drill",
		Short: "the crash-drill matrix: kill real worker processes at every kill point, resume, check",
		Long: `For every kill point, a real worker process SIGKILLs itself at that moment;
the thread is resumed in new processes and checked: resumed to completion,
the resume phase's model calls equal what the pending tasks need, no
completed task ran again, no duplicate draft, budget not reset, final state
equal to an uninterrupted run's. Plus two grant checks, and at the points
where it matters a record the run read is changed after the kill (as
` + "`rewind source bump`" + ` would) and the verdict checked: re-read, write blocked,
or the draft's verification failed. Exit 1 on any failure. Needs a store
processes can share (sqlite or PostgreSQL). Without --kill-at it drills the
ticket's own points; --kill-at also takes the generic points of any graph
on the ticket's nodes (before:NODE, after:NODE, after-writes:NODE,
before-commit@N, after-commit@N). A graph of your own is drilled from your
own program: README, "Drill your own graph".`,
		Example: `  rewind drill --store sqlite:/tmp/drill.db
  rewind drill --store sqlite:/tmp/drill.db --kill-at mid-fanout --json
  rewind drill --store sqlite:/tmp/drill.db --kill-at before:critic --kill-at before-commit@3`,
		Args: between(0, 0),
		RunE: func(c *cobra.Command, _ []string) error {
			out, spec := c.OutOrStdout(), app.ResolveStore(store)
			if err := spec.Writable(c.Context()); err != nil {
				return err // a LangGraph database: refused before anything is written
			}
			if !spec.Shared() {
				return usagef("drill kills real processes, which cannot share a memory: store; use --store sqlite:PATH or postgres://…")
			}
			exe, err := os.Executable()
			if err != nil {
				return fmt.Errorf("drill: find the rewind binary to start workers: %w", err)
			}
			if graph != "" && graph != defaultGraph {
				return drillGraph(c, graph, exe, spec, killAt, asJSON)
			}
			points, err := drillPoints(killAt)
			if err != nil {
				return err
			}
			keys, err := app.Keys()
			if err != nil {
				return err
			}
			cfg := drill.Config{Exe: exe, Store: spec.Spec, Env: os.Environ(), Points: points, MockLatency: mockLatency, Open: spec.Open, Sources: spec.SourcesPath(), Keys: keys}
			if !asJSON {
				cfg.Observe = lines(out)
				fmt.Fprintf(out, "drill on %s\n", termtext.Line(spec.Label()))
			}
			res, err := drill.Run(c.Context(), cfg)
			if err != nil {
				return err
			}
			return reportDrill(c, res, asJSON, "drill")
		},
	}
	addStore(c, &store)
	addJSON(c, &asJSON)
	c.Flags().StringArrayVar(&killAt, "kill-at", nil, "drill only kill `POINT` (repeatable): "+worker.Names())
	c.Flags().DurationVar(&mockLatency, "mock-latency", 0, "wait `D` per mock model call in the workers")
	c.Flags().StringVar(&graph, "graph", defaultGraph, "drill `NAME`'s graph: "+graphNames()+" (another graph than the ticket: the generic points, drill.RunGraph)")
	return c
}

// drillGraph is `rewind drill --graph NAME` on a graph other than the
// ticket: the generic matrix (drill.RunGraph), this binary the worker
// ($REWIND_DRILL_GRAPH names the graph it builds).
func drillGraph(c *cobra.Command, name, exe string, spec app.Store, killAt []string, asJSON bool) error {
	g, err := graphNamed(name)
	if err != nil {
		return err
	}
	if g.drill == nil {
		return usagef("--graph %s: this graph has no generic drill; drill it from its own program (README, \"Drill your own graph\")", idText(name))
	}
	for _, k := range killAt { // refused before anything is opened or printed
		if err := g.killPoint(k); err != nil {
			return err
		}
	}
	out := c.OutOrStdout()
	cfg := drill.GraphConfig{Exe: exe, Store: spec.Spec, Env: append(os.Environ(), drillGraphEnv+"="+name), Input: g.drill.input, Answer: g.drill.answer, Points: killAt, Parallel: 2,
		Build: func(ctx context.Context, s string) (*engine.Engine, error) { return buildGraph(ctx, name, s) }}
	if !asJSON {
		cfg.Observe = lines(out)
		fmt.Fprintf(out, "drill of graph %s on %s\n", name, termtext.Line(spec.Label()))
	}
	res, err := drill.RunGraph(c.Context(), cfg)
	if err != nil {
		return err
	}
	return reportDrill(c, res, asJSON, "drill of graph "+name)
}

// reportDrill prints a drill's result (JSON, or a line a point) and fails
// the command when a point failed.
func reportDrill(c *cobra.Command, res drill.Result, asJSON bool, what string) error {
	failed := 0
	for _, oc := range res.Outcomes {
		if !oc.Passed {
			failed++
		}
	}
	if asJSON {
		if err := writeJSON(c.OutOrStdout(), res); err != nil {
			return err
		}
	} else {
		printDrill(c, res, failed)
	}
	if failed > 0 {
		return fmt.Errorf("%s: %d of %d kill points failed", what, failed, len(res.Outcomes))
	}
	return nil
}

// drillPoints reads --kill-at: the ticket's own points and the generic
// ones on its nodes, POINT@N drilling the Nth time.
func drillPoints(killAt []string) ([]worker.Point, error) {
	var points []worker.Point
	for _, n := range killAt {
		p, nth, err := worker.Parse(n)
		if err != nil {
			return nil, usageOf(err)
		}
		if nth > 1 {
			p.DrillAt = nth
		}
		points = append(points, p)
	}
	return points, nil
}

func printDrill(c *cobra.Command, res drill.Result, failed int) {
	out := c.OutOrStdout()
	fmt.Fprintln(out)
	for _, oc := range res.Outcomes {
		mark := "PASS"
		if !oc.Passed {
			mark = "FAIL"
		}
		fmt.Fprintf(out, "%s %s\n", mark, oc.Point)
		if f := oc.Figures; f["killedAtCheckpoint"] != nil && f["modelCalls"] == nil { // a generic drill's
			fmt.Fprintf(out, "     at checkpoint %v: pending %v · stored writes %v\n", f["killedAtCheckpoint"], orDash(f["pendingTasks"]), f["storedWrites"])
		} else if f["killedAtCheckpoint"] != nil {
			fmt.Fprintf(out, "     at checkpoint %v: pending %v · stored writes %v · redispatched %v · resume-phase calls %v (expected %v) · total calls %v (uninterrupted %v)\n",
				f["killedAtCheckpoint"], orDash(f["pendingTasks"]), f["storedWrites"], f["redispatched"], f["resumePhaseCalls"], f["resumePhaseExpected"], f["modelCalls"], f["baselineModelCalls"])
		}
		if f := oc.Figures; f["verdict"] != nil {
			fmt.Fprintf(out, "     killed at checkpoint %v, then %v went v%v → v%v: verdict %v\n", f["killedAt"], f["source"], f["from"], f["to"], f["verdict"])
		}
		for _, ch := range oc.Checks {
			tick := "✓"
			if !ch.OK {
				tick = "✗"
			}
			fmt.Fprintf(out, "     %s %-34s %s\n", tick, ch.Name, termtext.Line(ch.Detail))
		}
	}
	fmt.Fprintf(out, "%d passed, %d failed\n", len(res.Outcomes)-failed, failed)
}

// lines prints a drill's progress lines to out, one at a time: points
// drilled at once report from their own goroutines.
func lines(out io.Writer) func(string) {
	var mu sync.Mutex
	return func(line string) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintln(out, termtext.Line(line))
	}
}
