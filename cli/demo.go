package cli

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"rewind/cli/app"
	"rewind/demo"
	"rewind/store/backend"
	"rewind/tui"
	"rewind/tui/termtext"
)

func newDemoCmd() *cobra.Command {
	var storeFlag string
	var asJSON, list, headless bool
	c := &cobra.Command{
		Use:   "demo [LESSON]",
		Short: "lessons for a class, offline: each prepares its own threads, shows its script and ends with a verdict",
		Long: `A lesson prepares fresh threads in the demo store (its own file, not your
store: $XDG_STATE_HOME/rewind/demo.db unless --store is given), prints its
script (what to press, what to look at, what it proves) and checks what the
threads show, ending with a one-line verdict (exit 1 if it does not hold).
On a terminal, rewind demo opens a lesson picker in the TUI, and
rewind demo LESSON prepares the lesson and opens the TUI on its thread with
the script in a side panel (s hides it). With --headless, or when stdout is
not a terminal, the script and the verdict are printed instead, and without
LESSON the lessons are listed. Lessons that kill workers need a store
processes can share (sqlite or PostgreSQL).`,
		Example: `  rewind demo                 # the lesson picker (a list when not a terminal)
  rewind demo fork            # prepare, then the TUI with the script beside it
  rewind demo summary --headless  # prepare, script, verdict printed
  rewind demo kill --json     # for a script`,
		Args: between(0, 1),
		RunE: func(c *cobra.Command, args []string) error {
			out := c.OutOrStdout()
			interactive := !headless && !asJSON && !list && out == os.Stdout && term.IsTerminal(os.Stdout.Fd())
			if !interactive && (len(args) == 0 || list) {
				return listLessons(out, asJSON)
			}
			var l demo.Lesson
			if len(args) == 1 {
				var ok bool
				if l, ok = demo.Find(args[0]); !ok {
					return usagef("no lesson %q: choose one of %s (rewind demo lists them)", named(args[0]), demo.Names())
				}
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
			if interactive {
				return demoTUI(c.Context(), spec, env, l.Name)
			}
			if !asJSON {
				printScript(out, l, spec)
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
				printOpenIt(out, l, spec, v)
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
	c.Flags().BoolVar(&headless, "headless", false, "print the script and the verdict instead of opening the TUI (the default when stdout is not a terminal)")
	return c
}

// printOpenIt says how to open the lesson's thread in the TUI, at its
// checkpoint: the thread records its graph, which the TUI opens.
func printOpenIt(out io.Writer, l demo.Lesson, spec app.Store, v demo.Verdict) {
	fmt.Fprintf(out, "open it: rewind tui --store %s %s", shellWord(spec.Label()), shellWord(l.Thread))
	if v.At != 0 {
		fmt.Fprintf(out, ", then : @%d (the lesson's checkpoint)", v.At)
	}
	fmt.Fprintln(out)
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
		fmt.Fprintf(out, "%-17s %s%s\n                  %s\n", l.Name, l.Title, mark, l.Proves)
	}
	fmt.Fprintln(out, "\nrun one: rewind demo LESSON")
	return nil
}

// printScript prints the lesson's script with every command naming the
// lesson store (demo.Lesson.Script).
func printScript(out io.Writer, l demo.Lesson, spec app.Store) {
	fmt.Fprintf(out, "LESSON %s — %s\n", l.Name, l.Title)
	fmt.Fprintf(out, "proves: %s\n", l.Proves)
	fmt.Fprintf(out, "store:  %s · thread %s\n", termtext.Line(spec.Label()), termtext.Line(l.Thread))
	if !spec.Shared() {
		fmt.Fprintln(out, "        (a memory: store is this process's own: the rewind commands below read an empty one; use --store sqlite:PATH)")
	}
	fmt.Fprintln(out)
	for i, s := range l.Script(spec.Label()) {
		fmt.Fprintf(out, "%d. %s\n   → %s\n", i+1, termtext.Line(s.Do), termtext.Line(s.See))
	}
	fmt.Fprintln(out)
}

// tuiLessons are the lessons as the TUI shows them (plain data: tui links
// no demo and no store backend), their commands naming the lesson store.
func tuiLessons(store, graph string) []tui.Lesson {
	var out []tui.Lesson
	for _, l := range demo.Lessons() {
		if l.Graph != graph { // the TUI runs one graph: its lessons alone
			continue
		}
		tl := tui.Lesson{Name: l.Name, Title: l.Title, Proves: l.Proves, Thread: l.Thread, KillsWorkers: l.Processes}
		for _, s := range l.Script(store) {
			tl.Steps = append(tl.Steps, tui.LessonStep{Do: s.Do, See: s.See})
		}
		out = append(out, tl)
	}
	return out
}

// demoTUI opens the TUI on the lesson store: the picker, or lesson name
// prepared at start. A lesson is prepared by its headless run, in a Cmd.
func demoTUI(ctx context.Context, spec app.Store, env demo.Env, name string) error {
	var mf app.ModelFlags
	watchable(&mf, func(string) bool { return false }) // a run you can watch, and kill by hand
	// A lesson of another graph opens that graph, with its lessons alone.
	l, _ := demo.Find(name)
	g, err := graphNamed(cmp.Or(l.Graph, defaultGraph))
	if err != nil {
		return err
	}
	a, err := openGraph(ctx, spec.Spec, &mf, g.app)
	if err != nil {
		return err
	}
	defer a.Close()
	prepare := func(ctx context.Context, name string, say func(string)) (tui.LessonVerdict, error) {
		l, ok := demo.Find(name)
		if !ok {
			return tui.LessonVerdict{}, fmt.Errorf("no lesson %q: choose one of %s", name, demo.Names())
		}
		if l.Processes && !spec.Shared() {
			return tui.LessonVerdict{}, fmt.Errorf("lesson %s kills real worker processes, which cannot share a memory: store; start rewind demo with --store sqlite:PATH", l.Name)
		}
		e := env
		e.Say = say
		say("running the lesson headless in " + spec.Label() + " (offline)")
		v, err := l.Run(ctx, e)
		if err != nil {
			return tui.LessonVerdict{}, fmt.Errorf("lesson %s: %w", l.Name, err)
		}
		return tui.LessonVerdict{Line: v.Line, Passed: v.Passed, At: v.At}, nil
	}
	o := tui.Options{Engine: a.Engine, StoreLabel: a.Store.Label(), Lessons: tuiLessons(a.Store.Label(), l.Graph), Prepare: prepare, Lesson: name,
		Extension: g.ext}
	if a.Store.Shared() && g.app == nil { // workers run the ticket graph (tui.go)
		o.WorkerStore = a.Store.Spec
		o.Exe = env.Exe
		o.WorkerFlags = mf.Args()
	}
	return tui.Run(ctx, o)
}

// shellWord quotes s for a shell when it needs it.
func shellWord(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`!*?[]{}()<>|&;#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
