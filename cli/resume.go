package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"rewind/engine"
	"rewind/engine/worker"
	"rewind/tui/termtext"
)

// newResumeCmd is `rewind resume` (asWorker: `rewind worker resume`).
func newResumeCmd(asWorker bool) *cobra.Command {
	f := execFlags{worker: asWorker}
	var input string
	var plan bool
	c := &cobra.Command{
		Use:   "resume T [CHECKPOINT]",
		Short: "carry on from T's latest checkpoint, or a paused branch head (no input)",
		Long: `Carry on from thread T's latest checkpoint, or from CHECKPOINT, a paused
branch head a fork left behind. Tasks whose writes were stored before a
crash are reused, not run again; only the rest run. Resume takes no input
by design: to branch with new input, use fork.

With --plan it runs nothing and prints what a resume would do: the
checkpoint it carries on from and, for each pending task, whether its
writes are stored (reused) or not (redispatched). After a resume the
report says what it did (also under "resume" in --json).`,
		Example: `  rewind resume ticket-1
  rewind resume ticket-1 --plan             # what it would reuse and redispatch
  rewind resume ticket-1 14                 # a paused branch head
  rewind resume ticket-1 --take-over        # fence out a stuck (kill -STOP) writer`,
		Args: between(1, 2),
		RunE: func(c *cobra.Command, args []string) error {
			if input != "" {
				return usagef("resume takes no input: the state is in the checkpoint. To branch with new input use `rewind fork %s CHECKPOINT --input …`", named(args[0]))
			}
			id, err := optCheckpoint(args)
			if err != nil {
				return err
			}
			if plan {
				ctx, err := forThread(c.Context(), args[0], givenGraph(c, f.graph)) // read through the thread's graph
				if err != nil {
					return err
				}
				return withReader(ctx, f.store, func(e *engine.Engine) error {
					p, err := e.PlanResume(c.Context(), args[0], id)
					if err != nil {
						return err
					}
					return printPlan(c.OutOrStdout(), f.json, p)
				})
			}
			return f.do(c.Context(), c.OutOrStdout(), worker.Request{Op: worker.OpResume, Thread: args[0], Checkpoint: id})
		},
	}
	// --input is declared only to say why resume refuses it.
	c.Flags().StringVar(&input, "input", "", "")
	_ = c.Flags().MarkHidden("input")
	f.add(c)
	if !asWorker {
		c.Flags().BoolVar(&plan, "plan", false, "run nothing: print which pending tasks a resume would reuse (writes stored) and redispatch")
	}
	return c
}

// printPlan prints the engine's resume plan.
func printPlan(out io.Writer, asJSON bool, p engine.ResumePlan) error {
	if asJSON {
		return writeJSON(out, p)
	}
	fmt.Fprintf(out, "resume of thread %s from %s\n", idText(p.Thread), termtext.Line(p.String()))
	if p.Refused != "" {
		return nil
	}
	for _, t := range p.Tasks {
		label := termtext.Line(t.Node)
		switch {
		case t.Dropped && t.Stored:
			fmt.Fprintf(out, "  ✗ %s %s: dropped by the recheck, stored writes and all\n", label, idText(t.ID))
		case t.Dropped:
			fmt.Fprintf(out, "  ✗ %s %s: dropped by the recheck\n", label, idText(t.ID))
		case t.Reuse():
			fmt.Fprintf(out, "  ↺ %s %s: reused, writes stored (%s, %s)\n", label, idText(t.ID), termtext.Line(strings.Join(t.Channels, ", ")), count(t.ModelCalls, "model call"))
		case t.Stored:
			fmt.Fprintf(out, "  ○ %s %s: redispatched, its stored writes not reused: %s\n", label, idText(t.ID), termtext.Line(t.Rerun))
		default:
			fmt.Fprintf(out, "  ○ %s %s: redispatched, no writes stored\n", label, idText(t.ID))
		}
	}
	if p.Recheck != nil && len(p.Recheck.Next) > 0 {
		for _, t := range p.Recheck.Next {
			fmt.Fprintf(out, "  → %s %s: runs instead\n", termtext.Line(taskLabel(t)), idText(t.ID))
		}
	}
	return nil
}

// taskLabel names a task by its node, and an executor by its subtask.
func taskLabel(t engine.Task) string {
	var args struct {
		Task struct {
			ID string `json:"id"`
		} `json:"task"`
	}
	if json.Unmarshal(t.Args, &args) == nil && args.Task.ID != "" {
		return t.Node + "[" + args.Task.ID + "]"
	}
	return t.Node
}
