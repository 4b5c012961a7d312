package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"rewind/cli/app"
	"rewind/demo"
	"rewind/store/backend"
	"rewind/tui/termtext"
)

func newDemoCmd() *cobra.Command {
	var storeFlag string
	var asJSON, list bool
	c := &cobra.Command{
		Use:   "demo [LESSON]",
		Short: "lessons for a class, offline: each prepares its own threads, shows its script and ends with a verdict",
		Long: `A lesson prepares fresh threads in the demo store (its own file, not your
store: $XDG_STATE_HOME/rewind/demo.db unless --store is given), prints its
script (what to press, what to look at, what it proves) and checks what the
threads show, ending with a one-line verdict (exit 1 if it does not hold).
Then open the lesson's thread with the command it prints. Without LESSON the
lessons are listed. Lessons that kill workers need a store processes can
share (sqlite or PostgreSQL).`,
		Example: `  rewind demo                 # the lessons
  rewind demo summary         # prepare, script, verdict
  rewind demo kill --json     # for a script`,
		Args: between(0, 1),
		RunE: func(c *cobra.Command, args []string) error {
			out := c.OutOrStdout()
			if len(args) == 0 || list {
				return listLessons(out, asJSON)
			}
			l, ok := demo.Find(args[0])
			if !ok {
				return usagef("no lesson %q: choose one of %s (rewind demo lists them)", named(args[0]), demo.Names())
			}
			spec := app.ResolveStore(storeFlag)
			if storeFlag == "" {
				spec = app.Store{Spec: "sqlite:" + filepath.Join(filepath.Dir(backend.DefaultPath()), "demo.db")}
			}
			if l.Processes && !spec.Shared() {
				return usagef("lesson %s kills real worker processes, which cannot share a memory: store; use --store sqlite:PATH or postgres://…", l.Name)
			}
			open, cleanup := spec.Opener()
			defer cleanup()
			exe, err := os.Executable()
			if err != nil {
				return fmt.Errorf("demo: find the rewind binary to start workers: %w", err)
			}
			env := demo.Env{Spec: spec.Spec, Open: open, Exe: exe, Sources: spec.SourcesPath(), Environ: os.Environ()}
			if !asJSON {
				printScript(out, l, spec.Label())
				fmt.Fprintln(out, "preparing…")
			}
			v, err := l.Run(c.Context(), env)
			if err != nil {
				return fmt.Errorf("lesson %s: %w", l.Name, err)
			}
			if asJSON {
				if err := writeJSON(out, map[string]any{"lesson": l, "store": spec.Label(), "verdict": v}); err != nil {
					return err
				}
			} else {
				fmt.Fprintln(out, termtext.Line(v.Line))
				fmt.Fprintf(out, "open it: rewind tui --store %s %s\n", shellWord(spec.Label()), shellWord(l.Thread))
			}
			if !v.Passed {
				return fmt.Errorf("lesson %s: the verdict does not hold (see above)", l.Name)
			}
			return nil
		},
	}
	addStore(c, &storeFlag)
	addJSON(c, &asJSON)
	c.Flags().BoolVar(&list, "list", false, "list the lessons")
	return c
}

func listLessons(out io.Writer, asJSON bool) error {
	ls := demo.Lessons()
	if asJSON {
		return writeJSON(out, ls)
	}
	for _, l := range ls {
		mark := ""
		if l.Processes {
			mark = " (kills workers)"
		}
		fmt.Fprintf(out, "%-13s %s%s\n              %s\n", l.Name, l.Title, mark, l.Proves)
	}
	fmt.Fprintln(out, "\nrun one: rewind demo LESSON")
	return nil
}

func printScript(out io.Writer, l demo.Lesson, store string) {
	fmt.Fprintf(out, "LESSON %s — %s\n", l.Name, l.Title)
	fmt.Fprintf(out, "proves: %s\n", l.Proves)
	fmt.Fprintf(out, "store:  %s · thread %s\n\n", termtext.Line(store), termtext.Line(l.Thread))
	for i, s := range l.Steps {
		fmt.Fprintf(out, "%d. %s\n   → %s\n", i+1, s.Do, s.See)
	}
	fmt.Fprintln(out)
}

// shellWord quotes s for a shell when it needs it.
func shellWord(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`!*?[]{}()<>|&;#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
