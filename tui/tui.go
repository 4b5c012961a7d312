// Package tui is rewind's terminal UI for a checkpointed graph: run a
// conversation through it with live progress, scrub the checkpoint tree
// (forks branch), inspect a checkpoint's pending tasks, events and diff
// against its parent, fork with new input, replay, edit state, kill a run
// and resume it, and manage threads. Run opens it on any engine.Graph:
// channels show by their shape (a message list as a conversation, the
// rest as values and JSON trees), nodes and edges come from the graph's
// declaration, and what is particular to one graph (the support ticket's
// summary pin, subtasks and approvals: rewind/tui/ticketview) is an
// Extension the caller passes, drawing with rewind/tui/draw.
//
// It is a Bubble Tea v1 program: one root Model routes messages to its
// panes; every store read and every run happens in a tea.Cmd; runs go
// through the Runner interface so a worker process can replace the
// in-process engine; every style comes from a themes.Theme.
package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/term"
	"github.com/muesli/termenv"

	"rewind/engine"
	"rewind/store/browse"
)

// Options are what `rewind tui` passes in: the app the CLI opened (its
// store, model and engine come from cli/app, so the TUI links no store
// backend) and the user's choices.
type Options struct {
	// Engine reads and runs its graph on the opened store: the TUI takes
	// from the graph's declaration the input a run starts with
	// (engine.Graph.Input; none: the keys that type one are off), the
	// nodes breakpoints offer and the graph view's drawing. Run does not
	// close its store: the caller that opened it does.
	Engine *engine.Engine
	// Source, with no Engine, is a read-only source (a LangGraph
	// database): the TUI reads it and never writes; the keys that would
	// say why they are off. The caller closes it.
	Source browse.Source
	// StoreLabel names the store in the status bar, password hidden.
	StoreLabel string
	// WorkerStore is the store spec every `rewind worker` opens: the same
	// sqlite file or PostgreSQL database. Empty when the store cannot be
	// shared between processes (memory:) or no worker builds the graph
	// (a program's own graph): runs then stay in this process.
	WorkerStore string
	// Thread opens this thread at start; empty shows the threads list.
	Thread string
	// Theme is the --theme flag; empty means the config file, NO_COLOR, or
	// the default.
	Theme string
	// NoMouse leaves the mouse to the terminal (plain text selection), as
	// mouse = false in the config file does.
	NoMouse bool
	// InterruptBefore/After preset breakpoints.
	InterruptBefore []string
	InterruptAfter  []string
	// Exe is the rewind binary that runs workers (`rewind worker …`): every
	// run, resume, fork and approval answer is then a process of its own,
	// so X kills it for real. Empty runs in this process instead.
	Exe string
	// WorkerFlags are passed to every worker: the model's flags, e.g.
	// --mock-latency 400ms, --provider openai.
	WorkerFlags []string
	// AuthTTL is the authorization grant's lifetime on a draft turn
	// (default 1h).
	AuthTTL time.Duration
	// ContextWindow is the models' context window in tokens (0: the
	// default), for the prompt view.
	ContextWindow int
	// Lessons opens the lesson picker (`rewind demo`) when Thread is empty;
	// Prepare runs a lesson headless in the store Engine reads; Lesson
	// prepares that one at start and opens it with its script.
	Lessons []Lesson
	Prepare PrepareFunc
	Lesson  string
	// Extension is what the graph shows beyond its channels by shape:
	// ticketview.Extension for the ticket graph; nil shows any graph's
	// channels by their shape.
	Extension Extension
	// Graphs builds, on the same store, the graph a thread records when it
	// is not Engine's (the threads list holds every graph's threads): the
	// thread then opens on that graph, as `rewind tui THREAD` would. It is
	// called from a tea.Cmd; an error wrapping ErrUnknownGraph says it
	// builds no such graph. Nil: such a thread is read on Engine's graph,
	// the status bar saying so.
	Graphs func(ctx context.Context, name string) (GraphDeps, error)
	// Input and Output default to the terminal.
	Input  io.Reader
	Output io.Writer
}

// Run runs the TUI on the opened engine, or on a read-only Source, until
// the user quits.
func Run(ctx context.Context, o Options) error {
	if o.Engine == nil && o.Source == nil {
		return errors.New("tui: nothing to read: open the app first (cli/app.Open) and pass its engine, or a LangGraph database as Source")
	}
	cfgPath := ConfigPath()
	cfg, err := LoadConfig(cfgPath)
	if err != nil {
		return err
	}
	th, err := ResolveTheme(o.Theme, cfg, os.Getenv)
	if err != nil {
		return err
	}
	noColor := os.Getenv("NO_COLOR") != ""
	applyColorProfile(noColor)
	termBg := ""
	if o.Output == nil && !noColor {
		termBg = terminalBackground()
	}
	root := New(ctx, depsOf(o), Settings{Thread: o.Thread, Theme: th, InterruptBefore: o.InterruptBefore, InterruptAfter: o.InterruptAfter, AuthTTL: o.AuthTTL, ContextWindow: o.ContextWindow,
		ConfigPath: cfgPath, NoColor: noColor, TerminalBackground: termBg, Keys: cfg.Keys, Lessons: o.Lessons, Prepare: o.Prepare, Lesson: o.Lesson})
	opts := []tea.ProgramOption{tea.WithAltScreen(), tea.WithContext(ctx)}
	if !o.NoMouse && (cfg.Mouse == nil || *cfg.Mouse) {
		opts = append(opts, tea.WithMouseCellMotion())
	}
	if o.Input != nil {
		opts = append(opts, tea.WithInput(o.Input))
	}
	if o.Output != nil {
		opts = append(opts, tea.WithOutput(o.Output))
	}
	_, err = tea.NewProgram(root, opts...).Run()
	root.Shutdown(5 * time.Second)
	if err != nil && !(errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil) {
		return fmt.Errorf("tui: %w", err)
	}
	return nil
}

// GraphDeps is another graph the TUI opens a thread on (Options.Graphs).
type GraphDeps struct {
	// Engine runs the graph on the store Options.Engine reads.
	Engine *engine.Engine
	// Extension is what it shows beyond its channels by shape (nil: none).
	Extension Extension
	// WorkerFlags replace Options.WorkerFlags for its runs: the model's
	// flags and what makes a worker build this graph (--graph=NAME).
	WorkerFlags []string
}

// ErrUnknownGraph is wrapped by an Options.Graphs error for a graph it
// does not build: the thread is read on the graph open, which says so.
var ErrUnknownGraph = errors.New("no such graph here")

// depsOf is what the TUI works with for o: where it reads, how it runs,
// and how it builds another graph a thread records (o.Graphs).
func depsOf(o Options) Deps {
	deps := Deps{Source: o.Source, StoreLabel: o.StoreLabel, Extension: o.Extension}
	if o.Engine != nil {
		deps.Source, deps.Backend = o.Engine.Browse(browse.About{Where: o.StoreLabel}), EngineBackend(o.Engine)
	}
	switch {
	case o.Engine == nil: // read-only: no Backend, no runs
	case o.WorkerStore == "" && strings.HasPrefix(o.StoreLabel, "memory:"):
		deps.Runner, deps.RunnerLabel = NewLocalRunner(o.Engine), "in-process (a memory: store cannot cross processes; no kills)"
	case o.WorkerStore == "":
		deps.Runner, deps.RunnerLabel = NewLocalRunner(o.Engine), "in-process (no worker store given: no kills)"
	case o.Exe == "":
		deps.Runner, deps.RunnerLabel = NewLocalRunner(o.Engine), "in-process"
	default:
		deps.Runner = NewWorkerRunner(WorkerConfig{Exe: o.Exe, Store: o.WorkerStore, Flags: o.WorkerFlags})
		deps.RunnerLabel = "worker processes"
	}
	if o.Engine != nil && o.Graphs != nil {
		deps.Graphs = func(ctx context.Context, name string) (Deps, error) {
			g, err := o.Graphs(ctx, name)
			if err != nil {
				return Deps{}, err
			}
			if g.Engine == nil || g.Engine.Graph().Name != name {
				return Deps{}, fmt.Errorf("tui: Options.Graphs(%q) gave no engine of that graph: %w", name, ErrUnknownGraph)
			}
			other := o
			other.Engine, other.Extension, other.WorkerFlags, other.Graphs = g.Engine, g.Extension, g.WorkerFlags, nil
			return depsOf(other), nil
		}
	}
	return deps
}

// terminalBackground is the terminal's background colour, #rrggbb, when
// the terminal says it (OSC 11, which termenv asks before the program
// takes the input, or COLORFGBG), else "". lipgloss.HasDarkBackground
// is told the same answer, and says dark when nothing answered.
func terminalBackground() string {
	out := lipgloss.DefaultRenderer().Output()
	c := out.BackgroundColor()
	_, answered := c.(termenv.RGBColor)
	if !answered && !strings.Contains(os.Getenv("COLORFGBG"), ";") {
		return ""
	}
	if _, none := c.(termenv.NoColor); none {
		return ""
	}
	rgb := termenv.ConvertToRGB(c)
	// The process asked nothing at start (termquiet): lipgloss's adaptive
	// colours, the bubbles' defaults among them, follow this answer.
	_, _, l := rgb.Hsl()
	lipgloss.SetHasDarkBackground(l < 0.5)
	return rgb.Hex()
}

// applyColorProfile honours NO_COLOR: the theme is no-color, and the
// attributes (bold, reverse) are kept while termenv would drop them with
// the colours.
func applyColorProfile(noColor bool) {
	if !noColor || !term.IsTerminal(os.Stdout.Fd()) {
		return
	}
	lipgloss.SetColorProfile(termenv.ANSI)
}
