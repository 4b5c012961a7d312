package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"rewind/cli/app"
	"rewind/cli/app/modelflags"
	"rewind/engine"
	"rewind/engine/model/openai"
	"rewind/tui"
)

// tuiFlags are the TUI's flags, on `rewind tui` and on `rewind` alone.
type tuiFlags struct {
	store, theme, thread string
	graph                string
	noMouse              bool
	model                app.ModelFlags
	before, after        []string
	authTTL              time.Duration
	cmd                  *cobra.Command // whose flags say what was given
}

// The TUI's mock latency, unless --mock-latency or --mock-jitter is
// given: a turn takes a few seconds, so a first run can be watched and a
// hand kill (X) during the fan-out catches some executors done and some
// not. The CLI, bench and drills keep 0.
const (
	TUIMockLatency = 400 * time.Millisecond
	TUIMockJitter  = 400 * time.Millisecond
)

// watchable gives the mock the TUI's latency when the user set none and
// the model is the mock (not another provider, not a replay).
func watchable(m *app.ModelFlags, given func(string) bool) {
	if given("mock-latency") || given("mock-jitter") || m.Replay != "" {
		return
	}
	p := m.Provider
	if !given("provider") {
		p = os.Getenv(modelflags.EnvProvider)
	}
	if p = strings.ToLower(strings.TrimSpace(p)); p != "" && p != modelflags.Mock {
		return
	}
	m.MockLatency, m.MockJitter = TUIMockLatency, TUIMockJitter
}

func (f *tuiFlags) add(c *cobra.Command) {
	addStore(c, &f.store)
	c.Flags().StringVar(&f.theme, "theme", "", "colour theme `NAME`: dark, light, high-contrast or no-color (default: the config file's, no-color under NO_COLOR, else dark)")
	c.Flags().StringVar(&f.thread, "thread", "", "open thread `T` at start (default: the threads list)")
	c.Flags().BoolVar(&f.noMouse, "no-mouse", false, "leave the mouse to the terminal, so it selects text (also mouse = false in the config file)")
	addModel(c, &f.model)
	c.Flags().Lookup("mock-latency").Usage += fmt.Sprintf(" (in the TUI %s, with --mock-jitter %s, unless either is given)", TUIMockLatency, TUIMockJitter)
	f.cmd = c
	addInterrupts(c, &f.before, &f.after)
	c.Flags().DurationVar(&f.authTTL, "auth-ttl", time.Hour, "a draft turn's authorization grant expires after `D`")
	c.Flags().StringVar(&f.graph, "graph", defaultGraph, "open the graph `NAME`: "+graphNames()+" (research: the second demo graph)")
}

// run opens the app and runs the TUI on it until the user quits.
func (f *tuiFlags) run(ctx context.Context, thread string) error {
	g, err := graphNamed(f.graph)
	if err != nil {
		return err
	}
	if f.authTTL <= 0 { // the default is 1h: a 0 was given
		return usagef("--auth-ttl %s: a grant must last longer than 0: give --auth-ttl D with D > 0, e.g. 1h", f.authTTL)
	}
	spec := app.ResolveStore(f.store)
	// Told once, for the openers below (each would open the file and read
	// its schema again); the screen runs in ctx, which carries none.
	octx, release, err := spec.Detected(ctx)
	if err != nil {
		return err
	}
	defer release()
	src, err := spec.OpenLangGraph(octx)
	if err != nil {
		return err
	}
	if src != nil { // a LangGraph database: the TUI reads it, never writes
		defer src.Close()
		if g.app != nil {
			return usagef("--graph %s: %s is a LangGraph database, read as it is stored; drop --graph", idText(f.graph), spec.Label())
		}
		if thread != "" {
			// As on a rewind store: an unknown thread fails before the
			// screen; a unique prefix or a printed short form is the
			// thread it names, as in the other read commands.
			c, err := chainOf(ctx, src, thread, "")
			if err != nil {
				return err
			}
			thread = c.Thread
		}
		return tui.Run(ctx, tui.Options{Source: src, StoreLabel: spec.Label(), Thread: thread, Theme: f.theme, NoMouse: f.noMouse})
	}
	if thread != "" {
		// A thread that is not there is an error before the screen opens,
		// as in the CLI, and before anything is created or upgraded; new
		// threads are made from the threads list (n). Status reads the
		// newest listing only (Latest would rebuild the head's whole
		// state, which the screen reads again anyway).
		err := withReader(octx, f.store, func(e *engine.Engine) error {
			_, err := e.Status(ctx, thread)
			return err // the CLI's words: thread "T" not found: list threads with `rewind threads`
		})
		if err != nil && !errors.Is(err, app.ErrOlderStore) {
			return err
		}
	}
	if f.cmd != nil {
		watchable(&f.model, f.cmd.Flags().Changed)
	}
	// The thread's own graph (what it records), or --graph's.
	octx, err = forThread(octx, thread, givenGraph(f.cmd, f.graph))
	if err != nil {
		return err
	}
	if thread == "" {
		if err := startFails(givenGraph(f.cmd, f.graph), f.model.MockFail); err != nil {
			return err
		}
	}
	a, err := openApp(octx, f.store, &f.model)
	if err != nil {
		return err
	}
	defer a.Close()
	g = entryOf(a.Graph)
	if err := checkInterrupts(a.Engine.Graph(), f.before, f.after); err != nil {
		return err
	}
	o := tui.Options{Engine: a.Engine, StoreLabel: a.Store.Label(), Thread: thread, Theme: f.theme, NoMouse: f.noMouse,
		InterruptBefore: f.before, InterruptAfter: f.after, WorkerFlags: f.model.Args(), AuthTTL: f.authTTL,
		ContextWindow: openai.WindowFromEnv(os.Getenv), Extension: g.ext}
	o.Graphs = f.otherGraphs(a)
	// Runs are worker processes of this binary (`rewind worker … --graph
	// NAME` builds the same graph), so X kills one for real.
	if a.Store.Shared() {
		o.WorkerStore = a.Store.Spec
		o.Exe, _ = os.Executable() // without it runs stay in-process
		if g.app != nil {
			o.WorkerFlags = append(o.WorkerFlags, "--graph="+g.app.Name)
		}
	}
	return tui.Run(ctx, o)
}

// otherGraphs builds, on a's store, the graph of a thread the threads
// list opens when it records another than a's: rewind's graphs by name,
// each with its extension, its workers told --graph.
func (f *tuiFlags) otherGraphs(a *app.App) func(context.Context, string) (tui.GraphDeps, error) {
	return func(_ context.Context, name string) (tui.GraphDeps, error) {
		g, ok := graphs[name]
		if !ok {
			return tui.GraphDeps{}, fmt.Errorf("graph %s: rewind builds %s: %w", idText(name), graphNames(), tui.ErrUnknownGraph)
		}
		e, err := a.For(g.app)
		if err != nil {
			return tui.GraphDeps{}, err
		}
		return tui.GraphDeps{Engine: e, Extension: g.ext, WorkerFlags: append(f.model.Args(), "--graph="+name)}, nil
	}
}

func newTUICmd() *cobra.Command {
	var f tuiFlags
	c := &cobra.Command{
		Use:   "tui [THREAD]",
		Short: "the terminal UI (what `rewind` alone opens)",
		Long: `The terminal UI: scrub the checkpoint chain, fork, send messages, kill runs
and resume them; ? lists every key. Runs happen in worker processes (X is a
real SIGKILL, asked first), except on a memory: store. THREAD must exist:
new threads start from the threads list (n).

On a LangGraph database, the same TUI, read-only: the threads and their
subgraph runs (rows under the thread: enter opens one), the chain's timeline
as a tree and, for the checkpoint under the cursor, its conversation, its
channels and the writes of its superstep; / searches, : goes to a checkpoint,
and new checkpoints join as the database is written. The keys that would
write say why they are off.`,
		Example: `  rewind tui ticket-1
  rewind tui --store memory: --theme light
  rewind tui --no-mouse                     # the terminal selects text
  rewind tui --mock-latency 0               # runs as fast as the CLI`,
		Args: between(0, 1),
		RunE: func(c *cobra.Command, args []string) error {
			thread := f.thread
			if len(args) == 1 {
				thread = args[0]
			}
			return f.run(c.Context(), thread)
		},
	}
	f.add(c)
	return c
}
