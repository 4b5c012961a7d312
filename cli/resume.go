package cli

import (
	"github.com/spf13/cobra"

	"rewind/engine/worker"
)

// newResumeCmd is `rewind resume` (asWorker: `rewind worker resume`).
func newResumeCmd(asWorker bool) *cobra.Command {
	f := execFlags{worker: asWorker}
	var input string
	c := &cobra.Command{
		Use:   "resume T [CHECKPOINT]",
		Short: "carry on from T's latest checkpoint, or a paused branch head (no input)",
		Long: `Carry on from thread T's latest checkpoint, or from CHECKPOINT, a paused
branch head a fork left behind. Tasks whose writes were stored before a
crash are reused, not run again; only the rest run. Resume takes no input
by design: to branch with new input, use fork.`,
		Example: `  rewind resume ticket-1
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
			return f.do(c.Context(), c.OutOrStdout(), worker.Request{Op: worker.OpResume, Thread: args[0], Checkpoint: id})
		},
	}
	// --input is declared only to say why resume refuses it.
	c.Flags().StringVar(&input, "input", "", "")
	_ = c.Flags().MarkHidden("input")
	f.add(c)
	return c
}
